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
. /usr/lib/vm/pm-test-lib.sh
pm_test_suspend s2idle --mem-sleep s2idle --pm-test freezer
