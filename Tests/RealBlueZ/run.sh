#!/bin/bash
# make test-bluez: the RealBlueZTests suite against the real bluetoothd 5.66 with two emulated
# controllers (btvirt; hci0 central, hci1 peripheral) in a qemu guest. Installs what it needs,
# builds the guest, boots it, runs the suite inside it (fd passing only works there), and
# always shuts the guest down. Fails, never skips, when the guest cannot boot.
# Expects the test binary built (swift build --build-tests).
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
RUN="${REAL_BLUEZ_DIR:-$ROOT/.build/real-bluez}/run"
started=$(date +%s.%N)
fail() { echo "real-bluez: FAILED: $*" >&2; exit 1; }
elapsed() { awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

binary=$(find "$ROOT/.build/debug/" -maxdepth 1 -name '*PackageTests.xctest' | head -1)
[ -n "$binary" ] || fail "no test binary in .build/debug (swift build --build-tests first)"
"$HERE/setup.sh" || fail "could not install the packages"
"$HERE/build-image.sh" || fail "could not build the guest image"
"$HERE/stop.sh" >/dev/null   # a guest left by an interrupted run
trap '"$HERE/stop.sh"' EXIT
trap 'exit 130' INT TERM
"$HERE/start.sh" || fail "the guest did not boot with bluetoothd and two adapters (logs: $RUN)"
. "$RUN/env"
"$HERE/exec.sh" -C "$ROOT" -- "Tests/RealBlueZ/run-in-guest.sh '$binary' '$RUN'"
status=$?
echo "real-bluez: boot to ready ${REAL_BLUEZ_BOOT_SECONDS} s ($REAL_BLUEZ_ACCEL), total $(elapsed) s, logs in $RUN"
[ $status = 0 ] || fail "the suite failed (exit $status)"
echo "real-bluez: passed"
