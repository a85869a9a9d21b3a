#!/bin/sh
# Runs the three examples against ble-sim, as a CI job of another project would: the pytest
# suite (bleak), the bluetoothctl script and the C client. Usage: run.sh BLE_SIM PYTHON BUILD_DIR
# (PYTHON with bleak and pytest installed; BUILD_DIR takes the C client's binary).
set -eu
BLE_SIM=$(realpath "$1")
PYTHON=$2
BUILD=$3
here=$(cd "$(dirname "$0")" && pwd)
scenario="$here/../../Scenarios/heart-rate-monitor.json"

echo "== pytest + bleak"
BLE_SIM="$BLE_SIM" BLE_SIM_SCENARIO="$scenario" "$PYTHON" -m pytest -q -p no:cacheprovider "$here/pytest"

echo "== bluetoothctl"
sh "$here/bluetoothctl/check.sh" "$BLE_SIM" "$scenario"

echo "== a D-Bus client in C"
mkdir -p "$BUILD"
cc -Wall -Wextra -Werror "$here/c/read_location.c" $(pkg-config --cflags --libs dbus-1) -o "$BUILD/read_location"
out=$(mktemp)
"$BLE_SIM" --scenario "$scenario" > "$out" 2> /dev/null &
sim=$!
trap 'kill $sim 2> /dev/null; wait $sim 2> /dev/null; rm -f "$out"' EXIT
while [ ! -s "$out" ]; do kill -0 $sim || exit 1; sleep 0.1; done
env "$(head -1 "$out")" "$BUILD/read_location"
echo "PASS the C client read the body sensor location"
