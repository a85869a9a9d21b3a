#!/usr/bin/env python3
"""make bench-l2cap: GATT writes without response against an L2CAP channel on the same link,
through the real bluetoothd 5.66 and the kernel, in the real-BlueZ guest (two btvirt
controllers; Tests/RealBlueZ). Boots the guest, runs `ble-bench l2cap`, stops the guest, and
writes Benchmarks/results/l2cap.json (medians of the rounds, with the commit measured)."""
import argparse, json, os, statistics, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUEST = os.path.join(ROOT, "Tests", "RealBlueZ")


def run(*command, **kwargs):
    return subprocess.run(command, cwd=ROOT, check=True, **kwargs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", type=int, default=65536)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--binary", default=".build/release/ble-bench")
    parser.add_argument("--out", default="Benchmarks/results")
    args = parser.parse_args()

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip() != ""
    run(os.path.join(GUEST, "setup.sh"))
    run(os.path.join(GUEST, "build-image.sh"))
    subprocess.run([os.path.join(GUEST, "stop.sh")], cwd=ROOT, capture_output=True)
    try:
        run(os.path.join(GUEST, "start.sh"))
        output = run(os.path.join(GUEST, "exec.sh"), "-C", ROOT, "--",
                     f"{args.binary} l2cap {args.bytes} {args.rounds}", capture_output=True, text=True).stdout
    finally:
        subprocess.run([os.path.join(GUEST, "stop.sh")], cwd=ROOT, capture_output=True)
    rows = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    if not rows:
        sys.exit("bench-l2cap: ble-bench printed no results:\n" + output)

    cases = {}
    for row in rows:
        cases.setdefault((row["case"], row["size"]), []).append(row)
    summary = []
    for (case, size), runs in cases.items():
        summary.append({
            "case": case, "size": size, "rounds": len(runs),
            "kib_per_s": statistics.median(r["kib_per_s"] for r in runs),
            "cpu_ms_per_mib": statistics.median(r["cpu_ms_per_mib"] for r in runs),
        })
    gatt = next(s for s in summary if s["case"] == "gatt-wcmd")
    for entry in summary:
        entry["throughput_vs_gatt"] = round(entry["kib_per_s"] / gatt["kib_per_s"], 2)
        entry["cpu_vs_gatt"] = round(entry["cpu_ms_per_mib"] / gatt["cpu_ms_per_mib"], 3)
    result = {
        "commit": commit + ("-dirty" if dirty else ""), "bytes_per_case": args.bytes,
        "where": "real bluetoothd 5.66, Linux 6.1, two btvirt controllers in a qemu guest (no radio)",
        "summary": summary, "rounds": rows,
    }
    os.makedirs(os.path.join(ROOT, args.out), exist_ok=True)
    with open(os.path.join(ROOT, args.out, "l2cap.json"), "w") as file:
        json.dump(result, file, indent=2)
        file.write("\n")
    print(f"bench-l2cap at {result['commit']}: {args.bytes} bytes per case, {args.rounds} rounds (medians)")
    print(f"{'case':<10} {'size':>6} {'KiB/s':>10} {'CPU ms/MiB':>11} {'x GATT rate':>12} {'x GATT CPU':>11}")
    for s in summary:
        print(f"{s['case']:<10} {s['size']:>6} {s['kib_per_s']:>10.1f} {s['cpu_ms_per_mib']:>11.1f} "
              f"{s['throughput_vs_gatt']:>12.2f} {s['cpu_vs_gatt']:>11.3f}")


if __name__ == "__main__":
    main()
