# Scenario 5: real S3 through `systemctl suspend`, woken by the RTC
# (bzImage: qemu cannot resume S3 when it booted the uncompressed vmlinux).
# Resumed carries the slept time and the RTC as wake reason, and journalctl
# finds fridge's structured resume entry by its MESSAGE_ID.
# system-kernel: bzImage
# system-timeout: 300
# +20 s: under load the way from here to the state write (logind, systemd-sleep,
# the hook, the staged freeze) has taken over 6 s, and the slept check needs 2 s
echo +20 >/sys/class/rtc/rtc0/wakealarm || fail "cannot arm the RTC alarm"
systemctl suspend || fail "systemctl suspend failed"
done_yet() { busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 LastResult | grep -q '"done"'; }
wait_for 120 done_yet || fail "no cycle ended done"
reason=$(busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 LastWakeReason)
echo "LastWakeReason: $reason"
case $reason in *rtc*) ;; *) fail "the wake reason does not name the RTC" ;; esac
entry=$(journalctl -b -o verbose MESSAGE_ID=4a5b2e0a8f0d4c31a1c9e2f6b7d80103)
echo "$entry" | grep -E 'MESSAGE=|SLEPT_USEC|FRIDGE_WAKE_REASON'
slept=$(echo "$entry" | sed -n 's/^ *SLEPT_USEC=//p' | head -n1)
[ -n "$slept" ] && [ "$slept" -ge 2000000 ] || fail "the resume entry's SLEPT_USEC is '${slept}', not at least 2 s"
journalctl -b -o cat -u systemd-suspend.service | grep -q 'System returned from sleep state' || fail "systemd-sleep did not return"
pass
