# Scenario 13d (issue 17): fridged's Cancel racing fridge-image-writer's
# freeze, with the real writer (--serve --console=vt, tty1 held by a
# compositor that never gives it up: vt-owner never). The holder is in a
# scratch cgroup the cycle freezes. Two cycles, one boot:
#  1. before the freeze: the writer stopped (SIGSTOP) as if slow to start;
#     `fridgectl hibernate` until fridged has connected and asked, then
#     `fridgectl cancel`, then the writer goes on: it finds the cancel
#     before it freezes anything ("before the freeze");
#  2. racing it: the writer asked, past its last check before the freeze
#     and switching VTs (the compositor was asked for tty1: "not
#     released"), stopped there; Cancel; the writer goes on into
#     SNAPSHOT_FREEZE with the cancel unread, makes the snapshot, reads
#     the cancel right after it and unfreezes ("before the write began").
# Each time: fridgectl cancel succeeds, the cycle ends aborted with the
# writer's word on it (fridged waited for it), no Resumed, the system runs
# (the holder answers), every cgroup is thawed (fridged's log says it
# thawed the holder's), the swap header is mkswap's page byte for byte (no
# image), and the kernel's writer never ran (the VM would be off).
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 256M
# vm-binaries: FRIDGE_IMAGE_WRITER VT_OWNER
# vm-timeout: 200
. /usr/lib/vm/uhib-lib.sh
swap_and_holder
echo "$holder" >/sys/fs/cgroup/fridge-test/app/cgroup.procs || fail "cannot move the holder into fridge-test/app"
vt_session
vt-owner /dev/tty1 never >/run/owner.out 2>&1 &
owner=$!
i=0
until grep -q '^ready$' /run/owner.out; do
  i=$((i + 1)); [ $i -le 100 ] || fail "vt-owner does not hold tty1: $(cat /run/owner.out)"
  sleep 0.1
done
serve_writer vt /run/writer.err
# a fail while the writer is stopped: it must not go on and hibernate, nor
# leave fridged waiting on it
trap 'kill -KILL "$writer" 2>/dev/null' EXIT

# hibernate_bg N: `fridgectl hibernate` in the background, its events in /run/out.N.json
hibernate_bg() {
  # (away from the console's pipe, which a fail would otherwise wait on)
  fctl --json --no-progress hibernate >"/run/out.$1.json" 2>"/run/err.$1" &
  fpid=$!
}
# cancel_now: fridgectl cancel, which must succeed
cancel_now() {
  fctl cancel || fail "fridgectl cancel exited with $?"
  echo "cancel sent ($1)"
}
# cancelled N SAYS: cycle N ended aborted with the writer's SAYS, and nothing is left of it
cancelled() {
  wait "$fpid"
  echo "fridgectl hibernate (cycle $1) exited with $?"
  cat "/run/out.$1.json" "/run/err.$1"
  grep -q "\"event\":\"finished\",\"cycle\":$1,\"result\":\"aborted\"" "/run/out.$1.json" \
    || fail "cycle $1 did not finish aborted"
  grep -q "the image write was cancelled: $2" "/run/out.$1.json" \
    || fail "cycle $1 does not end with the writer's \"$2\""
  grep -q '"event":"resumed"' "/run/out.$1.json" && fail "a Resumed for cycle $1, which was cancelled"
  [ "$(ask)" = "$holder $value" ] || fail "the holder does not answer after cycle $1"
  all_thawed "after cycle $1" "$1"
  swap_page0 /run/page0.after
  cmp -s /run/page0.after /run/page0.mkswap || fail "after cycle $1 the swap header page is not mkswap's"
  grep -q '^/dev/vda ' /proc/swaps || fail "/dev/vda is no longer in use as swap: $(cat /proc/swaps)"
  kill -0 "$writer" || fail "fridge-image-writer --serve is gone after cycle $1"
}

# 1. the cancel before the writer's freeze, the request already in its socket
kill -STOP "$writer"
hibernate_bg 1
i=0
# fridged's connection, not yet accepted: the listener's path (as bound:
# --listen binds NAME.new and renames it), state connecting (02; the
# listener itself is 01)
until awk '$6 == "02" && $8 ~ /image-writer\.sock/' /proc/net/unix | grep -q .; do
  i=$((i + 1)); [ $i -le 300 ] || fail "fridged never connected to the writer: $(grep -e St -e image-writer /proc/net/unix)"
  sleep 0.1
done
sleep 0.5
cancel_now "the writer stopped, fridged's request unread"
kill -CONT "$writer"
cancelled 1 "fridged cancelled the write before the freeze"

# 2. the cancel after the writer's last check before its freeze
hibernate_bg 2
i=0
until grep -q '^not released$' /run/owner.out; do
  i=$((i + 1)); [ $i -le 300 ] || fail "the writer never asked the compositor for tty1: $(cat /run/writer.err)"
  sleep 0.02
done
kill -STOP "$writer"
cancel_now "the writer stopped in its VT switch, just before SNAPSHOT_FREEZE"
kill -CONT "$writer"
cancelled 2 "fridged cancelled the write before the write began"
cat /run/writer.err
grep -q 'freezing user space' /run/writer.err || fail "the writer never froze user space in cycle 2"
kill "$writer" "$holder" "$owner"
pass
