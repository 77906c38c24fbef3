#!/bin/sh
# systemd-analyze verify --user on the generated fridge-agent.service, with
# ExecStart= pointed at the built fridge-agent (it must be executable).
# Usage: test-user-unit-verify.sh UNIT AGENT_INSTALLED_PATH AGENT_BUILT
set -eu
unit=$1 installed=$2 built=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fridge-user-unit.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

sed "s|$installed|$built|g" "$unit" >"$tmp/fridge-agent.service"
grep -q "^ExecStart=$built\$" "$tmp/fridge-agent.service"
# a user manager needs a runtime directory, even one that only verifies
out=$(XDG_RUNTIME_DIR=$tmp systemd-analyze verify --user --man=no --generators=no "$tmp/fridge-agent.service" 2>&1) || {
        echo "$out"
        echo "FAIL: systemd-analyze verify --user"
        exit 1
}
if [ -n "$out" ]; then
        echo "$out"
        echo "FAIL: systemd-analyze verify --user complained"
        exit 1
fi
echo "systemd-analyze verify --user: clean"
