# Scenario 16 (issue 17 point 2): --console=vt, the writer's bar on a VT of
# its own. The guest's kernel has VTs (tty1 in front, held open here as a
# session's compositor or getty holds its own); fridge-image-writer --write
# --after=unfreeze --console=vt runs twice. First the host presses Esc on
# the PS/2 keyboard (vm-keyboard-keys) once the write is under way: the
# kernel hands a key only to the VT in front, so the abort (exit 3) shows
# that the writer's VT was in front and read during the write. Then a write
# with no key completes; its log names the VT it took, not the one in
# front, and says it switched back and deallocated it (its vcs device is
# gone). Then tty1 is held by a compositor (vt-owner, VT_PROCESS and
# graphical): one that lets go when asked gets tty1 back after the write;
# one that never answers costs the write its bar (after 2 s) but not the
# image, and tty1 stays in front. After each, /sys/class/tty/tty0/active
# is what it was before, and nothing is left frozen.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-memory: 384
# vm-disks: 384M
# vm-binaries: FRIDGE_IMAGE_WRITER VT_OWNER
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
# image_then_swap WRITE: the write left an image; /dev/vda mkswap's again
image_then_swap() {
  swap_page0 /run/page0.image
  [ "$(swap_sig /run/page0.image)" = ULSUSPEND ] || fail "the $1 write left no image"
  { swapoff /dev/vda && mkswap /dev/vda >/dev/null && swapon /dev/vda; } || fail "/dev/vda is no swap again"
}
image_then_swap completed
# owner ack|never: vt-owner holds tty1 as a compositor does ($owner)
owner() {
  vt-owner /dev/tty1 "$1" >/run/owner.out 2>&1 &
  owner=$!
  said ready "vt-owner $1 does not hold tty1"
}
# said WORD WHY: vt-owner said WORD (its signals come asynchronously)
said() {
  i=0
  until grep -q "^$1\$" /run/owner.out; do
    i=$((i + 1))
    [ $i -le 100 ] || { cat /run/owner.out; fail "$2"; }
    sleep 0.1
  done
}
# a compositor that lets its VT go when asked, as logind does for a session
owner ack
write_vt /run/write.err
cat /run/write.err /run/owner.out
[ $rc -eq 0 ] || fail "the write with a compositor on tty1 exited with $rc"
vt_back "compositor" /run/write.err
said released "the compositor on tty1 was never asked to let it go"
said acquired "the compositor on tty1 was not given it back"
kill "$owner"; wait "$owner"
image_then_swap "compositor"
# one that never answers: the write goes on without a bar, tty1 stays
owner never
write_vt /run/write.err
cat /run/write.err /run/owner.out
[ $rc -eq 0 ] || fail "the write with a compositor on tty1 that never lets go exited with $rc"
grep -q "console: tty1 was not given up within 2000 ms" /run/write.err \
  || fail "the writer does not say tty1 was not given up"
grep -q "console: writing without a progress bar" /run/write.err || fail "the writer does not say it has no bar"
said "not released" "the compositor on tty1 was never asked to let it go"
now=$(cat /sys/class/tty/tty0/active)
[ "$now" = "$vt_before" ] || fail "with a compositor that never lets go $now is in front, not $vt_before"
[ ! -e /sys/class/vc/vcs2 ] || fail "tty2 is still allocated after a switch that did not happen"
kill "$owner"; wait "$owner"
image_then_swap "bar-less"
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer after the write"
kill "$holder"
pass
