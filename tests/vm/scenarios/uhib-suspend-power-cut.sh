# Scenario (issue 17): mode suspend, and the power fails while the machine
# is suspended to RAM: what hybrid sleep is for. fridge-image-writer
# --write --after=suspend writes and signs the image before SNAPSHOT_S2RAM;
# the host SIGKILLs qemu once the kernel says it enters S3 and boots the
# same disks again. Boot 2's fridge-resume restores the image, so this
# script goes on in boot 1's world: the writer says resumed=1, the boot id
# is boot 1's, the holder answers with its value, and the swap header page
# is mkswap's again. Were nothing resumed, boot 2 runs the script from its
# top and fails.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-append: no_console_suspend
# vm-power-cut: ACPI: PM: Preparing to enter system sleep state S3
# vm-console-expect: fridge-image-writer: image written; suspending to RAM
# vm-console-expect: ^=== second boot .after the power cut; resume from /dev/vda
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
[ "$FRIDGE_VM_BOOT" = 1 ] || fail "boot 2 did not resume the image written before the suspend (fridge-resume exited with $FRIDGE_VM_RESUME_RC: $(cat /run/resume.out 2>/dev/null))"
two_boot_after uhib-suspend-power-cut suspend
