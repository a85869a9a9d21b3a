#!/bin/bash
# Inside the guest (exec.sh, from the repository root): serves the test peripheral on hci1,
# runs the RealBlueZTests suite on hci0 against the real bluetoothd, stops the peripheral.
#   run-in-guest.sh TEST_BINARY LOG_DIR      (REAL_BLUEZ_FILTER: a narrower --filter)
set -uo pipefail
binary="$1"; logs="$2"
python3 Tests/RealBlueZ/peripheral.py hci1 >"$logs/peripheral.log" 2>&1 &
peripheral=$!
trap 'kill $peripheral 2>/dev/null' EXIT
deadline=$(( $(date +%s) + 180 ))
until grep -q PERIPHERAL-READY "$logs/peripheral.log"; do
    if ! kill -0 $peripheral 2>/dev/null || [ "$(date +%s)" -ge $deadline ]; then
        echo "real-bluez: FAILED: the test peripheral did not start:"; cat "$logs/peripheral.log"; exit 1
    fi
    sleep 0.2
done
SWIFT_BLE_TRACE=${SWIFT_BLE_TRACE:-0} SWIFT_BLE_BACKEND=bluez SWIFT_BLE_TRACE_OUT="$logs/bluez-5.66.trace" timeout 1200 "$binary" --testing-library swift-testing --filter "${REAL_BLUEZ_FILTER:-RealBlueZTests}"
