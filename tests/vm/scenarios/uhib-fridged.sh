# Scenario 13 (issue 17): fridge-driven hibernation with fridge's own
# writer. fridged runs with HibernateWriter=fridge (the .pre.sh);
# fridge-image-writer --serve listens where fridged looks
# (/run/fridge/image-writer.sock, the guest's state directory), as
# fridge-image-writer.socket has it on an installed system. Boot 1:
# `fridgectl hibernate`: fridged sets resume (254:0, /dev/vda), asks the
# writer, which finds the device from /sys/power/resume, freezes, writes
# the image and powers off. Boot 2 runs fridge-resume on /dev/vda; this
# script goes on in boot 1's world: the same cycle ends done with the
# writer's figures (kept for the restored system in a swap page) in its
# message, the holder answers with its value, the swap header is mkswap's
# page again.
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-resume: vda
# vm-resume-tool: fridge-resume
# vm-binaries: FRIDGE_IMAGE_WRITER FRIDGE_RESUME
# vm-timeout: 220
. /usr/lib/vm/uhib-lib.sh
swap_and_holder
fridge-image-writer --serve --snapshot=/dev/snapshot --listen=/run/fridge/image-writer.sock \
  --console=/dev/ttyS0 2>/dev/ttyS0 &
writer=$!
i=0
while [ ! -S /run/fridge/image-writer.sock ]; do
  i=$((i + 1))
  [ $i -le 100 ] || fail "fridge-image-writer --serve did not listen within 10 s"
  sleep 0.1
done
fctl status | grep -E 'HibernateWriter' || true
fctl status | grep -q 'HibernateWriter: fridge' || fail "fridged does not use fridge's writer: $(fctl status)"
fctl --json --no-progress hibernate >/run/out.json
rc=$?
echo "back from hibernation: fridgectl exited with $rc"
cat /run/out.json
[ $rc -eq 0 ] || fail "fridgectl hibernate exited with $rc"
grep -q '"event":"finished","cycle":1,"result":"done"' /run/out.json || fail "cycle 1 did not finish done"
grep -q '"event":"resumed","cycle":1' /run/out.json || fail "no Resumed for cycle 1"
grep -q 'image written by fridge: [1-9][0-9.]* MiB' /run/out.json \
  || fail "the cycle's message has no figures of fridge's writer"
grep -q 'the kernel wrote the image' /run/out.json && fail "the kernel's writer wrote the image"
sed -n 's/.*\(image written by fridge[^"]*\).*/FIGURE uhib-fridged: \1/p' /run/out.json | head -n1
[ "$(ask)" = "$holder $value" ] || fail "the holder does not answer with its value after the resume"
swap_page0 /run/page0.after
cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
kill "$writer" "$holder"
pass
