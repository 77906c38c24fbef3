# Scenario (issue 17): a wakeup event during the write stops the entry to
# the platform's hibernation state. fridged (HibernateWriter=fridge, mode
# platform, its default) writes /sys/power/wakeup_count before it asks
# fridge-image-writer --serve, so the kernel counts wakeup events from
# there; the host presses the ACPI power button (a wakeup source once
# button.ko is loaded: without it the press is not even seen) once the
# writer's bar shows, while user space is frozen. The image is written,
# and SNAPSHOT_POWER_OFF finds the event pending: the writer withdraws the
# image, unfreezes and reports it, and the machine runs on in the same
# boot: the cycle ends failed in the writer's words, nothing is frozen,
# the holder (in a scratch cgroup the cycle froze) answers, the swap
# header is mkswap's page byte for byte.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk button
# vm-memory: 512
# vm-disks: 256M
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-power-button-at: Esc aborts
# vm-console-expect: fridge-image-writer: image written; entering the platform's hibernation state
# vm-console-reject: ^=== second boot
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
swap_and_holder
echo "$holder" >/sys/fs/cgroup/fridge-test/app/cgroup.procs || fail "cannot move the holder into fridge-test/app"
serve_writer
head -c 67108864 /dev/urandom >/dev/shm/fill || fail "cannot fill tmpfs"
boot_id=$(cat /proc/sys/kernel/random/boot_id)
fctl_hibernate
[ "$(cat /proc/sys/kernel/random/boot_id)" = "$boot_id" ] || fail "a new boot: the machine hibernated despite the wakeup event"
[ $rc -ne 0 ] || fail "fridgectl hibernate exited 0: the wakeup event did not stop the hibernation"
grep -q '"event":"finished","cycle":1,"result":"failed"' /run/out.json || fail "cycle 1 did not end failed"
grep -q "fridge-image-writer failed: a wakeup event stopped the entry to the platform's hibernation state; image withdrawn, the system runs on" \
  /run/out.json || fail "the cycle's message is not the writer's word on the wakeup event"
all_thawed "after the wakeup event" 1
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer with its value"
swap_page0 /run/page0.after
cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
kill "$writer" "$holder"
pass
