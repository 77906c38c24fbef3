# Scenario 11: an admin turns fridge off with `systemctl mask fridged`.
# `systemctl suspend` (pm_test devices) still works: bus activation of the
# masked unit would fail only after a while, so fridge's hook sees the mask
# and returns at once, asking nothing; nothing is frozen and no cycle is
# recorded. How long systemctl suspend took is printed (a figure, not a
# bound).
# system-timeout: 180
systemctl stop fridged.service 2>/dev/null || true
systemctl mask fridged.service || fail "cannot mask fridged.service"
echo devices >/sys/power/pm_test
before=$(journalctl -b -o cat -u systemd-suspend.service | grep -c 'System returned from sleep state')
t0=$(date +%s%N)
systemctl suspend || fail "systemctl suspend failed with fridged masked"
more() { [ "$(journalctl -b -o cat -u systemd-suspend.service | grep -c 'System returned from sleep state')" -gt "$before" ]; }
wait_for 60 more || fail "systemctl suspend did not return from sleep with fridged masked"
echo "FIGURE: masked: systemctl suspend (pm_test devices) returned from sleep $(( ($(date +%s%N) - t0) / 1000000 )) ms after it was asked"
echo none >/sys/power/pm_test
journalctl -b -o short-monotonic --no-pager -u systemd-suspend.service -t fridge-sleep-hook | tail -n 12
systemctl is-active --quiet fridged.service && fail "fridged runs although masked"
journalctl -b -o cat -t fridge-sleep-hook | grep -q . && fail "the hook asked for fridged although it is masked"
[ "$(journalctl -b -o cat -u fridged.service | grep -c 'started: suspend')" -eq 0 ] || fail "a cycle ran"
systemctl unmask fridged.service
pass
