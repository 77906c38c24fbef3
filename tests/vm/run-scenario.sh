#!/usr/bin/env bash
# run-scenario.sh [--interactive] SCENARIO: one boot of Debian's kernel in
# qemu (TCG) running one scenario (tests/vm/scenarios/SCENARIO.sh) against
# the real kernel's /sys/power inside the guest.
# Environment:
#   FRIDGED, FRIDGECTL   the binaries to test (required; sanitizer builds are fine)
#   FRIDGE_VM_CACHE      where the kernel is kept between runs
#                        (default: $FRIDGE_VM_DEFAULT_CACHE, which meson sets to
#                        BUILD/vm-cache; else ~/.cache/fridge-vm)
#   FRIDGE_VM_LOGDIR     where the console log is saved as vm-SCENARIO.console.log
#   DBUS_DAEMON          the dbus-daemon for the guest (default: from PATH)
# The scenario's header sets the boot: "# vm-kernel: vmlinux|bzImage",
# "# vm-append: ARGS", "# vm-modules: NAMES", "# vm-timeout: SECONDS",
# "# vm-disks: SIZE..." (blank raw disks, /dev/vda on, e.g. "64M 8M"),
# "# vm-binaries: VAR..." (more binaries for the guest, named by environment
# variables such as SLOWFS), "# vm-power-button: yes" (the host presses the
# ACPI power button every 3 s once the guest prints FRIDGE-PRESS-POWER), and
# "# vm-resume: DISK" (two boots: when the first powers off without a
# result, a second boot of the same disks resumes the hibernation image on
# /dev/DISK and the first boot's scenario goes on there), "# vm-resume-tool:
# NAME" (the second boot resumes by running NAME --device=/dev/DISK
# --snapshot=/dev/snapshot, e.g. fridge-resume, instead of through
# /sys/power/resume), "# vm-resume-append: ARGS" (more for the second
# boot's kernel command line, e.g. noresume).
# "# vm-serial-keys: PATTERN" (the first time the console shows PATTERN, a
# grep regex, the host types Esc on the serial line: the guest reads it on
# /dev/ttyS0; several such lines type one Esc each, in their order, each
# pattern looked for only in what the console showed after the previous
# Esc), "# vm-keyboard-keys: PATTERN" (the same, but Esc pressed on the
# guest's PS/2 keyboard through qemu's monitor (sendkey esc): the kernel
# gives it to the VT in front, so only a reader there sees it),
# "# vm-power-button-at: PATTERN" (the ACPI power button pressed once,
# through qemu's monitor, the first time the console shows PATTERN: a
# wakeup event at a chosen point, e.g. during an image write),
# "# vm-memory: MIB" (the guest's memory, 256 by default),
# "# vm-power-cut: PATTERN" (a power cut: the first time the first boot's
# console shows PATTERN, a grep regex, the host SIGKILLs that qemu at once,
# no sync and no power-off, and boots the same disks again with
# "fridge.boot=2 fridge.power-cut" on the kernel's command line; with
# "# vm-resume: DISK" that second boot first tries to resume from /dev/DISK
# as above, and when nothing is resumed it goes on, the resume's exit status
# in $FRIDGE_VM_RESUME_RC and its output in /run/resume.out; the scenario
# runs again from its top with FRIDGE_VM_BOOT=2, so it keeps on its disks
# whatever that boot must know: the first boot's /run is gone. The first
# boot ending before PATTERN showed fails the test: no power cut happened.
# Every scenario sees FRIDGE_VM_BOOT, 1 in a first boot).
# "# vm-qemu-args: ARGS" (more for qemu's command line, both boots),
# "# vm-host-times: NAME..." (the host's clock when the console first
# shows "FRIDGE-TIME: NAME" in a boot, printed on a scenario's PASS as
# "FIGURE-HOST-TIMES: boot1-start=0.00 NAME=S ... boot2-end=S", seconds
# from the first qemu start: a time that spans a power-off),
# "# vm-console-expect: PATTERN" and "# vm-console-reject: PATTERN" (grep
# regexes, one a line: a scenario that passes fails all the same when the
# console of its boots lacks one it expects, each after the line the one
# before matched, or shows one it rejects anywhere: what a first boot said
# as it ended, which the resumed system cannot know).
# NAME.pre.sh next to the scenario, if any, runs in /init before fridged
# starts (for its config).
# Exit 0 on "FRIDGE-RESULT: PASS", 1 on FAIL, no marker or a hang (the
# console log is printed), 77 when qemu or the kernel cannot be had.
# --interactive: the console is this terminal (Ctrl-A X quits qemu).
# --conf KEY=VALUE: a line for the guest's /etc/vm.conf (shell syntax;
# exported to the scenario).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/console-actions.sh"
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "error: $*" >&2; exit 1; }

interactive=0
conf=()
while [ $# -gt 1 ]; do
  case $1 in
    --interactive) interactive=1 ;;
    --conf) conf+=(-c "$2"); shift ;;
    *) break ;;
  esac
  shift
done
[ $# -eq 1 ] || die "usage: $0 [--interactive] [--conf KEY=VALUE]... SCENARIO"
# the soak's seed, to replay a run
[ -z "${FRIDGE_SOAK_SEED:-}" ] || conf+=(-c "FRIDGE_SOAK_SEED=$FRIDGE_SOAK_SEED")
scenario=$1
[ -f "$scenario" ] || scenario=$here/scenarios/$1.sh
[ -f "$scenario" ] || die "no scenario $1"
name=$(basename "$scenario" .sh)

: "${FRIDGED:?FRIDGED must name the fridged binary}"
: "${FRIDGECTL:?FRIDGECTL must name the fridgectl binary}"
if [ -z "${FRIDGE_VM_CACHE:-}" ]; then
  if [ -n "${FRIDGE_VM_DEFAULT_CACHE:-}" ]; then FRIDGE_VM_CACHE=$FRIDGE_VM_DEFAULT_CACHE
  elif [ -n "${MESON_BUILD_ROOT:-}" ]; then FRIDGE_VM_CACHE=$MESON_BUILD_ROOT/vm-cache
  else FRIDGE_VM_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/fridge-vm; fi
fi

# Host tools: install the VM packages when we may, else skip.
need_tools() {
  local t
  for t in qemu-system-x86_64 busybox cpio gzip xz; do
    command -v "$t" >/dev/null || return 1
  done
}
if ! need_tools; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    ( source "$here/../../tools/lib/setup.sh" && fridge_ensure_vm_packages ) >&2 || true
  fi
  need_tools || skip "qemu-system-x86_64, busybox, cpio, gzip or xz missing and not installable (tools/lib/setup.sh: FRIDGE_VM_PACKAGES)"
fi
dbus_daemon=${DBUS_DAEMON:-$(command -v dbus-daemon || true)}
[ -n "$dbus_daemon" ] || skip "no dbus-daemon on the host to copy into the guest"

rc=0
"$here/kernel.sh" "$FRIDGE_VM_CACHE" || rc=$?
[ $rc -eq 0 ] || { [ $rc -eq 77 ] && skip "Debian's kernel could not be fetched (see above)"; die "kernel.sh failed"; }
kdir=$FRIDGE_VM_CACHE/kernel

header() { sed -n "s/^# $1: *//p" "$scenario" | head -n1; }
kind=$(header vm-kernel); kind=${kind:-vmlinux}
append=$(header vm-append)
modules=$(header vm-modules)
disks=$(header vm-disks)
binaries=$(header vm-binaries)
power_button=$(header vm-power-button)
resume_disk=$(header vm-resume)
resume_append=$(header vm-resume-append)
serial_keys=$(sed -n "s/^# vm-serial-keys: *//p" "$scenario")   # one pattern a line
keyboard_keys=$(sed -n "s/^# vm-keyboard-keys: *//p" "$scenario")   # likewise
button_at=$(header vm-power-button-at)
memory=$(header vm-memory); memory=${memory:-256}
power_cut=$(header vm-power-cut)
timeout=$(header vm-timeout); timeout=${timeout:-90}
qemu_args=$(header vm-qemu-args)
host_times=$(header vm-host-times)
console_expect=$(sed -n "s/^# vm-console-expect: *//p" "$scenario")   # one pattern a line
console_reject=$(sed -n "s/^# vm-console-reject: *//p" "$scenario")
[ -z "${FRIDGE_VM_TIMEOUT:-}" ] || timeout=$FRIDGE_VM_TIMEOUT
case $kind in
  vmlinux) kernel=$kdir/vmlinux ;;
  bzImage) kernel=$kdir/vmlinuz ;;
  *) die "$scenario: vm-kernel must be vmlinux or bzImage" ;;
esac

T=$(mktemp -d "${TMPDIR:-/tmp}/fridge-vm.XXXXXX")
qemu_pid=
cleanup() {
  if [ -n "$qemu_pid" ] && kill -0 "$qemu_pid" 2>/dev/null; then
    kill "$qemu_pid" 2>/dev/null; sleep 0.5; kill -9 "$qemu_pid" 2>/dev/null || true
    wait "$qemu_pid" 2>/dev/null || true
  fi
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

margs=()
for m in $modules; do margs+=(-m "$m"); done
pre=${scenario%.sh}.pre.sh
[ -f "$pre" ] && margs+=(-p "$pre")
extra=()
for v in $binaries; do
  [ -n "${!v:-}" ] || die "$scenario needs \$$v (a binary for the guest)"
  extra+=("${!v}")
done
dargs=()
i=0
for size in $disks; do
  truncate -s "$size" "$T/disk$i.img"
  dargs+=(-drive "file=$T/disk$i.img,format=raw,if=virtio,cache=unsafe")
  i=$((i + 1))
done
# the guest's watchdog fires before the host's timeout, with a result line
guest_timeout=$((timeout > 30 ? timeout - 15 : timeout * 2 / 3))
t0=$(date +%s.%N)
"$here/mkinitramfs.sh" -o "$T/initramfs.gz" -k "$kdir" -s "$scenario" "${margs[@]}" \
  -c "FRIDGE_VM_GUEST_TIMEOUT=$guest_timeout" -c "FRIDGE_VM_INTERACTIVE=$interactive" "${conf[@]}" \
  "$FRIDGED" "$FRIDGECTL" "$dbus_daemon" "${extra[@]}"
t1=$(date +%s.%N)

log=$T/console.log
qemu=(qemu-system-x86_64 -accel tcg -machine pc -m "$memory" -smp 1 -nodefaults -no-reboot
      -display none -vga none "${dargs[@]}"
      -kernel "$kernel" -initrd "$T/initramfs.gz")
# shellcheck disable=SC2206 # words, as the header says them
[ -z "$qemu_args" ] || qemu+=($qemu_args)
cmdline="console=ttyS0 panic=-1 quiet $append"

if [ $interactive -eq 1 ]; then
  # the serial line on this terminal; Ctrl-C goes to the guest, Ctrl-A X quits
  # (in the foreground: a background job's stdin would be /dev/null)
  echo "booting $name in qemu (TCG; Ctrl-A X quits qemu)"
  "${qemu[@]}" -append "$cmdline" -chardev "stdio,id=con,mux=on,signal=off,logfile=$log" \
    -serial chardev:con -mon chardev=con,mode=readline || true
  stty sane 2>/dev/null || true
  grep -q 'FRIDGE-RESULT: PASS' "$log" && exit 0
  exit 1
fi

echo "scenario $name: $kind, timeout ${timeout}s, initramfs $(du -k "$T/initramfs.gz" | cut -f1) KiB (built in $(python3 -c "print(f'{$t1 - $t0:.1f}')") s)"
# boot [APPEND]: one qemu run, bounded; sets hung=1 on a timeout. The
# console is appended to $log, so the second boot's follows the first's.
hung=0
nboot=0
# watch_times: the host's clock when each "FRIDGE-TIME: NAME" of
# vm-host-times first shows on this boot's console (polled every 50 ms):
# a time that spans a power-off (hibernate to resumed), which no clock in
# the guest can measure
watch_times() {
  local left=$host_times n
  while [ -n "$left" ]; do
    for n in $left; do
      if grep -q "FRIDGE-TIME: $n\b" "$T/boot.log" 2>/dev/null; then
        echo "$n $(date +%s.%N)" >>"$T/times"
        left=$(printf '%s\n' $left | grep -vx "$n" | tr '\n' ' ' | sed 's/ *$//' || true)
      fi
    done
    sleep 0.05
  done
}
boot() {
  local mon=() presser= con=(-chardev "file,id=con,path=$T/boot.log") reader= typer= cutter= presser_keys= watcher=
  nboot=$((nboot + 1))
  rm -f "$T/boot.log"
  if [ "$power_button" = yes ] || [ -n "$keyboard_keys" ] || [ -n "$button_at" ]; then
    rm -f "$T/mon.in" "$T/mon.out"
    mkfifo "$T/mon.in" "$T/mon.out"
    mon=(-chardev "pipe,id=mon,path=$T/mon" -mon chardev=mon,mode=readline)
  fi
  if [ -n "$serial_keys" ]; then
    # the serial line both ways: its output copied to boot.log, keys typed in
    rm -f "$T/ser.in" "$T/ser.out"
    mkfifo "$T/ser.in" "$T/ser.out"
    con=(-chardev "pipe,id=con,path=$T/ser")
  fi
  "${qemu[@]}" -append "$cmdline ${1:-}" "${con[@]}" -serial chardev:con \
    "${mon[@]}" </dev/null >>"$T/qemu.out" 2>&1 &
  qemu_pid=$!
  echo "boot$nboot-start $(date +%s.%N)" >>"$T/times"
  if [ -n "$host_times" ]; then
    watch_times &
    watcher=$!
  fi
  if [ -n "$serial_keys" ]; then
    cat "$T/ser.out" >"$T/boot.log" &
    reader=$!
    press_esc "$serial_keys" "$T/ser.in" '\033' "typed Esc on the serial line" &
    typer=$!
  fi
  if [ -n "$power_cut" ] && [ "${1:-}" = "" ]; then
    cut_power &
    cutter=$!
  fi
  [ ${#mon[@]} -eq 0 ] || { cat "$T/mon.out" >"$T/monitor.log" & }
  if [ "$power_button" = yes ]; then
    press_power_button &
    presser=$!
  fi
  if [ -n "$keyboard_keys" ]; then
    press_esc "$keyboard_keys" "$T/mon.in" 'sendkey esc\n' "typed Esc on the keyboard" &
    presser_keys=$!
  elif [ -n "$button_at" ] && [ "${1:-}" = "" ]; then
    press_esc "$button_at" "$T/mon.in" 'system_powerdown\n' "pressed the power button through the monitor" &
    presser_keys=$!
  fi
  local end=$((SECONDS + timeout))
  while kill -0 "$qemu_pid" 2>/dev/null; do
    if [ $SECONDS -ge $end ]; then
      hung=1
      kill "$qemu_pid" 2>/dev/null; sleep 0.5; kill -9 "$qemu_pid" 2>/dev/null || true
      break
    fi
    sleep 0.2
  done
  wait "$qemu_pid" 2>/dev/null || qrc=$?
  qemu_pid=
  echo "boot$nboot-end $(date +%s.%N)" >>"$T/times"
  [ -z "$watcher" ] || { kill "$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true; }
  [ -z "$presser" ] || { kill "$presser" 2>/dev/null; wait "$presser" 2>/dev/null || true; }
  [ -z "$typer" ] || { kill "$typer" 2>/dev/null || true; wait "$typer" 2>/dev/null || true; }
  [ -z "$presser_keys" ] || { kill "$presser_keys" 2>/dev/null || true; wait "$presser_keys" 2>/dev/null || true; }
  [ -z "$cutter" ] || { kill "$cutter" 2>/dev/null || true; wait "$cutter" 2>/dev/null || true; }
  [ -z "$reader" ] || wait "$reader" 2>/dev/null || true   # ends with qemu
  cat "$T/boot.log" >>"$log"
}
# The guest says when it is about to sleep; a press before it is asleep
# would be a wakeup event that aborts the cycle, so wait, then retry.
press_power_button() {
  exec 4>"$T/mon.in"
  until grep -q FRIDGE-PRESS-POWER "$T/boot.log" 2>/dev/null; do sleep 0.2; done
  while ! grep -q 'FRIDGE-RESULT' "$T/boot.log" 2>/dev/null; do
    sleep 3
    grep -q FRIDGE-PRESS-STOP "$T/boot.log" 2>/dev/null && break
    echo system_powerdown >&4
  done
}

: >"$log"
qrc=0
boot
first_boot_result=$(grep -o 'FRIDGE-RESULT: .*' "$log" | head -n1 || true)
if [ $hung -eq 0 ] && [ -n "$power_cut" ] && [ -z "$first_boot_result" ]; then
  if [ ! -f "$T/power-cut" ]; then
    tr -d '\r' <"$log"; cat "$T/qemu.out"
    echo "FAIL: $name: the first boot ended before its console showed \"$power_cut\": no power cut happened"
    exit 1
  fi
  echo "scenario $name: power cut in the first boot (the console showed \"$power_cut\"); booting the same disks again"
  t_resume=$(date +%s.%N)
  echo "=== second boot (after the power cut${resume_disk:+; resume from /dev/$resume_disk})" >>"$log"
  qrc=0
  boot "fridge.boot=2 fridge.power-cut${resume_disk:+ fridge.resume=$resume_disk}"
  echo "second boot to power-off: $(python3 -c "print(f'{$(date +%s.%N) - $t_resume:.1f}')") s"
elif [ $hung -eq 0 ] && [ -n "$resume_disk" ] && [ -z "$first_boot_result" ]; then
  echo "scenario $name: first boot powered off without a result; booting again to resume from /dev/$resume_disk"
  t_resume=$(date +%s.%N)
  echo "=== second boot (resume from /dev/$resume_disk)" >>"$log"
  boot "fridge.boot=2 fridge.resume=$resume_disk${resume_append:+ $resume_append}"
  echo "second boot to power-off: $(python3 -c "print(f'{$(date +%s.%N) - $t_resume:.1f}')") s"
fi
t2=$(date +%s.%N)
boot_s=$(python3 -c "print(f'{$t2 - $t1:.1f}')" 2>/dev/null || echo ?)

tr -d '\r' <"$log" >"$T/console.txt"
if [ -n "${FRIDGE_VM_LOGDIR:-}" ]; then
  mkdir -p "$FRIDGE_VM_LOGDIR"
  cp "$T/console.txt" "$FRIDGE_VM_LOGDIR/vm-$name.console.log"
fi

marker=$(grep -o 'FRIDGE-RESULT: .*' "$T/console.txt" | head -n1 || true)
show_console() {
  echo "----- console of the guest ($name) -----"
  cat "$T/console.txt"
  echo "----- end of console -----"
  [ -s "$T/qemu.out" ] && { echo "----- qemu -----"; cat "$T/qemu.out"; }
  [ -z "${FRIDGE_VM_LOGDIR:-}" ] || echo "(saved as $FRIDGE_VM_LOGDIR/vm-$name.console.log)"
}
if [ $hung -eq 1 ]; then
  show_console
  echo "FAIL: $name: no power-off within ${timeout}s (qemu killed); marker: ${marker:-none}"
  exit 1
fi
if [ -n "$resume_disk" ] && [ -z "$power_cut" ] && [ "$first_boot_result" = "FRIDGE-RESULT: PASS" ]; then
  show_console
  echo "FAIL: $name: the first boot passed without powering off to hibernate: nothing was resumed"
  exit 1
fi
# what the boots must (not) have said, for a scenario that passed
if [ "${marker#FRIDGE-RESULT: PASS}" != "$marker" ]; then
  from=1
  while IFS= read -r p; do
    [ -n "$p" ] || continue
    # grep stops at its match: tail may die of SIGPIPE, which pipefail
    # would make the runner's own exit status
    n=$(tail -n "+$from" "$T/console.txt" | grep -n -m1 -- "$p" | cut -d: -f1 || true)
    if [ -z "$n" ]; then
      marker="FRIDGE-RESULT: FAIL the console does not show \"$p\" (vm-console-expect, after line $((from - 1)))"
      break
    fi
    from=$((from + n))
  done <<<"$console_expect"
  while IFS= read -r p; do
    [ -z "$p" ] || ! grep -q -- "$p" "$T/console.txt" || marker="FRIDGE-RESULT: FAIL the console shows \"$p\" (vm-console-reject)"
  done <<<"$console_reject"
fi
case $marker in
  "FRIDGE-RESULT: PASS"*)
    # the scenario's own lines, for the meson log
    sed -n '/^=== scenario/,/^--- fridged/p' "$T/console.txt" | sed '$d'
    if [ -n "$host_times" ]; then
      # seconds from the first qemu start, by the host's clock
      echo "FIGURE-HOST-TIMES: $(awk 'NR == 1 { t0 = $2 } { printf "%s%s=%.2f", (NR > 1 ? " " : ""), $1, $2 - t0 }' "$T/times")"
    fi
    echo "PASS: $name in ${boot_s} s (qemu boot to power-off)"
    echo "FIGURE: vm $name: ${boot_s} s from qemu start to the result"
    exit 0 ;;
  "")
    show_console
    echo "FAIL: $name: no FRIDGE-RESULT line on the console (qemu exit status $qrc, ${boot_s} s)"
    exit 1 ;;
  *)
    show_console
    echo "FAIL: $name: ${marker#FRIDGE-RESULT: FAIL } (${boot_s} s)"
    exit 1 ;;
esac
