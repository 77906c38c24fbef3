# Scenario 3: real s2idle (no pm_test) woken by the ACPI power button. qemu's
# RTC alarm does not wake s2idle; a power button press from the host
# (monitor command system_powerdown) does, with button.ko loaded. The host
# starts pressing every 3 s once it sees FRIDGE-PRESS-POWER. A press that
# lands before the guest is asleep is a wakeup event that aborts the cycle
# (result aborted, WakeupEvent): that is fridge working, so try again.
# vm-kernel: vmlinux
# vm-modules: button
# vm-power-button: yes
# vm-timeout: 150
echo "wakeup sources: $(cat /sys/class/wakeup/*/name 2>/dev/null | tr '\n' ' ')"
echo FRIDGE-PRESS-POWER
done=0
for try in 1 2 3; do
  fctl --json --no-progress suspend --mem-sleep s2idle >/run/out.json
  rc=$?
  cat /run/out.json
  if grep -q '"event":"finished".*"result":"done"' /run/out.json; then done=1; break; fi
  grep -q 'WakeupEvent' /run/out.json || fail "fridgectl suspend --mem-sleep s2idle exited with $rc, not done nor WakeupEvent"
  echo "try $try: the press came before the guest slept; again"
done
echo FRIDGE-PRESS-STOP
[ $done -eq 1 ] || fail "no done s2idle cycle in 3 tries"
dmesg | grep -q 'PM: suspend entry (s2idle)' || fail "the kernel did not log \"PM: suspend entry (s2idle)\""
reason=$(sed -n 's/.*"event":"resumed".*"wake_reason":"\([^"]*\)".*/\1/p' /run/out.json | head -n1)
echo "wake reason: $reason"
case $reason in
  *LNXPWRBN*|*PNP0C0C*|*button*) ;;
  *) fail "wake reason \"$reason\" does not name the power button" ;;
esac
last=$(fctl status | sed -n 's/^ *LastWakeReason: *//p')
echo "fridgectl status: LastWakeReason: $last"
[ "$last" = "$reason" ] || fail "fridgectl status shows LastWakeReason \"$last\", Resumed said \"$reason\""
pass
