#!/bin/sh
# systemd-analyze verify on a generated unit: fridged.service, or with
# --user a user unit (fridge-agent.service); then the exposure score of
# fridged's sandbox (printed, not judged). systemd-analyze checks that
# ExecStart= is executable: a copy points at the built program instead of
# the installed path, so nothing has to be installed on the host.
# --socket SOCKET: a socket-activated service (fridge-image-writer), verified
# with its socket; its socket starts it again, so no Restart= is asked for.
# Usage: test-unit-verify.sh [--user] [--socket SOCKET] UNIT INSTALLED_PATH BUILT
set -eu
user= socket=
if [ "$1" = --user ]; then user=--user; shift; fi
if [ "$1" = --socket ]; then socket=$2; shift 2; fi
unit=$1 installed=$2 built=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fridge-unit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
copy=$tmp/$(basename "$unit")

sed "s|$installed|$built|g" "$unit" >"$copy"
grep -q "^ExecStart=$built\( \|\$\)" "$copy"
if [ -n "$socket" ]; then
        cp "$socket" "$tmp/"
        socket=$tmp/$(basename "$socket")
else
        # a lost bus (exit 1) restarts it
        grep -q '^Restart=on-failure$' "$copy" || { echo "FAIL: no Restart=on-failure"; exit 1; }
fi
# the OOM killer picks others first
[ -n "$user" ] || grep -qE '^OOMScoreAdjust=-[0-9]+$' "$copy" || { echo "FAIL: no negative OOMScoreAdjust="; exit 1; }
# --man=no: Documentation= names our own pages, not yet installed; a user
# manager needs a runtime directory, even one that only verifies
out=$(XDG_RUNTIME_DIR=$tmp systemd-analyze verify $user --man=no --generators=no "$copy" $socket 2>&1) || {
        # systemd 257's verify of a system unit makes /run/systemd when it
        # is missing: an unprivileged package build without systemd cannot
        if [ "$(id -u)" -ne 0 ] && echo "$out" | grep -q "Failed to create directory '/run/systemd/'"; then
                echo "SKIP: needs root: systemd-analyze verify makes /run/systemd, which is missing here"
                exit 77
        fi
        echo "$out"
        echo "FAIL: systemd-analyze verify $user"
        exit 1
}
if [ -n "$out" ]; then
        echo "$out"
        echo "FAIL: systemd-analyze verify $user complained"
        exit 1
fi
echo "systemd-analyze verify $user: clean"
[ -n "$user" ] || systemd-analyze security --offline=yes "$copy" 2>/dev/null | tail -n 1
