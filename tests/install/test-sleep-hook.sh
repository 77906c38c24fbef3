#!/bin/sh
# The system-sleep hook: hands "pre|post KIND" to `fridgectl hook`, starts
# nothing else, and exits 0 whatever fridgectl does (fails, lacks the
# command, is missing). Usage: test-sleep-hook.sh HOOK (the
# configured copy in the build dir: only the installed one is executable)
set -u
hook=$1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fridge-hook.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

fake() { # fake NAME BODY: a stand-in fridgectl
        printf '#!/bin/sh\necho "$@" >>%s/args\n%s\n' "$tmp" "$2" >"$tmp/$1"
        chmod +x "$tmp/$1"
}
run() { # run FRIDGECTL ARGS...: the hook's status; its stderr in $tmp/err
        f=$1
        shift
        FRIDGECTL=$f FRIDGE_HOOK_TIMEOUT=1 sh "$hook" "$@" 2>"$tmp/err" >/dev/null
}

fake ok 'exit 0'
run "$tmp/ok" pre suspend || fail "status $? with a working fridgectl"
grep -qx -- "--no-progress hook pre suspend" "$tmp/args" || fail "fridgectl got: $(cat "$tmp/args")"
run "$tmp/ok" post suspend-then-hibernate || fail "post"
tail -n 1 "$tmp/args" | grep -qx -- "--no-progress hook post suspend-then-hibernate" || fail "post args"

fake unknown 'echo "fridgectl: unknown command \"hook\"" >&2; exit 2'
run "$tmp/unknown" pre hibernate || fail "status $? when fridgectl lacks hook"
grep -q "failed (exit status 2)" "$tmp/err" || fail "a failure is not logged: $(cat "$tmp/err")"

run "$tmp/missing" pre suspend || fail "status $? when fridgectl is missing"

# fridged masked (a link to /dev/null, or an empty file, first in the unit
# directories): fridgectl is not even asked
mkdir -p "$tmp/etc" "$tmp/run" "$tmp/bin"
dirs="$tmp/etc $tmp/run"
masked_run() { : >"$tmp/args"; FRIDGE_HOOK_UNIT_DIRS=$dirs run "$tmp/ok" pre suspend; }
ln -s /dev/null "$tmp/run/fridged.service"
masked_run || fail "status $? with fridged masked"
[ ! -s "$tmp/args" ] || fail "fridgectl was asked with fridged masked: $(cat "$tmp/args")"
rm "$tmp/run/fridged.service"
: >"$tmp/etc/fridged.service"
masked_run || fail "status $? with fridged masked by an empty file"
[ ! -s "$tmp/args" ] || fail "fridgectl was asked with an empty fridged.service first: $(cat "$tmp/args")"
# an administrator's own unit in /etc comes before a runtime mask
echo "[Service]" >"$tmp/etc/fridged.service"
ln -s /dev/null "$tmp/run/fridged.service"
masked_run || fail "status $? with fridged.service in /etc"
[ -s "$tmp/args" ] || fail "fridgectl was not asked with fridged.service in /etc before a runtime mask"
# the hook starts nothing but fridgectl (whose deadline bounds it:
# test-hook-hardening), neither systemctl nor timeout(1)
printf '#!/bin/sh\necho "$0 $*" >>%s/started\n' "$tmp" >"$tmp/bin/spy"
chmod +x "$tmp/bin/spy"
for t in timeout systemctl logger; do ln -sf spy "$tmp/bin/$t"; done
: >"$tmp/started"
PATH="$tmp/bin:$PATH" run "$tmp/ok" pre suspend || fail "status $? with spies on PATH"
[ ! -s "$tmp/started" ] || fail "the hook started more than fridgectl: $(cat "$tmp/started")"
run "$tmp/ok" bogus suspend || fail "status $? for an unknown phase"
echo "sleep hook ok"
