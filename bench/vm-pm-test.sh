# VM benchmark (a scenario for tests/vm/run-scenario.sh): the pm_test
# "devices" cycle through `fridgectl suspend --pm-test devices` next to a
# bare `echo mem > /sys/power/state` with the same pm_test level, in the
# same guest: 10 of each after one warm-up, medians and ratio.
# vm-kernel: vmlinux
# vm-append: suspend.pm_test_delay=0
# vm-binaries: STOPWATCH
# vm-timeout: 300
usec() { sed -n 's/^elapsed_usec=\([0-9]*\) status=0$/\1/p' "$1"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: >/run/fridge.us; : >/run/bare.us; : >/run/status.us; : >/run/version.us; : >/run/dynamic.us
: >/run/static.us
for i in 0 1 2 3 4 5 6 7 8 9 10; do
  stopwatch fridgectl --bus-address="$BUS" --no-progress suspend --pm-test devices >/dev/null 2>/run/sw || fail "fridgectl run $i failed"
  t=$(usec /run/sw); [ -n "$t" ] || fail "fridgectl run $i: $(cat /run/sw)"
  [ $i -eq 0 ] || echo "$t" >>/run/fridge.us
  echo devices >/sys/power/pm_test
  stopwatch sh -c 'echo mem >/sys/power/state' 2>/run/sw || fail "bare run $i failed"
  echo none >/sys/power/pm_test
  t=$(usec /run/sw); [ -n "$t" ] || fail "bare run $i: $(cat /run/sw)"
  [ $i -eq 0 ] || echo "$t" >>/run/bare.us
  # the client's own cost under emulation: start-up, bus, one GetAll
  stopwatch fridgectl --bus-address="$BUS" status >/dev/null 2>/run/sw || fail "fridgectl status failed"
  [ $i -eq 0 ] || usec /run/sw >>/run/status.us
  # and the floor of any client under emulation: exec and dynamic linking
  stopwatch fridgectl --version >/dev/null 2>/run/sw || fail "fridgectl --version failed"
  [ $i -eq 0 ] || usec /run/sw >>/run/version.us
  # and of any dynamically linked program, libc alone: stopwatch (dynamic)
  # timing busybox's true (static, as the bare cycle's sh); the inner
  # stopwatch's line (that true) comes first, the outer's last
  stopwatch stopwatch true 2>/run/sw || fail "stopwatch stopwatch true failed"
  inner=$(usec /run/sw | head -n1); outer=$(usec /run/sw | sed -n 2p)
  [ -n "$inner" ] && [ -n "$outer" ] || fail "stopwatch stopwatch true: $(cat /run/sw)"
  [ $i -eq 0 ] || { echo $((outer - inner)) >>/run/dynamic.us; echo "$inner" >>/run/static.us; }
done
# where fridged's time goes: the last cycle's phases, from its timeline
fctl plot >/run/plot.svg || fail "fridgectl plot failed"
grep -o '<text[^>]*>[^<]*</text>' /run/plot.svg | sed 's/<[^>]*>//g' | grep -E '^(started|[a-z-]+ \([0-9.]+ ms\))' |
  sed 's/^/fridged: /'
f=$(median </run/fridge.us); b=$(median </run/bare.us); s=$(median </run/status.us); v=$(median </run/version.us)
d=$(median </run/dynamic.us); st=$(median </run/static.us)
echo "fridgectl runs (usec): $(tr '\n' ' ' </run/fridge.us)"
echo "bare runs (usec): $(tr '\n' ' ' </run/bare.us)"
awk -v f="$f" -v b="$b" -v s="$s" -v v="$v" 'BEGIN { r = f / b; printf "FIGURE pm_test devices cycle, median of 10: fridgectl suspend %.1f ms, bare echo mem > state %.1f ms, ratio %.2f (goal <= 1.50: %s); fridgectl status alone %.1f ms, fridgectl --version alone %.1f ms\n", f / 1000, b / 1000, r, r <= 1.5 ? "met" : "NOT met", s / 1000, v / 1000 }'
# The floor under emulation: the bare cycle starts busybox's sh, linked
# statically; a client linked against libsystemd (Debian ships no static
# one) starts in its place, and pays the dynamic loader's start
awk -v d="$d" -v st="$st" -v b="$b" 'BEGIN { printf "FIGURE exec floor under emulation: an empty dynamically linked program (libc only) starts in %.1f ms, a static one in %.1f ms; the bare cycle with the first in place of its sh is already %.2fx the bare cycle (goal 1.50)\n", d / 1000, st / 1000, (b - st + d) / b }'
pass
