# VM benchmark (a scenario for tests/vm/run-scenario.sh): the hibernation
# image written by the kernel's own writer against fridge-image-writer, in
# the same guest, on the same swap disk, with the same memory load,
# alternating, 3 of each, medians and ratio (issue 17 point 6). Both
# figures are uncompressed image bytes over the write's time:
# - the kernel: /sys/power/disk=test_resume writes the image and comes back
#   without a power-off; its "PM: hibernation: Wrote N kbytes in S seconds"
#   line (the data pages, LZO, its own threads). On this 6.1 kernel the
#   check after the write fails ("Image not found (code -16)": swapon holds
#   the disk) and the image's swap pages stay allocated (swapoff would hang,
#   SNAPSHOT_SET_SWAP_AREA says EPERM): closing a read-only open of
#   /dev/snapshot frees them (snapshot_release: free_all_swap_pages).
# - fridge: fridge-image-writer --write --after=unfreeze: read, compress,
#   checksum, write, map, header and signature synced (raw_bytes over
#   write_ms); its read/compress/output split is printed too, and that of
#   a --discard run (read and compress, no device).
# Each run starts alike: swapoff, mkswap, swapon, resume pointed at the disk.
# Last, the Esc-return time: a write with --console=/dev/ttyS0, where the
# host types Esc once the bar shows; its lines go to /dev/kmsg, so the
# kernel's timestamps give the time from "aborted" to the shell's next line
# (swap pages and image freed, user space thawed, the writer gone).
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-append: printk.devkmsg=on
# vm-serial-keys: Esc aborts
# vm-binaries: FRIDGE_IMAGE_WRITER
# vm-timeout: 420
. /usr/lib/vm/hibernate-load-lib.sh
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
val() { sed -n "s/^$2=//p" "$1" | head -n1; }
hibernate_load 40
: >/run/kernel.mibs; : >/run/fridge.mibs
kernel_run() { # DISK
  swap_fresh "$1"
  cat "/sys/class/block/$1/dev" >/sys/power/resume || fail "resume=/dev/$1 refused"
  echo test_resume >/sys/power/disk || fail "test_resume refused"
  dmesg -c >/dev/null
  echo disk >/sys/power/state 2>/dev/null # the check after the write fails (see above)
  line=$(dmesg | grep -o 'Wrote [0-9]* kbytes in [0-9.]* seconds.*' | tail -n1)
  [ -n "$line" ] || { dmesg | tail -n 20; fail "no \"Wrote N kbytes\" line from the kernel's writer"; }
  echo "kernel /dev/$1: $line"
  : </dev/snapshot # the image's swap pages back (see above)
  set -- $line
  awk -v k="$2" -v s="$5" 'BEGIN { printf "%.1f\n", (s > 0 ? k / 1024 / s : 0) }' >>/run/kernel.mibs
}
fridge_run() { # DISK
  swap_fresh "$1"
  fridge-image-writer --snapshot=/dev/snapshot --write --after=unfreeze --resume-device="/dev/$1" \
    >/run/f.out 2>/run/f.err
  rc=$?
  [ $rc -eq 0 ] || { cat /run/f.err; fail "fridge-image-writer --write exited with $rc"; }
  raw=$(val /run/f.out raw_bytes); comp=$(val /run/f.out compressed_bytes); ms=$(val /run/f.out write_ms)
  echo "fridge /dev/$1: $raw bytes raw, $comp compressed, $(val /run/f.out threads) threads, $ms ms (reading $(val /run/f.out read_ms), compressing $(val /run/f.out compress_ms), waiting for the device $(val /run/f.out output_ms))"
  awk -v b="$raw" -v ms="$ms" 'BEGIN { printf "%.1f\n", (ms > 0 ? b / 1048576 / (ms / 1000) : 0) }' >>/run/fridge.mibs
  echo "$raw $comp" >/run/f.sizes
}
kernel_run vda; fridge_run vda
fridge_run vda; kernel_run vda
kernel_run vda; fridge_run vda
# where fridge's time goes without the device: --discard reads and
# compresses the same image and writes nothing
fridge-image-writer --snapshot=/dev/snapshot --discard >/run/d.out 2>/run/d.err || { cat /run/d.err; fail "fridge-image-writer --discard failed"; }
echo "fridge --discard: $(val /run/d.out write_ms) ms (reading $(val /run/d.out read_ms), compressing $(val /run/d.out compress_ms))"
# kmsg_at PATTERN: the kernel's timestamp (ms) of the last line matching it
kmsg_at() { dmesg | grep -e "$1" | tail -n1 | sed 's/^\[ *\([0-9.]*\)\].*/\1/' | awk '{ printf "%d", $1 * 1000 }'; }
swap_fresh vda
fridge-image-writer --snapshot=/dev/snapshot --write --after=unfreeze --resume-device=/dev/vda \
  --console=/dev/ttyS0 >/run/e.out 2>/dev/kmsg
rc=$?
echo "fridge-bench: back from the Esc run" >/dev/kmsg
esc="Esc not typed in time (exit $rc)"
if [ $rc -eq 3 ]; then
  a=$(kmsg_at 'aborted: Esc typed'); b=$(kmsg_at 'fridge-bench: back')
  [ -n "$a" ] && [ -n "$b" ] && esc="Esc to running again $((b - a)) ms"
fi
echo "fridge Esc run: $esc"
set -- $(cat /run/f.sizes)
k=$(median </run/kernel.mibs); f=$(median </run/fridge.mibs)
echo "kernel runs (MiB/s): $(tr '\n' ' ' </run/kernel.mibs)"
echo "fridge runs (MiB/s): $(tr '\n' ' ' </run/fridge.mibs)"
awk -v k="$k" -v f="$f" -v raw="$1" -v comp="$2" -v esc="$esc" 'BEGIN { r = (k > 0 ? f / k : 0); printf "FIGURE hibernate image write, median of 3: fridge %.1f MiB/s, kernel %.1f MiB/s (fridge image %.1f MiB raw, %.1f MiB compressed; %s), ratio %.2f (goal >= 1.00: %s)\n", f, k, raw / 1048576, comp / 1048576, esc, r, (r >= 1.0 ? "met" : "NOT met") }'
pass
