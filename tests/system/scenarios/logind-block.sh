# Scenario 10: fridge's block inhibitors on logind's path, with the real
# logind (systemd 252). While root's `fridgectl inhibit` holds a fridge
# block inhibitor, fridged holds one logind block inhibitor for sleep
# ("fridge", "fridge: 1 inhibitor: burner (writing a disc)"):
#  - alice (uid 1000, whom a polkit rule lets suspend, as an active
#    session's user may) runs `systemctl suspend` on a terminal: systemctl
#    lists the block inhibitor by name and refuses;
#  - alice's `busctl call ... Suspend b false` is refused by logind (it
#    would need org.freedesktop.login1.suspend-ignore-inhibit);
#  - root's `systemctl suspend` goes through: logind lets root past block
#    inhibitors (systemd before 257), and never counts an inhibitor of the
#    caller's own uid, which fridged's is (uid 0); the hook's cycle runs and
#    fridged's journal names the block it could not stop;
#  - once the inhibitor goes, logind lists no fridge block and alice's
#    Suspend goes through.
# Every sleep is a pm_test "devices" one.
# system-timeout: 300
. /usr/lib/fridge-system-test/scenarios/user-lib.sh
cycles() { journalctl -b -u fridged.service -o cat | grep -c 'started: suspend'; }
dones() { journalctl -b -u fridged.service -o cat | grep -c 'finished: done'; }
fridge_block() { busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager \
                   ListInhibitors | grep -o '"fridge" "fridge: [^"]*" "block"'; }
as_alice() { setpriv --reuid=1000 --regid=1000 --clear-groups -- env HOME=/home/alice "$@"; }
echo "systemd $(systemctl --version | head -n1 | cut -d' ' -f2)"
busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 Version >/dev/null || fail "fridged not there"
useradd -m -u 1000 alice || fail "useradd alice"
mkdir -p /etc/polkit-1/rules.d
cat >/etc/polkit-1/rules.d/50-alice-suspends.rules <<'EOF'
polkit.addRule(function(action, subject) {
  if (subject.user == "alice" && action.id == "org.freedesktop.login1.suspend")
    return polkit.Result.YES;
});
EOF
systemctl restart polkit.service || fail "polkitd did not restart"
echo devices >/sys/power/pm_test

fridgectl inhibit --who=burner --why="writing a disc" -- sleep 600 &
holder=$!
wait_for 20 fridge_block || fail "fridged took no logind block inhibitor"
systemd-inhibit --list --no-pager
[ "$(fridge_block)" = '"fridge" "fridge: 1 inhibitor: burner (writing a disc)" "block"' ] \
  || fail "logind's fridge block says $(fridge_block)"
before=$(cycles)

rc=0
out=$(as_alice script -qec "systemctl suspend" /dev/null 2>&1) || rc=$?
echo "alice: systemctl suspend on a terminal -> $rc: $out"
[ $rc -ne 0 ] || fail "alice's systemctl suspend went through"
case $out in *'Operation inhibited by "fridge"'*'fridge: 1 inhibitor: burner (writing a disc)'*) ;;
  *) fail "alice's systemctl suspend does not name fridge's inhibitor" ;; esac

rc=0
out=$(as_alice busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager \
        Suspend b false 2>&1) || rc=$?
echo "alice: Suspend(false) -> $rc: $out"
[ $rc -ne 0 ] || fail "logind let alice's Suspend through fridge's block"
sleep 2
[ "$(cycles)" = "$before" ] || fail "a cycle ran for a refused sleep"

t0=$(date +%s%N)
systemctl suspend || fail "root's systemctl suspend was refused"
wait_for 90 last_result_is done || fail "root's sleep did not end done (LastResult '$(last_result)')"
echo "root: systemctl suspend went through fridge's block: done in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
journalctl -b -u fridged.service -o cat | grep "block inhibitors do not stop it" \
  || fail "fridged's journal does not name the block the hook's cycle passed over"
journalctl -b -u fridged.service -o cat | grep -q 'started: suspend (driver systemd)' || fail "no hook cycle"
fridge_block >/dev/null || fail "the logind block inhibitor did not stay after the hook's cycle"

kill "$holder"
wait "$holder" 2>/dev/null
wait_for 20 sh -c '! busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager ListInhibitors | grep -q "\"fridge\" \"fridge: "' \
  || fail "logind's fridge block outlived fridge's last block inhibitor"
before=$(dones)
as_alice busctl call org.freedesktop.login1 /org/freedesktop/login1 org.freedesktop.login1.Manager \
  Suspend b false || fail "alice's Suspend was refused without any block inhibitor"
more() { [ "$(dones)" -gt "$before" ]; }
wait_for 90 more || fail "alice's sleep did not run a cycle to done"
echo none >/sys/power/pm_test
pass
