# Scenario 8: the files `meson install` laid are all removed by the
# documented uninstall step (`ninja -C build uninstall`, run on the image's
# root when it was made; every file of meson's install log was checked
# gone there), and `systemctl suspend` still works without fridge.
# system-image: uninstalled
# system-timeout: 180
echo "uninstall removed $(cat /usr/lib/fridge-system-test/uninstalled-files) files"
for f in /usr/libexec/fridged /usr/bin/fridgectl /usr/lib/systemd/system/fridged.service \
         /usr/lib/systemd/system-sleep/fridge /usr/share/dbus-1/system.d/io.fridge.Fridge1.conf \
         /usr/share/polkit-1/actions/io.fridge.Fridge1.policy; do
  [ ! -e "$f" ] || fail "$f is still there"
done
systemctl cat fridged.service >/dev/null 2>&1 && fail "systemd still knows fridged.service"
ls /usr/lib/systemd/system/systemd-suspend.service.d/ 2>/dev/null | grep -q fridge && fail "fridge's drop-in is still there"
echo devices >/sys/power/pm_test
before=$(journalctl -b -o cat -u systemd-suspend.service | grep -c 'System returned from sleep state')
systemctl suspend || fail "systemctl suspend failed"
more() { [ "$(journalctl -b -o cat -u systemd-suspend.service | grep -c 'System returned from sleep state')" -gt "$before" ]; }
wait_for 60 more || fail "systemctl suspend did not return from sleep without fridge"
echo none >/sys/power/pm_test
journalctl -b -o cat -u systemd-suspend.service | tail -n 4
busctl status io.fridge.Fridge1 >/dev/null 2>&1 && fail "something still answers as io.fridge.Fridge1"
pass
