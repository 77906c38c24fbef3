# Scenario 13 (issue 17): a power cut in the middle of the write leaves no
# image to resume. Boot 1 makes /dev/vda a swap partition, keeps a copy of
# its header page (mkswap's) on /dev/vdb, fills tmpfs with incompressible
# data so the write lasts, and runs fridge-image-writer --write with its bar
# on the serial line. When the bar shows half the image written, the host
# SIGKILLs qemu (vm-power-cut) and boots the same disks again. Boot 2 runs
# fridge-resume on /dev/vda before anything else (init.sh): it finds
# mkswap's page (the signature comes only after every block is on the disk
# and synced), says nothing and exits 0, and does not hang; the boot goes
# on into this script, which finds the swap header page byte for byte the
# one boot 1 kept (same UUID) and swapon takes it. Were anything resumed,
# boot 1's writer would come back here and fail.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-memory: 512
# vm-disks: 512M 1M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-power-cut: \[##########
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-timeout: 300
. /usr/lib/vm/uhib-lib.sh
if [ "$FRIDGE_VM_BOOT" = 2 ]; then
  echo "boot 2, after the power cut: fridge-resume exited with $FRIDGE_VM_RESUME_RC"
  [ "$FRIDGE_VM_RESUME_RC" = 0 ] || fail "fridge-resume exited with $FRIDGE_VM_RESUME_RC after the power cut, not 0 (no image): $(cat /run/resume.out)"
  [ ! -s /run/resume.out ] || fail "fridge-resume said something on a plain swap area: $(cat /run/resume.out)"
  page0_as_kept "the power cut"
  swapon /dev/vda || fail "swapon does not take /dev/vda after the power cut"
  grep -q '^/dev/vda ' /proc/swaps || fail "/dev/vda is not in use as swap: $(cat /proc/swaps)"
  pass
fi
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda failed"
swapon /dev/vda || fail "swapon /dev/vda failed"
swap_page0 /run/page0.mkswap
# boot 2 compares with this copy: boot 1's /run dies with it
keep_page0
head -c 134217728 /dev/urandom >/dev/shm/fill || fail "cannot fill tmpfs"
sync
echo "the write starts; the host cuts the power when the bar is half full"
fridge-image-writer --snapshot=/dev/snapshot --write --resume-device=/dev/vda --console=/dev/ttyS0 \
  >/run/write.out 2>/dev/ttyS0
rc=$?
cat /run/write.out
if [ "$(val /run/write.out resumed)" = 1 ]; then
  fail "boot 1 came back resumed: an image was resumed after the power cut (or the cut came after the signature)"
fi
fail "fridge-image-writer exited with $rc before the power cut"
