# Scenario 19 (issue 17): fridge's image on a resume device that came too
# late for the initramfs (after initramfs-tools' wait), or a boot whose
# initrd has no fridge-resume (dracut, a hand-made one): the booted system
# takes the swap area as its fstab says, with util-linux's swapon, and
# that stale image must never be resumed at a later boot, nor cost the
# swap. fridge-image-writer --write --after=unfreeze leaves a valid image
# on /dev/vda with the system running; util-linux's blkid sees the area as
# TYPE=swsuspend with mkswap's UUID (what udev's by-uuid link and
# systemd's swap unit are made from); swapon takes it, rewriting the
# signature to mkswap's; the UUID is the same, the area is in use, and
# fridge-resume finds no image there any more.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME UTIL_LINUX_SWAPON UTIL_LINUX_MKSWAP UTIL_LINUX_BLKID
# vm-timeout: 150
. /usr/lib/vm/uhib-lib.sh
# util-linux's, by path: busybox's sh runs its own applets first
for t in swapon mkswap blkid; do
  /usr/bin/$t --version 2>&1 | grep -q util-linux || fail "/usr/bin/$t is not util-linux's: $(/usr/bin/$t --version 2>&1 | head -n1)"
done
swapon() { /usr/bin/swapon "$@"; }
mkswap() { /usr/bin/mkswap "$@"; }
blkid() { /usr/bin/blkid "$@"; }
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda failed"
swapon /dev/vda || fail "swapon /dev/vda failed"
swap_page0 /run/page0.mkswap
write_image
fridge-resume --device=/dev/vda --verify-only >/run/verify.out 2>&1 || { cat /run/verify.out; fail "the image does not verify"; }
uuid=$(swap_uuid /run/page0.mkswap | sed 's/^\(........\)\(....\)\(....\)\(....\)/\1-\2-\3-\4-/')
blkid -p /dev/vda >/run/blkid.out 2>&1
cat /run/blkid.out
grep -q 'TYPE="swsuspend"' /run/blkid.out || fail "blkid does not see fridge's image as swsuspend: $(cat /run/blkid.out)"
grep -q "UUID=\"$uuid\"" /run/blkid.out || fail "blkid does not give mkswap's UUID $uuid: $(cat /run/blkid.out)"
[ "$(blkid -U "$uuid")" = /dev/vda ] || fail "blkid -U $uuid does not name /dev/vda: $(blkid -U "$uuid")"
swapon /dev/vda >/run/swapon.out 2>&1 || { cat /run/swapon.out; fail "swapon refused the area holding fridge's image"; }
cat /run/swapon.out
grep -q '^/dev/vda ' /proc/swaps || fail "/dev/vda is not in use as swap: $(cat /proc/swaps)"
swap_page0 /run/page0.after
[ "$(swap_sig /run/page0.after)" = SWAPSPACE2 ] || fail "swapon left the signature \"$(swap_sig /run/page0.after)\""
[ "$(swap_uuid /run/page0.after)" = "$(swap_uuid /run/page0.mkswap)" ] || fail "the swap UUID changed"
fridge-resume --device=/dev/vda --verify-only >/run/verify.out 2>&1
rc=$?
cat /run/verify.out
[ $rc -eq 1 ] && grep -q "no fridge image on /dev/vda" /run/verify.out \
  || fail "fridge-resume still finds an image after swapon (exit $rc)"
pass
