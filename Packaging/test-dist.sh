#!/bin/sh
# make test-dist: proves the package runs without Swift. In a Debian 12 root made with
# debootstrap (no Swift toolchain in it), installs the .deb that `make dist` made, then runs
# the bleak conformance flow against the installed ble-sim, and `ble` against it.
# Usage: test-dist.sh DIST_DIR (as root: debootstrap and chroot need it)
set -eu
DIST=$(realpath "${1:-.build/dist}")
cd "$(dirname "$0")/.."

die() { echo "make test-dist: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot)"
deb=$(ls "$DIST"/swift-ble_*.deb 2> /dev/null | head -1)
[ -n "$deb" ] || die "no package in $DIST: run make dist first"

root="$DIST/bookworm"
if [ ! -x "$root/usr/bin/python3" ]; then
    command -v debootstrap > /dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; }
    rm -rf "$root"
    debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$root" \
        http://deb.debian.org/debian > "$DIST/debootstrap.log" 2>&1 || { tail -20 "$DIST/debootstrap.log"; die "debootstrap failed"; }
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
mount -t proc proc "$root/proc"
trap 'umount "$root/proc"' EXIT
in_root() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

if in_root sh -c 'command -v swift || ls -d /opt/swift /usr/share/swift 2>/dev/null'; then die "the root has Swift"; fi
cp "$deb" "$root/tmp/swift-ble.deb"
in_root apt-get update -qq
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /tmp/swift-ble.deb > /dev/null
echo "PASS the package installs with its dependencies: $(in_root dpkg-query -W -f '${Depends}' swift-ble)"

[ -x "$root/opt/bleak/bin/python" ] || in_root python3 -m venv /opt/bleak
in_root /opt/bleak/bin/pip install -q --disable-pip-version-check bleak
cp Tests/Conformance/bleak_conformance.py "$root/tmp/"
in_root /opt/bleak/bin/python /tmp/bleak_conformance.py /usr/bin/ble-sim \
    /usr/share/swift-ble/scenarios/heart-rate-monitor.json --profile 5.66
echo "PASS bleak's conformance flow against the installed ble-sim"

# The ble tool, installed too, against the installed simulator.
in_root sh -c 'out=$(mktemp)
    ble-sim --scenario /usr/share/swift-ble/scenarios/heart-rate-monitor.json > "$out" 2> /dev/null &
    sim=$!
    while [ ! -s "$out" ]; do sleep 0.1; done
    export "$(head -1 "$out")"
    ble read C4:7C:8D:6A:11:22 2A38 --format uint8 | grep -qx 1
    status=$?
    kill $sim
    wait $sim
    rm -f "$out"
    exit $status'
echo "PASS ble reads the simulated monitor"
in_root sh -c 'ble devices --bus unix:path=/nonexistent/socket; test $? = 3' 2> /dev/null
echo "PASS ble without bluetoothd: one line, status 3"
