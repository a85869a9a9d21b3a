#!/bin/sh
# build.sh - compiles the libdbus floors: dbus_floor.c (method calls) and gatt_floor.c (GATT),
# and wake_probe.c, the library run_gatt.py preloads into the clients of some cases.
#
# usage: Benchmarks/floor/build.sh [OUTDIR]
#   OUTDIR defaults to .build/bench (relative to the current directory, so run it
#   from the package root). Produces OUTDIR/dbus_floor, OUTDIR/gatt_floor and OUTDIR/wake_probe.so.
# Needs gcc, pkg-config and libdbus-1-dev (apt-get install -y gcc pkg-config libdbus-1-dev).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-.build/bench}
mkdir -p "$out"

# shellcheck disable=SC2046  # pkg-config output must be word-split
gcc -O2 -std=c11 -Wall -Wextra -o "$out/dbus_floor" "$here/dbus_floor.c" $(pkg-config --cflags --libs dbus-1)
# shellcheck disable=SC2046
gcc -O2 -std=c11 -Wall -Wextra -o "$out/gatt_floor" "$here/gatt_floor.c" $(pkg-config --cflags --libs dbus-1)
gcc -O2 -std=c11 -Wall -Wextra -shared -fPIC -o "$out/wake_probe.so" "$here/wake_probe.c" -ldl
echo "built $out/dbus_floor $out/gatt_floor $out/wake_probe.so"
