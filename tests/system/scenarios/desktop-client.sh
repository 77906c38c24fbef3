# Scenario 4: a desktop-like client (C, sd-bus) holding a logind delay
# inhibitor and a fridge delay inhibitor sees PrepareForSleep(true) and
# SleepImminent, releases both after 300 ms, and the sleep goes on at once
# (well inside the 5 s bound); a client that never releases is named in the
# journal when the bound passes.
# system-timeout: 300
client=/usr/lib/fridge-system-test/desktop-client
returned() { journalctl -b -o cat -u systemd-suspend.service | grep -c 'System returned from sleep state'; }
# jtime PATTERN: CLOCK_MONOTONIC ms of the last journal line matching
jtime() { journalctl -b -o short-monotonic --no-pager | grep -E "$1" | tail -n1 | sed -n 's/^\[ *\([0-9]*\)\.\([0-9]\{3\}\).*/\1\2/p'; }
sleep_once() {
  local before; before=$(returned)
  systemctl suspend || fail "systemctl suspend failed"
  more() { [ "$(returned)" -gt "$before" ]; }
  wait_for 90 more || fail "the sleep did not return"
}
busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 Version >/dev/null || fail "fridged not there"
echo devices >/sys/power/pm_test

$client >/run/client.log 2>&1 &
cpid=$!
wait_for 20 grep -q ready /run/client.log || fail "the client did not start: $(cat /run/client.log)"
sleep_once
wait $cpid
cat /run/client.log
grep -q 'PrepareForSleep(true)' /run/client.log || fail "the client did not see PrepareForSleep(true)"
grep -q 'SleepImminent' /run/client.log || fail "the client did not see SleepImminent"
rel=$(sed -n 's/^\([0-9]*\) released both inhibitors$/\1/p' /run/client.log)
# logind goes on (starts systemd-suspend.service) when the last delay lock
# goes; the state write follows once fridge's hook has frozen everything
go=$(jtime "Starting systemd-suspend.service")
ent=$(jtime "Entering sleep state 'suspend'")
[ -n "$rel" ] && [ -n "$go" ] && [ -n "$ent" ] || fail "no release ($rel), no suspend start ($go) or no sleep entry ($ent)"
echo "FIGURE: desktop client released its delay locks 300 ms after PrepareForSleep; logind went on $((go - rel)) ms later, the state write $((ent - rel)) ms later (the bound is 5000 ms)"
[ $((go - rel)) -lt 1500 ] || fail "logind waited $((go - rel)) ms after the release"
journalctl -b -o cat -u fridged.service | grep -q 'delay inhibitors still held' && fail "fridged waited out the bound for the client that had released"

$client --never-release >/run/stubborn.log 2>&1 &
spid=$!
wait_for 20 grep -q ready /run/stubborn.log || fail "the stubborn client did not start"
t0=$(date +%s%N)
sleep_once
echo "with a client that never lets go: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
kill $spid 2>/dev/null; wait $spid 2>/dev/null
echo none >/sys/power/pm_test
journalctl -b -o cat --no-pager | grep -E 'desktop-client' | grep -iE 'delay|late|timeout' | sed 's/^/journal: /'
journalctl -b -o cat --no-pager | grep -E 'desktop-client' | grep -qiE 'delay|late|timeout' \
  || fail "the journal does not name the client that never released"
pass
