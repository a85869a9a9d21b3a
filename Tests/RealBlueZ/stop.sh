#!/bin/bash
# Stops the test guest started by start.sh (the qemu process named by its pid file).
HERE="$(cd "$(dirname "$0")" && pwd)"
RUN="${REAL_BLUEZ_DIR:-$(cd "$HERE/../.." && pwd)/.build/real-bluez}/run"
[ -e "$RUN/qemu.pid" ] || exit 0
pid=$(cat "$RUN/qemu.pid")
if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
    echo "real-bluez: guest stopped"
fi
rm -f "$RUN/qemu.pid" "$RUN/env"
