#!/usr/bin/env python3
"""run_gatt.py - the GATT benchmark suite (issues 8 and 19): swift-ble vs the libdbus floors vs bleak.

Starts one private dbus-daemon with the system bus's limits (Benchmarks/bus/system-limits.conf.in)
and, per scenario group, one ble-sim on it (per run for the scan groups). Then, per round, per case,
it runs the clients one after the other (R only in the AcquireNotify cases), the order rotating
each round (A B C M R, B C M R A, C M R A B, ...):

    A = floor     Benchmarks/floor/gatt_floor.c, same work: every org.bluez signal received and
                  parsed, a characteristic mirror (libdbus; the targets of issue 19 are against it)
    B = swift     `ble-bench gatt` (the public BLE API)
    C = bleak     Benchmarks/bleak_bench.py (bleak from PyPI)
    M = minimum   the floor with --lean: issue 8's floor, its device's Device1 changes only
    R = runtime   the AcquireNotify cases only: `ble-bench gatt notify async`, the same socket and
                  consumer without swift-ble (Benchmarks/ble-bench/DatagramFloor.swift): each value a
                  `Data` handed to a `for await` loop on the receiving thread, through a one-lock
                  buffer; the least a Swift async receiver of these values costs

All take the same arguments and print one JSON line (keys: see gatt_floor.c). Around each run the
runner reads the dbus-daemon's and ble-sim's CPU from /proc/PID/stat (10 ms ticks, whole run
including connection set-up, divided by the run's operations) and the child's own rusage (whole
process: CPU and peak RSS). For the connect and memory cases a dbus-monitor on the bus counts the
client's GetManagedObjects calls over the whole run, set-up included (gmo_calls, and gmo_per_op per
operation); without dbus-monitor (or dbus-send) the count is left out. For the connect case every
client runs with wake_probe.so (built beside the floor by build.sh) preloaded, and reports the
median time a connection spent after its last wake-up (after_wake_p50_us: its own work on the way
out, the rest of its latency being the wait for the daemon) and its wake-ups (wake_ups_p50); without
the library the two are left out. Ratios swift/floor,
swift/bleak, swift/minimum, swift/runtime and runtime/floor are computed per round (pair by pair)
and summarised by their median;
the memory case's lat_at and cpu_at (per count N) by their median over rounds.

Writes OUT/gatt.json (every run, the summary, the commit measured), OUT/gatt.md (goals, then one
table per case) and OUT/gatt.svg (client CPU and p50 latency relative to the floor, drawn here), and
prints the Markdown.

Usage, from the package root (Python 3.8+, standard library only):
    python3 Benchmarks/run_gatt.py --floor .build/bench/gatt_floor \\
        --swift ".build/release/ble-bench gatt" \\
        --bleak ".build/bleak-venv/bin/python Benchmarks/bleak_bench.py" \\
        --sim .build/release/ble-sim --scenarios .build/bench [--rounds 5] [--quick] [--only CASE,...]
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from run_dbus_calls import CONFIG_TEMPLATE, BenchError, cpu_seconds, log, read_line, stop_process
from gatt_report import render_markdown, render_svg

HERE = Path(__file__).resolve().parent
ROLES = ("floor", "swift", "bleak", "minimum", "runtime")
# The cases the runtime role runs, and the receiver it runs them with (for `acquire`).
RUNTIME_CASES = ("notify-acquire-burst-20", "notify-acquire-paced-20")
RUNTIME_RECEIVER = "async"

# name -> (scenario group, arguments full, arguments quick, unit of an op)
CASES = {
    # 200 connections per round: with 40 a round's p50 moved by a tenth between rounds of one
    # build, as much as the goal's margin.
    "connect": ("gatt", ["connect", "200"], ["connect", "10"], "connection"),
    "read-20": ("gatt", ["read", "20", "2000", "200"], ["read", "20", "400", "50"], "read"),
    "read-512": ("gatt", ["read", "512", "2000", "200"], ["read", "512", "400", "50"], "read"),
    "write-20": ("gatt", ["write", "20", "2000", "200"], ["write", "20", "400", "50"], "write"),
    "write-512": ("gatt", ["write", "512", "2000", "200"], ["write", "512", "400", "50"], "write"),
    # Writes without response are short: 5,000 (one in flight) and 20,000 (16 in flight) keep each
    # measured phase near a second, where 2,000 and 5,000 took 0.1-0.2 s and one preemption of
    # a few milliseconds moved a round's ratio by a third.
    "wcmd-20": ("gatt", ["wcmd", "20", "5000", "200", "1"], ["wcmd", "20", "400", "50", "1"], "write"),
    "wcmd-20-w16": ("gatt", ["wcmd", "20", "20000", "200", "16"], ["wcmd", "20", "1000", "50", "16"], "write"),
    "notify-dbus-burst-20": ("gatt", ["notify", "dbus", "10000", "0", "20"],
                             ["notify", "dbus", "5000", "0", "20"], "notification"),
    "notify-dbus-paced-20": ("gatt", ["notify", "dbus", "2000", "500", "20"],
                             ["notify", "dbus", "1000", "500", "20"], "notification"),
    "notify-acquire-burst-20": ("gatt", ["notify", "acquire", "10000", "0", "20"],
                                ["notify", "acquire", "5000", "0", "20"], "notification"),
    "notify-acquire-paced-20": ("gatt", ["notify", "acquire", "2000", "500", "20"],
                                ["notify", "acquire", "1000", "500", "20"], "notification"),
    "scan-1000": ("beacons-1000", ["scan", "1000"], ["scan", "1000"], "advertiser"),
    "scan-10000": ("beacons-10000", ["scan", "10000"], ["scan", "10000"], "advertiser"),
    "memory": ("peripherals-100", ["memory", "1,10,100"], ["memory", "1,10,100"], "connection"),
}

# group -> scenario file name (in --scenarios, or Benchmarks/scenarios for the committed one)
SCENARIOS = {"gatt": "gatt-5x4.json", "beacons-1000": "beacons-1000.json",
             "beacons-10000": "beacons-10000.json", "peripherals-100": "gatt-5x4-100.json"}

METRICS = ("ops_per_s", "cpu_us_per_op", "cs_per_op", "vcs_per_op", "lat_p50_us", "lat_p99_us", "lat_max_us", "wall_s",
           "lost", "peak_rss_kb", "daemon_cpu_us_per_op", "sim_cpu_us_per_op", "process_cpu_s",
           "kib_per_peripheral", "gmo_calls", "gmo_per_op", "after_wake_p50_us", "wake_ups_p50")
RATIO_METRICS = ("cpu_us_per_op", "lat_p50_us", "ops_per_s", "cs_per_op", "vcs_per_op", "after_wake_p50_us")
RATIO_OTHERS = ("floor", "bleak", "minimum", "runtime")  # swift/other
RATIO_PAIRS = (("runtime", "floor"),)  # other/other
GMO_CASES = ("connect", "memory")  # the cases whose GetManagedObjects calls are counted
WAKE_PROBE_CASES = ("connect",)  # the cases run with wake_probe.so preloaded
AT_KEYS = ("lat_at", "cpu_at")  # memory: per count N, µs


class SimBus:
    """A temp dir and a dbus-daemon with system-bus limits; ble-sim started per scenario group."""

    def __init__(self, sim):
        self.sim_binary = sim
        self.tmp = Path(tempfile.mkdtemp(prefix="swiftble-gatt-"))
        self.daemon = self.sim = None
        config = self.tmp / "bus.conf"
        config.write_text(CONFIG_TEMPLATE.read_text().replace("@SOCKET@", str(self.tmp / "bus.sock")))
        self.daemon = subprocess.Popen(
            ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
            start_new_session=True)
        self.address = read_line(self.daemon, 10, "dbus-daemon address")
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        log(f"bus: {self.address}")

    def start_sim(self, scenario):
        self.stop_sim()
        self.sim_log = open(self.tmp / "sim.log", "ab")
        self.sim = subprocess.Popen(
            [self.sim_binary, "--scenario", str(scenario), "--bus", self.address], env=self.env,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.sim_log, bufsize=0,
            start_new_session=True)
        line = read_line(self.sim, 60, "ble-sim's address line")
        if not line.startswith("DBUS_SYSTEM_BUS_ADDRESS="):
            raise BenchError(f"ble-sim printed {line!r}")
        log(f"ble-sim: {scenario.name}")

    def stop_sim(self):
        if self.sim is not None:
            if self.sim.poll() is None:
                self.sim.send_signal(signal.SIGTERM)
            stop_process(self.sim, 10)
            self.sim.stdout.close()
            self.sim_log.close()
            self.sim = None

    def cpu(self):
        return cpu_seconds(self.daemon.pid), cpu_seconds(self.sim.pid)

    def check_alive(self):
        for name, proc in (("dbus-daemon", self.daemon), ("ble-sim", self.sim)):
            if proc.poll() is not None:
                raise BenchError(f"{name} exited with code {proc.returncode}")

    def close(self):
        self.stop_sim()
        if self.daemon is not None:
            if self.daemon.poll() is None:
                self.daemon.terminate()
            stop_process(self.daemon, 5)
            self.daemon.stdout.close()
            self.daemon = None
        shutil.rmtree(self.tmp, ignore_errors=True)


class CallCounter:
    """A dbus-monitor on the bus that counts GetManagedObjects calls between two marks.

    A mark is a GetManagedObjects call of dbus-send to the bus driver on a path of its own: once the
    monitor printed it, it has printed everything before it (readiness at start, the last calls of
    the client at the end). Marks are not counted. Raises BenchError, OSError or SubprocessError
    when the monitor cannot run; the caller then leaves the count out."""

    MARK = "/org/swiftble/bench/mark/m"

    def __init__(self, address):
        self.address, self.lines, self.closed, self.marks = address, [], False, 0
        self.changed = threading.Condition()
        self.proc = subprocess.Popen(
            ["dbus-monitor", "--address", address, "--monitor", "type='method_call',member='GetManagedObjects'"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        try:
            # BecomeMonitor takes a moment: a mark sent before it is never seen, so marks are sent
            # until one is.
            for _ in range(40):
                self.start = self._mark(0.25)
                if self.start is not None:
                    return
            raise BenchError("dbus-monitor saw none of its marks")
        except BaseException:
            self.close()
            raise

    def _read(self):
        for raw in self.proc.stdout:
            if raw.startswith(b"method call"):
                with self.changed:
                    self.lines.append(raw.decode(errors="replace"))
                    self.changed.notify_all()
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def _mark(self, timeout):
        """Sends a mark; its index in self.lines once printed, None after timeout seconds."""
        self.marks += 1
        path = f"{self.MARK}{self.marks}"
        subprocess.run(["dbus-send", f"--address={self.address}", "--type=method_call",
                        "--dest=org.freedesktop.DBus", path, "org.freedesktop.DBus.ObjectManager.GetManagedObjects"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=10, check=True)
        deadline = time.monotonic() + timeout
        with self.changed:
            while True:
                for index, line in enumerate(self.lines):
                    if f"path={path};" in line:
                        return index
                if self.closed:
                    raise BenchError("dbus-monitor exited")
                if time.monotonic() > deadline:
                    return None
                self.changed.wait(0.05)

    def count(self):
        """The GetManagedObjects calls since the start, other than marks."""
        end = self._mark(10)
        if end is None:
            raise BenchError("dbus-monitor did not catch up")
        return sum(1 for line in self.lines[self.start + 1:end]
                   if "member=GetManagedObjects" in line and self.MARK not in line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        stop_process(self.proc, 5)
        self.reader.join(5)
        self.proc.stdout.close()


def run_child(command, env, timeout):
    """Runs command in its own process group; returns (returncode, stdout, stderr, rusage)."""
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    out, err = [], []
    readers = [threading.Thread(target=lambda s=s, b=b: b.append(s.read())) for s, b in
               ((proc.stdout, out), (proc.stderr, err))]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    status = usage = None
    while status is None:
        pid, status_word, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            status, usage = os.waitstatus_to_exitcode(status_word), ru
            break
        if time.monotonic() > deadline:
            os.killpg(proc.pid, signal.SIGKILL)
            pid, status_word, usage = os.wait4(proc.pid, 0)
            status = "timeout"
            break
        time.sleep(0.01)
    proc.returncode = -1  # reaped by wait4; keeps Popen from waiting again
    for reader in readers:
        reader.join()
    return status, out[0].decode(errors="replace"), err[0].decode(errors="replace"), usage


def run_one(bus, command, case, timeout, probe=None):
    record = {"command": " ".join(command), "ok": False}
    env = dict(bus.env, LD_PRELOAD=str(probe)) if probe and case in WAKE_PROBE_CASES else bus.env
    counter = gmo_calls = None
    if case in GMO_CASES:
        try:
            counter = CallCounter(bus.address)
        except (BenchError, OSError, subprocess.SubprocessError) as e:
            log(f"no GetManagedObjects count: {e}")
    try:
        before = bus.cpu()
        started = time.monotonic()
        status, stdout, stderr, usage = run_child(command, env, timeout)
        record["elapsed_s"] = round(time.monotonic() - started, 3)
        daemon_s, sim_s = (a - b for a, b in zip(bus.cpu(), before))
        if counter is not None:
            try:
                gmo_calls = counter.count()
            except (BenchError, OSError, subprocess.SubprocessError) as e:
                log(f"no GetManagedObjects count: {e}")
    finally:
        if counter is not None:
            counter.close()
    if usage is not None:
        record["process_cpu_s"] = usage.ru_utime + usage.ru_stime
    if stderr.strip():
        record["stderr"] = stderr.strip()[-1500:]
    if status != 0:
        record["error"] = f"exit {status}: {(stderr.strip().splitlines() or ['(no stderr)'])[-1][:300]}"
        return record
    try:
        result = json.loads([line for line in stdout.splitlines() if line.strip()][-1])
    except (IndexError, ValueError) as e:
        record["error"] = f"bad output {stdout[-300:]!r}: {e}"
        return record
    if result.get("case") != case:
        record["error"] = f"result is for {result.get('case')!r}"
        return record
    record.update(result)
    ops = max(result["n"], 1)
    record["daemon_cpu_us_per_op"] = daemon_s * 1e6 / ops
    record["sim_cpu_us_per_op"] = sim_s * 1e6 / ops
    if gmo_calls is not None:
        # Over the whole run: the set-up before the measured phase (start-up, finding the
        # peripherals) is in it.
        record["gmo_calls"] = gmo_calls
        record["gmo_per_op"] = gmo_calls / ops
    if case == "memory":
        at = result["rss_at"]
        keys = sorted(int(k) for k in at)
        if len(keys) >= 2 and keys[-1] > keys[-2]:
            record["kib_per_peripheral"] = (at[str(keys[-1])] - at[str(keys[-2])]) / (keys[-1] - keys[-2])
    record["ok"] = True
    return record


def describe(record):
    if not record["ok"]:
        return "FAILED: " + record["error"]
    text = (f"{record['ops_per_s']:.0f}/s, p50 {record['lat_p50_us']:.0f} µs, "
            f"CPU {record['cpu_us_per_op']:.1f} µs/op, peak RSS {record['peak_rss_kb'] / 1024:.1f} MiB")
    if "cs_per_op" in record:
        text += f", {record['cs_per_op']:.2f} cs/op"
    if "vcs_per_op" in record:
        text += f" ({record['vcs_per_op']:.2f} voluntary)"
    if "after_wake_p50_us" in record:
        wakes = record["wake_ups_p50"]
        text += f", {record['after_wake_p50_us']:.0f} µs after the last of {wakes} wake-up{'' if wakes == 1 else 's'}"
    if "gmo_calls" in record:
        text += f", {record['gmo_calls']} GetManagedObjects"
    if "lost" in record:
        text += f", lost {record['lost']}"
    if "kib_per_peripheral" in record:
        text += f", {record['kib_per_peripheral']:.1f} KiB/peripheral"
    return text


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values), "count": len(values)}


def summarize(case, runs):
    mine = [r for r in runs if r["case_name"] == case]
    summary = {"case": case, "unit": CASES[case][3], "roles": {}, "ratios": {}}
    for role in ROLES:
        if not any(r["role"] == role for r in mine):
            continue
        ok = [r for r in mine if r["role"] == role and r["ok"]]
        summary["roles"][role] = {
            "runs_ok": len(ok), "runs_failed": sum(1 for r in mine if r["role"] == role and not r["ok"]),
            "metrics": {m: spread([r.get(m) for r in ok]) for m in METRICS},
        }
        for key in AT_KEYS:  # memory: {N: spread over rounds}
            counts = sorted({int(n) for r in ok for n in r.get(key, {})})
            if counts:
                summary["roles"][role][key] = {str(n): spread([r[key].get(str(n)) for r in ok if key in r])
                                               for n in counts}
    by_round = {}
    for r in mine:
        if r["ok"]:
            by_round.setdefault(r["round"], {})[r["role"]] = r
    for mine_role, other in [("swift", o) for o in RATIO_OTHERS] + list(RATIO_PAIRS):
        if other not in summary["roles"] or mine_role not in summary["roles"]:
            continue
        for metric in RATIO_METRICS:
            ratios = [pair[mine_role][metric] / pair[other][metric] for _, pair in sorted(by_round.items())
                      if mine_role in pair and other in pair and pair[other].get(metric)]
            summary["ratios"][f"{mine_role}/{other} {metric}"] = {
                "pairs": ratios, "median": statistics.median(ratios) if ratios else None}
    return summary


def dbus_daemon_version():
    try:
        return subprocess.run(["dbus-daemon", "--version"], capture_output=True, text=True,
                              timeout=5).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "dbus-daemon (unknown version)"


def git_state():
    """The commit measured and whether the work tree differed from it (None when git cannot tell)."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=HERE.parent, capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()
    try:
        return {"commit": git("rev-parse", "--short", "HEAD"), "dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", required=True)
    parser.add_argument("--swift", required=True)
    parser.add_argument("--bleak", required=True)
    parser.add_argument("--sim", required=True)
    parser.add_argument("--scenarios", default=".build/bench", help="directory of the generated scenarios")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="fewer operations per run")
    parser.add_argument("--only", help="comma-separated case names")
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()

    cases = [c for c in CASES if not args.only or c in args.only.split(",")]
    floor = shlex.split(args.floor)
    probe = Path(floor[0]).resolve().parent / "wake_probe.so"
    if not probe.exists():
        log(f"no {probe}: the connect case runs without the wake-up probe")
        probe = None
    commands = {"floor": floor, "swift": shlex.split(args.swift), "bleak": shlex.split(args.bleak),
                "minimum": floor[:1] + ["--lean"] + floor[1:], "runtime": shlex.split(args.swift)}
    meta = {
        "started_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(), "cpus": os.cpu_count(), "kernel": platform.release(),
        "dbus_daemon": dbus_daemon_version(), "rounds": args.rounds, "quick": args.quick, "git": git_state(),
        "commands": {role: " ".join(c) for role, c in commands.items()},
        "arguments": {c: CASES[c][2 if args.quick else 1] for c in cases},
    }
    runs = []
    bus = SimBus(args.sim)
    interrupted = False
    try:
        for group in dict.fromkeys(CASES[c][0] for c in cases):
            scenario = Path(args.scenarios) / SCENARIOS[group]
            if not scenario.exists():
                scenario = HERE / "scenarios" / SCENARIOS[group]
            bus.start_sim(scenario)
            for rnd in range(args.rounds):
                order = ROLES[rnd % len(ROLES):] + ROLES[:rnd % len(ROLES)]
                for case in (c for c in cases if CASES[c][0] == group):
                    for role in order:
                        if role == "runtime" and case not in RUNTIME_CASES:
                            continue
                        if group.startswith("beacons") and (rnd, role) != (0, order[0]):
                            # A fresh simulator per scan: after StopDiscovery a crowd of 10,000 leaves
                            # ble-sim busy for minutes (it stopped answering in our first runs).
                            bus.start_sim(scenario)
                        arguments = CASES[case][2 if args.quick else 1]
                        if role == "runtime":
                            arguments = [RUNTIME_RECEIVER if a == "acquire" else a for a in arguments]
                        command = commands[role] + arguments
                        record = {"round": rnd, "case_name": case, "role": role}
                        record.update(run_one(bus, command, case, args.timeout, probe))
                        runs.append(record)
                        log(f"[{rnd + 1}/{args.rounds}] {case:<24} {role:<6} {describe(record)}")
                        bus.check_alive()
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: writing what was measured")
    finally:
        bus.close()

    meta["complete"] = not interrupted
    summaries = [summarize(c, runs) for c in cases]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gatt.json").write_text(json.dumps({"meta": meta, "summary": summaries, "runs": runs}, indent=1))
    markdown = render_markdown(meta, summaries)
    (args.out / "gatt.md").write_text(markdown)
    (args.out / "gatt.svg").write_text(render_svg(meta, summaries))
    print(markdown)
    return 1 if interrupted or any(not r["ok"] for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
