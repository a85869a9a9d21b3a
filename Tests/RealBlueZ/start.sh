#!/bin/bash
# Boots the test guest in the background and waits until bluetoothd has both adapters powered.
# Prints the boot-to-ready time; writes RUN_DIR/env (the exec port) for exec.sh.
#
#   start.sh [--tcg|--kvm] [--channels N] [--bluetoothd ARGS] [--timeout S]
# Env: REAL_BLUEZ_DIR (default <repo>/.build/real-bluez): image/ from build-image.sh, run/ here.
# KVM is used when /dev/kvm works and is not PVM (a nested PVM host only boots PVM kernels);
# a KVM boot that fails is retried under TCG.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BASE="${REAL_BLUEZ_DIR:-$ROOT/.build/real-bluez}"
IMG="$BASE/image"; RUN="$BASE/run"
accel=auto; channels=1; bluetoothd="-n"; timeout=300
while [ $# -gt 0 ]; do
    case "$1" in
        --tcg) accel=tcg ;;
        --kvm) accel=kvm ;;
        --channels) channels="$2"; shift ;;
        --bluetoothd) bluetoothd="$2"; shift ;;
        --timeout) timeout="$2"; shift ;;
        *) echo "start.sh: unknown option $1" >&2; exit 2 ;;
    esac
    shift
done
[ -e "$IMG/initramfs.cpio.gz" ] || { echo "start.sh: no image in $IMG (run build-image.sh)" >&2; exit 1; }
if [ -e "$RUN/qemu.pid" ] && kill -0 "$(cat "$RUN/qemu.pid")" 2>/dev/null; then
    echo "start.sh: the guest already runs (pid $(cat "$RUN/qemu.pid")); stop.sh first" >&2; exit 1
fi
if [ "$accel" = auto ]; then
    if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ]; then accel=kvm; else accel=tcg; fi
fi

# Boots with accelerator $1; returns 0 once ready.
boot() {
    local accel="$1" cpu port started now
    rm -rf "$RUN"; mkdir -p "$RUN"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    if [ "$accel" = kvm ]; then cpu=host; else cpu=max; fi
    started=$(date +%s.%N)
    qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -m 1G -smp 2 -no-reboot \
        -display none -monitor none -serial "file:$RUN/console.log" \
        -kernel "$IMG/vmlinuz" -initrd "$IMG/initramfs.cpio.gz" \
        -append "console=ttyS0 quiet loglevel=4 panic=-1 realbluez.run=$RUN realbluez.root=$ROOT realbluez.channels=$channels realbluez.bluetoothd=${bluetoothd// /,}" \
        -nic "user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:$port-:7002" \
        -virtfs "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap,id=host" \
        -virtfs "local,path=$RUN,mount_tag=run,security_model=none,id=run" \
        -daemonize -pidfile "$RUN/qemu.pid" 2>"$RUN/qemu.err" || { cat "$RUN/qemu.err" >&2; return 1; }
    local deadline=$(( $(date +%s) + timeout ))
    while true; do
        grep -q REALBLUEZ-READY "$RUN/console.log" 2>/dev/null && break
        if grep -q REALBLUEZ-FAILED "$RUN/console.log" 2>/dev/null; then
            echo "start.sh: the guest failed: $(grep -o 'REALBLUEZ-FAILED.*' "$RUN/console.log")" >&2; return 1
        fi
        kill -0 "$(cat "$RUN/qemu.pid")" 2>/dev/null || { echo "start.sh: qemu ($accel) exited" >&2; return 1; }
        [ "$(date +%s)" -lt "$deadline" ] || { echo "start.sh: not ready after ${timeout}s ($accel)" >&2; return 1; }
        sleep 0.1
    done
    now=$(date +%s.%N)
    BOOT=$(awk -v a="$started" -v b="$now" 'BEGIN { printf "%.1f", b - a }')
    printf 'REAL_BLUEZ_EXEC_PORT=%s\nREAL_BLUEZ_ACCEL=%s\nREAL_BLUEZ_BOOT_SECONDS=%s\n' "$port" "$accel" "$BOOT" \
        > "$RUN/env"
}

if ! boot "$accel"; then
    tail -20 "$RUN/console.log" >&2 2>/dev/null || true
    "$HERE/stop.sh" >/dev/null
    if [ "$accel" != kvm ]; then exit 1; fi
    echo "start.sh: retrying under TCG" >&2
    accel=tcg
    boot tcg || { tail -20 "$RUN/console.log" >&2 2>/dev/null || true; "$HERE/stop.sh" >/dev/null; exit 1; }
fi
echo "real-bluez: guest ready in ${BOOT} s (qemu start to bluetoothd with both adapters powered, $accel)"
