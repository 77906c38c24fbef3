# Scenario 11 (issue 17): fridge-resume refuses a damaged or foreign image
# and gives the swap area back its own header. One boot:
# fridge-image-writer --write --after=unfreeze leaves a valid image on
# /dev/vda and the system running; fridge-resume --verify-only accepts it.
# A byte flipped in its first block, then in its last: fridge-resume's one
# pass (through this kernel's /dev/snapshot, which freezes this system
# while the load runs) stops at that block, before its pages reach the
# kernel, says so, never asks for the restore and has the kernel free what
# it took of the image: the system runs on (this script with it) with its
# memory, the swap header is mkswap's page again (same
# UUID) and swapon takes it. Then an image whose header names another
# kernel: refused as such before the snapshot device is opened, likewise
# restored.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-timeout: 200
. /usr/lib/vm/uhib-lib.sh
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda failed"
swapon /dev/vda || fail "swapon /dev/vda failed"
swap_page0 /run/page0.mkswap
# MemFree in KiB, the page cache dropped first
mem_free() {
  echo 3 >/proc/sys/vm/drop_caches
  awk '$1 == "MemFree:" { print $2 }' /proc/meminfo
}
# refused LINES SAYS: fridge-resume refuses in LINES lines (2: the load's
# start, then why it stopped), saying SAYS, and the swap area is mkswap's
# again; what the kernel took of the image is free again (16 MiB of slack)
refused() {
  free_before=$(mem_free)
  fridge-resume --device=/dev/vda --snapshot=/dev/snapshot >/run/resume.out 2>&1
  rc=$?
  cat /run/resume.out
  [ $rc -eq 1 ] || fail "fridge-resume exited with $rc, not 1 (refused, boot continues)"
  grep -q "$2" /run/resume.out || fail "fridge-resume does not say \"$2\""
  [ "$(grep -c . /run/resume.out)" -eq "$1" ] || fail "fridge-resume said $(grep -c . /run/resume.out) lines, not $1"
  [ "$1" -eq 1 ] || grep -q "^fridge-resume: loading the image" /run/resume.out || fail "no load was started"
  swap_page0 /run/page0.after
  [ "$(swap_sig /run/page0.after)" = SWAPSPACE2 ] || fail "the swap signature is \"$(swap_sig /run/page0.after)\""
  [ "$(swap_uuid /run/page0.after)" = "$(swap_uuid /run/page0.mkswap)" ] || fail "the swap UUID changed"
  cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
  swapon /dev/vda || fail "swapon does not take /dev/vda after the refusal"
  free_after=$(mem_free)
  echo "MemFree before the load ${free_before} KiB, after the refusal ${free_after} KiB"
  [ "$free_after" -ge $((free_before - 16384)) ] || fail "the refused load left $((free_before - free_after)) KiB taken"
}

# figures: the valid image accepted by --verify-only; its figures in
# $first, $last (device pages of the stream's first and last page), $bytes
# (the stream's length) and $blocks
figures() {
  fridge-resume --device=/dev/vda --verify-only >/run/verify.out 2>&1 || { cat /run/verify.out; fail "the valid image is refused"; }
  cat /run/verify.out
  first=$(val /run/verify.out first_page) last=$(val /run/verify.out last_page)
  bytes=$(val /run/verify.out compressed_bytes) blocks=$(val /run/verify.out blocks)
  [ -n "$first" ] && [ -n "$last" ] && [ -n "$bytes" ] && [ -n "$blocks" ] \
    || fail "fridge-resume --verify-only gave no first_page, last_page, compressed_bytes or blocks"
}
# flip POS: one bit of the byte at device offset POS
flip() {
  b=$(dd if=/dev/vda bs=1 skip="$1" count=1 2>/dev/null | od -An -tu1 | tr -d ' ')
  printf "\\$(printf %o $((b ^ 16)))" | dd of=/dev/vda bs=1 seek="$1" conv=notrunc 2>/dev/null || fail "dd failed"
  sync
  echo 3 >/proc/sys/vm/drop_caches
}
write_image
figures
# a byte in block 0's compressed data (its 32-byte header before it)
flip $((first * 4096 + 100))
refused 2 "block 0 is corrupt"

# the stream's last byte: the last block's compressed data, the blocks
# before it handed to this kernel first
write_image
figures
flip $((last * 4096 + (bytes - 1) % 4096))
refused 2 "block $((blocks - 1)) is corrupt"

write_image --header-kernel=0.0.0-other
refused 1 "made by another kernel: 0.0.0-other"
pass
