# Scenario 7: fridged is killed (SIGKILL through systemctl) while the
# cgroups it froze are frozen: the unit's ExecStopPost=fridged --thaw-all
# and the restart leave nothing frozen, and the restarted fridged reports
# the interrupted cycle. The cycle is held frozen by a hook `pre` with no
# `post` (as systemd-sleep would leave it mid-sleep).
# system-timeout: 240
. /usr/lib/fridge-system-test/scenarios/user-lib.sh
make_alice
fridgectl hook pre suspend || fail "fridgectl hook pre failed"
[ "$(frozen producer.service)" = 1 ] && [ "$(frozen fuse-server.service)" = 1 ] \
  || fail "not frozen after pre: producer $(frozen producer.service), fuse-server $(frozen fuse-server.service)"
old=$(systemctl show -p MainPID --value fridged.service)
systemctl kill -s KILL fridged.service || fail "systemctl kill failed"
restarted() { p=$(systemctl show -p MainPID --value fridged.service); [ "$p" != 0 ] && [ "$p" != "$old" ]; }
wait_for 60 restarted || fail "fridged was not restarted"
echo "fridged $old killed; now $(systemctl show -p MainPID --value fridged.service), restarts $(systemctl show -p NRestarts --value fridged.service)"
[ "$(frozen producer.service)" = 0 ] && [ "$(frozen fuse-server.service)" = 0 ] || fail "still frozen after the restart"
journalctl -b --no-pager -o cat MESSAGE_ID=4a5b2e0a8f0d4c31a1c9e2f6b7d80105 | sed 's/^/ledger thaw: /'
[ -n "$(journalctl -b -o cat MESSAGE_ID=4a5b2e0a8f0d4c31a1c9e2f6b7d80105)" ] || fail "no ledger-thaw entry in the journal"
wait_for 20 sh -c "journalctl -b -o cat MESSAGE_ID=4a5b2e0a8f0d4c31a1c9e2f6b7d80106 | grep -q ." \
  || fail "the restarted fridged did not report the interrupted cycle"
journalctl -b --no-pager -o cat MESSAGE_ID=4a5b2e0a8f0d4c31a1c9e2f6b7d80106 | sed 's/^/interrupted: /'
fridgectl --no-progress suspend --pm-test devices || fail "no cycle after the restart"
pass
