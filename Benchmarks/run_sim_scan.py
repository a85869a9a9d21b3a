#!/usr/bin/env python3
"""run_sim_scan.py - ble-sim serving a crowd of advertisers to one discovering client.

Generates a crowd scenario (Scenarios/tools/make_beacon_crowd.py --count N: non-connectable
beacons advertising once a second), starts ble-sim on a private dbus-daemon with the system
bus's limits, and runs `ble-bench sim-scan N HOLD` (StartDiscovery, wait for N devices, scan
HOLD more seconds). Reports, from /proc/PID/stat (10 ms ticks):

* ble-sim's CPU while idle (nobody scanning), while the crowd is being discovered, and in the
  steady state afterwards, each as a share of one core;
* the client's time to half and to all N devices, and the dbus-daemon's CPU share.

Usage, from the package root (or `make bench-sim`):

    sh Benchmarks/floor/build.sh .build/bench
    swift build -c release --product ble-sim --product ble-bench
    python3 Benchmarks/run_sim_scan.py --floor .build/bench/dbus_floor --bin .build/release [--count 10000]
"""

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_dbus_calls import BenchError, PrivateBus, cpu_seconds, log, read_line, stop_process  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def share(cpu_before, cpu_after, t_before, t_after):
    return (cpu_after - cpu_before) / max(t_after - t_before, 1e-9)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floor", required=True, help="the dbus_floor binary (the private bus needs a server)")
    parser.add_argument("--bin", required=True, help="the folder with ble-sim and ble-bench (release build)")
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--hold", type=int, default=5, help="seconds of scanning after all were reported")
    args = parser.parse_args(argv)
    bin_dir = Path(args.bin).resolve()
    with tempfile.TemporaryDirectory(prefix="swiftble-crowd-") as tmp, PrivateBus(str(Path(args.floor).resolve())) as bus:
        scenario = Path(tmp) / "crowd.json"
        subprocess.run([sys.executable, str(ROOT / "Scenarios" / "tools" / "make_beacon_crowd.py"), str(scenario),
                        "--count", str(args.count)], check=True, capture_output=True)
        sim = subprocess.Popen([str(bin_dir / "ble-sim"), "--bus", bus.env["DBUS_SYSTEM_BUS_ADDRESS"],
                                "--scenario", str(scenario)], env=bus.env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0, start_new_session=True)
        try:
            read_line(sim, 60, "the bus address from ble-sim")
            time.sleep(0.5)
            t0, c0 = time.monotonic(), cpu_seconds(sim.pid)
            time.sleep(2)
            t1, c1, d1 = time.monotonic(), cpu_seconds(sim.pid), cpu_seconds(bus.daemon.pid)
            client = subprocess.Popen([str(bin_dir / "ble-bench"), "sim-scan", str(args.count), str(args.hold)],
                                      env=bus.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
            line = read_line(client, 300, "'all' from the client")
            if line != "all":
                raise BenchError(f"client printed {line!r}")
            t2, c2, d2 = time.monotonic(), cpu_seconds(sim.pid), cpu_seconds(bus.daemon.pid)
            out, err = client.communicate(timeout=args.hold + 60)
            t3, c3, d3 = time.monotonic(), cpu_seconds(sim.pid), cpu_seconds(bus.daemon.pid)
            if client.returncode != 0:
                raise BenchError(f"client failed: {err.decode(errors='replace')[-300:]}")
            result = json.loads(out.decode().strip().splitlines()[-1])
        finally:
            if sim.poll() is None:
                sim.send_signal(signal.SIGINT)
            stop_process(sim, 5)
    result.update({
        "sim_cpu_idle": round(share(c0, c1, t0, t1), 3),
        "sim_cpu_discovering": round(share(c1, c2, t1, t2), 3),
        "sim_cpu_steady": round(share(c2, c3, t2, t3), 3),
        "daemon_cpu_discovering": round(share(d1, d2, t1, t2), 3),
        "daemon_cpu_steady": round(share(d2, d3, t2, t3), 3),
    })
    print(json.dumps(result))
    log("shares are of one core; all_reported_s counts from just before StartDiscovery")
    return 0


if __name__ == "__main__":
    sys.exit(main())
