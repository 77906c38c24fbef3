# Shared by the hibernate-initramfs* scenarios (sourced; issue 17): an
# installed machine (run-scenario.sh's "system-boot: initramfs-tools")
# hibernating through fridge's own writer and booting again through its
# own initramfs-tools initrd. /dev/vdb is the swap area fstab turned on
# by UUID; the root persists between the boots.
state=/var/lib/fridge-system-test
# first_boot_or BOOT2_FN: the second boot, when the first boot's world was
# not restored and this scenario starts again from its top, calls BOOT2_FN
# (a resumed first boot goes on where it hibernated instead)
first_boot_or() {
  if [ -e $state/boot1 ]; then
    echo "this is a fresh boot after boot 1 ($(cat $state/boot1)) hibernated: nothing was resumed"
    "$1"
    exit
  fi
  mkdir -p $state
  echo "boot id $(cat /proc/sys/kernel/random/boot_id)" >$state/boot1
  sync
}
# swap_page0 FILE: the swap area's first page as the disk has it now
swap_page0() {
  sync
  echo 3 >/proc/sys/vm/drop_caches
  dd if=/dev/vdb of="$1" bs=4096 count=1 iflag=direct 2>/dev/null
}
# swap_on_vdb: the swap area is the one fstab names, turned on at boot
swap_on_vdb() {
  swapon --show=NAME --noheadings | grep -qx /dev/vdb || fail "/dev/vdb is not in use as swap: $(swapon --show)"
  uuid=$(sed -n 's/^UUID=\([^ ]*\) none swap.*/\1/p' /etc/fstab)
  [ "$(blkid -o value -s TYPE /dev/vdb)" = swap ] || fail "blkid does not see a swap area on /dev/vdb: $(blkid /dev/vdb)"
  [ "$(blkid -o value -s UUID /dev/vdb)" = "$uuid" ] || fail "/dev/vdb's UUID is not fstab's $uuid: $(blkid /dev/vdb)"
  echo "swap: /dev/vdb ($uuid) in use, as fstab and RESUME= name it"
}
# use_fridges_writer: what a user writes to have fridge write the image
# (Driver=direct: a hibernation logind sleeps is the kernel's to write)
use_fridges_writer() {
  mkdir -p /etc/fridge/fridge.conf.d
  printf '[Sleep]\nDriver=direct\nHibernateWriter=fridge\n' >/etc/fridge/fridge.conf.d/50-hibernate.conf
  systemctl try-restart fridged.service
  fridgectl status >/run/status.txt || fail "fridgectl status failed"
  grep -E 'HibernateWriter' /run/status.txt
  grep -q 'HibernateWriter: fridge' /run/status.txt || fail "fridged will not use fridge's writer: $(cat /run/status.txt)"
  # fridged asked the writer at its start (the socket started it): what
  # it found in this machine's own initrd, update-initramfs's
  for _ in $(seq 120); do
    journalctl -b -o cat -u fridged.service | grep 'fridge-image-writer can.* write a hibernation image' >/run/verdict.txt \
      && break
    sleep 0.5
  done
  cat /run/verdict.txt
  grep -q "can write a hibernation image (initramfs /boot/initrd.img-$(uname -r))" /run/verdict.txt \
    || fail "fridge-image-writer's check of the initrd did not say it can write: $(cat /run/verdict.txt)"
  fridgectl status | grep -q 'HibernateWriter: fridge' || fail "after the writer's check, fridged will not use its writer"
}
# holder_and_file: a process holding a random value in its memory
# ($holder, $value; `ask` prints its answer "PID VALUE") and a file on the
# root written just before the hibernation, not synced ($data, its copy
# in /run)
holder_and_file() {
  value=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  mkfifo /run/ask /run/answer
  sh -c 'v=$1; while read -r q </run/ask; do echo "$$ $v" >/run/answer; done' holder "$value" >/dev/null 2>&1 &
  holder=$!
  data=$state/data
  head -c 1048576 /dev/urandom >/run/data.copy
  cp /run/data.copy $data
}
ask() { echo "?" >/run/ask; read -r a </run/answer; echo "$a"; }
# hibernate: `fridgectl hibernate`, its events in /run/out.json, status in $rc
hibernate() {
  rc=0
  fridgectl --json --no-progress hibernate >/run/out.json || rc=$?
  echo "fridgectl hibernate exited with $rc"
  cat /run/out.json
}
# hibernate_boot1: boot 1 up to the power-off: the swap in use, the
# writer's socket listening and its service not yet started, fridge's
# writer configured, mkswap's page kept ($state/page0.mkswap), the holder
# and the file; returns in the resumed world (or if nothing powered off)
hibernate_boot1() {
  swap_on_vdb
  systemctl is-active -q fridge-image-writer.socket \
    || fail "fridge-image-writer.socket is not listening: $(systemctl status fridge-image-writer.socket)"
  systemctl is-active -q fridge-image-writer.service && fail "fridge-image-writer.service runs before anyone asked for it"
  use_fridges_writer
  swap_page0 $state/page0.mkswap
  holder_and_file
  hibernate
}
# writer_on_serial: the writer's bar and keys on the serial line (the
# host reads the one and types the other), as an admin would set it
writer_on_serial() {
  mkdir -p /etc/systemd/system/fridge-image-writer.service.d
  printf '[Service]\nExecStart=\nExecStart=/usr/libexec/fridge-image-writer --serve --snapshot=/dev/snapshot --console=/dev/ttyS0\n' \
    >/etc/systemd/system/fridge-image-writer.service.d/50-serial.conf
  systemctl daemon-reload
}
# still_running WHEN: after an aborted write the machine runs on: no
# cgroup frozen, the holder answers, the swap area mkswap's and in use
still_running() {
  frozen=$(grep -l '^frozen 1' $(find /sys/fs/cgroup -name cgroup.events) 2>/dev/null || true)
  [ -z "$frozen" ] || fail "$1: cgroups left frozen: $frozen"
  [ "$(ask)" = "$holder $value" ] || fail "$1: the holder does not answer with its value"
  swap_page0 /run/page0.now
  cmp -s /run/page0.now $state/page0.mkswap || fail "$1: the swap header page is not mkswap's byte for byte"
  swap_on_vdb
  echo "$1: running on, nothing frozen, the holder answers, the swap area intact"
}
