# VM benchmark (a scenario for tests/vm/run-scenario.sh, two boots): the
# whole hibernation by the kernel's own writer, from the state write to
# the resumed system running on: the image written, the power-off, a new
# boot (qemu, the kernel, this initramfs), the image found on /dev/vda by
# the kernel's resume (init.sh writes /sys/power/resume), loaded and
# restored, user space thawed. No clock in the guest spans the power-off,
# so the host times the "FRIDGE-TIME:" lines (vm-host-times); tools/bench
# runs this and vm-hibernate-cycle-fridge.sh in turn and prints their
# medians side by side (issue 17 point 6). Same load, swap disk and
# memory as vm-hibernate-write.sh.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-host-times: hibernating resumed
# vm-timeout: 300
. /usr/lib/vm/hibernate-load-lib.sh
hibernate_load 40
swap_fresh vda
cat /sys/class/block/vda/dev >/sys/power/resume || fail "resume=/dev/vda refused"
echo shutdown >/sys/power/disk || fail "disk=shutdown refused"
# straight to the serial line: a line through the scenario's tee could
# still be in the pipe when user space freezes
echo "FRIDGE-TIME: hibernating" >/dev/ttyS0
echo disk >/sys/power/state || fail "the kernel's hibernation failed: $(dmesg | tail -n 5)"
echo "FRIDGE-TIME: resumed" >/dev/ttyS0
pass
