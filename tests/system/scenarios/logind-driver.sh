# Scenario 3: `fridgectl suspend` with Driver=logind: fridged runs prepare
# and flush with its progress, then asks logind to suspend; logind sends
# PrepareForSleep, systemd-sleep runs fridge's hook, whose `pre` joins the
# same cycle id; CycleFinished comes exactly once, done. pm_test "devices"
# is set by hand: with the logind driver systemd-sleep writes the state.
# system-timeout: 240
mkdir -p /etc/fridge/fridge.conf.d
printf '[Sleep]\nDriver=logind\n' >/etc/fridge/fridge.conf.d/50-logind.conf
systemctl restart fridged.service 2>/dev/null || true
busctl monitor --match "type='signal',member='PrepareForSleep'" >/run/monitor.log 2>&1 &
mon=$!
sleep 1
echo devices >/sys/power/pm_test
rc=0
fridgectl --json --no-progress suspend >/run/out.json || rc=$?
echo none >/sys/power/pm_test
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
pass
