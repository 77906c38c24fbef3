# Not a test: the figures of the system tier (tools/bench --system). In one
# boot, `systemctl suspend` with pm_test "devices" with stock systemd
# (fridge's hook moved away), with fridge's hook, and `fridgectl suspend`
# with Driver=logind, the three in turn in each of 8 rounds:
# request-to-return time, median of 8, and the ratios; fridged's RssAnon
# while idle.
# system-timeout: 600
# The clock and the waits use bash's builtins only: under TCG a process
# (date, sleep, journalctl, systemctl) costs 50-150 ms of the guest's one
# CPU, and polling with them slowed whatever was being timed, the longer
# the more: the ratios came out high.
# stamp: ms since the epoch, in $ms
stamp() { local t=${EPOCHREALTIME/./}; ms=$((t / 1000)); }
mkfifo /run/figures.fifo
exec 9<>/run/figures.fifo
nap() { read -r -t 0.02 -u 9 || true; } # 20 ms
# until_true SECONDS CMD...: polls CMD (a builtin test) every 20 ms
until_true() {
  local left=$(($1 * 50)); shift
  until "$@"; do left=$((left - 1)); [ $left -gt 0 ] || return 1; nap; done
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# one_systemctl: ms from `systemctl suspend` to the end of
# systemd-suspend.service (the hook's post included), in $took: the
# kernel's count of suspends went up, and then the unit's cgroup is gone
unit_cgroup=/sys/fs/cgroup/system.slice/systemd-suspend.service
one_systemctl() {
  local before t0 tries=0 i
  read -r before </sys/power/suspend_stats/success
  # logind lets the last sleep go a moment after systemd-suspend.service
  # ends ("already a shutdown or sleep operation in progress"): not timed
  until stamp; t0=$ms; systemctl suspend 2>/run/suspend.err; do
    tries=$((tries + 1))
    grep -q 'already a shutdown or sleep operation in progress' /run/suspend.err && [ $tries -lt 50 ] ||
      fail "systemctl suspend failed: $(cat /run/suspend.err)"
    for i in 1 2 3 4 5; do nap; done
  done
  slept() { local count; read -r count </sys/power/suspend_stats/success; [ "$count" -gt "$before" ]; }
  until_true 60 slept || fail "the kernel did not count the suspend"
  until_true 60 test ! -d "$unit_cgroup" || fail "systemd-suspend.service hangs"
  stamp
  took=$((ms - t0))
}
# cycle_phases ID: fridged's phases of cycle ID in ms ("prepare 0-3 ms;
# ..."): GetCycleTimeline's (name, start, end), the only triples of one
# string and two numbers in its JSON
cycle_phases() {
  busctl --json=short call io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 GetCycleTimeline t "$1" |
    grep -o '\["[a-z-]*",[0-9]*,[0-9]*\]' | tr -d '[]"' |
    awk -F, '{ printf "%s %.0f-%.0f ms; ", $1, $2 / 1000, $3 / 1000 }'
}
last_cycle() { busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 CycleId | cut -d' ' -f2; }
echo devices >/sys/power/pm_test
hook=/usr/lib/systemd/system-sleep/fridge
# one_fridgectl: ms of `fridgectl suspend` (Driver=logind), in $took;
# logind's moment after the last sleep is waited out as one_systemctl does
one_fridgectl() {
  local t0 tries=0 i
  until stamp; t0=$ms; fridgectl --no-progress suspend >/dev/null 2>/run/suspend.err; do
    tries=$((tries + 1))
    grep -q 'already a shutdown or sleep operation in progress' /run/suspend.err && [ $tries -lt 50 ] ||
      fail "fridgectl suspend failed: $(cat /run/suspend.err)"
    for i in 1 2 3 4 5; do nap; done
  done
  stamp
  took=$((ms - t0))
}
# Driver=logind does not change the hook's path (systemctl suspend): set
# once, so that the three run in turn in every round and whatever drifts
# in the guest (TCG, the page cache, journald) weighs on all three alike
mkdir -p /etc/fridge/fridge.conf.d
printf '[Sleep]\nDriver=logind\n' >/etc/fridge/fridge.conf.d/50-logind.conf
systemctl restart fridged.service
# round 0 warms up (binaries and units read in) and is not counted
for i in 0 1 2 3 4 5 6 7 8; do
  mv "$hook" /run/fridge-hook
  one_systemctl; [ $i -eq 0 ] || echo $took >>/run/stock.ms
  mv /run/fridge-hook "$hook"
  one_systemctl; [ $i -eq 0 ] || echo $took >>/run/hook.ms
  hook_cycle=$(last_cycle)
  one_fridgectl; [ $i -eq 0 ] || echo $took >>/run/logind.ms
done
echo "FIGURE: the hook's last cycle in fridged: $(cycle_phases "$hook_cycle")"
echo "FIGURE: the logind driver's last cycle in fridged: $(cycle_phases "$(last_cycle)")"
echo none >/sys/power/pm_test
s=$(median </run/stock.ms); h=$(median </run/hook.ms); l=$(median </run/logind.ms)
echo "stock: $(tr '\n' ' ' </run/stock.ms)ms; hook: $(tr '\n' ' ' </run/hook.ms)ms; logind driver: $(tr '\n' ' ' </run/logind.ms)ms"
awk -v s="$s" -v h="$h" -v l="$l" 'BEGIN { rh = h / s; rl = l / s; printf "FIGURE: systemctl suspend (pm_test devices), median of 8, in turn: stock systemd %d ms, with fridge'"'"'s hook %d ms (%.2fx, goal <= 1.15: %s); fridgectl suspend with Driver=logind %d ms (%.2fx, goal <= 1.05: %s)\n", s, h, rh, rh <= 1.15 ? "met" : "NOT met", l, rl, rl <= 1.05 ? "met" : "NOT met" }'
# The floor of any hook under emulation: the start of a process. Stock
# systemd-sleep starts none; fridge's hook is fridgectl, started once in
# pre and once in post. Median of 10 starts each, bash's clock.
exec_ms() {
  local i t0
  : >/run/exec.us
  for i in 0 1 2 3 4 5 6 7 8 9; do
    t0=${EPOCHREALTIME/./}; "$@" >/dev/null; echo $((${EPOCHREALTIME/./} - t0)) >>/run/exec.us
  done
  median </run/exec.us
}
t=$(exec_ms /usr/bin/true); v=$(exec_ms fridgectl --version)
awk -v t="$t" -v v="$v" -v s="$s" 'BEGIN { printf "FIGURE: process start in the guest, median of 10: /usr/bin/true %.1f ms, fridgectl --version %.1f ms; the hook starts fridgectl twice a cycle, %.0f ms before any work, against the %.0f ms that 1.15x stock leaves (and %.0f ms for 1.05x)\n", t / 1000, v / 1000, 2 * v / 1000, 0.15 * s, 0.05 * s }'
sleep 5
pid=$(systemctl show -p MainPID --value fridged.service)
echo "FIGURE: fridged idle in the guest: $(grep -E '^(RssAnon|RssFile|VmRSS)' /proc/$pid/status | tr -s ' \t' ' ' | tr '\n' ';')"
pass
