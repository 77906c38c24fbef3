# VM benchmark (a scenario for tests/vm/run-scenario.sh, two boots): the
# whole hibernation through fridge's writer, from its start to the resumed
# system running on: fridge-image-writer --write (freeze, image, write,
# signature, power-off), a new boot (qemu, the kernel, this initramfs),
# fridge-resume finding the image on /dev/vda and loading it (each block
# checked as it is read),
# the restore, user space thawed. The counterpart of
# vm-hibernate-cycle-kernel.sh (same load, swap disk and memory), timed
# the same way by the host (vm-host-times); tools/bench prints the two
# side by side (issue 17 point 6).
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-host-times: hibernating resumed
# vm-timeout: 300
. /usr/lib/vm/hibernate-load-lib.sh
hibernate_load 40
swap_fresh vda
echo "FRIDGE-TIME: hibernating" >/dev/ttyS0
fridge-image-writer --snapshot=/dev/snapshot --write --after=poweroff --resume-device=/dev/vda \
  >/run/write.out 2>/run/write.err
rc=$?
echo "FRIDGE-TIME: resumed" >/dev/ttyS0
[ $rc -eq 0 ] || fail "fridge-image-writer --write exited with $rc: $(tail -n 3 /run/write.err)"
grep -qx 'resumed=1' /run/write.out || fail "the writer did not come back resumed (no resumed=1)"
echo "fridge writer: $(sed -n 's/^\(raw_bytes\|compressed_bytes\|write_ms\|mib_per_s\)=/\1 /p' /run/write.out | tr '\n' ' ')"
pass
