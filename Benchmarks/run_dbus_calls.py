#!/usr/bin/env python3
"""run_dbus_calls.py - D-Bus method-call benchmark: a candidate client against the libdbus floor.

Starts a private dbus-daemon with the system bus's limits (Benchmarks/bus/system-limits.conf.in)
and the C Echo server (`dbus_floor server`). Then, for every round and case, it runs the two clients
one after the other, alternating which goes first:

    A = floor      the C client, `FLOOR seq|pipe ...`
    B = candidate  the --swift command, e.g. `.build/release/ble-bench dbus-calls`

Runs are labelled by role, never by the client's "impl" field, so both roles may be the same
program (which is how the runner tests itself). Both clients take `seq SIZE N WARMUP` or
`pipe SIZE N WINDOW WARMUP`, read the bus address from DBUS_SYSTEM_BUS_ADDRESS, and print one
JSON line (see Benchmarks/floor/dbus_floor.c). Around each client run the runner also reads the
dbus-daemon's and the server's CPU time from /proc/PID/stat. That reading has clock-tick (10 ms)
resolution and covers the whole run (connect and warm-up included), so it is divided by N + warm-up.

Cases: seq 20 B, seq 512 B, pipe 16 x 20 B, pipe 64 x 20 B, pipe 16 x 512 B, pipe 64 x 512 B.
Calls per run: seq 5000 after 500 warm-up, pipe 20000 after 200 (--quick: 300/50 and 1000/50).

Writes OUT/dbus-calls.json (every run and the summary) and OUT/dbus-calls.md (one table per case:
min / median / max over rounds per role, the candidate/floor ratios of client CPU per call and p50
latency, each the median of per-round pair ratios, and the goals: CPU <= 1.2x, p50 <= 1.1x), and
prints the Markdown to stdout; progress goes to stderr. A failing client is reported and the run
goes on; the exit status is then 1. The server (Quit, then kill), the daemon and the temp dir are
cleaned up in every case, Ctrl-C included.

Usage, from the package root (Python 3.8+, standard library only):

    Benchmarks/floor/build.sh                                   # -> .build/bench/dbus_floor
    python3 Benchmarks/run_dbus_calls.py --floor .build/bench/dbus_floor \\
        --swift ".build/release/ble-bench dbus-calls" [--rounds 5] [--quick] [--out DIR]

Self-test without the Swift client: --swift .build/bench/dbus_floor --quick
"""

import argparse
import datetime
import json
import os
import platform
import select
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONFIG_TEMPLATE = HERE / "bus" / "system-limits.conf.in"
DEFAULT_OUT = HERE / "results"
CLK_TCK = os.sysconf("SC_CLK_TCK")

ROLES = ("floor", "candidate")  # A, B
ROLE_LABEL = {"floor": "A floor", "candidate": "B candidate"}
GOALS = {"cpu_us_per_call": 1.2, "p50_us": 1.1}  # candidate/floor, median of per-round ratios

# (n, warmup) per mode
CALLS = {"seq": (5000, 500), "pipe": (20000, 200)}
QUICK_CALLS = {"seq": (300, 50), "pipe": (1000, 50)}

CLIENT_KEYS = ("impl", "mode", "size", "n", "window", "wall_s", "calls_per_s",
               "p50_us", "p90_us", "p99_us", "max_us", "cpu_us_per_call")

# (key, Markdown label, number format) of the rows in each case's table
TABLE_ROWS = (
    ("calls_per_s", "calls/s", "{:.0f}"),
    ("p50_us", "p50 µs", "{:.1f}"),
    ("p99_us", "p99 µs", "{:.1f}"),
    ("cpu_us_per_call", "client CPU µs/call", "{:.1f}"),
    ("daemon_cpu_us_per_call", "daemon CPU µs/call", "{:.1f}"),
    ("server_cpu_us_per_call", "server CPU µs/call", "{:.1f}"),
)


class BenchError(Exception):
    """The bus or the server failed; the benchmark cannot go on."""


@dataclass(frozen=True)
class Case:
    mode: str
    size: int
    window: int = 1

    @property
    def key(self):
        return f"seq-{self.size}" if self.mode == "seq" else f"pipe-{self.window}x{self.size}"

    @property
    def title(self):
        if self.mode == "seq":
            return f"seq {self.size} B"
        return f"pipe {self.window} × {self.size} B"

    def args(self, n, warmup):
        if self.mode == "seq":
            return ["seq", str(self.size), str(n), str(warmup)]
        return ["pipe", str(self.size), str(n), str(self.window), str(warmup)]


CASES = (
    Case("seq", 20),
    Case("seq", 512),
    Case("pipe", 20, 16),
    Case("pipe", 20, 64),
    Case("pipe", 512, 16),
    Case("pipe", 512, 64),
)


# ---------------------------------------------------------------- processes


def log(message):
    print(message, file=sys.stderr, flush=True)


def read_line(proc, timeout, what):
    """Reads one line from proc's (unbuffered) stdout, failing after timeout seconds or on EOF."""
    deadline = time.monotonic() + timeout
    data = b""
    fd = proc.stdout.fileno()
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BenchError(f"timed out waiting for {what}")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                code = proc.wait(timeout=5)
                raise BenchError(f"no {what}: the process exited with code {code}")
            data += chunk
    return data.decode(errors="replace").strip()


def cpu_seconds(pid):
    """utime + stime of a process, from /proc/PID/stat (clock-tick resolution)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()  # fields[0] is field 3, "state"
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def stop_process(proc, grace):
    """Waits up to grace seconds for proc to exit, then kills it."""
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class PrivateBus:
    """A temp dir, a dbus-daemon with system-bus limits and the C Echo server, as a context manager."""

    def __init__(self, floor):
        self.floor = floor
        self.tmp = None
        self.daemon = None
        self.server = None
        self.env = None

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="swiftble-bus-"))
        config = self.tmp / "bus.conf"
        socket = self.tmp / "bus.sock"
        config.write_text(CONFIG_TEMPLATE.read_text().replace("@SOCKET@", str(socket)))

        # Own sessions: Ctrl-C reaches only the runner and the clients, so shutdown stays orderly.
        with open(self.tmp / "daemon.log", "wb") as daemon_log:
            self.daemon = subprocess.Popen(
                ["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address"],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=daemon_log,
                bufsize=0, start_new_session=True)
        try:
            address = read_line(self.daemon, 10, "dbus-daemon address")
        except BenchError as e:
            raise BenchError(f"{e}; daemon log: {self.daemon_log()}") from None
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
        log(f"bus: {address}")

        self.server = subprocess.Popen(
            [self.floor, "server"], env=self.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, bufsize=0, start_new_session=True)
        line = read_line(self.server, 10, "'ready' from the server")
        if line != "ready":
            raise BenchError(f"server printed {line!r} instead of 'ready'")

    def daemon_log(self):
        try:
            return (self.tmp / "daemon.log").read_text(errors="replace").strip() or "(empty)"
        except OSError:
            return "(none)"

    def check_alive(self):
        for name, proc in (("dbus-daemon", self.daemon), ("server", self.server)):
            if proc.poll() is not None:
                raise BenchError(f"the {name} exited with code {proc.returncode}")

    def cpu(self):
        """(daemon, server) CPU seconds so far."""
        return cpu_seconds(self.daemon.pid), cpu_seconds(self.server.pid)

    def close(self):
        if self.server is not None:
            self._stop_server()
        if self.daemon is not None:
            if self.daemon.poll() is None:
                self.daemon.terminate()
            stop_process(self.daemon, 3)
            self.daemon.stdout.close()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
        self.server = self.daemon = self.tmp = None

    def _stop_server(self):
        if self.server.poll() is None and self.daemon.poll() is None:
            try:
                subprocess.run([self.floor, "quit"], env=self.env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        stop_process(self.server, 3)
        self.server.stdout.close()


# ---------------------------------------------------------------- one client run


def parse_client_output(stdout, case, n):
    """The client's JSON result (its last non-empty stdout line), checked against what was asked."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        raise ValueError("no output")
    result = json.loads(lines[-1])
    if not isinstance(result, dict):
        raise ValueError(f"not a JSON object: {lines[-1]!r}")
    missing = [key for key in CLIENT_KEYS if key not in result]
    if missing:
        raise ValueError(f"missing keys {missing} in {lines[-1]!r}")
    for key in CLIENT_KEYS[1:]:
        if key != "mode" and not isinstance(result[key], (int, float)):
            raise ValueError(f"{key} is not a number in {lines[-1]!r}")
    expected = {"mode": case.mode, "size": case.size, "n": n, "window": case.window}
    wrong = {k: result[k] for k, v in expected.items() if result[k] != v}
    if wrong:
        raise ValueError(f"result is for {wrong}, expected {expected}")
    return {key: result[key] for key in CLIENT_KEYS}


def run_in_own_group(command, env, timeout):
    """subprocess.run in a new process group; on timeout or Ctrl-C the whole group is killed,
    so wrapper commands (shell scripts, `swift run`) leave nothing behind."""
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        raise
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


def run_client(bus, command, case, n, warmup, timeout):
    """Runs one client; returns a record with its result, or with an error."""
    record = {"command": command, "ok": False}
    cpu_before = bus.cpu()
    started = time.monotonic()
    try:
        proc = run_in_own_group(command, bus.env, timeout)
    except subprocess.TimeoutExpired:
        record["error"] = f"timed out after {timeout} s"
        return record
    except OSError as e:
        record["error"] = f"cannot run: {e}"
        return record
    record["elapsed_s"] = round(time.monotonic() - started, 3)
    daemon_s, server_s = (after - before for after, before in zip(bus.cpu(), cpu_before))
    record["daemon_cpu_us_per_call"] = daemon_s * 1e6 / (n + warmup)
    record["server_cpu_us_per_call"] = server_s * 1e6 / (n + warmup)
    if proc.stderr.strip():
        record["stderr"] = proc.stderr.strip()[-2000:]

    if proc.returncode != 0:
        record["error"] = f"exit code {proc.returncode}: {shorten(last_line(proc.stderr))}"
        return record
    try:
        record.update(parse_client_output(proc.stdout, case, n))
    except ValueError as e:  # json.JSONDecodeError is a ValueError
        record["error"] = f"bad output: {shorten(str(e))}"
        return record
    record["ok"] = True
    return record


def shorten(text, limit=300):
    return text if len(text) <= limit else text[:limit] + "…"


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no stderr)"


def describe(record):
    if not record["ok"]:
        return f"FAILED: {record['error']}"
    return (f"{record['calls_per_s']:.0f} calls/s, p50 {record['p50_us']:.1f} µs, "
            f"client CPU {record['cpu_us_per_call']:.1f} µs/call")


def run_all(bus, commands, rounds, calls, timeout, runs):
    """Every round × case × role, A first in even rounds and B first in odd ones; appends to runs."""
    for rnd in range(rounds):
        order = ROLES if rnd % 2 == 0 else ROLES[::-1]
        for case in CASES:
            n, warmup = calls[case.mode]
            for role in order:
                command = commands[role] + case.args(n, warmup)
                record = {"round": rnd, "case": case.key, "role": role, "n_requested": n,
                          "warmup": warmup}
                record.update(run_client(bus, command, case, n, warmup, timeout))
                runs.append(record)
                log(f"[round {rnd + 1}/{rounds}] {case.title:<16} {ROLE_LABEL[role]:<12} "
                    f"{describe(record)}")
                bus.check_alive()


# ---------------------------------------------------------------- summary


def spread(values):
    if not values:
        return None
    return {"min": min(values), "median": statistics.median(values), "max": max(values),
            "count": len(values)}


def pair_ratios(case_runs, metric):
    """candidate/floor of metric for each round in which both roles succeeded."""
    by_round = {}
    for run in case_runs:
        if run["ok"]:
            by_round.setdefault(run["round"], {})[run["role"]] = run[metric]
    return [pair["candidate"] / pair["floor"] for _, pair in sorted(by_round.items())
            if len(pair) == 2 and pair["floor"] > 0]


def summarize_case(case, calls, runs):
    case_runs = [run for run in runs if run["case"] == case.key]
    n, warmup = calls[case.mode]
    summary = {"case": case.key, "title": case.title, "mode": case.mode, "size": case.size,
               "window": case.window, "n": n, "warmup": warmup, "roles": {}, "goals": {}}
    for role in ROLES:
        ok = [run for run in case_runs if run["role"] == role and run["ok"]]
        summary["roles"][role] = {
            "impl": ok[0]["impl"] if ok else None,
            "runs_ok": len(ok),
            "runs_failed": sum(1 for run in case_runs if run["role"] == role and not run["ok"]),
            "metrics": {key: spread([run[key] for run in ok]) for key, _, _ in TABLE_ROWS},
        }
    for metric, limit in GOALS.items():
        ratios = pair_ratios(case_runs, metric)
        median = statistics.median(ratios) if ratios else None
        summary["goals"][metric] = {
            "limit": limit, "pair_ratios": ratios, "median_ratio": median,
            "met": None if median is None else median <= limit,
        }
    return summary


# ---------------------------------------------------------------- Markdown


def fmt_spread(stats, number_format):
    if stats is None:
        return "–"
    low, mid, high = (number_format.format(stats[k]) for k in ("min", "median", "max"))
    return f"{low} / **{mid}** / {high}"


def fmt_goal(goal):
    ratio = "–" if goal["median_ratio"] is None else f"{goal['median_ratio']:.2f}×"
    status = {None: "n/a", True: "met", False: "not met"}[goal["met"]]
    return ratio, f"≤ {goal['limit']}×", status


def role_header(summary, role):
    impl = summary["roles"][role]["impl"]
    return f"{ROLE_LABEL[role]} ({impl})" if impl else ROLE_LABEL[role]


def case_table(summary):
    lines = [
        f"### {summary['title']} (N {summary['n']}, warm-up {summary['warmup']})",
        "",
        f"| metric | {role_header(summary, 'floor')} | {role_header(summary, 'candidate')} "
        "| B/A | goal | status |",
        "|---|---|---|---|---|---|",
    ]
    for key, label, number_format in TABLE_ROWS:
        cells = [fmt_spread(summary["roles"][role]["metrics"][key], number_format) for role in ROLES]
        ratio, goal, status = fmt_goal(summary["goals"][key]) if key in GOALS else ("", "", "")
        lines.append(f"| {label} | {cells[0]} | {cells[1]} | {ratio} | {goal} | {status} |")
    failed = {role: summary["roles"][role]["runs_failed"] for role in ROLES}
    if any(failed.values()):
        lines += ["", "Failed runs: " + ", ".join(f"{ROLE_LABEL[r]} {k}" for r, k in failed.items() if k)]
    return lines


def overview_table(summaries):
    lines = ["| case | client CPU B/A | goal | status | p50 B/A | goal | status |",
             "|---|---|---|---|---|---|---|"]
    for summary in summaries:
        cpu = fmt_goal(summary["goals"]["cpu_us_per_call"])
        p50 = fmt_goal(summary["goals"]["p50_us"])
        lines.append(f"| {summary['title']} | {' | '.join(cpu)} | {' | '.join(p50)} |")
    return lines


def render_markdown(meta, summaries, runs):
    lines = [
        "# D-Bus method calls: candidate vs the libdbus floor",
        "",
        f"{meta['started_at']} on {meta['host']} ({meta['cpus']} CPUs, Linux {meta['kernel']}, "
        f"{meta['dbus_daemon']}); {meta['rounds']} rounds"
        + (", quick" if meta["quick"] else "") + ("" if meta["complete"] else ", **incomplete**") + ".",
        "",
        f"* A = floor: `{meta['commands']['floor']}`",
        f"* B = candidate: `{meta['commands']['candidate']}`",
        "* Private dbus-daemon with the system bus's limits, C Echo server (libdbus).",
        "* Cells: min / **median** / max over rounds. B/A: candidate/floor per round, median over "
        "rounds. Client figures are the clients' own (measured calls only); daemon and server CPU "
        "come from /proc/PID/stat (10 ms ticks) over the whole client run, divided by N + warm-up.",
        "",
        "## Goals",
        "",
        *overview_table(summaries),
    ]
    for summary in summaries:
        lines += ["", *case_table(summary)]
    failures = [run for run in runs if not run["ok"]]
    if failures:
        lines += ["", "## Failures", ""]
        titles = {case.key: case.title for case in CASES}
        lines += [f"* round {run['round'] + 1}, {titles[run['case']]}, {ROLE_LABEL[run['role']]}: "
                  f"{run['error']}" for run in failures]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main


def dbus_daemon_version():
    try:
        out = subprocess.run(["dbus-daemon", "--version"], capture_output=True, text=True,
                             timeout=5).stdout
        return out.splitlines()[0].strip()
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "dbus-daemon (version unknown)"


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--floor", required=True, help="the dbus_floor binary (role A)")
    parser.add_argument("--swift", required=True,
                        help='the candidate client command (role B), e.g. ".build/release/ble-bench dbus-calls"')
    parser.add_argument("--rounds", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--quick", action="store_true", help="small N, for a smoke run")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="output directory (default Benchmarks/results)")
    parser.add_argument("--timeout", type=float, default=300, help="seconds allowed per client run (default 300)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    return args


def on_sigterm(signum, frame):
    raise KeyboardInterrupt  # unwinds through the finally blocks like Ctrl-C


def main(argv=None):
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    floor = str(Path(args.floor).resolve())
    if not os.access(floor, os.X_OK):
        log(f"error: {args.floor} is not an executable file")
        return 2
    commands = {"floor": [floor], "candidate": shlex.split(args.swift)}
    calls = QUICK_CALLS if args.quick else CALLS
    meta = {
        "started_at": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": platform.node(), "kernel": platform.release(), "cpus": os.cpu_count(),
        "dbus_daemon": dbus_daemon_version(), "rounds": args.rounds, "quick": args.quick,
        "commands": {role: shlex.join(cmd) for role, cmd in commands.items()},
        "calls": {mode: {"n": n, "warmup": w} for mode, (n, w) in calls.items()},
        "cases": [case.key for case in CASES], "complete": False,
    }

    runs, error = [], None
    try:
        with PrivateBus(floor) as bus:
            run_all(bus, commands, args.rounds, calls, args.timeout, runs)
        meta["complete"] = True
    except KeyboardInterrupt:
        error = "interrupted"
    except (BenchError, OSError) as e:
        error = str(e)
    if error:
        log(f"error: {error}")
        meta["error"] = error

    if runs:
        summaries = [summarize_case(case, calls, runs) for case in CASES]
        write_results(Path(args.out), meta, runs, summaries)
    failed = sum(1 for run in runs if not run["ok"])
    if failed:
        log(f"{failed} of {len(runs)} client runs failed")
    return 1 if failed or error else 0


def write_results(out, meta, runs, summaries):
    out.mkdir(parents=True, exist_ok=True)
    markdown = render_markdown(meta, summaries, runs)
    with open(out / "dbus-calls.json", "w") as f:
        json.dump({"meta": meta, "runs": runs, "summary": summaries}, f, indent=1)
        f.write("\n")
    (out / "dbus-calls.md").write_text(markdown)
    print(markdown, end="")
    log(f"wrote {out / 'dbus-calls.json'} and {out / 'dbus-calls.md'}")


if __name__ == "__main__":
    sys.exit(main())
