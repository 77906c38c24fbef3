# Scenario 1a: suspend to RAM ("mem", deep) through fridged with the
# kernel's pm_test at "devices": the kernel suspends the devices, waits
# suspend.pm_test_delay (0 here) and resumes. fridgectl must report "done"
# (exit 0) and fridged must put pm_test back to "none".
# vm-kernel: vmlinux
# vm-append: suspend.pm_test_delay=0
# vm-timeout: 90
. /usr/lib/vm/pm-test-lib.sh
pm_test_suspend deep --pm-test devices
