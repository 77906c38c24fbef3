# Scenario (issue 17): mode suspend, hybrid sleep's. fridge-image-writer
# --write --after=suspend writes the image and signs it, then suspends to
# RAM through SNAPSHOT_S2RAM (ACPI S3); the RTC alarm wakes the machine.
# Memory was never lost, so the writer comes back resumed=1 in the same
# boot (no second boot: the boot id is the same, the console shows none),
# withdraws the image (the swap header page is mkswap's byte for byte, no
# stale image for a later boot) and the holder answers with its value.
# bzImage: with the uncompressed vmlinux qemu exits on the wake-up.
# vm-kernel: bzImage
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-append: no_console_suspend
# vm-console-expect: fridge-image-writer: image written; suspending to RAM
# vm-console-expect: ACPI: PM: Preparing to enter system sleep state S3
# vm-console-expect: ACPI: PM: Waking up from system sleep state S3
# vm-console-reject: ^=== second boot
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
swap_and_holder
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer before the suspend"
boot_id=$(cat /proc/sys/kernel/random/boot_id)
echo 0 >/sys/class/rtc/rtc0/wakealarm
echo +8 >/sys/class/rtc/rtc0/wakealarm || fail "cannot set the RTC alarm"
write_and_come_back suspend
[ "$(cat /proc/sys/kernel/random/boot_id)" = "$boot_id" ] || fail "a new boot: the machine did not wake from RAM"
dmesg | grep -q 'ACPI: PM: Waking up from system sleep state S3' || fail "the kernel did not wake from S3"
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer with its value after the wake"
swap_page0 /run/page0.after
[ "$(swap_sig /run/page0.after)" = SWAPSPACE2 ] || fail "the image was not withdrawn: the signature is \"$(swap_sig /run/page0.after)\""
cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
swapoff /dev/vda && swapon /dev/vda || fail "the swap area is not usable after the wake"
kill "$holder"
pass
