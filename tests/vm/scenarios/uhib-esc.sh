# Scenario 12 (issue 17): Esc aborts the write. fridge-image-writer --write
# --console=/dev/ttyS0 draws its progress bar on the serial line while user
# space is frozen; the host types Esc there once it shows (vm-serial-keys).
# The writer stops, writes no signature, frees the swap pages and the image
# and unfreezes: it exits 3, the process holding a value answers again,
# the swap header is mkswap's page byte for byte and swapon takes it. A
# second write, with no Esc, completes: the abort was the key's.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-binaries: FRIDGE_IMAGE_WRITER
# vm-serial-keys: Esc aborts
# vm-timeout: 150
. /usr/lib/vm/uhib-lib.sh
swap_and_holder
write_image() {
  fridge-image-writer --snapshot=/dev/snapshot --write --resume-device=/dev/vda --after=unfreeze \
    --console=/dev/ttyS0 >/run/write.out 2>/run/write.err
}
write_image
rc=$?
cat /run/write.err
[ $rc -eq 3 ] || fail "fridge-image-writer exited with $rc, not 3 (aborted by Esc)"
grep -q 'aborted: Esc' /run/write.err || fail "the writer does not say it was aborted by Esc"
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer after the abort"
swap_page0 /run/page0.after
[ "$(swap_sig /run/page0.after)" = SWAPSPACE2 ] || fail "the swap signature is \"$(swap_sig /run/page0.after)\""
cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
swapoff /dev/vda && swapon /dev/vda || fail "swapon does not take /dev/vda after the abort"
write_image || { cat /run/write.err; fail "the second write (no Esc) exited with $?"; }
swap_page0 /run/page0.image
[ "$(swap_sig /run/page0.image)" = ULSUSPEND ] || fail "the second write left no image"
kill "$holder"
pass
