# Scenario 7: hibernation pre-flight on the real kernel. Each case must
# make CanHibernate "no" with a reason naming the missing piece, and
# Sleep(hibernate) be refused with HibernateNotReady before anything is
# flushed or frozen (fridged logs no cycle). Then one suitable swap with
# resume unset: CanHibernate "yes" (fridged will set resume itself; the
# hibernate-resume scenario does the whole trip).
# vm-kernel: vmlinux
# vm-modules: virtio_pci virtio_blk
# vm-disks: 8M 256M 256M
# vm-timeout: 120
for d in vda vdb vdc; do mkswap /dev/$d >/dev/null || fail "mkswap /dev/$d failed"; done

# expect_not_ready CASE WORDS: CanHibernateReason and the refusal say WORDS
expect_not_ready() {
  status=$(fctl status)
  echo "$1: $(echo "$status" | grep CanHibernate)"
  echo "$status" | grep -q "CanHibernate: no ($2" || fail "$1: CanHibernate does not say \"$2\""
  out=$(fctl --no-progress hibernate 2>&1)
  rc=$?
  echo "$1: fridgectl hibernate -> $rc: $out"
  [ $rc -eq 4 ] || fail "$1: fridgectl hibernate exited with $rc, not 4 (refused)"
  case $out in *HibernateNotReady*"$2"*) ;; *) fail "$1: the refusal is not HibernateNotReady naming \"$2\"" ;; esac
  grep -q 'Cycle .* started' /run/fridged.log && fail "$1: a cycle started: $(cat /run/fridged.log)"
  return 0
}

[ "$(cat /sys/power/resume)" = 0:0 ] || fail "resume is set before the test: $(cat /sys/power/resume)"
expect_not_ready "no swap" "no swap space is active"

swapon /dev/vda || fail "swapon /dev/vda"
# anonymous memory the 8 MiB swap cannot hold: a tmpfs file (shmem is anon)
head -c 33554432 /dev/zero >/dev/shm/ballast
expect_not_ready "small swap" "swap /dev/vda has 7 MiB free, but the image needs about"
rm -f /dev/shm/ballast
swapoff /dev/vda

swapon /dev/vdb && swapon /dev/vdc || fail "swapon /dev/vdb /dev/vdc"
expect_not_ready "two swaps, resume unset" "/sys/power/resume is not set and there are 2 swap partitions"
swapoff /dev/vdc

status=$(fctl status)
echo "one swap: $(echo "$status" | grep CanHibernate)"
echo "$status" | grep -q 'CanHibernate: yes' || fail "one big swap: CanHibernate is not yes"
[ "$(cat /sys/power/resume)" = 0:0 ] || fail "asking changed resume: $(cat /sys/power/resume)"
pass
