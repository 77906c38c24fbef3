# Scenario 3: `fridgectl suspend --pm-test=devices` with the default
# Driver=auto: logind is on the bus, so fridged runs prepare and flush with
# its progress, then asks logind to suspend; logind sends PrepareForSleep,
# systemd-sleep runs fridge's hook, whose `pre` joins the same cycle id and
# sets pm_test (systemd-sleep writes the state, pm_test is fridge's);
# CycleFinished comes exactly once, done, and pm_test is none again. Then
# SuspendState=freeze in a sleep.conf.d drop-in: a mem-sleep mode would
# not apply to what systemd-sleep writes, and fridge refuses, naming it.
# system-timeout: 240
busctl monitor --match "type='signal',member='PrepareForSleep'" >/run/monitor.log 2>&1 &
mon=$!
sleep 1
rc=0
fridgectl --json --no-progress suspend --pm-test=devices >/run/out.json || rc=$?
sleep 1
kill -TERM $mon; wait $mon 2>/dev/null
cat /run/out.json
[ $rc -eq 0 ] || fail "fridgectl suspend exited with $rc"
[ "$(grep -c '"event":"finished"' /run/out.json)" -eq 1 ] || fail "not exactly one finished event"
grep -q '"event":"finished","cycle":1,"result":"done"' /run/out.json || fail "cycle 1 did not finish done"
for p in prepare flush freeze-early flush-again freeze-late kernel thaw; do
  grep -q "\"phase\":\"$p\"" /run/out.json || fail "fridgectl never saw phase $p"
done
grep -c 'PrepareForSleep' /run/monitor.log | sed 's/^/PrepareForSleep signals seen: /'
grep -q 'PrepareForSleep' /run/monitor.log || fail "logind sent no PrepareForSleep"
j=$(journalctl -b -u fridged.service -o cat)
echo "$j" | grep -E 'Cycle|hook'
[ "$(echo "$j" | grep -c 'started: suspend')" -eq 1 ] || fail "not exactly one cycle started"
echo "$j" | grep -q 'started: suspend (driver logind)' || fail "the cycle's driver is not logind"
journalctl -b -o cat -u systemd-suspend.service | grep -q 'cycle 1 frozen' || fail "the hook did not join cycle 1"
grep -q '\[none\]' /sys/power/pm_test || fail "pm_test was not put back: $(cat /sys/power/pm_test)"
# (the put-back itself is logged: "Put /sys/power/pm_test back to none, ...")
echo "$j" | grep 'power/pm_test' | grep -qv '^Put /sys/power/pm_test back to ' && fail "fridged logged a pm_test failure"

mkdir -p /etc/systemd/sleep.conf.d
printf '[Sleep]\nSuspendState=freeze\n' >/etc/systemd/sleep.conf.d/50-freeze.conf
rc=0
fridgectl --no-progress suspend --mem-sleep=s2idle >/run/conflict.txt 2>&1 || rc=$?
rm /etc/systemd/sleep.conf.d/50-freeze.conf
cat /run/conflict.txt
[ $rc -eq 4 ] || fail "a mem-sleep against SuspendState=freeze exited with $rc, not 4"
grep -q 'SuspendState=freeze in /etc/systemd/sleep.conf.d/50-freeze.conf' /run/conflict.txt \
  || fail "the refusal does not name SuspendState="
pass
