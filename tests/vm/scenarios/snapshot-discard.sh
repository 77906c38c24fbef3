# Scenario 9 (issue 17): fridge-image-writer --discard on the guest's real
# /dev/snapshot: the kernel makes the image (SNAPSHOT_CREATE_IMAGE), the
# writer reads every page of it into fridge's format (compressed blocks, each
# checksummed), then throws it away (SNAPSHOT_FREE, SNAPSHOT_UNFREEZE), the
# path an abort takes. Nothing is written to a disk. Then user space runs
# on: a background process counts again, fridged answers, a tmpfs file
# reads back whole.
# vm-binaries: FRIDGE_IMAGE_WRITER
# vm-timeout: 150
head -c 4194304 /dev/urandom >/dev/shm/precious
before=$(sha256sum /dev/shm/precious | cut -d' ' -f1)
# (its output away from the log's pipe, or a fail would wait on it)
( while :; do date +%s%N >/run/ticker; sleep 0.1; done ) >/dev/null 2>&1 &
ticker=$!
# its progress lines on the console, as the user would see them
fridge-image-writer --snapshot=/dev/snapshot --discard >/run/discard.out 2>/dev/ttyS0
rc=$?
cat /run/discard.out
dmesg | grep -E 'PM: (hibernation|Image|Creating|Preallocating)' | sed 's/^/dmesg: /' | tail -n 6
[ $rc -eq 0 ] || { kill "$ticker"; fail "fridge-image-writer --discard exited with $rc"; }
val() { sed -n "s/^$1=//p" /run/discard.out; }
raw=$(val raw_bytes); comp=$(val compressed_bytes); blocks=$(val blocks)
kill "$ticker"
[ "${raw:-0}" -ge 4194304 ] || fail "the image is ${raw:-no} bytes: not even the 4 MiB file"
[ $((raw % 4096)) -eq 0 ] || fail "the image is $raw bytes: not whole pages"
[ "${comp:-0}" -gt 0 ] && [ "$comp" -lt "$raw" ] || fail "compressed ${comp:-?} bytes of $raw raw: nothing gained"
pages=$((raw / 4096))
[ "$blocks" -eq $(((pages + 31) / 32)) ] || fail "$blocks blocks for $pages pages at 32 a block"
# user space runs again: a new ticker moves, fridged answers, the file is whole
( while :; do date +%s%N >/run/ticker; sleep 0.1; done ) >/dev/null 2>&1 &
ticker=$!
t1=$(cat /run/ticker 2>/dev/null)
i=0
while [ "$(cat /run/ticker 2>/dev/null)" = "$t1" ]; do
  i=$((i + 1)); [ $i -le 100 ] || { kill "$ticker"; fail "user space did not run on after the discard"; }; sleep 0.1
done
kill "$ticker"
fctl status >/dev/null || fail "fridged does not answer after the discard"
echo 3 >/proc/sys/vm/drop_caches
[ "$(sha256sum /dev/shm/precious | cut -d' ' -f1)" = "$before" ] || fail "the tmpfs file changed"
pass
