# Scenario 13 (issue 17): fridge-driven hibernation with fridge's own
# writer. fridged runs with HibernateWriter=fridge (the .pre.sh);
# fridge-image-writer --serve listens where fridged looks
# (/run/fridge/image-writer.sock, the guest's state directory) with
# --console=vt, as fridge-image-writer.service has it on an installed
# system (tty1 held open as a session holds its VT). Boot 1:
# `fridgectl hibernate`: fridged sets resume (254:0, /dev/vda), asks the
# writer, which finds the device from /sys/power/resume, freezes, writes
# the image and powers off. Boot 2 runs fridge-resume on /dev/vda, which
# loads the image in one pass, each block checked as it is read; this
# script goes on in boot 1's world: the same cycle ends done with the
# writer's figures (kept for the restored system in a swap page) in its
# message, the holder answers with its value, the swap header is mkswap's
# page again; the writer drew on another VT and, in the restored system,
# switched back to tty1 and deallocated it before fridged said resumed.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# (fridged's default mode, platform: the image made for ACPI S4, restored so)
# vm-console-expect: fridge-resume: loading the image ([0-9]* MiB, platform mode), each block checked as it is read
# vm-memory: 384
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
fridged_writer_cycle uhib-fridged vt
