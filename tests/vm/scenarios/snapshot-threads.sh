# Scenario 8 (issue 17): what fridge-image-writer's design rests on. After
# SNAPSHOT_FREEZE on the guest's real /dev/snapshot only the caller runs:
# its thread from before the freeze stops counting, and a thread it
# creates after the freeze runs (so the writer may compress and write in
# threads started inside the write). Then user space runs on: the shell
# that ran the writer, fridged (it answers status) and a background
# process that keeps counting.
# vm-binaries: FRIDGE_IMAGE_WRITER
# vm-timeout: 90
[ -c /dev/snapshot ] || fail "no /dev/snapshot in the guest"
fridge-image-writer --probe-threads 2>/run/w.err && fail "the writer ran without --snapshot"
grep -q 'snapshot=DEVICE is required' /run/w.err || fail "no reason given without --snapshot: $(cat /run/w.err)"
# (its output away from the log's pipe, or a fail would wait on it)
( while :; do date +%s%N >/run/ticker; sleep 0.1; done ) >/dev/null 2>&1 &
ticker=$!
fridge-image-writer --snapshot=/dev/snapshot --probe-threads >/run/probe.out 2>/run/probe.err
rc=$?
cat /run/probe.out /run/probe.err
grep -q '^thread_before_freeze=frozen$' /run/probe.out || fail "a thread from before the freeze ran while frozen"
grep -q '^thread_after_freeze=runs$' /run/probe.out || fail "a thread created after the freeze did not run"
[ $rc -eq 0 ] || fail "fridge-image-writer --probe-threads exited with $rc"
# user space runs again: the ticker moves, fridged answers
t1=$(cat /run/ticker)
i=0
while [ "$(cat /run/ticker)" = "$t1" ]; do
  i=$((i + 1)); [ $i -le 100 ] || fail "a background process stayed frozen after the probe"; sleep 0.1
done
kill "$ticker"
fctl status >/dev/null || fail "fridged does not answer after the probe"
pass
