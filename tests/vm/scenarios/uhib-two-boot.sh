# Scenario 10 (issue 17): fridge's own image across two boots. Boot 1 makes
# /dev/vda a swap partition, starts a process holding a random value in its
# memory (it answers over a fifo with its pid and the value), writes a file
# to tmpfs, and runs fridge-image-writer --write: freeze, image, blocks on
# swap pages the kernel hands out, signature last, power off. Boot 2 runs
# fridge-resume on /dev/vda (init.sh, "vm-resume-tool"), which verifies and
# loads the image: this script goes on in boot 1's world, where the writer
# says resumed=1 with the write's figures, the same process answers with
# the same value, the file reads back whole, and the swap header is
# mkswap's page again, byte for byte (same UUID), still in use as swap.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
swap_and_holder
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer before the hibernation"
head -c 4194304 /dev/urandom >/dev/shm/precious
before=$(sha256sum /dev/shm/precious | cut -d' ' -f1)
echo "holder $holder holds $value; precious file $before"
# its progress and figures on the console (stdout's file is in the memory
# power-off loses, and comes back as it was before the write)
fridge-image-writer --snapshot=/dev/snapshot --write --resume-device=/dev/vda >/run/write.out 2>/dev/ttyS0
rc=$?
echo "back: fridge-image-writer exited with $rc"
cat /run/write.out
[ $rc -eq 0 ] || fail "fridge-image-writer --write exited with $rc"
[ "$(val /run/write.out resumed)" = 1 ] || fail "the writer did not come back resumed (no resumed=1)"
# the write's figures, which the restored system learns from the page the write left it
[ "$(val /run/write.out raw_bytes)" -gt 0 ] 2>/dev/null || fail "the restored writer does not know the write's figures"
echo "FIGURE uhib-two-boot: raw_bytes=$(val /run/write.out raw_bytes) compressed_bytes=$(val /run/write.out compressed_bytes) write_ms=$(val /run/write.out write_ms) mib_per_s=$(val /run/write.out mib_per_s)"
got=$(ask)
[ "$got" = "$holder $value" ] || fail "the holder answers \"$got\", not \"$holder $value\""
echo 3 >/proc/sys/vm/drop_caches
[ "$(sha256sum /dev/shm/precious | cut -d' ' -f1)" = "$before" ] || fail "the tmpfs file changed"
swap_page0 /run/page0.after
[ "$(swap_sig /run/page0.after)" = SWAPSPACE2 ] || fail "the swap signature is \"$(swap_sig /run/page0.after)\""
[ "$(swap_uuid /run/page0.after)" = "$(swap_uuid /run/page0.mkswap)" ] || fail "the swap UUID changed"
cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
grep -q '^/dev/vda ' /proc/swaps || fail "/dev/vda is no longer in use as swap: $(cat /proc/swaps)"
kill "$holder"
pass
