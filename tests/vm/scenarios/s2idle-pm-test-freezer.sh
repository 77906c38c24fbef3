# Scenario 1b: suspend with --mem-sleep s2idle and pm_test "freezer": fridge
# writes s2idle to mem_sleep and "mem" to state, so the kernel runs s2idle,
# freezes the tasks and thaws them again (s2idle accepts only freezer,
# devices and platform). Expect "done" and pm_test back at "none". Also
# loads button.ko (the ACPI power button), which s2idle wake-ups need later,
# to keep the initramfs's module path exercised.
# vm-kernel: vmlinux
# vm-append: suspend.pm_test_delay=0
# vm-modules: button
# vm-timeout: 90
grep -q '\[none\]' /sys/power/pm_test || fail "pm_test is not [none] before: $(cat /sys/power/pm_test)"
echo "mem_sleep before: $(cat /sys/power/mem_sleep)"
fctl --no-progress suspend --mem-sleep s2idle --pm-test freezer
rc=$?
echo "pm_test after: $(cat /sys/power/pm_test); mem_sleep after: $(cat /sys/power/mem_sleep)"
[ $rc -eq 0 ] || fail "fridgectl suspend --mem-sleep s2idle --pm-test freezer exited with $rc"
case $(cat /sys/power/pm_test) in
  "[none] "*) ;;
  *) fail "pm_test not restored: $(cat /sys/power/pm_test)" ;;
esac
dmesg | grep -q 'PM: suspend entry (s2idle)' || fail "the kernel did not log \"PM: suspend entry (s2idle)\""
pass
