# Scenario 6: with the installed polkit actions and the real polkitd, an
# unprivileged user without an active session is refused `fridgectl
# suspend` (exit 4, "not authorized"), and nothing happens; root is allowed
# (a pm_test "devices" cycle runs to done). CanSleep asks the real polkitd
# without interaction: uid 65534 (io.fridge.sleep is auth_admin_keep
# without an active session) hears "challenge", root "yes".
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
can=$(as_nobody fridgectl can-sleep suspend 2>&1) || fail "uid 65534: fridgectl can-sleep failed: $can"
echo "uid 65534: fridgectl can-sleep suspend -> $can"
[ "$can" = challenge ] || fail "uid 65534 can-sleep says '$can', not challenge"
[ "$(fridgectl can-sleep suspend)" = yes ] || fail "root's can-sleep is not yes"
rc=0
fridgectl --no-progress suspend --pm-test devices || rc=$?
[ $rc -eq 0 ] || fail "root: fridgectl suspend --pm-test devices exited with $rc"
echo "root: $(busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 LastResult)"
pass
