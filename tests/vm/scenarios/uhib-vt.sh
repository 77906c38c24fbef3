# Scenario 16 (issue 17 point 2): --console=vt, the writer's bar on a VT of
# its own. The guest's kernel has VTs (tty1 in front, held open here as a
# session's compositor or getty holds its own); fridge-image-writer --write
# --after=unfreeze --console=vt runs twice. First the host presses Esc on
# the PS/2 keyboard (vm-keyboard-keys) once the write is under way: the
# kernel hands a key only to the VT in front, so the abort (exit 3) shows
# that the writer's VT was in front and read during the write. Then a write
# with no key completes; its log names the VT it took, not the one in
# front, and says it switched back and deallocated it (its vcs device is
# gone). After each, /sys/class/tty/tty0/active
# is what it was before, and nothing is left frozen.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-memory: 384
# vm-disks: 384M
# vm-binaries: FRIDGE_IMAGE_WRITER
# vm-keyboard-keys: writing the image to /dev/vda
# vm-timeout: 200
. /usr/lib/vm/uhib-lib.sh
vt_session
swap_and_holder
# incompressible: the write lasts past the key
head -c 67108864 /dev/urandom >/dev/shm/fill || fail "cannot fill tmpfs"
# write_vt ERR: the writer on --console=vt, its log to ERR; $rc
write_vt() {
  fridge-image-writer --snapshot=/dev/snapshot --write --resume-device=/dev/vda --after=unfreeze \
    --console=vt >/run/write.out 2>"$1"
  rc=$?
}
# its log on the serial line, where the host sees when to press Esc
write_vt /dev/ttyS0
[ $rc -ne 0 ] || fail "the write completed (exit 0): Esc on the keyboard never reached the writer's VT"
[ $rc -eq 3 ] || fail "fridge-image-writer exited with $rc, not 3 (aborted by Esc on its VT)"
now=$(cat /sys/class/tty/tty0/active)
[ "$now" = "$vt_before" ] || fail "after the aborted write $now is in front, not $vt_before"
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer after the abort"
swap_page0 /run/page0.after
cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's after the abort"
write_vt /run/write.err
cat /run/write.err
[ $rc -eq 0 ] || fail "the write with no key exited with $rc"
vt_back "completed" /run/write.err
swap_page0 /run/page0.image
[ "$(swap_sig /run/page0.image)" = FRIDGEIMG1 ] || fail "the write left no image"
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer after the write"
kill "$holder"
pass
