#!/bin/sh
# The system-sleep hook, fridgectl by the name "fridge" (a link): it runs
# `fridgectl hook pre|post KIND`, starts no other process, and exits 0
# whatever happens (fridged unreachable, an unknown kind or phase), saying
# why; a masked fridged.service is not even asked. No bus is there, so the
# hook's fridgectl fails at once and says so: what it was asked shows.
# Usage: test-sleep-hook.sh HOOK (the build tree's link)
set -u
hook=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fridge-hook.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$tmp/etc" "$tmp/run" "$tmp/bin"
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$tmp/no-bus"
unset JOURNAL_STREAM
run() { # run ARGS...: the hook's status; its stderr in $tmp/err
        FRIDGE_HOOK_TIMEOUT=2 FRIDGE_HOOK_UNIT_DIRS="$tmp/etc $tmp/run" "$hook" "$@" 2>"$tmp/err" >/dev/null
}
said() { grep -q -- "$1" "$tmp/err" || fail "the hook does not say \"$1\": $(cat "$tmp/err")"; }
silent() { [ ! -s "$tmp/err" ] || fail "$1: $(cat "$tmp/err")"; }

run pre suspend || fail "status $? with fridged unreachable"
said "cannot connect"
said "^fridge-sleep-hook: fridgectl hook pre suspend failed (exit status [1-9][0-9]*)$"
run post suspend-then-hibernate || fail "status $? for post"
said "fridgectl hook post suspend-then-hibernate failed"
run pre warp-speed || fail "status $? for an unknown kind"
said "fridgectl hook pre warp-speed failed (exit status 2)"
run bogus suspend || fail "status $? for an unknown phase"
said "unexpected phase 'bogus' (expected pre or post); nothing done"
run || fail "status $? without arguments"
said "unexpected phase ''"
# a journal stream (JOURNAL_STREAM names stderr's device and inode) gets
# the failure as a warning; the variable naming another stream does not
: >"$tmp/err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/err") run pre suspend || fail "status $? on a journal stream"
said "^<4>fridge-sleep-hook: fridgectl hook pre suspend failed"
JOURNAL_STREAM=8:1234 run pre suspend || fail "status $? with JOURNAL_STREAM for another stream"
said "^fridge-sleep-hook: fridgectl hook pre suspend failed"

# fridged masked (a link to /dev/null, or an empty file, first in the unit
# directories): fridgectl is not even asked, nothing is said
ln -s /dev/null "$tmp/run/fridged.service"
run pre suspend || fail "status $? with fridged masked"
silent "the hook asked fridged, masked by a link to /dev/null"
rm "$tmp/run/fridged.service"
: >"$tmp/etc/fridged.service"
run pre suspend || fail "status $? with fridged masked by an empty file"
silent "the hook asked fridged, masked by an empty file"
# an administrator's own unit in /etc comes before a runtime mask
echo "[Service]" >"$tmp/etc/fridged.service"
ln -s /dev/null "$tmp/run/fridged.service"
run pre suspend || fail "status $? with fridged.service in /etc"
said "fridgectl hook pre suspend failed"
rm "$tmp/etc/fridged.service" "$tmp/run/fridged.service"

# no process started beside it: no shell, systemctl, timeout(1) or logger
printf '#!/bin/sh\necho "$0 $*" >>%s/started\n' "$tmp" >"$tmp/bin/spy"
chmod +x "$tmp/bin/spy"
for t in sh dash bash timeout systemctl logger fridgectl busctl; do ln -sf spy "$tmp/bin/$t"; done
: >"$tmp/started"
PATH="$tmp/bin" run pre suspend || fail "status $? with spies on PATH"
said "fridgectl hook pre suspend failed"
[ ! -s "$tmp/started" ] || fail "the hook started another process: $(cat "$tmp/started")"
echo "sleep hook ok"
