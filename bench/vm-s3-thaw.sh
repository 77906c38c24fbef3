# VM benchmark (a scenario for tests/vm/run-scenario.sh): real S3 with 20
# frozen cgroups (one sleeping process each, all classed early): how long
# after the state write returns are they all thawed (fridged's own log
# line), over 3 cycles, and how long the whole cycle takes.
# vm-kernel: bzImage
# vm-binaries: STOPWATCH
# vm-timeout: 300
for i in 1 2 3; do
  stopwatch fridgectl --bus-address="$BUS" --no-progress suspend --mem-sleep deep --wake-after 3 >/dev/null 2>/run/sw \
    || fail "S3 cycle $i failed: $(cat /run/sw)"
  echo "cycle $i (awake time only: CLOCK_MONOTONIC stops while asleep): $(cat /run/sw)"
done
grep 'after the resume' /run/fridged.log | sed 's/^/fridged: /'
n=$(grep -c "thawed [0-9]* cgroups .* after the resume" /run/fridged.log)
[ "$n" -eq 3 ] || fail "expected 3 thaws after a resume, got $n"
grep -o '[0-9.]* ms after the resume' /run/fridged.log | sort -n | awk '{ v[NR] = $1 } END { printf "FIGURE S3 resume to all thawed (20 cgroups, one process each): median %.2f ms (min %.2f, max %.2f, n=3)\n", v[2], v[1], v[3] }'
pass
