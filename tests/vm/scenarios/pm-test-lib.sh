# Shared by the pm_test scenarios (sourced). pm_test_suspend ENTRY ARGS...:
# one `fridgectl suspend ARGS...` (which name a --pm-test level) from
# pm_test at "none"; it must exit 0 ("done"), fridged must put pm_test back
# to "none", and the kernel must have logged "PM: suspend entry (ENTRY)".
pm_test_suspend() {
  entry=$1
  shift
  grep -q '\[none\]' /sys/power/pm_test || fail "pm_test is not [none] before: $(cat /sys/power/pm_test)"
  echo "mem_sleep before: $(cat /sys/power/mem_sleep)"
  fctl --no-progress suspend "$@"
  rc=$?
  echo "pm_test after: $(cat /sys/power/pm_test); mem_sleep after: $(cat /sys/power/mem_sleep)"
  [ $rc -eq 0 ] || fail "fridgectl suspend $* exited with $rc"
  case $(cat /sys/power/pm_test) in
    "[none] "*) ;;
    *) fail "pm_test not restored: $(cat /sys/power/pm_test)" ;;
  esac
  dmesg | grep -q "PM: suspend entry ($entry)" || fail "the kernel did not log \"PM: suspend entry ($entry)\""
  pass
}
