# tools/try --vm: the demo on a real kernel, on the serial console with a
# controlling tty (setsid cttyhack), so fridgectl draws its progress bar and
# Esc / Ctrl-C cancel. Not a meson test. Real S3 woken by the RTC after 3 s
# unless arguments were given (tools/try --vm -- ARGS: fridgectl suspend ARGS).
# vm-kernel: bzImage
# vm-append: suspend.pm_test_delay=0
# vm-timeout: 600
export TERM=${FRIDGE_TRY_TERM:-vt100}
stty cols "${FRIDGE_TRY_COLS:-80}" rows "${FRIDGE_TRY_ROWS:-24}" 2>/dev/null
eval "set -- ${FRIDGE_TRY_ARGS:-}"
[ $# -gt 0 ] || set -- --mem-sleep deep --wake-after 3
echo
echo "==> guest: $(uname -r), /sys/power/state: $(cat /sys/power/state), mem_sleep: $(cat /sys/power/mem_sleep)"
echo "==> fridgectl status"
fctl status
echo "==> fridgectl plan"
fctl plan
echo "==> fridgectl suspend $*"
fctl suspend "$@"
rc=$?
echo
echo "==> fridgectl exited with $rc; what the kernel logged:"
dmesg | grep -E 'PM: suspend (entry|exit)|ACPI: PM: (Preparing|Waking)|suspend debug' | sed 's/^/    /'
echo "==> /sys/power/pm_test: $(cat /sys/power/pm_test)"
[ $rc -eq 0 ] || fail "fridgectl suspend $* exited with $rc"
pass
