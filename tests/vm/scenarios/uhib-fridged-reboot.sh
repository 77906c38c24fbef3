# Scenario 13b (issue 17): as uhib-fridged, with HibernateMode=reboot:
# fridged writes reboot to /sys/power/disk and asks the writer for mode
# reboot, which reboots after the write instead of powering off (qemu's
# -no-reboot ends boot 1 all the same); boot 2 resumes with fridge-resume
# and the cycle ends done with the writer's figures. A reboot(2) that
# failed would end the cycle failed, the image withdrawn.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
fridged_writer_cycle uhib-fridged-reboot
