#!/usr/bin/env python3
"""make bench-datagram-floor: what a datagram costs its receiver in Swift, layer by layer,
without swift-ble (`ble-bench datagram-floor`, Benchmarks/ble-bench/DatagramFloor.swift).

Interleaved rounds of the four modes, paced (one datagram every INTERVAL us) and in a burst;
medians of the CPU per value and of each round's ratio to `blocking`. With valgrind installed,
also callgrind's instruction counts per value, which machine load does not move: (I(3N) - I(N))
/ 2N over two paced runs, so set-up and exit cancel out. Writes datagram-floor.json and .md."""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = ("blocking", "callback", "async", "async-uncancellable")
WHAT = {
    "blocking": "`poll`, then `recv` until empty: the C floor's loop, in Swift",
    "callback": "+ each datagram made a `Data`, handed to a closure",
    "async": "+ the `Data` handed to a `for await` loop on the same thread, a cancellation handler per wait",
    "async-uncancellable": "`async` without the cancellation handler (not a correct iterator: priced only)",
}


def run(binary, mode, count, interval):
    out = subprocess.run([*binary.split(), "datagram-floor", mode, str(count), str(interval)], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def instructions(binary, mode, small, interval):
    totals = []
    with tempfile.TemporaryDirectory() as scratch:
        for count in (small, 3 * small):
            out = os.path.join(scratch, f"{mode}.{count}")
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *binary.split(),
                            "datagram-floor", mode, str(count), str(interval)], cwd=ROOT, capture_output=True,
                           check=True)
            summary = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True).stdout
            match = re.search(r"^\s*([\d,]+)\s.*PROGRAM TOTALS", summary, re.M)
            totals.append(int(match.group(1).replace(",", "")))
    return (totals[1] - totals[0]) / (2 * small)


def git_state():
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD"), git("status", "--porcelain", "--untracked-files=no") != ""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=".build/release/ble-bench")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--count", type=int, default=4000, help="paced values per run")
    parser.add_argument("--interval", type=int, default=500, help="us between paced values")
    parser.add_argument("--burst", type=int, default=20000, help="values per burst run")
    parser.add_argument("--out", default="Benchmarks/results")
    args = parser.parse_args()

    commit, dirty = git_state()
    runs = {(kind, mode): [] for kind in ("paced", "burst") for mode in MODES}
    for round_index in range(args.rounds):
        for kind, count, interval in (("paced", args.count, args.interval), ("burst", args.burst, 0)):
            for mode in MODES:
                record = run(args.binary, mode, count, interval)
                if record["n"] != count:
                    sys.exit(f"{mode} {kind}: {record['n']} of {count} values")
                runs[(kind, mode)].append(record["cpu_us_per_op"])
        print(f"round {round_index + 1}/{args.rounds} done", file=sys.stderr)

    counted = shutil.which("valgrind") is not None
    per_value = {mode: instructions(args.binary, mode, 1000, 1000) for mode in MODES} if counted else {}

    rows = []
    for mode in MODES:
        row = {"mode": mode, "what": WHAT[mode]}
        for kind in ("paced", "burst"):
            cpu = runs[(kind, mode)]
            base = runs[(kind, "blocking")]
            row[f"{kind}_cpu_us_per_value"] = round(statistics.median(cpu), 3)
            row[f"{kind}_x_blocking"] = round(statistics.median(a / b for a, b in zip(cpu, base)), 3)
            row[f"{kind}_rounds"] = cpu
        if per_value:
            row["paced_instructions_per_value"] = round(per_value[mode])
        rows.append(row)
    result = {"commit": commit, "dirty": dirty, "rounds": args.rounds, "count": args.count,
              "interval_us": args.interval, "burst": args.burst, "rows": rows}
    os.makedirs(os.path.join(ROOT, args.out), exist_ok=True)
    with open(os.path.join(ROOT, args.out, "datagram-floor.json"), "w") as f:
        json.dump(result, f, indent=1)

    lines = [
        "# What a datagram costs its receiver in Swift, without swift-ble",
        "",
        f"`make bench-datagram-floor` at {commit}{' (uncommitted changes)' if dirty else ''}: "
        f"{args.rounds} interleaved rounds; paced: {args.count} datagrams of 20 bytes, one every "
        f"{args.interval} µs; burst: {args.burst} as fast as the sender writes them. CPU of the receiving "
        "thread per value, medians; × blocking is the median of each round's ratio.",
        "",
        "| mode | what it adds | paced µs | × blocking | burst µs | × blocking |"
        + (" instructions per paced value |" if per_value else ""),
        "|---|---|---|---|---|---|" + ("---|" if per_value else ""),
    ]
    for row in rows:
        line = (f"| {row['mode']} | {row['what']} | {row['paced_cpu_us_per_value']:.2f} | "
                f"{row['paced_x_blocking']:.2f} | {row['burst_cpu_us_per_value']:.2f} | {row['burst_x_blocking']:.2f} |")
        if per_value:
            line += f" {row['paced_instructions_per_value']:,} |"
        lines.append(line)
    if per_value:
        lines += ["", "Instructions: callgrind, (I(3,000) − I(1,000)) / 2,000 over paced runs at one datagram a "
                  "millisecond; the whole process, so the sender thread's share is in every row alike."]
    with open(os.path.join(ROOT, args.out, "datagram-floor.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
