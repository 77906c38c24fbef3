# Helpers of the uhib-* scenarios (fridge's own hibernation image, issue 17)
# swap_page0 FILE: the swap header page of /dev/vda as the disk has it now
swap_page0() {
  sync
  echo 3 >/proc/sys/vm/drop_caches
  dd if=/dev/vda of="$1" bs=4096 count=1 2>/dev/null
}
# The signature at the page's end, and mkswap's UUID (bytes 1036-1051)
swap_sig() { tail -c 10 "$1" | tr -d '\000'; }   # NULs dropped: ULSUSPEND has one
swap_uuid() { dd if="$1" bs=1 skip=1036 count=16 2>/dev/null | od -An -tx1 | tr -d ' \n'; }
# keep_page0: boot 1's mkswap header page kept on /dev/vdb, for boot 2
keep_page0() {
  dd if=/run/page0.mkswap of=/dev/vdb bs=4096 count=1 conv=fsync 2>/dev/null || fail "cannot keep the header page on /dev/vdb"
}
# page0_as_kept AFTER: in boot 2, /dev/vda's header page is the one boot 1
# kept (mkswap's: same signature, same UUID, byte for byte), after AFTER
page0_as_kept() {
  dd if=/dev/vdb of=/run/page0.mkswap bs=4096 count=1 2>/dev/null || fail "cannot read boot 1's copy of the header page on /dev/vdb"
  [ "$(swap_sig /run/page0.mkswap)" = SWAPSPACE2 ] || fail "/dev/vdb holds no swap header page: boot 1 did not keep it"
  swap_page0 /run/page0.after
  [ "$(swap_sig /run/page0.after)" = SWAPSPACE2 ] || fail "the swap signature after $1 is \"$(swap_sig /run/page0.after)\""
  [ "$(swap_uuid /run/page0.after)" = "$(swap_uuid /run/page0.mkswap)" ] || fail "the swap UUID changed"
  cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
}
# val FILE KEY: KEY's value in a key=value output
val() { sed -n "s/^$2=//p" "$1" | head -n1; }
# swap_and_holder: /dev/vda made a swap area in use (its header page kept in
# /run/page0.mkswap), and a process holding a random value in its memory
# ($holder, $value); `ask` prints what it answers over a fifo: "PID VALUE"
swap_and_holder() {
  mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda failed"
  swapon /dev/vda || fail "swapon /dev/vda failed"
  swap_page0 /run/page0.mkswap
  value=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  mkfifo /run/ask /run/answer
  # (its output away from the log's pipe, or a fail would wait on it)
  sh -c 'v=$1; while read -r q </run/ask; do echo "$$ $v" >/run/answer; done' holder "$value" >/dev/null 2>&1 &
  holder=$!
}
ask() { echo "?" >/run/ask; read -r a </run/answer; echo "$a"; }
# serve_writer [CONSOLE LOG]: fridge-image-writer --serve where fridged
# looks for it ($writer), its bar and keys on the serial line (or on
# CONSOLE, its log in LOG); fridged sees it. The guest's root is the
# initramfs that resumes it (fridge-resume in it, run by the scenario's
# boot 2), a file it has no copy of: the initramfs is not looked at here
# (the system tier's guest has its update-initramfs initrd looked at)
serve_writer() {
  fridge-image-writer --serve --snapshot=/dev/snapshot --listen=/run/fridge/image-writer.sock \
    --console="${1:-/dev/ttyS0}" --initramfs=unchecked 2>"${2:-/dev/ttyS0}" &
  writer=$!
  i=0
  while [ ! -S /run/fridge/image-writer.sock ]; do
    i=$((i + 1))
    [ $i -le 100 ] || fail "fridge-image-writer --serve did not listen within 10 s"
    sleep 0.1
  done
  fctl status | grep -E 'HibernateWriter' || true
  fctl status | grep -q 'HibernateWriter: fridge' || fail "fridged does not use fridge's writer: $(fctl status)"
}
# fctl_hibernate: fridgectl hibernate's events in /run/out.json (shown), its status in $rc
fctl_hibernate() {
  fctl --json --no-progress hibernate >/run/out.json
  rc=$?
  echo "fridgectl hibernate exited with $rc"
  cat /run/out.json
}
# vt_session: tty1 held open, as a compositor or a getty holds the VT in
# front; $vt_before: the VT in front
vt_session() {
  [ -c /dev/tty0 ] && [ -r /sys/class/tty/tty0/active ] \
    || fail "the guest has no VTs (no /dev/tty0 or /sys/class/tty/tty0/active): CONFIG_VT off?"
  exec 7<>/dev/tty1
  vt_before=$(cat /sys/class/tty/tty0/active)
  echo "VT in front: $vt_before"
}
# vt_back WHEN LOG: the writer's LOG says it drew on another VT ($vt_taken)
# and switched back, the VT in front is $vt_before again, $vt_taken is
# deallocated (a VT's vcs device exists while it is allocated)
vt_back() {
  vt_taken=$(sed -n 's/.*console: the progress bar on \(tty[0-9]*\) .*/\1/p' "$2" | tail -n1)
  [ -n "$vt_taken" ] || fail "$1: the writer's log names no VT it drew on"
  [ "$vt_taken" != "$vt_before" ] || fail "$1: the writer drew on $vt_before, the VT in front: no switch"
  grep -q "console: back on $vt_before; $vt_taken deallocated" "$2" \
    || fail "$1: the writer's log does not say it switched back to $vt_before and deallocated $vt_taken"
  now=$(cat /sys/class/tty/tty0/active)
  [ "$now" = "$vt_before" ] || fail "$1: $now is in front, not $vt_before"
  [ ! -e "/sys/class/vc/vcs${vt_taken#tty}" ] || fail "$1: $vt_taken is still allocated"
  echo "VT: $1: the bar on $vt_taken, $vt_before in front before and after"
  echo "FIGURE: VT switch before the freeze ($1): $(sed -n 's/.*switched in \([0-9]*\) ms.*/\1/p' "$2" | tail -n1) ms"
}
# fridged_writer_cycle NAME [vt]: `fridgectl hibernate` through fridged with
# HibernateWriter=fridge (NAME.pre.sh) and fridge-image-writer --serve on
# fridged's socket, across two boots; the cycle must end done with the
# writer's figures (a FIGURE line for NAME) in its message, its finished
# event's image-* keys and `fridgectl history`, the holder and the swap
# header as they were. vt: the writer on --console=vt, as its unit runs
# it: in the restored system the VT in front before is in front again by
# the time fridged says it resumed
fridged_writer_cycle() {
  swap_and_holder
  if [ "${2:-}" = vt ]; then
    vt_session
    serve_writer vt /run/writer.err
  else
    serve_writer
  fi
  fctl_hibernate
  [ "${2:-}" != vt ] || { cat /run/writer.err; vt_back "resumed" /run/writer.err; }
  [ $rc -eq 0 ] || fail "fridgectl hibernate exited with $rc"
  grep -q '"event":"finished","cycle":1,"result":"done"' /run/out.json || fail "cycle 1 did not finish done"
  grep -q '"event":"resumed","cycle":1' /run/out.json || fail "no Resumed for cycle 1"
  grep -q 'image written by fridge: [1-9][0-9.]* MiB' /run/out.json \
    || fail "the cycle's message has no figures of fridge's writer"
  grep -q 'the kernel wrote the image' /run/out.json && fail "the kernel's writer wrote the image"
  sed -n "s/.*\(image written by fridge[^\"]*\).*/FIGURE $1: \1/p" /run/out.json | head -n1
  # the figures are the cycle's record too: the finished event, the history
  grep -q '"image-writer":"fridge","image-raw-bytes":[1-9][0-9]*,"image-written-bytes":[1-9][0-9]*,"image-usec":[1-9]' \
    /run/out.json || fail "the finished event has no image-* figures of fridge's writer"
  fctl --no-pager history >/run/history.txt
  cat /run/history.txt
  grep -q ' image: [0-9.]* MiB written as [0-9.]* MiB ([0-9.]*x) in [0-9.]* s, [0-9]* MiB/s$' /run/history.txt \
    || fail "fridgectl history has no image line for cycle 1"
  sed -n "s/^ *\(image: .*\)/FIGURE $1 history: \1/p" /run/history.txt | head -n1
  [ "$(ask)" = "$holder $value" ] || fail "the holder does not answer with its value after the resume"
  swap_page0 /run/page0.after
  cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
  kill "$writer" "$holder"
  pass
}
# write_image [ARGS]: an image left valid on /dev/vda, the system running
# on, /dev/vda out of use (its header page in /run/page0.image)
write_image() {
  fridge-image-writer --snapshot=/dev/snapshot --write --resume-device=/dev/vda --after=unfreeze "$@" \
    >/run/write.out 2>/dev/ttyS0 || fail "fridge-image-writer --write --after=unfreeze $* exited with $?"
  cat /run/write.out
  swap_page0 /run/page0.image
  [ "$(swap_sig /run/page0.image)" = ULSUSPEND ] || fail "no fridge signature after the write"
  # as at boot, where fridge-resume runs before swapon (the kernel refuses
  # writes to an active swap device: ETXTBSY)
  swapoff /dev/vda || fail "swapoff /dev/vda failed"
}
# write_and_come_back AFTER: fridge-image-writer --write --after=AFTER to
# /dev/vda, the kernel's messages on the console meanwhile (for the host's
# vm-console-expect lines); it must come back resumed=1, its output in
# /run/write.out
write_and_come_back() {
  echo 7 >/proc/sys/kernel/printk
  fridge-image-writer --snapshot=/dev/snapshot --write --after="$1" --resume-device=/dev/vda \
    >/run/write.out 2>/dev/ttyS0
  rc=$?
  echo 4 >/proc/sys/kernel/printk
  echo "back: fridge-image-writer exited with $rc"
  cat /run/write.out
  [ $rc -eq 0 ] || fail "fridge-image-writer --write --after=$1 exited with $rc"
  [ "$(val /run/write.out resumed)" = 1 ] || fail "the writer did not come back resumed (no resumed=1)"
}
# two_boot_after NAME AFTER: fridge-image-writer --write --after=AFTER
# (platform, or suspend with the power cut in S3) across two boots (the
# kernel's messages on the console, for the host's vm-console-expect lines
# to find how the first boot ended); in the restored system the writer
# says resumed=1, the boot id is boot 1's and the holder answers
two_boot_after() {
  swap_and_holder
  [ "$(ask)" = "$holder $value" ] || fail "the holder does not answer before the hibernation"
  echo "holder $holder holds $value; /sys/power/disk: $(cat /sys/power/disk)"
  boot_id=$(cat /proc/sys/kernel/random/boot_id)
  write_and_come_back "$2"
  [ "$(cat /proc/sys/kernel/random/boot_id)" = "$boot_id" ] || fail "the boot id is not boot 1's"
  [ "$(ask)" = "$holder $value" ] || fail "the holder does not answer with its value after the resume"
  swap_page0 /run/page0.after
  cmp -s /run/page0.after /run/page0.mkswap || fail "the swap header page is not mkswap's byte for byte"
  echo "FIGURE $1: raw_bytes=$(val /run/write.out raw_bytes) write_ms=$(val /run/write.out write_ms)"
  kill "$holder"
  pass
}
# all_thawed WHEN N: no cgroup frozen nor asked to be (cgroup.freeze 0,
# cgroup.events frozen 0 everywhere), and fridged's log says it thawed
# what it froze at least N times (the holder's cgroup, fridge-test/app)
all_thawed() {
  for f in $(find /sys/fs/cgroup -name cgroup.freeze); do
    [ "$(cat "$f")" = 0 ] || fail "$1: $f is 1"
  done
  for f in $(find /sys/fs/cgroup -name cgroup.events); do
    grep -q '^frozen 1' "$f" && fail "$1: ${f%/cgroup.events} is frozen"
  done
  n=$(grep -c 'thawed [1-9][0-9]* cgroups' /run/fridged.log)
  [ "$n" -ge "$2" ] || fail "$1: fridged's log does not say it thawed the holder's cgroup: $(tail -n 20 /run/fridged.log)"
}
# writer_and_scratch_conf: for a NAME.pre.sh, before fridged starts:
# fridge's own writer, and a scratch cgroup of the test's own that the
# cycle freezes (the holder goes to fridge-test/app)
writer_and_scratch_conf() {
  printf '[Sleep]\nHibernateWriter=fridge\n[Freeze]\nRoots=fridge-test\n' >/etc/fridge/fridge.conf
  mkdir -p /sys/fs/cgroup/fridge-test/app
}
