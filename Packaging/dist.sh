#!/bin/sh
# make dist: ble and ble-sim built in release with the Swift runtime (Foundation included) linked
# statically, packed as a Debian package (swift-ble_<version>_<arch>.deb) that depends only on
# what Debian ships, and as a tarball. Usage: dist.sh [SWIFT] [OUT_DIR]
set -eu
SWIFT=${1:-swift}
OUT=${2:-.build/dist}
cd "$(dirname "$0")/.."

die() { echo "make dist: $*" >&2; exit 1; }

toolchain=$(dirname "$(dirname "$(command -v "$SWIFT")")")
[ -f "$toolchain/lib/swift_static/linux/libFoundation.a" ] \
    || die "this Swift toolchain ($toolchain) has no static runtime (lib/swift_static/linux/libFoundation.a): install one that ships it (the swift.org toolchains for Linux do)"
command -v dpkg-deb > /dev/null || die "dpkg-deb is missing (Debian's dpkg package)"

# 0.<commits>+g<hash>: grows with every commit, as Debian versions must.
version="0.$(git rev-list --count HEAD 2> /dev/null || echo 0)+g$(git rev-parse --short HEAD 2> /dev/null || echo local)"
arch=$(dpkg --print-architecture)

for product in ble ble-sim; do
    "$SWIFT" build -c release --static-swift-stdlib --product "$product"
done
bin=$("$SWIFT" build -c release --static-swift-stdlib --show-bin-path)

# No Swift library may be left to load at run time.
for tool in ble ble-sim; do
    if ldd "$bin/$tool" | grep -q 'libswift\|libFoundation\|libdispatch\|libBlocksRuntime'; then
        die "$tool still loads Swift libraries: $(ldd "$bin/$tool" | grep 'swift\|Foundation\|dispatch' | tr -s ' ' | tr '\n' ';')"
    fi
done

# The Debian packages of the libraries they load (libc, libstdc++, libdbus, …), and dbus for the
# dbus-daemon ble-sim starts.
# Only what they link directly (readelf's NEEDED): what those libraries need comes with their packages.
depends=$(for tool in ble ble-sim; do readelf -d "$bin/$tool"; done | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' \
    | sort -u | while read -r soname; do
        library=$(ldd "$bin/ble-sim" "$bin/ble" | awk -v name="$soname" '$1 == name && $3 ~ /^\// { print $3; exit }')
        [ -n "$library" ] || continue
        dpkg -S "$(readlink -f "$library")" 2> /dev/null || dpkg -S "$library"
    done | cut -d: -f1 | sort -u | tr '\n' ' ')
depends=$(printf '%s\n' $depends dbus | sort -u | paste -sd, - | sed 's/,/, /g')

rm -rf "$OUT"
root="$OUT/swift-ble_${version}_${arch}"
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/usr/share/doc/swift-ble" "$root/usr/share/swift-ble/scenarios"
install -m 755 -s "$bin/ble" "$bin/ble-sim" "$root/usr/bin/"
install -m 644 Scenarios/*.json "$root/usr/share/swift-ble/scenarios/"
install -m 644 README.md "$root/usr/share/doc/swift-ble/README.md"
install -m 644 Scenarios/README.md "$root/usr/share/doc/swift-ble/scenarios.md"
cat > "$root/DEBIAN/control" << CONTROL
Package: swift-ble
Version: $version
Architecture: $arch
Maintainer: swift-ble <swift-ble@localhost>
Depends: $depends
Section: net
Priority: optional
Description: Bluetooth Low Energy tools over BlueZ, and a simulated bluetoothd
 ble scans, connects, reads, writes, pairs and monitors through bluetoothd; ble-sim is a
 bluetoothd stand-in on a private D-Bus bus, for testing any BlueZ client without a radio.
CONTROL
dpkg-deb --build --root-owner-group "$root" "$root.deb" > /dev/null

tarball="$OUT/swift-ble-${version}-linux-${arch}"
mkdir -p "$tarball/bin" "$tarball/scenarios"
cp "$root/usr/bin/ble" "$root/usr/bin/ble-sim" "$tarball/bin/"
cp Scenarios/*.json "$tarball/scenarios/"
cp README.md "$tarball/"
tar -C "$OUT" -czf "$tarball.tar.gz" "$(basename "$tarball")"
rm -rf "$tarball"

echo "make dist: $root.deb (Depends: $depends)"
echo "make dist: $tarball.tar.gz"
