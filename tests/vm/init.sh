#!/bin/sh
# /init of the qemu guest (busybox sh), put there by mkinitramfs.sh.
# Mounts the kernel file systems, loads the modules listed in
# /etc/vm-modules, starts a private dbus-daemon and fridged on the guest's
# real /sys/power, runs /scenario (sourced: it calls pass or fail), stops
# fridged (its exit status and sanitizer reports count), prints
#   FRIDGE-RESULT: PASS        or
#   FRIDGE-RESULT: FAIL <why>
# on the serial console and powers off. A watchdog in the guest reports a
# scenario that hangs; the host has its own timeout on top.
export PATH=/usr/bin:/usr/sbin:/bin:/sbin
export HOME=/root
umask 022

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /run/fridge /var/log

FRIDGE_VM_GUEST_TIMEOUT=60
FRIDGE_VM_INTERACTIVE=0
if [ -f /etc/vm.conf ]; then set -a; . /etc/vm.conf; set +a; fi

# Sanitizer builds: no leak check (fridged is stopped by SIGTERM and the
# guest has no symbolizer), but any report fails the scenario (see below).
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# Kernel messages at warning level and above still reach the console
# ("quiet"), which keeps them from cutting through our lines less often.
echo 1 >/proc/sys/kernel/printk

RESULT_DONE=0
result() { # result PASS | result FAIL why...: once; then power off
  [ $RESULT_DONE -eq 0 ] || return 0
  RESULT_DONE=1
  echo
  echo "FRIDGE-RESULT: $*"
}
finish() {
  sync
  poweroff -f
  sleep 10
}
die_early() {
  result "FAIL $*"
  for f in /run/dbus.log /run/fridged.log; do
    [ -s "$f" ] && { echo "--- $f"; cat "$f"; }
  done
  finish
}

if [ -s /etc/vm-modules ]; then
  while read -r ko; do
    [ -n "$ko" ] || continue
    insmod "/lib/modules/$ko" || die_early "insmod $ko failed"
  done </etc/vm-modules
fi

# The second boot of a hibernation scenario: the kernel looked for an image
# before the disk driver was loaded, so point it at the disk now, or (the
# scenario's "# vm-resume-tool: NAME") let that tool resume it, as an
# initramfs would. On success this never returns: the first boot's memory,
# scenario included, takes over.
# After a power cut ("# vm-power-cut"), a resume that returns is what the
# scenario checks: the boot goes on, the scenario runs again from its top
# with FRIDGE_VM_BOOT=2 and the resume's exit status and output.
# With noresume on the command line ("# vm-resume-append: noresume") the
# resume tool does what fridge's local-premount script runs it for then:
# --discard, nothing loaded; the boot goes on the same way.
resume_disk=$(sed -n 's/.*fridge\.resume=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
resume_tool=$(sed -n 's/^# vm-resume-tool: *//p' /scenario | head -n1)
FRIDGE_VM_BOOT=$(sed -n 's/.*fridge\.boot=\([0-9]*\).*/\1/p' /proc/cmdline)
export FRIDGE_VM_BOOT=${FRIDGE_VM_BOOT:-1}
if [ -n "$resume_disk" ] && [ -n "$resume_tool" ] && grep -qw noresume /proc/cmdline; then
  echo "noresume: $resume_tool --discard on /dev/$resume_disk, as the boot script runs it"
  "$resume_tool" --device="/dev/$resume_disk" --discard >/run/resume.out 2>&1
  export FRIDGE_VM_RESUME_RC=$?
  cat /run/resume.out
  echo "nothing resumed (noresume; exit status $FRIDGE_VM_RESUME_RC); the boot goes on"
  resume_disk=
fi
if [ -n "$resume_disk" ] && grep -qw fridge.power-cut /proc/cmdline; then
  echo "after a power cut: resuming from /dev/$resume_disk${resume_tool:+ with $resume_tool}, if there is an image"
  if [ -n "$resume_tool" ]; then
    ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=4 "$resume_tool" --device="/dev/$resume_disk" \
      --snapshot=/dev/snapshot >/run/resume.out 2>&1
    FRIDGE_VM_RESUME_RC=$?
  else
    cat "/sys/class/block/$resume_disk/dev" >/sys/power/resume 2>/run/resume.out
    FRIDGE_VM_RESUME_RC=$?
  fi
  export FRIDGE_VM_RESUME_RC
  cat /run/resume.out
  echo "nothing resumed (exit status $FRIDGE_VM_RESUME_RC); the boot goes on"
  resume_disk=
fi
if [ -n "$resume_disk" ] && [ -n "$resume_tool" ]; then
  echo "resuming from /dev/$resume_disk with $resume_tool"
  # the image needs most of the memory: no sanitizer quarantine holding freed blocks
  ASAN_OPTIONS=$ASAN_OPTIONS:quarantine_size_mb=4 "$resume_tool" --device="/dev/$resume_disk" --snapshot=/dev/snapshot
  die_early "second boot: $resume_tool exited with $?: nothing resumed from /dev/$resume_disk"
fi
if [ -n "$resume_disk" ]; then
  echo "resuming from /dev/$resume_disk ($(cat /sys/class/block/$resume_disk/dev 2>/dev/null))"
  cat "/sys/class/block/$resume_disk/dev" >/sys/power/resume 2>/dev/null
  die_early "second boot: no hibernation image resumed from /dev/$resume_disk"
fi

# A scenario's own set-up before fridged starts (its config, say)
if [ -f /scenario.pre ]; then
  . /scenario.pre || die_early "/scenario.pre failed"
fi

# Guest-side watchdog: a scenario that hangs still gets a result line.
(
  sleep "$FRIDGE_VM_GUEST_TIMEOUT"
  echo
  echo "FRIDGE-RESULT: FAIL guest watchdog: no result after ${FRIDGE_VM_GUEST_TIMEOUT} s"
  for f in /run/fridged.log /run/scenario.log; do
    [ -s "$f" ] && { echo "--- $f"; tail -n 50 "$f"; }
  done
  sync
  poweroff -f
) &

dbus-daemon --config-file=/etc/fridge-bus.conf --nofork --print-address=3 \
  3>/run/bus.address 2>/run/dbus.log &
i=0
until [ -s /run/bus.address ]; do
  i=$((i + 1))
  [ $i -le 200 ] || die_early "dbus-daemon did not start"
  sleep 0.05
done
BUS=$(head -n1 /run/bus.address)
export BUS

fridged --bus-address="$BUS" --state-dir=/run/fridge --persistent-dir=/run/fridge-lib --config-dir=/etc/fridge \
  --vendor-dir=/usr/lib/fridge 2>/run/fridged.log &
FRIDGED_PID=$!

# Bounded wait for fridged's name: fridgectl status answers once it is there.
i=0
until fridgectl --bus-address="$BUS" status >/run/status.txt 2>&1; do
  i=$((i + 1))
  kill -0 "$FRIDGED_PID" 2>/dev/null || die_early "fridged exited during start-up"
  [ $i -le 100 ] || die_early "fridged did not come up on the bus within 20 s"
  sleep 0.2
done

# The scenario: sourced in a subshell, it calls pass or fail (or exits).
# Its own lines go to the console as they come.
cat >/run/vm-lib.sh <<'EOF_LIB'
pass() { echo "scenario: PASS" >>/run/scenario.result; exit 0; }
fail() { echo "scenario: FAIL $*" >>/run/scenario.result; echo "FAIL: $*"; exit 1; }
fctl() { fridgectl --bus-address="$BUS" "$@"; }
EOF_LIB
echo "=== scenario $(cat /etc/vm-scenario-name 2>/dev/null)"
if [ "$FRIDGE_VM_INTERACTIVE" = 1 ]; then
  # a controlling tty on the serial line, for the progress bar and Ctrl-C
  setsid cttyhack sh -c '. /run/vm-lib.sh; . /scenario'
else
  ( . /run/vm-lib.sh; . /scenario ) 2>&1 | tee /run/scenario.log
fi
why=$(sed -n 's/^scenario: FAIL //p' /run/scenario.result 2>/dev/null | head -n1)
if ! grep -q '^scenario: PASS' /run/scenario.result 2>/dev/null && [ -z "$why" ]; then
  why="the scenario ended without pass or fail"
fi

# Stop fridged; it must exit 0 and without sanitizer reports.
kill -TERM "$FRIDGED_PID" 2>/dev/null
i=0
while kill -0 "$FRIDGED_PID" 2>/dev/null; do
  i=$((i + 1))
  [ $i -le 100 ] || { kill -KILL "$FRIDGED_PID"; [ -n "$why" ] || why="fridged did not exit within 10 s of SIGTERM"; break; }
  sleep 0.1
done
wait "$FRIDGED_PID"
rc=$?
# A crash scenario SIGKILLed this one and stopped its own last fridged
[ ! -f /run/fridged.replaced ] || rc=0
[ -n "$why" ] || [ $rc -eq 0 ] || why="fridged exited with status $rc"
if [ -z "$why" ] && grep -qE 'ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' /run/fridged.log; then
  why="sanitizer report in fridged's log"
fi

echo "--- fridged's log"
cat /run/fridged.log
echo "--- /sys/power/pm_test: $(cat /sys/power/pm_test 2>/dev/null)"
if [ -z "$why" ]; then result PASS; else result "FAIL $why"; fi
finish
