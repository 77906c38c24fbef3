# Scenario 13c (issue 17): Esc on the writer's console while fridged's
# hibernation is written. fridged (HibernateWriter=fridge) asks
# fridge-image-writer --serve; the host types Esc on the serial line once
# the writer's bar shows (vm-serial-keys). The writer stops, writes no
# signature, frees the swap pages and the image, unfreezes and answers
# cancelled: fridged's cycle ends aborted, saying so, and the kernel's
# writer never runs (one boot). The holder answers, the swap header is
# mkswap's page byte for byte.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-binaries: FRIDGE_IMAGE_WRITER
# vm-serial-keys: Esc aborts
# vm-timeout: 150
. /usr/lib/vm/uhib-lib.sh
swap_and_holder
serve_writer
fctl_hibernate
grep -q '"event":"finished","cycle":1,"result":"aborted"' /run/out.json || fail "cycle 1 did not finish aborted"
grep -q 'the image write was cancelled: Esc typed on the console' /run/out.json \
  || fail "the cycle does not say the write was cancelled by Esc"
grep -q '"event":"resumed"' /run/out.json && fail "a Resumed for a hibernation that was cancelled"
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer after the abort"
swap_page0 /run/page0.after
cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
grep -q '^/dev/vda ' /proc/swaps || fail "/dev/vda is no longer in use as swap: $(cat /proc/swaps)"
kill "$writer" "$holder"
pass
