# Scenario 17 (issue 17): booting with noresume discards fridge's image.
# Boot 1 makes /dev/vda a swap partition, keeps a copy of its header page
# (mkswap's) on /dev/vdb, starts a process holding a value, and hibernates
# through fridge-image-writer --write: signature last, power off. Boot 2
# has noresume on its command line: init.sh runs fridge-resume --discard
# as fridge's local-premount script does then, and the boot goes on into
# this script from its top (a restore would have gone on in boot 1's
# world instead, where the writer says resumed=1 and this scenario fails).
# Here: fridge-resume said in one line that it discarded the image, the
# header page is mkswap's byte for byte (same UUID), fridge-resume finds
# no image any more (a later boot without noresume resumes nothing, says
# nothing), and swapon takes the area.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M 1M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-resume-append: noresume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
if [ "$FRIDGE_VM_BOOT" = 2 ]; then
  grep -qw noresume /proc/cmdline || fail "boot 2 has no noresume on its command line: $(cat /proc/cmdline)"
  echo "boot 2, noresume: fridge-resume --discard exited with $FRIDGE_VM_RESUME_RC"
  [ "$FRIDGE_VM_RESUME_RC" = 0 ] || fail "fridge-resume --discard exited with $FRIDGE_VM_RESUME_RC: $(cat /run/resume.out)"
  [ "$(cat /run/resume.out)" = "fridge-resume: noresume: the hibernation image on /dev/vda discarded unread, swap signature restored" ] \
    || fail "fridge-resume --discard did not say in one line that it discarded boot 1's image: \"$(cat /run/resume.out)\""
  page0_as_kept noresume
  # the stale image is gone for good: the next boot's resume finds plain swap
  fridge-resume --device=/dev/vda --verify-only >/run/verify.out 2>&1 && fail "the discarded image still verifies: $(cat /run/verify.out)"
  grep -q "no fridge image on /dev/vda" /run/verify.out || fail "fridge-resume --verify-only: $(cat /run/verify.out)"
  fridge-resume --device=/dev/vda --snapshot=/dev/snapshot >/run/again.out 2>&1 \
    || fail "a later boot's fridge-resume exited with $?: $(cat /run/again.out)"
  [ ! -s /run/again.out ] || fail "a later boot's fridge-resume said something: $(cat /run/again.out)"
  swapon /dev/vda || fail "swapon does not take /dev/vda after noresume"
  grep -q '^/dev/vda ' /proc/swaps || fail "/dev/vda is not in use as swap: $(cat /proc/swaps)"
  pass
fi
swap_and_holder
keep_page0
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer before the hibernation"
echo "holder $holder holds $value; hibernating through fridge's writer; boot 2 has noresume"
fridge-image-writer --snapshot=/dev/snapshot --write --resume-device=/dev/vda >/run/write.out 2>/dev/ttyS0
rc=$?
cat /run/write.out
[ "$(val /run/write.out resumed)" = 1 ] && fail "boot 1 came back resumed: the image was restored despite noresume"
fail "fridge-image-writer exited with $rc without powering off"
