"""gatt_report.py - the Markdown table and SVG chart of run_gatt.py's results (standard library only).

The goals are issue 8's; each is checked against the medians over rounds (ratios: the median of
the per-round swift/floor or swift/bleak pair ratios), and reported whether met or not.
"""

import math

ROLES = ("floor", "swift", "bleak")
LABEL = {"floor": "A floor (C libdbus)", "swift": "B swift-ble", "bleak": "C bleak"}
GATT_OPS = ("read-20", "read-512", "write-20", "write-512", "wcmd-20", "wcmd-20-w16")
LATENCY_CASES = ("connect", "read-20", "read-512", "write-20", "write-512")
NOTIFY_BURSTS = ("notify-dbus-burst-20", "notify-acquire-burst-20")

ROWS = (  # key, label, format
    ("ops_per_s", "ops/s", "{:.0f}"),
    ("lat_p50_us", "p50 latency µs", "{:.0f}"),
    ("lat_p99_us", "p99 latency µs", "{:.0f}"),
    ("lat_max_us", "max latency µs", "{:.0f}"),
    ("cpu_us_per_op", "client CPU µs/op", "{:.1f}"),
    ("daemon_cpu_us_per_op", "dbus-daemon CPU µs/op", "{:.1f}"),
    ("sim_cpu_us_per_op", "ble-sim CPU µs/op", "{:.1f}"),
    ("wall_s", "wall s", "{:.3f}"),
    ("lost", "lost", "{:.0f}"),
    ("peak_rss_kb", "peak RSS KiB", "{:.0f}"),
    ("process_cpu_s", "process CPU s (whole run)", "{:.2f}"),
    ("kib_per_peripheral", "RSS KiB per peripheral (10→100)", "{:.1f}"),
)


def med(summary, role, metric, stat="median"):
    spread = summary["roles"][role]["metrics"].get(metric)
    return None if spread is None else spread[stat]


def ratio(summary, name):
    entry = summary["ratios"].get(name)
    return None if entry is None else entry["median"]


def fx(value, fmt="{:.2f}×"):
    return "–" if value is None else fmt.format(value)


def status(ok):
    return {None: "n/a", True: "met", False: "**not met**"}[ok]


def failures(summary):
    """ ", n of m swift-ble runs failed" when some did: a goal met by the rest is not met."""
    swift = summary["roles"]["swift"]
    failed, total = swift["runs_failed"], swift["runs_failed"] + swift["runs_ok"]
    return f", {failed} of {total} runs failed" if failed else ""


def goal_rows(summaries):
    """(goal, case, measured, status) for every goal of issue 8 that the run covers."""
    by = {s["case"]: s for s in summaries}
    rows = []
    for case in GATT_OPS:
        if case in by:
            r = ratio(by[case], "swift/floor cpu_us_per_op")
            rows.append(("client CPU/op ≤ 1.2× floor", case, fx(r), status(None if r is None else r <= 1.2)))
    for case in GATT_OPS:
        if case in by:
            r = ratio(by[case], "swift/bleak cpu_us_per_op")
            rows.append(("client CPU/op ≤ 0.6× bleak", case, fx(r), status(None if r is None else r <= 0.6)))
    for case in LATENCY_CASES:
        if case in by:
            r = ratio(by[case], "swift/floor lat_p50_us")
            rows.append(("p50 latency ≤ 1.1× floor", case, fx(r), status(None if r is None else r <= 1.1)))
    for case in NOTIFY_BURSTS:
        if case in by:
            r = ratio(by[case], "swift/floor ops_per_s")
            lost = med(by[case], "swift", "lost", "max")
            ok = None if r is None or lost is None else (r >= 0.9 and lost == 0)
            rows.append(("notifications/s ≥ 0.9× floor, 0 lost", case,
                         f"{fx(r)}, lost ≤ {fx(lost, '{:.0f}')}", status(ok)))
    if all(c in by for c in NOTIFY_BURSTS):
        acquired = med(by["notify-acquire-burst-20"], "swift", "ops_per_s")
        dbus = med(by["notify-dbus-burst-20"], "swift", "ops_per_s")
        r = acquired / dbus if acquired and dbus else None
        rows.append(("AcquireNotify ≥ 2× the D-Bus path (swift-ble, burst/s)", "notify-*-burst-20", fx(r),
                     status(None if r is None else r >= 2)))
    if "scan-10000" in by:
        wall = med(by["scan-10000"], "swift", "wall_s")
        rss = med(by["scan-10000"], "swift", "peak_rss_kb", "max")
        ok = None if wall is None or rss is None else (wall < 5 and rss < 100 * 1024)
        failed = failures(by["scan-10000"])
        rows.append(("10,000 advertisers reported < 5 s, RSS < 100 MB", "scan-10000",
                     f"{fx(wall, '{:.2f} s')}, {fx(rss and rss / 1024, '{:.1f} MiB')}{failed}",
                     status(None if failed else ok)))
    if "memory" in by:
        kib = med(by["memory"], "swift", "kib_per_peripheral")
        rows.append(("≤ 64 KiB per connected peripheral", "memory", fx(kib, "{:.1f} KiB"),
                     status(None if kib is None else kib <= 64)))
    return rows


def cell(summary, role, key, fmt):
    spread = summary["roles"][role]["metrics"].get(key)
    if spread is None:
        return "–"
    low, mid, high = (fmt.format(spread[k]) for k in ("min", "median", "max"))
    return f"{low} / **{mid}** / {high}"


def case_table(summary):
    lines = [f"### {summary['case']} (per {summary['unit']})", "",
             f"| metric | {' | '.join(LABEL[r] for r in ROLES)} | B/A | B/C |", "|---|---|---|---|---|---|"]
    for key, label, fmt in ROWS:
        cells = [cell(summary, role, key, fmt) for role in ROLES]
        if all(c == "–" for c in cells):
            continue
        ba = fx(ratio(summary, f"swift/floor {key}")) if f"swift/floor {key}" in summary["ratios"] else ""
        bc = fx(ratio(summary, f"swift/bleak {key}")) if f"swift/bleak {key}" in summary["ratios"] else ""
        lines.append(f"| {label} | {' | '.join(cells)} | {ba} | {bc} |")
    failed = {r: summary["roles"][r]["runs_failed"] for r in ROLES if summary["roles"][r]["runs_failed"]}
    if failed:
        lines += ["", "Failed runs: " + ", ".join(f"{LABEL[r]} {n}" for r, n in failed.items())]
    return lines + [""]


def render_markdown(meta, summaries):
    lines = [
        "# GATT benchmarks: swift-ble vs the libdbus floor vs bleak",
        "",
        f"{meta['started_at']} on {meta['host']} ({meta['cpus']} CPUs, Linux {meta['kernel']}, "
        f"{meta['dbus_daemon']}); {meta['rounds']} interleaved rounds"
        + (", quick settings" if meta["quick"] else "") + ("" if meta["complete"] else ", **incomplete**") + ".",
        "",
        *(f"* {LABEL[r]}: `{meta['commands'][r]}`" for r in ROLES),
        "* One private dbus-daemon with the system bus's limits; ble-sim (release) on it, one per scenario "
        "group (gatt-5x4, beacon crowds of 1,000 and 10,000, 100 peripherals with the 5 × 4 tree).",
        "* Cells: min / **median** / max over rounds. B/A and B/C: swift-ble/floor and swift-ble/bleak "
        "per round, median over rounds. Client CPU is each client's getrusage over its measured phase; "
        "daemon and simulator CPU come from /proc/PID/stat (10 ms ticks) over the whole client run "
        "(set-up included) divided by its operations; process CPU is the child's whole rusage.",
        "* Notifications: ops/s = distinct values received / time from the start request to the last one; "
        "latency = receive time − the simulator's send stamp (CLOCK_MONOTONIC).",
        "",
        "## Goals (issue 8) and where we stand",
        "",
        "| goal | case | swift-ble | status |",
        "|---|---|---|---|",
        *(f"| {g} | {c} | {m} | {s} |" for g, c, m, s in goal_rows(summaries)),
        "",
        "## Cases",
        "",
        "Arguments per case (see Benchmarks/floor/gatt_floor.c): "
        + ", ".join(f"{c} `{' '.join(a)}`" for c, a in meta["arguments"].items()) + ".",
        "",
    ]
    for summary in summaries:
        lines += case_table(summary)
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- SVG


def render_svg(meta, summaries):
    """Two panels of horizontal bars on a log scale: client CPU/op and p50 latency of swift-ble and
    bleak relative to the floor (ratio of medians), per case, with the goal lines."""
    panels = [("client CPU per operation, relative to the C floor", "cpu_us_per_op", 1.2),
              ("p50 latency, relative to the C floor", "lat_p50_us", 1.1)]
    rows = [s for s in summaries if med(s, "floor", "cpu_us_per_op")]
    colors = {"swift": "#1b7f79", "bleak": "#e07b22"}
    left, width, bar, gap = 190, 560, 9, 8
    lo, hi = math.log2(0.25), math.log2(32)

    def x(value):
        value = min(max(value, 2 ** lo), 2 ** hi)
        return left + (math.log2(value) - lo) / (hi - lo) * width

    parts, y = [], 40
    for title, metric, goal in panels:
        parts.append(f'<text x="{left}" y="{y}" font-size="14" font-weight="bold">{title}</text>')
        y += 14
        top = y
        for s in rows:
            y += gap
            parts.append(f'<text x="{left - 6}" y="{y + bar + 3}" font-size="11" text-anchor="end">{s["case"]}</text>')
            for role in ("swift", "bleak"):
                floor, value = med(s, "floor", metric), med(s, role, metric)
                if floor and value:
                    r = value / floor
                    parts.append(f'<rect x="{x(2 ** lo):.1f}" y="{y}" width="{x(r) - x(2 ** lo):.1f}" '
                                 f'height="{bar}" fill="{colors[role]}"/>')
                    parts.append(f'<text x="{x(r) + 3:.1f}" y="{y + bar - 1}" font-size="9">{r:.2f}×</text>')
                y += bar
        bottom = y + gap
        for tick in (0.25, 0.5, 1, 2, 4, 8, 16, 32):
            parts.append(f'<line x1="{x(tick):.1f}" y1="{top}" x2="{x(tick):.1f}" y2="{bottom}" '
                         f'stroke="#ccc" stroke-width="0.5"/>')
            parts.append(f'<text x="{x(tick):.1f}" y="{bottom + 12}" font-size="10" text-anchor="middle">{tick:g}×</text>')
        parts.append(f'<line x1="{x(1):.1f}" y1="{top}" x2="{x(1):.1f}" y2="{bottom}" stroke="#000"/>')
        parts.append(f'<line x1="{x(goal):.1f}" y1="{top}" x2="{x(goal):.1f}" y2="{bottom}" stroke="#c00" '
                     f'stroke-dasharray="4 3"/>')
        parts.append(f'<text x="{x(goal) + 2:.1f}" y="{top + 9}" font-size="9" fill="#c00">goal {goal}×</text>')
        y = bottom + 40
    legend = "".join(f'<rect x="{left + i * 130}" y="{y - 20}" width="12" height="10" fill="{colors[r]}"/>'
                     f'<text x="{left + i * 130 + 16}" y="{y - 11}" font-size="11">{LABEL[r]}</text>'
                     for i, r in enumerate(("swift", "bleak")))
    header = (f'<text x="10" y="18" font-size="12">GATT benchmarks, {meta["started_at"]}, '
              f'{meta["rounds"]} rounds{", quick" if meta["quick"] else ""}: median / median of the floor '
              f'(1× = C libdbus, lower is better; log scale)</text>')
    height = y + 10
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 60}" height="{height}" '
            f'font-family="sans-serif"><rect width="100%" height="100%" fill="#fff"/>{header}'
            + "".join(parts) + legend + "</svg>\n")
