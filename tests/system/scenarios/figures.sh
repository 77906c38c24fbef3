# Not a test: the figures of the system tier (tools/bench --system). In one
# boot, `systemctl suspend` with pm_test "devices" with stock systemd
# (fridge's hook moved away), then with fridge's hook, then `fridgectl
# suspend` with Driver=logind: request-to-return time, median of 5, and
# the ratios; fridged's RssAnon while idle.
# system-timeout: 600
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
returned() { journalctl -b -o cat -u systemd-suspend.service | grep -c 'System returned from sleep state'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# one_systemctl: ms from `systemctl suspend` to systemd-sleep's return
one_systemctl() {
  local before t0
  before=$(returned)
  # logind lets the last sleep go a moment after systemd-suspend.service
  # ends ("already a shutdown or sleep operation in progress"): not timed
  local tries=0
  until t0=$(now_ms); systemctl suspend 2>/run/suspend.err; do
    tries=$((tries + 1))
    grep -q 'already a shutdown or sleep operation in progress' /run/suspend.err && [ $tries -lt 50 ] ||
      fail "systemctl suspend failed: $(cat /run/suspend.err)"
    sleep 0.1
  done
  more() { [ "$(returned)" -gt "$before" ]; }
  wait_for 60 more || fail "systemd-sleep did not return"
  # and the unit done (the hook's post included)
  wait_for 60 sh -c '! systemctl is-active -q systemd-suspend.service' || fail "systemd-suspend.service hangs"
  echo $(( $(now_ms) - t0 ))
}
echo devices >/sys/power/pm_test
hook=/usr/lib/systemd/system-sleep/fridge
mv "$hook" /run/fridge-hook
for i in 1 2 3 4 5; do one_systemctl; done >/run/stock.ms
mv /run/fridge-hook "$hook"
for i in 1 2 3 4 5; do one_systemctl; done >/run/hook.ms
mkdir -p /etc/fridge/fridge.conf.d
printf '[Sleep]\nDriver=logind\n' >/etc/fridge/fridge.conf.d/50-logind.conf
systemctl restart fridged.service
for i in 1 2 3 4 5; do
  t0=$(now_ms)
  fridgectl --no-progress suspend >/dev/null || fail "fridgectl suspend failed"
  echo $(( $(now_ms) - t0 ))
done >/run/logind.ms
echo none >/sys/power/pm_test
s=$(median </run/stock.ms); h=$(median </run/hook.ms); l=$(median </run/logind.ms)
echo "stock: $(tr '\n' ' ' </run/stock.ms)ms; hook: $(tr '\n' ' ' </run/hook.ms)ms; logind driver: $(tr '\n' ' ' </run/logind.ms)ms"
awk -v s="$s" -v h="$h" -v l="$l" 'BEGIN { rh = h / s; rl = l / s; printf "FIGURE: systemctl suspend (pm_test devices), median of 5: stock systemd %d ms, with fridge'"'"'s hook %d ms (%.2fx, goal <= 1.15: %s); fridgectl suspend with Driver=logind %d ms (%.2fx, goal <= 1.05: %s)\n", s, h, rh, rh <= 1.15 ? "met" : "NOT met", l, rl, rl <= 1.05 ? "met" : "NOT met" }'
sleep 5
pid=$(systemctl show -p MainPID --value fridged.service)
echo "FIGURE: fridged idle in the guest: $(grep -E '^(RssAnon|RssFile|VmRSS)' /proc/$pid/status | tr -s ' \t' ' ' | tr '\n' ';')"
pass
