# Scenario 18b (issue 17): mode platform where the platform has no S4
# (qemu's PIIX4 without it: the kernel registers no hibernation platform).
# SNAPSHOT_POWER_OFF fails; fridge-image-writer says why in one line and
# powers off plainly, never entering S4; boot 2 resumes the image all the
# same, and the holder answers.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-qemu-args: -global PIIX4_PM.disable_s4=1
# vm-console-expect: the platform's hibernation state was not entered (SNAPSHOT_POWER_OFF: Function not implemented): a plain power-off instead
# vm-console-expect: fridge-image-writer: image written; powering off
# vm-console-reject: Preparing to enter system sleep state S4
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
two_boot_after uhib-platform-no-s4 platform
