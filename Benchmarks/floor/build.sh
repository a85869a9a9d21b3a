#!/bin/sh
# build.sh - compiles the libdbus floor client/server (dbus_floor.c).
#
# usage: Benchmarks/floor/build.sh [OUTDIR]
#   OUTDIR defaults to .build/bench (relative to the current directory, so run it
#   from the package root). Produces OUTDIR/dbus_floor.
# Needs gcc, pkg-config and libdbus-1-dev (apt-get install -y gcc pkg-config libdbus-1-dev).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-.build/bench}
mkdir -p "$out"

# shellcheck disable=SC2046  # pkg-config output must be word-split
gcc -O2 -std=c11 -Wall -Wextra -o "$out/dbus_floor" "$here/dbus_floor.c" $(pkg-config --cflags --libs dbus-1)
echo "built $out/dbus_floor"
