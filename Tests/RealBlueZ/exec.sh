#!/bin/bash
# Runs a command inside the running test guest, chrooted into the host's file system (so host
# programs run on the guest's kernel and talk to its bluetoothd, fd passing included), and
# exits with its status.
#   exec.sh [-C DIR] -- 'command'      DIR: working directory (default: the current one)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
RUN="${REAL_BLUEZ_DIR:-$(cd "$HERE/../.." && pwd)/.build/real-bluez}/run"
[ -e "$RUN/env" ] || { echo "exec.sh: the guest is not running (start.sh)" >&2; exit 1; }
. "$RUN/env"
dir="$PWD"
while [ $# -gt 0 ]; do
    case "$1" in
        -C) dir="$2"; shift ;;
        --) shift; break ;;
        *) break ;;
    esac
    shift
done
command="$*"
case "$command" in *$'\n'*) echo "exec.sh: the command must be one line" >&2; exit 2 ;; esac
status=255
while IFS= read -r line; do
    case "$line" in
        "@@exit "*) status="${line#@@exit }" ;;
        *) printf '%s\n' "$line" ;;
    esac
done < <(printf '%s\n%s\n' "$dir" "$command" | socat -t 86400 - "TCP:127.0.0.1:$REAL_BLUEZ_EXEC_PORT")
[ "$status" != 255 ] || echo "exec.sh: the guest ended the command without an exit status" >&2
exit "$status"
