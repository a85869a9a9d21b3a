#!/bin/bash
# Builds the guest: Debian's kernel (downloaded and unpacked, never installed) and a small
# initramfs made of this host's own busybox, dbus-daemon, bluetoothd, btvirt and socat with
# their libraries, plus the kernel modules Bluetooth, the emulated controllers and 9p need.
#
#   build-image.sh [IMAGE_DIR]     default: <repo>/.build/real-bluez/image
# Output: IMAGE_DIR/vmlinuz, IMAGE_DIR/initramfs.cpio.gz. Takes a few seconds (the first
# time also downloads the kernel package, ~70 MB).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
IMG="${1:-$ROOT/.build/real-bluez/image}"
mkdir -p "$IMG"
started=$(date +%s.%N)

for tool in busybox cpio gzip ldd modprobe depmod dpkg-deb apt-get; do
    command -v "$tool" >/dev/null || { echo "build-image: $tool is missing (run setup.sh)" >&2; exit 1; }
done

# The kernel: the package linux-image-amd64 points at, unpacked into the image folder. The
# host's own kernel is of no use (this machine's has no Bluetooth at all).
kernel_package() {
    apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -1
}
package=$(kernel_package)
if [ -z "$package" ]; then   # a machine that has every package but no package lists yet
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq && package=$(kernel_package)
fi
[ -n "$package" ] || { echo "build-image: apt knows no linux-image-amd64 (apt-get update?)" >&2; exit 1; }
kernel="$IMG/kernel/$package"
if [ ! -d "$kernel/lib/modules" ]; then
    rm -rf "$IMG/kernel"; mkdir -p "$kernel"
    (cd "$IMG/kernel" && apt-get download -q -o APT::Sandbox::User=root "$package" >/dev/null)
    dpkg-deb -x "$IMG/kernel/"*.deb "$kernel"
    rm -f "$IMG/kernel/"*.deb
    depmod -b "$kernel" "$(ls "$kernel/lib/modules" | head -1)"   # the package ships no modules.dep
fi
kver=$(ls "$kernel/lib/modules" | head -1)
cp -f "$kernel/boot/vmlinuz-$kver" "$IMG/vmlinuz"

# The root file system, merged-/usr like Debian 12.
stage="$IMG/stage"
rm -rf "$stage"
mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc/dbus-1,etc/bluetooth,proc,sys,dev,run,tmp,host,state,root}
mkdir -p "$stage/var/lib/bluetooth"
for dir in bin sbin lib lib64; do ln -s "usr/$dir" "$stage/$dir"; done
cp /usr/bin/busybox "$stage/usr/bin/busybox"
for applet in $(/usr/bin/busybox --list); do
    [ -e "$stage/usr/bin/$applet" ] || ln -s busybox "$stage/usr/bin/$applet"
done

bluetoothd=/usr/libexec/bluetooth/bluetoothd
[ -x "$bluetoothd" ] || { echo "build-image: no $bluetoothd (apt-get install bluez)" >&2; exit 1; }
binaries=("$bluetoothd" "$(command -v btvirt)" "$(command -v dbus-daemon)" "$(command -v dbus-send)"
    "$(command -v socat)")
libraries=$(ldd "${binaries[@]}" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// && $2 ~ /^\(/ { print $1 }' | sort -u)
for file in "${binaries[@]}" $libraries; do
    target="$stage/usr/${file#/usr/}"   # /lib/x.so and /usr/lib/x.so land in one place
    mkdir -p "$(dirname "$target")"
    cp -L "$file" "$target"
done

# Modules with their dependencies, uncompressed (busybox modprobe reads plain .ko files).
modules="bluetooth hci_vhci af_alg algif_hash algif_skcipher algif_aead ecb cmac ccm virtio_pci virtio_net"
modules="$modules 9pnet_virtio 9p"
for module in $modules; do
    modprobe -d "$kernel" -S "$kver" --show-depends "$module" | awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r file; do
    relative="lib/modules/${file#*/lib/modules/}"
    mkdir -p "$stage/usr/$(dirname "$relative")"
    case "$file" in
        *.xz) xz -dc "$file" > "$stage/usr/${relative%.xz}" ;;
        *.zst) zstd -qdc "$file" > "$stage/usr/${relative%.zst}" ;;
        *) cp "$file" "$stage/usr/$relative" ;;
    esac
done
cp "$kernel/lib/modules/$kver/"modules.{builtin,builtin.modinfo,order} "$stage/usr/lib/modules/$kver/"
depmod -b "$stage" "$kver"

install -m 755 "$HERE/guest/init" "$stage/init"
install -m 755 "$HERE/guest/exec-server" "$stage/usr/bin/exec-server"
cp "$HERE/guest/system-bus.conf" "$stage/etc/dbus-1/system-bus.conf"
printf 'root:x:0:0:root:/root:/bin/sh\nmessagebus:x:100:101::/run/dbus:/bin/false\n' > "$stage/etc/passwd"
printf 'root:x:0:\nmessagebus:x:101:\nbluetooth:x:102:\n' > "$stage/etc/group"
dpkg-query -W -f='${Version}' bluez > "$stage/etc/bluez-version"

(cd "$stage" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$IMG/initramfs.cpio.gz.part"
mv "$IMG/initramfs.cpio.gz.part" "$IMG/initramfs.cpio.gz"
rm -rf "$stage"
awk -v a="$started" -v b="$(date +%s.%N)" -v k="$kver" -v s="$(du -h "$IMG/initramfs.cpio.gz" | cut -f1)" \
    'BEGIN { printf "real-bluez: image built in %.1f s (kernel %s, initramfs %s)\n", b - a, k, s }'
