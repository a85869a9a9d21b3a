#!/usr/bin/env python3
"""run_sim_read.py - server CPU of a GATT ReadValue served by ble-sim, against the libdbus floor.

On one private dbus-daemon with the system bus's limits (the same as run_dbus_calls.py), each
round runs, interleaved:

    E = echo    the C Echo server answering `dbus_floor seq 20 N WARMUP` (one call, one reply)
    F = read    the same C server answering `dbus_floor read N WARMUP`: a ReadValue(a{sv}) served
                as bluetoothd 5.66 serves it on D-Bus (options parsed, value cached, then
                PropertiesChanged(Value) and the reply, the shapes gdbus sends)
    G = floor read, same client: the C server's ReadValue answering `ble-bench sim-read N WARMUP
                --server org.swiftble.Bench PATH`, the very client B has
    B = sim     `ble-sim --bus ADDRESS --scenario FILE` answering `ble-bench sim-read N WARMUP`
                (discovery, Connect, then ReadValue calls: a PropertiesChanged(Value) and a reply each)
    P = paired  B again, but the client reads the C floor's characteristic right after every read
                of ble-sim (`--paired`): both servers serve the same client, call for call, in the
                same seconds, so the ratio of their CPU per call is free of the load swings that
                separate the other columns' runs (on a shared machine, ±15 % between runs)

The goal compares ble-sim with the floor doing the same work for the same client: a server's
CPU depends on its client too (how often the bus daemon sleeps when the server sends, and so
what each send's wake-up costs the sender's kernel). P measures that within one run, B/G across
runs; F, with the C client, and E are kept for reference.

Server CPU per call is the server process's utime + stime (/proc/PID/stat) over the client run,
divided by N + warm-up. ble-sim is started fresh each round, after which its start-up CPU is
excluded; its discovery and Connect stay in the figure (well under 1 µs per call at the default N).

Usage, from the package root (or `make bench-sim`):

    sh Benchmarks/floor/build.sh .build/bench
    swift build -c release --product ble-sim --product ble-bench
    python3 Benchmarks/run_sim_read.py --floor .build/bench/dbus_floor --bin .build/release [--rounds 5]

Prints one Markdown table (min / median / max over rounds) and the ratios of the medians; with
--json FILE also writes the per-round figures. With --baseline-bin DIR, a second ble-sim (an
earlier build, say; the client stays the same) joins every round as column A, so a change is judged against its own
baseline under the same load rather than against a figure taken on another day.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_dbus_calls import (  # noqa: E402
    BenchError, Case, PrivateBus, cpu_seconds, log, parse_client_output, read_line, run_in_own_group, stop_process)

ROOT = Path(__file__).resolve().parent.parent


FLOOR_NAME = "org.swiftble.Bench"
FLOOR_CHARACTERISTIC = "/org/bluez/hci0/dev_C4_7C_8D_6A_11_22/service0009/char000e"


def floor_round(bus, floor, mode, n, warmup, client=None):
    """Server CPU µs per call of the C server: `echo` (Echo of 20 bytes), `read` (ReadValue from
    the C client) or `same` (ReadValue from `client`, the ble-bench that B is measured with)."""
    before = cpu_seconds(bus.server.pid)
    if mode == "echo":
        command, case = [floor, "seq", "20", str(n), str(warmup)], Case("seq", 20)
    elif mode == "read":
        command, case = [floor, "read", str(n), str(warmup)], Case("read", 1)
    else:
        command = [str(client), "sim-read", str(n), str(warmup), "--server", FLOOR_NAME, FLOOR_CHARACTERISTIC]
        case = Case("sim-read", 0)
    proc = run_in_own_group(command, bus.env, 300)
    if proc.returncode != 0:
        raise BenchError(f"floor client failed: {proc.stderr.strip()[-300:]}")
    result = parse_client_output(proc.stdout, case, n)
    return (cpu_seconds(bus.server.pid) - before) * 1e6 / (n + warmup), result


def sim_round(bus, bin_dir, scenario, n, warmup, sim_dir=None, paired=False):
    """Server CPU µs per call of ble-sim (from `sim_dir`, else `bin_dir`) serving ReadValue, and the
    client's result. With `paired`, the client reads the C floor's characteristic after every
    read of ble-sim, and the floor server's CPU per call over the same run and the client's
    result for it come back too (else None, None)."""
    sim = subprocess.Popen(
        [str((sim_dir or bin_dir) / "ble-sim"), "--bus", bus.env["DBUS_SYSTEM_BUS_ADDRESS"], "--scenario", str(scenario)],
        env=bus.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        bufsize=0, start_new_session=True)
    try:
        read_line(sim, 30, "the bus address from ble-sim")
        time.sleep(0.3)
        command = [str(bin_dir / "ble-bench"), "sim-read", str(n), str(warmup)]
        if paired:
            command += ["--paired", FLOOR_NAME, FLOOR_CHARACTERISTIC]
        before, floor_before = cpu_seconds(sim.pid), cpu_seconds(bus.server.pid)
        proc = run_in_own_group(command, bus.env, 300)
        after, floor_after = cpu_seconds(sim.pid), cpu_seconds(bus.server.pid)
        if proc.returncode != 0:
            raise BenchError(f"sim-read failed: {proc.stderr.strip()[-300:]}")
        result = parse_client_output(proc.stdout, Case("sim-read", 0), n)
        cpu = (after - before) * 1e6 / (n + warmup)
        if not paired:
            return cpu, result, None, None
        floor_result = json.loads([line for line in proc.stdout.splitlines() if line.strip()][-2])
        return cpu, result, (floor_after - floor_before) * 1e6 / (n + warmup), floor_result
    finally:
        if sim.poll() is None:
            sim.send_signal(signal.SIGINT)
        stop_process(sim, 5)
        sim.stdout.close()


def spread(values, number_format="{:.1f}"):
    return " / ".join(number_format.format(v) for v in (min(values), statistics.median(values), max(values)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floor", required=True, help="the dbus_floor binary")
    parser.add_argument("--bin", required=True, help="the folder with ble-sim and ble-bench (release build)")
    parser.add_argument("--scenario", default=str(ROOT / "Scenarios" / "heart-rate-monitor.json"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("-n", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--json", help="also write the per-round figures to this file")
    parser.add_argument("--baseline-bin", help="a folder with another build of ble-sim, run as A (same client)")
    args = parser.parse_args(argv)
    floor, bin_dir = str(Path(args.floor).resolve()), Path(args.bin).resolve()
    baseline_dir = Path(args.baseline_bin).resolve() if args.baseline_bin else None
    steps_of_round = ["echo", "read", "same", "sim", "pair"] + (["base"] if baseline_dir else [])
    rows = {f"{step}_{metric}": [] for step in steps_of_round + ["pairfloor"] for metric in ("cpu", "p50")}
    with PrivateBus(floor) as bus:
        for round_index in range(args.rounds):
            # The order rotates, so no side always runs first after a pause.
            shift = round_index % len(steps_of_round)
            steps = steps_of_round[shift:] + steps_of_round[:shift]
            for step in steps:
                if step == "pair":
                    cpu, result, floor_cpu, floor_result = sim_round(
                        bus, bin_dir, args.scenario, args.n, args.warmup, paired=True)
                    rows["pairfloor_cpu"].append(floor_cpu)
                    rows["pairfloor_p50"].append(floor_result["p50_us"])
                elif step in ("sim", "base"):
                    cpu, result, _, _ = sim_round(
                        bus, bin_dir, args.scenario, args.n, args.warmup,
                        sim_dir=baseline_dir if step == "base" else None)
                else:
                    cpu, result = floor_round(bus, floor, step, args.n, args.warmup, client=bin_dir / "ble-bench")
                rows[f"{step}_cpu"].append(cpu)
                rows[f"{step}_p50"].append(result["p50_us"])
            log(f"round {round_index + 1}: " + ", ".join(f"{step} {rows[step + '_cpu'][-1]:.1f} µs"
                                                         for step in steps_of_round + ["pairfloor"]))
    median = {key: statistics.median(values) for key, values in rows.items()}
    print("| metric | E floor (C Echo) | F floor (C ReadValue, as bluetoothd) | G floor ReadValue, B's client "
          "| B ble-sim ReadValue |")
    print("|---|---|---|---|---|")
    print(f"| server CPU µs/call | {spread(rows['echo_cpu'])} | {spread(rows['read_cpu'])} | "
          f"{spread(rows['same_cpu'])} | {spread(rows['sim_cpu'])} |")
    print(f"| client p50 µs | {spread(rows['echo_p50'])} | {spread(rows['read_p50'])} | "
          f"{spread(rows['same_p50'])} | {spread(rows['sim_p50'])} |")
    if baseline_dir:
        print(f"| A baseline ble-sim: server CPU µs/call | {spread(rows['base_cpu'])} | client p50 µs | "
              f"{spread(rows['base_p50'])} |")
        ratios = [b / a for b, a in zip(rows["sim_cpu"], rows["base_cpu"])]
        print(f"\nB/A server CPU per round: {', '.join(f'{r:.2f}' for r in ratios)}; median "
              f"{statistics.median(ratios):.2f}× (below 1: B is cheaper)")
    pair_ratios = [b / g for b, g in zip(rows["pair_cpu"], rows["pairfloor_cpu"])]
    print(f"\nP, paired (each read of ble-sim followed by one of the C floor, same client, same run): "
          f"ble-sim {spread(rows['pair_cpu'])} µs, floor {spread(rows['pairfloor_cpu'])} µs server CPU per call; "
          f"client p50: ble-sim {spread(rows['pair_p50'])} µs, floor {spread(rows['pairfloor_p50'])} µs")
    print(f"P ble-sim/floor per round: {', '.join(f'{r:.2f}' for r in pair_ratios)}; median "
          f"{statistics.median(pair_ratios):.2f}× (goal ≤ 1.2×)")
    same_ratios = [b / g for b, g in zip(rows["sim_cpu"], rows["same_cpu"])]
    print(f"\nB/G server CPU per round: {', '.join(f'{r:.2f}' for r in same_ratios)}; median "
          f"{statistics.median(same_ratios):.2f}× (goal ≤ 1.2×)")
    print(f"B/G (medians) {median['sim_cpu'] / median['same_cpu']:.2f}×; "
          f"B/F {median['sim_cpu'] / median['read_cpu']:.2f}×; "
          f"B/E: {median['sim_cpu'] / median['echo_cpu']:.2f}×; N {args.n}, warm-up {args.warmup}, "
          f"{args.rounds} rounds, {os.cpu_count()} CPUs")
    if args.json:
        summary = {"n": args.n, "warmup": args.warmup, "rounds": args.rounds, "cpus": os.cpu_count(),
                   "per_round": rows, "median": median,
                   "ratio_paired_per_round_median": statistics.median(pair_ratios),
                   "ratio_sim_to_same_client_floor_per_round_median": statistics.median(same_ratios),
                   "ratio_sim_to_same_client_floor": median["sim_cpu"] / median["same_cpu"],
                   "ratio_sim_to_read_floor": median["sim_cpu"] / median["read_cpu"],
                   "ratio_sim_to_echo_floor": median["sim_cpu"] / median["echo_cpu"]}
        Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
