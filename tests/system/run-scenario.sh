#!/usr/bin/env bash
# run-scenario.sh [--interactive] SCENARIO: boots the Debian guest (systemd,
# logind, polkitd, fridge's .debs installed) under qemu (TCG)
# and runs tests/system/scenarios/SCENARIO.sh in it, after boot, from a
# oneshot unit; reads "FRIDGE-RESULT: PASS|FAIL why" from the serial
# console. --interactive boots to a root shell on this terminal instead
# (Ctrl-A X quits qemu).
# Environment: FRIDGE_SYSTEM_CACHE (default $FRIDGE_SYSTEM_DEFAULT_CACHE,
# which meson sets to BUILD/system-cache), FRIDGE_VM_CACHE (the kernel,
# shared with the vm tier), FRIDGE_VM_LOGDIR (console and journal saved
# there as system-SCENARIO.console.log). A scenario's header may set
# "# system-kernel: vmlinux|bzImage" and "# system-timeout: SECONDS", and
# "# system-boot: initramfs-tools SWAP_SIZE": the guest boots as an
# installed machine does, through its own initrd (update-initramfs with
# fridge's hook: image.sh --initramfs-tools), from a scratch copy of
# root-itools.img that persists across boots (no -snapshot) with a swap
# disk of SWAP_SIZE (/dev/vdb, mkswap'd with the UUID its fstab and
# RESUME= name); when the first boot powers off without a result (it
# hibernated), the same disks boot again and the result is the second
# boot's: the first boot's scenario goes on there once resumed. With it,
# "# system-console: TEXT" must be on the second boot's console (what the
# initrd said), and "# system-corrupt-swap: MIB" overwrites 64 KiB of the
# swap disk at MIB MiB between the boots (inside the image).
# "# system-serial-keys: PATTERN" (one a line, in order): the host types
# Esc on the guest's serial line the first time the console shows PATTERN
# (a grep regex) after the previous Esc; a first boot that passes is then
# the result (the write was aborted: nothing to resume). "# system-power-cut:
# PATTERN": the host SIGKILLs qemu the first time the console shows PATTERN
# (no sync, no power-off: the disks keep what was written) and boots the
# same disks again; the first boot ending before PATTERN showed fails.
# Exit 0 pass, 1 fail or hang, 77 when qemu, the kernel, mmdebstrap or
# Debian's packaging tools cannot be had.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/../vm/console-actions.sh"
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "error: $*" >&2; exit 1; }

interactive=0
[ "${1:-}" = --interactive ] && { interactive=1; shift; }
[ $# -eq 1 ] || { [ $interactive -eq 1 ] && [ $# -eq 0 ]; } || die "usage: $0 [--interactive] SCENARIO"
name=${1:-interactive}
scenario=$here/scenarios/$name.sh
[ $interactive -eq 1 ] || [ -f "$scenario" ] || die "no scenario $name"

cache=${FRIDGE_SYSTEM_CACHE:-${FRIDGE_SYSTEM_DEFAULT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fridge-system}}
vmcache=${FRIDGE_VM_CACHE:-${FRIDGE_VM_DEFAULT_CACHE:-$cache/vm}}
mkdir -p "$cache"

for t in qemu-system-x86_64 busybox cpio gzip mkfs.ext4 meson ninja chroot dpkg-buildpackage dh fakeroot; do
  command -v "$t" >/dev/null || skip "$t is missing (tools/lib/setup.sh installs the system tier's packages)"
done
rc=0; "$here/../vm/kernel.sh" "$vmcache" || rc=$?
[ $rc -eq 0 ] || { [ $rc -eq 77 ] && skip "Debian's kernel could not be fetched"; die "kernel.sh failed"; }
kdir=$vmcache/kernel
rc=0; "$here/rootfs.sh" "$cache" || rc=$?
[ $rc -eq 0 ] || { [ $rc -eq 77 ] && skip "the guest's root file system could not be built (mmdebstrap)"; die "rootfs.sh failed"; }
header() { [ -f "$scenario" ] && sed -n "s/^# $1: *//p" "$scenario" | head -n1; }
sysboot=$(header system-boot || true)
itools=()
case $sysboot in
  "") ;;
  "initramfs-tools "[0-9]*[MG]) itools=(--initramfs-tools); command -v mkswap >/dev/null || skip "mkswap is missing" ;;
  *) die "bad system-boot '$sysboot' (initramfs-tools SWAP_SIZE)" ;;
esac
"$here/image.sh" "${itools[@]}" "$cache" "$kdir"

serial_keys=$( [ -f "$scenario" ] && sed -n 's/^# system-serial-keys: *//p' "$scenario" || true)
power_cut=$(header system-power-cut || true)
kind=$(header system-kernel || true); kind=${kind:-vmlinux}
timeout=$(header system-timeout || true); timeout=${timeout:-180}
case $kind in vmlinux) kernel=$kdir/vmlinux ;; bzImage) kernel=$kdir/vmlinuz ;; *) die "bad system-kernel $kind" ;; esac

qemu=(qemu-system-x86_64 -accel tcg -machine pc -m 512 -smp 2 -nodefaults -no-reboot -display none -vga none)
append="console=ttyS0 root=/dev/vda rw quiet systemd.show_status=0 suspend.pm_test_delay=0"
if [ -z "$sysboot" ]; then
  qemu+=(-snapshot -drive "file=$cache/root.img,format=raw,if=virtio" -kernel "$kernel" -initrd "$cache/initrd.gz")
fi
if [ $interactive -eq 1 ]; then
  echo "booting the Debian guest with fridge (TCG; about 15 s; Ctrl-A X quits qemu)"
  exec "${qemu[@]}" -append "$append" -chardev stdio,id=con,mux=on,signal=off -serial chardev:con \
    -mon chardev=con,mode=readline
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/fridge-system.XXXXXX")
qemu_pid=
cleanup() {
  [ -z "$qemu_pid" ] || { kill "$qemu_pid" 2>/dev/null; sleep 0.5; kill -9 "$qemu_pid" 2>/dev/null || true; }
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -n "$sysboot" ]; then
  # the installed machine's disks, kept between its boots: a scratch copy
  # of the root and a fresh swap area by the UUID the root names
  cp --sparse=always "$cache/root-itools.img" "$T/root.img"
  truncate -s "${sysboot#initramfs-tools }" "$T/swap.img"
  mkswap -U "$(cat "$cache/swap-uuid")" "$T/swap.img" >/dev/null 2>&1 || die "mkswap of the swap disk failed"
  qemu+=(-drive "file=$T/root.img,format=raw,if=virtio" -drive "file=$T/swap.img,format=raw,if=virtio"
         -kernel "$kernel" -initrd "$cache/initrd-itools.img")
  # initramfs-tools' own messages (and fridge's local-premount) on the console
  append=${append/ quiet/}
fi
t0=$(date +%s.%N)
# boot [first]: one qemu run, bounded; its console appended to console.log;
# hung=1 on a timeout. The first boot types the keys and cuts the power.
hung=0
end=$((SECONDS + timeout))
boot() {
  local serial=(-serial "file:$T/boot.log") reader= typer= cutter=
  if [ -n "$serial_keys" ] && [ "${1:-}" = first ]; then
    # the serial line both ways: its output copied to boot.log, keys typed in
    rm -f "$T/ser.in" "$T/ser.out"
    mkfifo "$T/ser.in" "$T/ser.out"
    serial=(-chardev "pipe,id=ser,path=$T/ser" -serial chardev:ser)
  fi
  : >"$T/boot.log"
  "${qemu[@]}" -append "$append fridge.scenario=$name systemd.mask=serial-getty@ttyS0.service" \
    "${serial[@]}" </dev/null >>"$T/qemu.out" 2>&1 &
  qemu_pid=$!
  if [ -n "$serial_keys" ] && [ "${1:-}" = first ]; then
    cat "$T/ser.out" >"$T/boot.log" &
    reader=$!
    press_esc "$serial_keys" "$T/ser.in" '\033' "typed Esc on the serial line" &
    typer=$!
  fi
  if [ -n "$power_cut" ] && [ "${1:-}" = first ]; then
    cut_power &
    cutter=$!
  fi
  while kill -0 "$qemu_pid" 2>/dev/null; do
    [ $SECONDS -lt $end ] || { hung=1; break; }
    sleep 0.2
  done
  [ $hung -eq 0 ] || { kill "$qemu_pid"; sleep 0.5; kill -9 "$qemu_pid" 2>/dev/null || true; }
  wait "$qemu_pid" 2>/dev/null || true
  qemu_pid=
  for p in $typer $cutter; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  [ -z "$reader" ] || wait "$reader" 2>/dev/null || true   # ends with qemu
  tr -d '\r' <"$T/boot.log" >>"$T/console.txt"
}
boot first
if [ -n "$power_cut" ] && [ $hung -eq 0 ] && [ ! -f "$T/power-cut" ]; then
  cat "$T/console.txt"
  echo "FAIL: system $name: the first boot ended before its console showed \"$power_cut\": no power cut happened"
  exit 1
fi
if [ -n "$sysboot" ] && [ $hung -eq 0 ]; then
  first=$(grep -o 'FRIDGE-RESULT: .*' "$T/console.txt" | head -n1 || true)
  case $first in
    "") if [ -f "$T/power-cut" ]; then
          echo "system $name: power cut in the first boot (the console showed \"$power_cut\"): booting the same disks again"
          echo "=== second boot (after the power cut; the same root and swap disks)" >>"$T/console.txt"
        else
          echo "system $name: the first boot powered off without a result (hibernated): booting the same disks again"
          echo "=== second boot (the same root and swap disks)" >>"$T/console.txt"
        fi
        t_resume=$(date +%s.%N)
        corrupt=$(header system-corrupt-swap || true)
        if [ -n "$corrupt" ]; then
          head -c 65536 /dev/urandom | dd of="$T/swap.img" bs=65536 seek=$((corrupt * 16)) conv=notrunc status=none
          echo "system $name: 64 KiB of the swap disk at $corrupt MiB overwritten between the boots"
        fi
        lines=$(wc -l <"$T/console.txt")
        boot
        want=$(header system-console || true)
        tail -n +"$((lines + 1))" "$T/console.txt" >"$T/second.txt"
        if [ -n "$want" ] && ! grep -qF -- "$want" "$T/second.txt"; then
          cat "$T/console.txt"
          echo "FAIL: system $name: the second boot's console does not say \"$want\""
          exit 1
        fi
        echo "FIGURE: system $name: second boot to the result: $(python3 -c "print(f'{$(date +%s.%N) - $t_resume:.1f}')") s" ;;
    "FRIDGE-RESULT: PASS"*)
        [ -n "$serial_keys" ] && [ ! -f "$T/power-cut" ] && { echo "system $name: Esc typed: one boot"; } || {
        cat "$T/console.txt"
        echo "FAIL: system $name: the first boot passed without powering off to hibernate: nothing was resumed"
        exit 1; } ;;
  esac
fi
secs=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
[ -z "${FRIDGE_VM_LOGDIR:-}" ] || { mkdir -p "$FRIDGE_VM_LOGDIR"; cp "$T/console.txt" "$FRIDGE_VM_LOGDIR/system-$name.console.log"; }
marker=$(grep -o 'FRIDGE-RESULT: .*' "$T/console.txt" | head -n1 || true)
case $marker in
  "FRIDGE-RESULT: PASS"*)
    sed -n '/^=== scenario/,/^FRIDGE-RESULT/p' "$T/console.txt" | grep -v '^FRIDGE-RESULT'
    echo "PASS: system $name in $secs s (qemu start to power-off)"
    echo "FIGURE: system $name: $secs s from qemu start to the result"
    exit 0 ;;
esac
cat "$T/console.txt"
[ -s "$T/qemu.out" ] && { echo "----- qemu"; cat "$T/qemu.out"; }
[ $hung -eq 0 ] || echo "FAIL: system $name: no power-off within ${timeout} s"
echo "FAIL: system $name: ${marker:-no FRIDGE-RESULT line} ($secs s)"
exit 1
