# Scenario 8: `apt-get purge fridge-agent fridge` on the running guest
# (fridged running, a cycle in its history, an admin's drop-in in /etc)
# leaves nothing of fridge behind but that drop-in, which dpkg never owned;
# every path the packages installed is gone (bar directories that hold
# something else or that other packages own), and so are the state, the enablement links and dpkg's
# records. `systemctl suspend` still works without fridge.
# system-timeout: 240
fridgectl suspend --dry-run >/dev/null || fail "a dry-run cycle failed before the purge"
[ -n "$(ls /var/lib/fridge/history 2>/dev/null)" ] || fail "the dry run left no history to purge"
systemctl is-active -q fridged.service || fail "fridged is not running before the purge"
mkdir -p /etc/fridge/fridge.conf.d
printf '[Freeze]\nTimeoutMs=20000\n' >/etc/fridge/fridge.conf.d/local.conf
echo "# admin's edit" >>/etc/fridge/fridge.conf
owned=$(dpkg -L fridge fridge-agent) || fail "dpkg does not list fridge's files"
echo "the packages installed $(echo "$owned" | wc -l) paths"
apt-get purge -y fridge-agent fridge >/run/purge.log 2>&1 || { cat /run/purge.log; fail "apt-get purge failed"; }
grep -i 'warning\|not empty' /run/purge.log
dpkg -s fridge >/dev/null 2>&1 && fail "dpkg still knows fridge"
while read -r f; do
  [ "$f" != /. ] && { [ -e "$f" ] || [ -L "$f" ]; } || continue
  # a directory with something else in it (/lib, /usr/bin, /etc/fridge/fridge.conf.d
  # holding the admin's drop-in) or that another package owns (systemd's system-sleep)
  [ -d "$f" ] && { [ -n "$(ls -A "$f")" ] || dpkg -S "$f" >/dev/null 2>&1; } && continue
  fail "$f is still there after the purge"
done <<<"$owned"
[ -f /etc/fridge/fridge.conf.d/local.conf ] || fail "the purge removed the admin's own drop-in"
[ ! -e /etc/fridge/fridge.conf ] || fail "the purge left the conffile /etc/fridge/fridge.conf"
# everything else with fridge in its name: state, enablement links, dpkg's records
left=$(find / -xdev \( -path /proc -o -path /sys -o -path /run -o -path /usr/lib/fridge-system-test \) -prune -o \
       -iname '*fridge*' -print | grep -v -e '^/etc/fridge$' -e '^/etc/fridge/fridge.conf.d' \
       -e '^/etc/systemd/system/.*fridge-system-test.service$' -e '^/tmp/' || true)
[ -z "$left" ] || fail "the purge left $(echo $left)"
systemctl is-active -q fridged.service && fail "fridged still runs after the purge"
systemctl cat fridged.service >/dev/null 2>&1 && fail "systemd still knows fridged.service"
echo devices >/sys/power/pm_test
before=$(journalctl -b -o cat -u systemd-suspend.service | grep -c 'System returned from sleep state')
systemctl suspend || fail "systemctl suspend failed"
more() { [ "$(journalctl -b -o cat -u systemd-suspend.service | grep -c 'System returned from sleep state')" -gt "$before" ]; }
wait_for 60 more || fail "systemctl suspend did not return from sleep without fridge"
echo none >/sys/power/pm_test
journalctl -b -o cat -u systemd-suspend.service | tail -n 4
busctl status io.fridge.Fridge1 >/dev/null 2>&1 && fail "something still answers as io.fridge.Fridge1"
pass
