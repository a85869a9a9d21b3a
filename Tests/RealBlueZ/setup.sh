#!/bin/bash
# Installs the Debian 12 packages the real-BlueZ VM needs, when any is missing (sudo when not
# root). The kernel is not installed: build-image.sh downloads and unpacks it.
set -euo pipefail
PACKAGES=(qemu-system-x86 bluez bluez-test-tools busybox-static dbus socat cpio kmod gzip xz-utils zstd
    python3 python3-dbus python3-gi)
missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
echo "real-bluez: installing ${missing[*]}"
$SUDO apt-get update -qq
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
