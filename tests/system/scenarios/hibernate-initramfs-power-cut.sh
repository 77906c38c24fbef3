# Scenario 17 (issue 17, point 5): a power cut in the middle of the write
# on an installed Debian. Boot 1 hibernates through fridge's writer as in
# hibernate-initramfs, its bar on the serial line; when the bar is half
# full the host SIGKILLs qemu. Boot 2: the guest's own initrd runs
# fridge-resume, which finds mkswap's page (the signature comes only after
# the last block is on the disk and synced) and the boot goes on, into
# this scenario again from its top: the swap area is mkswap's page byte for
# byte and in use from fstab, the file written before reads back intact,
# and fridged reports cycle 1 as failed because the machine went down in
# an earlier boot (its record on the root survived the cut).
# system-boot: initramfs-tools 512M
# system-power-cut: \[##########
# system-timeout: 600
. /usr/lib/fridge-system-test/scenarios/hibernate-lib.sh
boot2() {
  swap_on_vdb
  swap_page0 /run/page0.now
  cmp -s /run/page0.now $state/page0.mkswap || fail "the swap header page is not mkswap's byte for byte after the cut"
  cmp -s $state/data $state/data.copy || fail "$state/data does not read back as written before the cut"
  fridgectl --no-pager history >/run/history.txt
  cat /run/history.txt
  grep -q 'the machine went down during the cycle (phase ' /run/history.txt \
    || fail "fridgectl history does not report cycle 1 as interrupted by the cut"
  pass
}
first_boot_or boot2
writer_on_serial
swap_on_vdb
use_fridges_writer
swap_page0 $state/page0.mkswap
holder_and_file
cp /run/data.copy $state/data.copy
head -c 134217728 /dev/urandom >/dev/shm/fill || fail "cannot fill tmpfs"
sync
hibernate
fail "the power was not cut during the write (fridgectl hibernate came back with $rc)"
