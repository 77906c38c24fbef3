# Scenario 6: hibernation across two boots. Boot 1 makes /dev/vda a swap
# partition (resume unset: fridged must set it itself, to 254:0), writes a
# file of random data to tmpfs and hibernates through fridgectl; the image
# goes to the swap and qemu powers off. Boot 2 (same disks) loads the disk
# driver and points /sys/power/resume at /dev/vda: the kernel restores the
# image, and this script goes on from where boot 1 stopped: fridgectl must
# see the same cycle end "done" with a Resumed event, and the file must
# read back with the same checksum after the page cache is dropped.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-timeout: 150
mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda failed"
swapon /dev/vda || fail "swapon /dev/vda failed"
echo "resume before: $(cat /sys/power/resume); swaps: $(tail -n +2 /proc/swaps)"
fctl status | grep -q 'CanHibernate: yes' || fail "CanHibernate is not yes: $(fctl status)"
head -c 4194304 /dev/urandom >/dev/shm/precious
before=$(sha256sum /dev/shm/precious | cut -d' ' -f1)
echo "precious file: $before"
fctl --json --no-progress hibernate >/run/out.json
rc=$?
echo "back from hibernation: fridgectl exited with $rc"
cat /run/out.json
dmesg | grep -E 'PM: (hibernation|Image|Restoring|resume|Loading)' | sed 's/^/dmesg: /' | tail -n 8
[ $rc -eq 0 ] || fail "fridgectl hibernate exited with $rc"
grep -q '"event":"finished","cycle":1,"result":"done"' /run/out.json || fail "cycle 1 did not finish done"
grep -q '"event":"resumed","cycle":1' /run/out.json || fail "no Resumed for cycle 1"
# The machine was off between the image write and the resume: the
# restored kernel adds that time (from the RTC) to CLOCK_BOOTTIME only
slept=$(sed -n 's/.*"event":"resumed".*"slept_usec":\([0-9]*\).*/\1/p' /run/out.json)
[ "${slept:-0}" -ge 1000000 ] || fail "Resumed reports ${slept:-no} slept_usec: the machine was not off"
[ "$(cat /sys/power/resume)" = 254:0 ] || fail "resume is $(cat /sys/power/resume), not 254:0 (/dev/vda)"
echo 3 >/proc/sys/vm/drop_caches
after=$(sha256sum /dev/shm/precious | cut -d' ' -f1)
[ "$after" = "$before" ] || fail "the file changed across hibernation: $before -> $after"
pass
