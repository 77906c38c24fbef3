# Scenario 1a: suspend to RAM ("mem", deep) through fridged with the
# kernel's pm_test at "devices": the kernel suspends the devices, waits
# suspend.pm_test_delay (0 here) and resumes. fridgectl must report "done"
# (exit 0) and fridged must put pm_test back to "none".
# vm-kernel: vmlinux
# vm-append: suspend.pm_test_delay=0
# vm-timeout: 90
grep -q '\[none\]' /sys/power/pm_test || fail "pm_test is not [none] before: $(cat /sys/power/pm_test)"
echo "mem_sleep before: $(cat /sys/power/mem_sleep)"
fctl --no-progress suspend --pm-test devices
rc=$?
echo "pm_test after: $(cat /sys/power/pm_test)"
[ $rc -eq 0 ] || fail "fridgectl suspend --pm-test devices exited with $rc"
case $(cat /sys/power/pm_test) in
  "[none] "*) ;;
  *) fail "pm_test not restored: $(cat /sys/power/pm_test)" ;;
esac
dmesg | grep -q 'PM: suspend entry (deep)' || fail "the kernel did not log \"PM: suspend entry (deep)\""
pass
