# Scenario 2: `systemctl suspend` (pm_test devices) goes logind →
# systemd-suspend.service → systemd-sleep → fridge's hook: `pre` freezes a
# lingering user's services (early) and her FUSE server, bindfs (late),
# before the state write; `post` thaws them. fridged records one cycle with
# driver systemd whose phases ran in order, and froze nothing in
# system.slice.
# system-timeout: 240
. /usr/lib/fridge-system-test/scenarios/user-lib.sh
make_alice
fridgectl plan
[ "$(plan_class producer.service)" = early ] || fail "alice's producer is not classed early"
[ "$(plan_class fuse-server.service)" = late ] || fail "alice's bindfs is not classed late"
fridgectl --json plan | grep -q '"cgroup":"system.slice' && fail "the plan has cgroups in system.slice"

echo devices >/sys/power/pm_test
t0=$(date +%s%N)
systemctl suspend || fail "systemctl suspend failed"
wait_for 90 last_result_is done || fail "no cycle ended done (LastResult '$(last_result)')"
echo "systemctl suspend to done: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
echo none >/sys/power/pm_test

journalctl -b --no-pager -o short-monotonic -u fridged.service -u systemd-suspend.service | grep -E 'Cycle|sleep state|frozen|thawed' 
[ "$(journalctl -b -u fridged.service -o cat | grep -c 'started: suspend')" -eq 1 ] || fail "not exactly one cycle"
journalctl -b -u fridged.service -o cat | grep -q 'started: suspend (driver systemd)' || fail "the cycle's driver is not systemd"
e=$(jline 'early stage frozen'); l=$(jline 'late stage frozen'); s=$(jline "Entering sleep state 'suspend'")
r=$(jline 'System returned from sleep state'); t=$(jline 'thawed [0-9]+ cgroups')
echo "journal lines: early $e, late $l, entering sleep $s, returned $r, thawed $t"
[ -n "$e" ] && [ -n "$l" ] && [ -n "$s" ] && [ -n "$r" ] && [ -n "$t" ] || fail "a step is missing from the journal"
[ "$e" -lt "$l" ] && [ "$l" -lt "$s" ] && [ "$s" -lt "$r" ] && [ "$r" -lt "$t" ] || fail "the steps are out of order"
journalctl -b -u fridged.service -o cat | grep -q 'phase flush-again' || true
[ "$(frozen producer.service)" = 0 ] && [ "$(frozen fuse-server.service)" = 0 ] || fail "still frozen after resume"
pass
