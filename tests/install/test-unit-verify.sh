#!/bin/sh
# systemd-analyze verify on the generated fridged.service, then the exposure
# score of its sandbox (printed, not judged). systemd-analyze checks that
# ExecStart= is executable: a copy points at the built fridged instead of
# the installed path, so nothing has to be installed on the host.
# Usage: test-unit-verify.sh UNIT FRIDGED_INSTALLED_PATH FRIDGED_BUILT
set -eu
unit=$1 installed=$2 built=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fridge-unit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

sed "s|$installed|$built|g" "$unit" >"$tmp/fridged.service"
grep -q "^ExecStart=$built\$" "$tmp/fridged.service"
# the OOM killer picks others first, and a lost bus (exit 1) restarts it
grep -qE '^OOMScoreAdjust=-[0-9]+$' "$tmp/fridged.service" || { echo "FAIL: no negative OOMScoreAdjust="; exit 1; }
grep -q '^Restart=on-failure$' "$tmp/fridged.service" || { echo "FAIL: no Restart=on-failure"; exit 1; }
# --man=no: Documentation= names our own pages, not yet installed
out=$(systemd-analyze verify --man=no --generators=no "$tmp/fridged.service" 2>&1) || {
        echo "$out"
        echo "FAIL: systemd-analyze verify"
        exit 1
}
if [ -n "$out" ]; then
        echo "$out"
        echo "FAIL: systemd-analyze verify complained"
        exit 1
fi
echo "systemd-analyze verify: clean"
systemd-analyze security --offline=yes "$tmp/fridged.service" 2>/dev/null | tail -n 1
