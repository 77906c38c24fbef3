# Scenario 14 (issue 17, point 5): hibernation through fridge's own writer
# on an installed Debian, across two boots of the same disks. Boot 1: the
# package's fridge-image-writer.socket listens (enabled on install), its
# service has not run; with Driver=direct and HibernateWriter=fridge in a
# fridge.conf.d drop-in, `fridgectl hibernate` makes fridged connect, which
# makes systemd start fridge-image-writer.service (sandboxed as shipped),
# which writes the image to the swap area /dev/vdb (fstab's, by UUID) and
# powers off. Boot 2: the guest's own initrd (update-initramfs, with
# fridge's hook) runs fridge's local-premount script on RESUME=UUID=,
# fridge-resume restores the image (the console says so) and this script
# goes on in boot 1's world: the same holder (same pid) answers with its
# value, the file written before the hibernation reads back intact from
# the disk, the cycle ends done with the write's figures (writer fridge)
# in its record and `fridgectl history`, the service ran in its own unit
# (socket-activated, logged in the journal), and the swap area is
# mkswap's again, in use.
# system-boot: initramfs-tools 512M
# system-console: fridge-resume: loading the image
# system-timeout: 600
. /usr/lib/fridge-system-test/scenarios/hibernate-lib.sh
not_resumed() { fail "boot 2 did not resume boot 1's image (fridge-resume's words are on the console)"; }
first_boot_or not_resumed
hibernate_boot1

# boot 2, resumed: boot 1's world goes on here
echo "after the resume: boot id $(cat /proc/sys/kernel/random/boot_id), $(cat $state/boot1)"
[ $rc -eq 0 ] || fail "fridgectl hibernate exited with $rc"
[ "$(ask)" = "$holder $value" ] || fail "the holder (pid $holder) does not answer with its value after the resume"
echo "holder: pid $holder answers with its value"
echo 3 >/proc/sys/vm/drop_caches
cmp -s "$data" /run/data.copy || fail "$data does not read back from the disk as written before the hibernation"
echo "file: $data reads back from the disk intact"
grep -q '"event":"finished","cycle":1,"result":"done"' /run/out.json || fail "cycle 1 did not finish done"
grep -q '"event":"resumed","cycle":1' /run/out.json || fail "no Resumed for cycle 1"
grep -q '"text":"writing the image"' /run/out.json || fail "fridged never relayed the writer's progress (writing the image)"
grep -q '"image-writer":"fridge","image-raw-bytes":[1-9][0-9]*,"image-written-bytes":[1-9][0-9]*,"image-usec":[1-9]' \
  /run/out.json || fail "the finished event has no image-* figures of fridge's writer"
sed -n 's/.*\(image written by fridge[^"]*\).*/FIGURE system hibernate-initramfs: \1/p' /run/out.json | head -n1
fridgectl --no-pager history >/run/history.txt
cat /run/history.txt
grep -q ' image: [0-9.]* MiB written as [0-9.]* MiB ([0-9.]*x) in [0-9.]* s, [0-9]* MiB/s$' /run/history.txt \
  || fail "fridgectl history has no image line for cycle 1"
busctl call io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 ListCycles u 1 >/run/cycles.txt \
  || fail "ListCycles failed"
grep -q '"image-writer" s "fridge"' /run/cycles.txt || fail "ListCycles(1) has no image-writer fridge: $(cat /run/cycles.txt)"

# the writer ran as the package's units have it, started by its socket
systemctl show -p ActiveState -p TriggeredBy -p MainPID -p NRestarts fridge-image-writer.service | tee /run/writer.show
grep -qx 'ActiveState=active' /run/writer.show || fail "fridge-image-writer.service is not active after serving"
grep -qx 'TriggeredBy=fridge-image-writer.socket' /run/writer.show || fail "fridge-image-writer.service is not the socket's"
wpid=$(sed -n 's/^MainPID=//p' /run/writer.show)
[ "$(readlink "/proc/$wpid/exe")" = /usr/libexec/fridge-image-writer ] || fail "its main process $wpid is not fridge-image-writer"
grep -q '/system.slice/fridge-image-writer.service$' "/proc/$wpid/cgroup" || fail "the writer runs outside its unit: $(cat /proc/$wpid/cgroup)"
journalctl -b -o cat -u fridge-image-writer.service >/run/writer.journal
cat /run/writer.journal
grep -q '^Started fridge-image-writer.service' /run/writer.journal \
  || fail "the journal does not show systemd starting fridge-image-writer.service"
[ "$(wc -l </run/writer.journal)" -ge 2 ] || fail "the writer logged nothing in its unit's journal"
swap_page0 /run/page0.after
cmp -s /run/page0.after $state/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
swap_on_vdb
kill "$holder"
pass
