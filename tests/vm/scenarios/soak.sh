# Issue 18's soak on the real kernel: 50 pm_test cycles (deep,
# pm_test=devices) and 10 real S3 cycles woken by the RTC, in an order and
# with faults drawn from a seed: fridged SIGKILLed at a random moment or
# once the kernel shows a cgroup frozen (and
# started again: it must thaw what the killed one froze and put the
# kernel's knobs back), the FUSE server SIGKILLed (its mount lazily
# unmounted and the server started again). After every cycle, read from
# the kernel, not from fridged: no cgroup under fridge-test frozen,
# pm_test back at none, mem_sleep back at its value, fridged answering.
# The seed is printed; FRIDGE_SOAK_SEED=N (passed by run-scenario.sh)
# replays a run.
# vm-kernel: bzImage
# vm-append: suspend.pm_test_delay=0
# vm-modules: fuse
# vm-binaries: SLOWFS
# vm-timeout: 600
. /usr/lib/vm/fuse-lib.sh
PM_LEFT=${FRIDGE_SOAK_PM_CYCLES:-50}
S3_LEFT=${FRIDGE_SOAK_S3_CYCLES:-10}
SEED=${FRIDGE_SOAK_SEED:-$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')}
echo "soak seed $SEED (replay: FRIDGE_SOAK_SEED=$SEED tests/vm/run-scenario.sh soak)"
RANDOM=$SEED

FPID=$FRIDGED_PID
MEM_SLEEP_BEFORE=$(cat /sys/power/mem_sleep)
now_cs() { cut -d' ' -f1 /proc/uptime | tr -d .; } # centiseconds since boot

start_fridged() {
  fridged --bus-address="$BUS" --state-dir=/run/fridge --persistent-dir=/run/fridge-lib --config-dir=/etc/fridge \
    --vendor-dir=/usr/lib/fridge 2>>/run/fridged.log &
  FPID=$!
  touch /run/fridged.replaced # the first one's SIGKILL is ours: init.sh leaves its status to us
  i=0
  until fctl status >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -le 100 ] || fail "cycle $n: the restarted fridged is not on the bus after 20 s (seed $SEED)"
    kill -0 "$FPID" 2>/dev/null || fail "cycle $n: the restarted fridged exited (seed $SEED)"
    sleep 0.2
  done
}
start_busy() {
  for g in 1 2 3 4; do
    sh -c "echo \$\$ >$CG/busy$g/cgroup.procs && while :; do echo x >/tmp/busy$g; usleep 50000; done" \
      >/dev/null 2>&1 &
  done
}
restart_fuse() {
  kill -KILL "$SERVER_PID" 2>/dev/null
  wait "$SERVER_PID" 2>/dev/null
  umount -l /mnt/slow 2>/dev/null
  start_fuse_server # the client goes on reading, through the new mount
}
all_thawed() {
  for g in "$CG"/*/; do
    [ "$(sed -n 's/^frozen //p' "$g/cgroup.events")" = 0 ] || return 1
  done
}
check_invariants() {
  for g in "$CG"/*/; do
    [ "$(sed -n 's/^frozen //p' "$g/cgroup.events")" = 0 ] ||
      fail "cycle $n ($kind, $fault): $g is frozen after the cycle: $(cat "$g/cgroup.events" | tr '\n' ' ') (seed $SEED)"
    [ "$(cat "$g/cgroup.freeze")" = 0 ] || fail "cycle $n ($kind, $fault): $g has cgroup.freeze 1 (seed $SEED)"
  done
  grep -q '^\[none\]' /sys/power/pm_test || fail "cycle $n ($kind, $fault): pm_test is $(cat /sys/power/pm_test) (seed $SEED)"
  [ "$(cat /sys/power/mem_sleep)" = "$MEM_SLEEP_BEFORE" ] ||
    fail "cycle $n ($kind, $fault): mem_sleep is $(cat /sys/power/mem_sleep), was $MEM_SLEEP_BEFORE (seed $SEED)"
  kill -0 "$CLIENT_PID" 2>/dev/null || fail "cycle $n: the FUSE client died (seed $SEED)"
  timeout 10 fridgectl --bus-address="$BUS" status >/dev/null 2>&1 || fail "cycle $n ($kind, $fault): fridged does not answer (seed $SEED)"
}
# wait_frozen: until a cgroup under fridge-test is frozen (0), or the
# cycle ended first (1); builtins only, to see a short pm_test freeze
wait_frozen() {
  while kill -0 "$CPID" 2>/dev/null; do
    for g in "$CG"/*/; do
      while read -r k v; do [ "$k" != frozen ] || [ "$v" != 1 ] || return 0; done <"$g/cgroup.events"
    done
  done
  return 1
}
# wait_client: fridgectl's exit status, bounded (fridged gone or not)
wait_client() {
  i=0
  while kill -0 "$CPID" 2>/dev/null; do
    i=$((i + 1)); [ $i -le 600 ] || fail "cycle $n ($kind, $fault): fridgectl suspend still runs after 60 s (seed $SEED)"
    usleep 100000
  done
  wait "$CPID"
}

start_fuse_server
start_client
start_busy
n=0 kills_fridged=0 frozen_kills=0 kills_fuse=0 done_n=0 other_n=0 longest_cs=0
while [ $((PM_LEFT + S3_LEFT)) -gt 0 ]; do
  n=$((n + 1))
  if [ $((RANDOM % (PM_LEFT + S3_LEFT))) -lt $S3_LEFT ]; then
    kind=s3; S3_LEFT=$((S3_LEFT - 1)); args="--wake-after 5"; window=4000
  else
    kind=pm_test; PM_LEFT=$((PM_LEFT - 1)); args="--pm-test devices"; window=600
  fi
  r=$((RANDOM % 10)); delay=$((RANDOM % window))
  case $r in
    0|1) fault=kill-fridged ;;
    2) fault=kill-fridged-frozen ;;
    3|4) fault=kill-fuse ;;
    *) fault=none ;;
  esac
  fctl --json --no-progress suspend --mem-sleep deep $args >/run/cycle.json 2>&1 &
  CPID=$!
  case $fault in
    kill-fridged|kill-fridged-frozen)
      if [ $fault = kill-fridged ]; then usleep $((delay * 1000)); elif wait_frozen; then frozen_kills=$((frozen_kills + 1)); fi
      kill -KILL "$FPID"; wait "$FPID" 2>/dev/null
      kills_fridged=$((kills_fridged + 1))
      t0=$(now_cs)
      wait_client
      start_fridged
      i=0
      until all_thawed; do
        i=$((i + 1)); [ $i -le 200 ] || break # check_invariants names the frozen one
        usleep 50000
      done
      took=$(($(now_cs) - t0)); [ $took -le $longest_cs ] || longest_cs=$took
      other_n=$((other_n + 1))
      ;;
    kill-fuse)
      usleep $((delay * 1000))
      kill -KILL "$SERVER_PID"
      kills_fuse=$((kills_fuse + 1))
      wait_client
      restart_fuse
      if grep -q '"result":"done"' /run/cycle.json; then done_n=$((done_n + 1)); else other_n=$((other_n + 1)); fi
      ;;
    none)
      wait_client; rc=$?
      [ $rc -eq 0 ] || { cat /run/cycle.json; fail "cycle $n ($kind, no fault): fridgectl suspend exited $rc (seed $SEED)"; }
      done_n=$((done_n + 1))
      ;;
  esac
  check_invariants
  echo "soak: cycle $n $kind fault=$fault delay=${delay}ms ok"
done
echo "soak: $n cycles, seed $SEED; faults: kill-fridged $kills_fridged ($frozen_kills with cgroups frozen), kill-fuse $kills_fuse; ended done $done_n, otherwise $other_n; longest crash-to-thawed $((longest_cs * 10)) ms"
[ $frozen_kills -gt 0 ] || fail "no fridged was killed with cgroups frozen (seed $SEED): the soak proved nothing of crash recovery"

if [ "$FPID" != "$FRIDGED_PID" ]; then
  # the last fridged is ours to stop; it must exit 0 like init.sh's would
  kill -TERM "$FPID"
  wait "$FPID"; rc=$?
  [ $rc -eq 0 ] || fail "the last restarted fridged exited with $rc on SIGTERM"
fi
pass
