# Scenario 11 (issue 17): fridge-resume refuses a damaged or foreign image
# before it touches /dev/snapshot, and gives the swap area back its own
# header. One boot: fridge-image-writer --write --after=unfreeze leaves a
# valid image on /dev/vda and the system running; fridge-resume
# --verify-only accepts it. A byte flipped in its first block: fridge-resume
# refuses it naming the block, the swap header is mkswap's page again
# (same UUID) and swapon takes it. Then an image whose header names another
# kernel: refused as such, likewise restored.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-timeout: 200
. /usr/lib/vm/uhib-lib.sh
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda failed"
swapon /dev/vda || fail "swapon /dev/vda failed"
swap_page0 /run/page0.mkswap
# refused SAYS: fridge-resume refuses, saying SAYS, and the swap area is mkswap's again
refused() {
  fridge-resume --device=/dev/vda --snapshot=/dev/snapshot >/run/resume.out 2>&1
  rc=$?
  cat /run/resume.out
  [ $rc -eq 1 ] || fail "fridge-resume exited with $rc, not 1 (refused, boot continues)"
  grep -q "$1" /run/resume.out || fail "fridge-resume does not say \"$1\""
  [ "$(grep -c . /run/resume.out)" -eq 1 ] || fail "fridge-resume said more than one line"
  swap_page0 /run/page0.after
  [ "$(swap_sig /run/page0.after)" = SWAPSPACE2 ] || fail "the swap signature is \"$(swap_sig /run/page0.after)\""
  [ "$(swap_uuid /run/page0.after)" = "$(swap_uuid /run/page0.mkswap)" ] || fail "the swap UUID changed"
  cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
  swapon /dev/vda || fail "swapon does not take /dev/vda after the refusal"
}

write_image
fridge-resume --device=/dev/vda --verify-only >/run/verify.out 2>&1 || { cat /run/verify.out; fail "the valid image is refused"; }
cat /run/verify.out
first=$(val /run/verify.out first_page)
[ -n "$first" ] || fail "fridge-resume --verify-only gave no first_page"
# a byte in block 0's compressed data (its 32-byte header before it)
pos=$((first * 4096 + 100))
b=$(dd if=/dev/vda bs=1 skip=$pos count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
printf "\\$(printf %o $((b ^ 16)))" | dd of=/dev/vda bs=1 seek=$pos conv=notrunc 2>/dev/null || fail "dd failed"
sync
echo 3 >/proc/sys/vm/drop_caches
refused "block 0 is corrupt"

write_image --header-kernel=0.0.0-other
refused "made by another kernel: 0.0.0-other"
pass
