#!/bin/sh
# bluetoothctl (Debian's bluez package) scripted from the shell against ble-sim: scan, connect,
# list the GATT attributes, disconnect, each step checked. Usage: check.sh BLE_SIM SCENARIO
# Exits 0 when every step did what it should, 1 with the step's output otherwise.
set -eu
BLE_SIM=${1:-ble-sim}
SCENARIO=${2:-Scenarios/heart-rate-monitor.json}
MONITOR=C4:7C:8D:6A:11:22

out=$(mktemp -d)
"$BLE_SIM" --scenario "$SCENARIO" > "$out/sim" 2> /dev/null &
sim=$!
trap 'kill $sim 2> /dev/null; wait $sim 2> /dev/null; rm -rf "$out"' EXIT
# The first line, once the simulator is ready: DBUS_SYSTEM_BUS_ADDRESS=<address>
while [ ! -s "$out/sim" ]; do kill -0 $sim || exit 1; sleep 0.1; done
export "$(head -1 "$out/sim")"

step() {  # step NAME EXPECTED COMMAND...: runs bluetoothctl COMMAND, checks its output
    name=$1; expected=$2; shift 2
    if bluetoothctl "$@" > "$out/step" 2>&1 && grep -q "$expected" "$out/step"; then
        echo "PASS $name"
    else
        echo "FAIL $name (no \"$expected\" in:)"; cat "$out/step"; exit 1
    fi
}

step "scan finds the monitor" "Device $MONITOR" --timeout 5 scan on
step "connect" "Connection successful" connect $MONITOR
step "the heart-rate service is listed" "Heart Rate" --timeout 3 gatt.list-attributes $MONITOR
step "the body sensor location is listed" "Body Sensor Location" --timeout 3 gatt.list-attributes $MONITOR
step "info says connected" "Connected: yes" info $MONITOR
step "disconnect" "Successful disconnected" disconnect $MONITOR
