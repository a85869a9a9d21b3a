#!/bin/sh
# make test-under-load: the whole suite RUNS times in a row (default 5) while a CPU load keeps
# every core busy: stress-ng --cpu <cores> when installed, else one `yes > /dev/null` per core.
# No test may depend on how fast the machine is. Expects the tests built (swift build
# --build-tests). One line per run (passed/failed, tests, seconds), then a summary; exits
# non-zero when a run failed. Logs in .build/under-load/run-<n>.log. The load always stops.
set -u
RUNS=${1:-5}
SWIFT=${SWIFT:-swift}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
LOGS="$ROOT/.build/under-load"
cores=$(nproc)
load_pids=""

stop_load() {
    [ -n "$load_pids" ] && kill $load_pids 2>/dev/null
    [ -n "$load_pids" ] && wait $load_pids 2>/dev/null
    load_pids=""
}
trap stop_load EXIT
trap 'exit 130' INT TERM

cd "$ROOT" || exit 1
mkdir -p "$LOGS"
if command -v stress-ng >/dev/null 2>&1; then
    stress-ng --cpu "$cores" --timeout 24h --quiet &
    load_pids=$!
    load="stress-ng --cpu $cores"
else
    for _ in $(seq "$cores"); do
        yes >/dev/null &
        load_pids="$load_pids $!"
    done
    load="$cores yes loops (no stress-ng)"
fi
echo "under load ($load): the suite $RUNS times"

failed=0
for run in $(seq "$RUNS"); do
    log="$LOGS/run-$run.log"
    started=$(date +%s.%N)
    timeout 1800 $SWIFT test --skip-build >"$log" 2>&1
    status=$?
    seconds=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
    # Swift Testing's last word: "Test run with 983 tests in 176 suites passed after …".
    tests=$(sed -n 's/.*Test run with \([0-9]*\) tests.*/\1/p' "$log" | tail -1)
    if [ "$status" = 0 ]; then
        result=passed
    else
        result="FAILED (exit $status)"
        failed=$((failed + 1))
    fi
    echo "run $run/$RUNS: $result, ${tests:-?} tests, $seconds s"
    if [ "$status" != 0 ]; then
        grep -E '^✘ Test .* (recorded an issue|failed)' "$log" | cut -c1-240 | head -10 | sed 's/^/    /'
        echo "    log: $log"
    fi
done
stop_load
if [ "$failed" = 0 ]; then
    echo "under load: $RUNS of $RUNS runs passed"
else
    echo "under load: $((RUNS - failed)) of $RUNS runs passed, $failed failed (logs in $LOGS)"
    exit 1
fi
