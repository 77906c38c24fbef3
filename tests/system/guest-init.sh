#!/bin/sh
# The guest's initrd /init (busybox): load the disk and file system
# modules, mount /dev/vda and hand over to systemd. qemu's -snapshot keeps
# the image clean, so it is mounted read-write.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r ko; do insmod "/lib/modules/$ko" 2>/dev/null; done </etc/modules-load
i=0
until [ -b /dev/vda ]; do i=$((i + 1)); [ $i -le 100 ] || break; sleep 0.05; done
mkdir -p /newroot
if ! mount -t ext4 -o rw /dev/vda /newroot; then
  echo "FRIDGE-RESULT: FAIL initrd: cannot mount /dev/vda"
  poweroff -f
fi
umount /proc /sys
mount --move /dev /newroot/dev 2>/dev/null || umount /dev
exec switch_root /newroot /sbin/init
