# Scenario 14 (issue 17): Esc at several points of the write. tmpfs is
# filled with incompressible data so the image is about 260 MiB and the
# write lasts (its last tenth, after the 90% bar the host waits for, about
# a quarter of a second under TCG: the host's look at the console and the
# key's way in must fit there; an Esc that comes while the last pages are
# synced still counts, as nothing is signed yet); fridge-image-writer --write --after=unfreeze
# --console=/dev/ttyS0 runs three times and the host types Esc on the
# serial line (vm-serial-keys, in order): at the first bar, when the bar is
# half full, and when it is 90% full. Each time the writer exits 3, saying
# Esc aborted it, with at least the progress lines of the point reached
# (the key came after them); the process holding a value answers (nothing
# frozen); the swap header is mkswap's page byte for byte and swapon takes
# it. A write that completes (exit 0) means the key came too late: failed
# as such, never passed.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-memory: 768
# vm-disks: 512M
# vm-binaries: FRIDGE_IMAGE_WRITER
# vm-serial-keys: Esc aborts
# vm-serial-keys: \[##########
# vm-serial-keys: \[##################
# vm-timeout: 300
. /usr/lib/vm/uhib-lib.sh
swap_and_holder
head -c 234881024 /dev/urandom >/dev/shm/fill || fail "cannot fill tmpfs"
# aborted_at POINT TENTHS: a write the host's Esc stops at POINT, after
# at least TENTHS of its progress lines
aborted_at() {
  echo "write: Esc at $1"
  fridge-image-writer --snapshot=/dev/snapshot --write --resume-device=/dev/vda --after=unfreeze \
    --console=/dev/ttyS0 >/run/write.out 2>/run/write.err
  rc=$?
  cat /run/write.err
  [ $rc -ne 0 ] || fail "the write with Esc at $1 completed (exit 0, an image on /dev/vda): the Esc did not stop it, or came too late (after the writer's last look at the console)"
  [ $rc -eq 3 ] || fail "fridge-image-writer with Esc at $1 exited with $rc, not 3 (aborted by Esc)"
  grep -q 'aborted: Esc' /run/write.err || fail "the writer does not say Esc aborted it at $1"
  lines=$(grep -c ' of [0-9]* MiB$' /run/write.err)
  echo "FIGURE: Esc at $1: aborted after $lines progress lines ($(grep ' of [0-9]* MiB$' /run/write.err | tail -n1 | sed 's/.*: //' | grep . || echo "none"))"
  [ "$lines" -ge "$2" ] || fail "Esc at $1 aborted after $lines progress lines, before the point the host saw ($2)"
  [ "$(ask)" = "$holder $value" ] || fail "the holder does not answer after Esc at $1"
  swap_page0 /run/page0.after
  [ "$(swap_sig /run/page0.after)" = SWAPSPACE2 ] || fail "after Esc at $1 the swap signature is \"$(swap_sig /run/page0.after)\""
  cmp -s /run/page0.after /run/page0.mkswap || fail "after Esc at $1 the swap header page is not mkswap's byte for byte"
  swapoff /dev/vda && swapon /dev/vda || fail "swapon does not take /dev/vda after Esc at $1"
}
aborted_at "the first bar" 0
aborted_at "50%" 5
aborted_at "90%" 9
kill "$holder"
pass
