# Scenario 18 (issue 17): mode platform. Boot 1 hibernates through
# fridge-image-writer --write --after=platform: SNAPSHOT_PLATFORM_SUPPORT
# before the snapshot, SNAPSHOT_POWER_OFF after the write, so the kernel
# enters ACPI S4 (qemu ends the VM there as at a power-off); the host finds
# the kernel saying so on boot 1's console after the writer's line (the
# console kept on through the devices' suspend: no_console_suspend; the
# same line during the snapshot's own preparation comes before it), and no
# fallback. Boot 2's
# fridge-resume restores the image in platform mode (its line says so), in
# 224 MiB: its one pass leaves no page cache in the image's way;
# this script goes on in boot 1's world: resumed=1, the holder answers,
# the swap header is mkswap's page again.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-append: no_console_suspend
# vm-console-expect: fridge-image-writer: image written; entering the platform's hibernation state
# vm-console-expect: ACPI: PM: Preparing to enter system sleep state S4
# vm-console-expect: ^=== second boot
# vm-console-expect: fridge-resume: loading the image ([0-9]* MiB, platform mode), each block checked as it is read
# vm-memory: 224
# vm-console-reject: a plain power-off instead
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
two_boot_after uhib-platform platform
