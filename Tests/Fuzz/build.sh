#!/bin/sh
# Builds the libFuzzer target for the decoders of outside data (`make fuzz` runs it):
# DBus, BlueZ and BLE as static modules instrumented with `-sanitize=fuzzer,address`, then
# Tests/Fuzz/FuzzEntry.swift with the harness in Tests/BLETests/Fuzz (shared with the
# regression test). All in one package (`-package-name`), as SwiftPM builds them, so that the
# modules see each other's `package` declarations. Usage: build.sh <output directory>
set -eu
out=${1:-.build/fuzz}
mkdir -p "$out"
flags="-sanitize=fuzzer,address -parse-as-library -enable-testing -Onone -g -swift-version 6 -suppress-warnings -package-name swift_ble"
includes="-I Sources/CDBus -I $out $(pkg-config --cflags-only-I dbus-1 | sed 's/-I/-Xcc -I/g')"

module() {
    name=$1
    shift
    # shellcheck disable=SC2086
    swiftc $flags $includes -module-name "$name" -emit-module -emit-module-path "$out/$name.swiftmodule" \
        -emit-library -static -o "$out/lib$name.a" "$@"
}

module DBus $(find Sources/DBus -name '*.swift' | sort)
module BlueZ $(find Sources/BlueZ -name '*.swift' | sort)
module BLE $(find Sources/BLE -name '*.swift' | sort)
# shellcheck disable=SC2086
swiftc $flags $includes -module-name BLEFuzz Tests/Fuzz/FuzzEntry.swift $(find Tests/BLETests/Fuzz -name 'Fuzz[HRS]*.swift' ! -name '*Tests.swift' | sort) \
    "$out/libBLE.a" "$out/libBlueZ.a" "$out/libDBus.a" -ldbus-1 -o "$out/fuzz-decoding" 2>"$out/link.log" || {
    cat "$out/link.log"
    exit 1
}
# gold warns once per ASan helper symbol it cannot export; nothing else is expected here.
grep -v "Cannot export local symbol" "$out/link.log" >&2 || true
echo "built $out/fuzz-decoding"
