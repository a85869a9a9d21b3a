#!/usr/bin/env python3
"""bleak_bench.py - the GATT benchmarks of issue 8 through bleak (PyPI), the same work as
Benchmarks/floor/gatt_floor.c and `ble-bench gatt`, against ble-sim on the bus in
$DBUS_SYSTEM_BUS_ADDRESS. Same arguments, same JSON line (impl "bleak"): cpu_us_per_op, cs_per_op
(context switches, voluntary + involuntary) and vcs_per_op (voluntary alone) from getrusage over
the measured phase;
memory adds lat_at and cpu_at, per count N the median latency and client CPU (µs) of the 5
connections ending at connection N (connections 1-5 for N < 5).

usage: bleak_bench.py connect N | read SIZE N WARMUP | write SIZE N WARMUP
                      | wcmd SIZE N WARMUP WINDOW | notify dbus|acquire N INTERVAL_US SIZE
                      | scan N | memory N1,N2,...

Needs bleak (and its dbus-fast) in the interpreter's environment: the Makefile's bleak-venv.
Clocks start after imports and the bus connection, as for the other clients.
"""

import asyncio
import ctypes
import json
import os
import resource
import statistics
import sys
import time

from bleak import BleakClient, BleakScanner
from dbus_fast import BusType, Message, MessageType
from dbus_fast.aio import MessageBus

SERVICE = "b0b00000-5b1e-4d2a-9f00-62656e636800"
READ20 = "b0b00001-5b1e-4d2a-9f00-62656e636800"
READ512 = "b0b00002-5b1e-4d2a-9f00-62656e636800"
WRITE = "b0b00003-5b1e-4d2a-9f00-62656e636800"
NOTIFY = "b0b00004-5b1e-4d2a-9f00-62656e636800"
IDLE_END_S = 2.0


def address(index):
    return f"B0:00:00:00:{index >> 8:02X}:{index & 0xFF:02X}"


def cpu_ns():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int((usage.ru_utime + usage.ru_stime) * 1e9)


def context_switches():
    """(voluntary + involuntary, the count perf's context-switches event reads; voluntary alone)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_nvcsw + usage.ru_nivcsw, usage.ru_nvcsw


def window_median_us(values, n):
    """Median in µs of the 5 values (ns) ending at the n-th, the first 5 for n < 5 (as gatt_floor.c)."""
    start = max(0, n - 5)
    return statistics.median(values[start:start + 5]) / 1e3


def peak_rss_kb():
    """VmHWM, not ru_maxrss: the latter survives exec and would include the parent's RSS at fork."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE") // 1024


def wake_probe():
    """The readers of Benchmarks/floor/wake_probe.c when run_gatt.py preloaded it (None otherwise):
    this thread's last return from an I/O wait that found something ready (ns, CLOCK_MONOTONIC,
    as time.monotonic_ns) and how many there were. Read on the event loop's thread, which waits
    for bluetoothd's answers."""
    process = ctypes.CDLL(None)
    try:
        last, count = process.wake_probe_last_ns, process.wake_probe_count
    except AttributeError:
        return None
    last.restype = count.restype = ctypes.c_uint64
    return last, count


def wake_fields(after_wake, wake_ups):
    """The medians of what each operation spent after its last wake-up, and of its wake-ups."""
    def median(values):  # the rank the other clients take
        return sorted(values)[(len(values) - 1) // 2]

    if not after_wake:
        return {}
    return {"after_wake_p50_us": median(after_wake) / 1e3, "wake_ups_p50": median(wake_ups)}


class Phase:
    """Wall time, CPU time and context switches from creation; latencies in ns."""

    def __init__(self):
        self.wall0 = time.monotonic_ns()
        self.cpu0 = cpu_ns()
        self.cs0 = context_switches()
        self.latencies = []
        self.wall = self.cpu = 0
        self.cs = (0, 0)

    def stop(self):
        self.wall = time.monotonic_ns() - self.wall0
        self.cpu = cpu_ns() - self.cpu0
        now = context_switches()
        self.cs = (now[0] - self.cs0[0], now[1] - self.cs0[1])

    def json(self, case, ops, wall=None, **extra):
        seconds = self.wall / 1e9 if wall is None else wall
        lat = sorted(self.latencies)

        def us(rank):
            return lat[rank] / 1e3 if lat else 0.0

        p99 = max(1, -(-99 * len(lat) // 100)) - 1
        result = {"impl": "bleak", "case": case, "n": ops, "wall_s": seconds,
                  "ops_per_s": ops / seconds if seconds > 0 else 0,
                  "cpu_us_per_op": self.cpu / 1e3 / ops if ops else 0,
                  "cs_per_op": self.cs[0] / ops if ops else 0,
                  "vcs_per_op": self.cs[1] / ops if ops else 0,
                  "lat_min_us": us(0), "lat_p50_us": us(max(0, (len(lat) - 1) // 2)),
                  "lat_p99_us": us(min(p99, max(0, len(lat) - 1))), "lat_max_us": us(max(0, len(lat) - 1)),
                  "rss_kb": rss_kb(), "peak_rss_kb": peak_rss_kb()}
        result.update(extra)
        return json.dumps(result)


async def find(index):
    # Set-up, not measured: bleak connects to what a scan found. A scan now and then misses a
    # known device on ble-sim, so it is retried.
    for _ in range(4):
        device = await BleakScanner.find_device_by_address(address(index), timeout=5.0)
        if device is not None:
            return device
    raise RuntimeError(f"{address(index)} not found")


async def connected(uuid):
    client = BleakClient(await find(1), timeout=30.0)
    await client.connect()
    return client, client.services.get_characteristic(uuid)


async def case_connect(n):
    device = await find(1)
    probe = wake_probe()
    after_wake, wake_ups = [], []
    phase = Phase()
    count = 0
    for _ in range(n):
        start = time.monotonic_ns()
        woken = probe[1]() if probe else 0
        client = BleakClient(device, timeout=30.0)
        await client.connect()
        count = sum(len(s.characteristics) for s in client.services)
        end = time.monotonic_ns()
        phase.latencies.append(end - start)
        if probe:
            after_wake.append(end - max(probe[0](), start))
            wake_ups.append(probe[1]() - woken)
        if count != 20:
            raise RuntimeError(f"{count} characteristics")
        await client.disconnect()
    phase.stop()
    return phase.json("connect", n, **wake_fields(after_wake, wake_ups), characteristics=count)


async def case_read(size, n, warmup):
    client, char = await connected(READ20 if size == 20 else READ512)
    for index in range(-warmup, n):
        if index == 0:
            phase = Phase()
        start = time.monotonic_ns()
        value = await client.read_gatt_char(char)
        if index >= 0:
            phase.latencies.append(time.monotonic_ns() - start)
        if len(value) != size:
            raise RuntimeError(f"read {len(value)} bytes")
    phase.stop()
    await client.disconnect()
    return phase.json(f"read-{size}", n)


async def case_write(size, n, warmup):
    client, char = await connected(WRITE)
    value = bytearray(size)
    for index in range(-warmup, n):
        if index == 0:
            phase = Phase()
        value[0] = index & 0xFF
        start = time.monotonic_ns()
        await client.write_gatt_char(char, value, response=True)
        if index >= 0:
            phase.latencies.append(time.monotonic_ns() - start)
    phase.stop()
    await client.disconnect()
    return phase.json(f"write-{size}", n)


async def write_concurrently(client, char, value, count, window):
    async def worker(share):
        latencies = []
        for _ in range(share):
            start = time.monotonic_ns()
            await client.write_gatt_char(char, value, response=False)
            latencies.append(time.monotonic_ns() - start)
        return latencies

    parts = await asyncio.gather(*(worker(count // window + (w < count % window)) for w in range(window)))
    return [latency for part in parts for latency in part]


async def case_wcmd(size, n, warmup, window):
    client, char = await connected(WRITE)
    value = bytes(size)
    await write_concurrently(client, char, value, warmup, window)
    phase = Phase()
    phase.latencies = await write_concurrently(client, char, value, n, window)
    phase.stop()
    await client.disconnect()
    name = f"wcmd-{size}" if window == 1 else f"wcmd-{size}-w{window}"
    return phase.json(name, n, window=window)


async def simulator_call(bus, member, signature, body):
    reply = await bus.call(Message(destination="org.swiftble.Simulator", path="/org/swiftble/Simulator",
                                   interface="org.swiftble.Simulator1", member=member, signature=signature,
                                   body=body))
    if reply.message_type == MessageType.ERROR:
        raise RuntimeError(f"{member}: {reply.error_name} {reply.body}")
    return reply


async def case_notify(mode, n, interval, size):
    control = await MessageBus(bus_type=BusType.SYSTEM).connect()
    client, char = await connected(NOTIFY)
    seen = bytearray(n)
    state = {"distinct": 0, "last": 0}
    latencies = []
    done = asyncio.Event()

    def on_value(_, data):
        if len(data) < 12:
            return
        now = time.monotonic_ns()
        stamp = int.from_bytes(data[0:8], "little")
        seq = int.from_bytes(data[8:12], "little")
        if seq >= n or seen[seq]:
            return
        seen[seq] = 1
        state["distinct"] += 1
        state["last"] = now
        latencies.append(now - stamp)
        if state["distinct"] == n:
            done.set()

    await client.start_notify(char, on_value, bluez={"use_start_notify": mode == "dbus"})
    phase = Phase()
    run = asyncio.ensure_future(simulator_call(control, "StartNotifications", "ssuuu",
                                               [address(1), NOTIFY, n, interval, size]))
    seen_before = -1
    while not done.is_set():
        try:
            await asyncio.wait_for(done.wait(), timeout=IDLE_END_S)
        except asyncio.TimeoutError:
            if state["distinct"] == seen_before:
                break
        seen_before = state["distinct"]
    phase.stop()
    await run
    await client.stop_notify(char)
    await client.disconnect()
    phase.latencies = latencies
    distinct = state["distinct"]
    wall = (state["last"] - phase.wall0) / 1e9 if distinct else None
    name = f"notify-{'acquire' if mode == 'acquire' else 'dbus'}-{'burst' if interval == 0 else 'paced'}-{size}"
    return phase.json(name, distinct, wall, sent=n, lost=n - distinct, interval_us=interval, size=size)


async def case_scan(n):
    seen = set()
    done = asyncio.Event()

    def on_advert(device, _):
        seen.add(device.address)
        if len(seen) >= n:
            done.set()

    scanner = BleakScanner(detection_callback=on_advert)
    phase = Phase()
    await scanner.start()
    await asyncio.wait_for(done.wait(), timeout=120)
    phase.latencies.append(time.monotonic_ns() - phase.wall0)
    phase.stop()
    await scanner.stop()
    return phase.json(f"scan-{n}", n)


async def case_memory(counts):
    total = max(counts)
    missing = {address(i) for i in range(1, total + 1)}
    devices = {}

    def on_advert(device, _):
        if device.address in missing:
            devices[device.address] = device
            missing.discard(device.address)

    scanner = BleakScanner(detection_callback=on_advert)
    await scanner.start()
    while missing:
        await asyncio.sleep(0.05)
    await scanner.stop()
    base = rss_kb()
    phase = Phase()
    clients, rss, cpu = [], {}, []  # cpu: per connection, in order, ns
    for index in range(1, total + 1):
        cpu0 = cpu_ns()
        start = time.monotonic_ns()
        client = BleakClient(devices[address(index)], timeout=30.0)
        await client.connect()
        phase.latencies.append(time.monotonic_ns() - start)
        cpu.append(cpu_ns() - cpu0)
        clients.append(client)
        if index in counts:
            rss[str(index)] = rss_kb()
    phase.stop()
    lat_at = {str(n): window_median_us(phase.latencies, n) for n in counts}
    cpu_at = {str(n): window_median_us(cpu, n) for n in counts}
    for client in clients:
        await client.disconnect()
    return phase.json("memory", total, rss_base_kb=base, rss_at=rss, lat_at=lat_at, cpu_at=cpu_at)


def main(argv):
    what, args = argv[0], argv[1:]
    if what == "connect":
        return case_connect(int(args[0]))
    if what in ("read", "write") and len(args) == 3:
        return (case_read if what == "read" else case_write)(*map(int, args))
    if what == "wcmd" and len(args) == 4:
        return case_wcmd(*map(int, args))
    if what == "notify" and len(args) == 4 and args[0] in ("dbus", "acquire"):
        return case_notify(args[0], *map(int, args[1:]))
    if what == "scan":
        return case_scan(int(args[0]))
    if what == "memory":
        return case_memory([int(x) for x in args[0].split(",")])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    print(asyncio.run(main(sys.argv[1:])), flush=True)
