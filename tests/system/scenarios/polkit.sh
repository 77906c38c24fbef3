# Scenario 6: with the installed polkit actions and the real polkitd, an
# unprivileged user without an active session is refused `fridgectl
# suspend` (exit 4, "not authorized"), and nothing happens; root is allowed
# (a pm_test "devices" cycle runs to done).
# system-timeout: 180
[ -f /usr/share/polkit-1/actions/io.fridge.Fridge1.policy ] || fail "the polkit actions are not installed"
rc=0
out=$(as_nobody fridgectl --no-progress suspend --pm-test devices 2>&1) || rc=$?
echo "uid 65534: fridgectl suspend -> $rc: $out"
[ $rc -eq 4 ] || fail "uid 65534 got exit $rc, not 4"
case $out in *"not authorized"*) ;; *) fail "the refusal does not say \"not authorized\"" ;; esac
journalctl -b -u polkit.service --no-pager | grep -q 'io.fridge' && echo "(polkitd logged the question)"
[ "$(busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 LastResult)" = 's ""' ] \
  || fail "a cycle ran for the refused user"
rc=0
fridgectl --no-progress suspend --pm-test devices || rc=$?
[ $rc -eq 0 ] || fail "root: fridgectl suspend --pm-test devices exited with $rc"
echo "root: $(busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 LastResult)"
pass
