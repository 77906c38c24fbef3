#!/bin/sh
# The system-sleep hook: hands "pre|post KIND" to `fridgectl hook`, is
# bounded in time, and exits 0 whatever fridgectl does (fails, hangs,
# lacks the command, is missing). Usage: test-sleep-hook.sh HOOK (the
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

fake hangs 'trap "" TERM; sleep 30'
start=$(date +%s)
run "$tmp/hangs" pre suspend || fail "status $? when fridgectl hangs"
took=$(($(date +%s) - start))
[ "$took" -le 8 ] || fail "the hook took ${took} s with a 1 s bound"
grep -q "did not finish within 0.950 s" "$tmp/err" || fail "a timeout is not logged: $(cat "$tmp/err")"

run "$tmp/missing" pre suspend || fail "status $? when fridgectl is missing"

# fridged masked: fridgectl is not even asked
mkdir "$tmp/bin"
printf '#!/bin/sh\n[ "$1 $2" = "is-enabled fridged.service" ] && echo masked\n' >"$tmp/bin/systemctl"
chmod +x "$tmp/bin/systemctl"
: >"$tmp/args"
PATH="$tmp/bin:$PATH" run "$tmp/ok" pre suspend || fail "status $? with fridged masked"
[ ! -s "$tmp/args" ] || fail "fridgectl was asked with fridged masked: $(cat "$tmp/args")"
run "$tmp/ok" bogus suspend || fail "status $? for an unknown phase"
echo "sleep hook ok (hang bounded in ${took} s)"
