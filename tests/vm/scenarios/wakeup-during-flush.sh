# Scenario 5: a wakeup event during the flush spoils the wakeup_count
# handshake. The test's FUSE server (slowfs) holds its writeback, so the
# flush phase waits on dirty data there (syncfs waits for FUSE writeback on
# this kernel); the RTC alarm fires meanwhile (an RTC interrupt is a wakeup
# event: pm_stay_awake on 00:04); then the writeback is let go. fridged's
# write-back of wakeup_count must fail: result aborted, error WakeupEvent
# naming the RTC, no state write, nothing left frozen, pm_test back at none.
# vm-kernel: vmlinux
# vm-append: suspend.pm_test_delay=0
# vm-modules: fuse
# vm-binaries: SLOWFS
# vm-timeout: 120
. /usr/lib/vm/fuse-lib.sh
start_fuse_server
start_client
echo hold >/mnt/slow/.control || fail "cannot hold slowfs"
# Data written, kept open (a close would flush, and wait while held). The
# kernel soon sends it (the FUSE bdi's dirty limit is small) and slowfs
# holds those writes; the file's mtime stays dirty in the kernel, and
# syncfs must get it to slowfs, which holds that too.
sh -c 'exec >/mnt/slow/dirty; head -c 1048576 /dev/zero | tr "\0" x; exec sleep 600' 2>/dev/null &
WRITER_PID=$!
i=0
until grep -q 'held=[1-9]' /mnt/slow/.stats; do
  i=$((i + 1)); [ $i -le 50 ] || fail "slowfs holds no writes: $(cat /mnt/slow/.stats)"
  sleep 0.1
done
echo "slowfs: $(cat /mnt/slow/.stats); $(grep -E '^(Dirty|Writeback|WritebackTmp):' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"

echo +4 >/sys/class/rtc/rtc0/wakealarm || fail "cannot arm the RTC alarm"
fctl --json --no-progress suspend --pm-test devices >/run/out.json &
CTL_PID=$!
# the flush must be what is waiting when the alarm fires
i=0
until fctl status | grep -q 'Phase: flush'; do
  i=$((i + 1)); [ $i -le 50 ] || fail "the cycle never waited in flush: $(fctl status)"
  sleep 0.1
done
sleep 6
phase=$(fctl status | sed -n 's/^ *Phase: *//p')
echo "after the alarm: phase $phase, slowfs $(cat /mnt/slow/.stats)"
[ "$phase" = flush ] || fail "the flush did not wait for slowfs (phase $phase)"
echo release >/mnt/slow/.control
wait $CTL_PID
rc=$?
cat /run/out.json
kill $WRITER_PID 2>/dev/null
WRITER_PID=
[ $rc -eq 3 ] || fail "fridgectl exited with $rc, not 3 (aborted)"
grep -q '"event":"finished".*"result":"aborted".*"error":"io.fridge.Fridge1.Error.WakeupEvent"' /run/out.json \
  || fail "the cycle did not end aborted with WakeupEvent"
msg=$(sed -n 's/.*"event":"finished".*"message":"\([^"]*\)".*/\1/p' /run/out.json)
case $msg in *rtc*) ;; *) fail "the WakeupEvent message does not name the RTC: $msg" ;; esac
dmesg | grep -q 'PM: suspend entry' && fail "the kernel was asked to suspend"
expect_thawed
case $(cat /sys/power/pm_test) in "[none] "*) ;; *) fail "pm_test not restored: $(cat /sys/power/pm_test)" ;; esac
pass
