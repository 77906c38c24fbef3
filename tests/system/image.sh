#!/usr/bin/env bash
# image.sh [--initramfs-tools] CACHE_DIR KERNEL_DIR: makes CACHE_DIR/root.img
# (ext4, no loop mounts: mkfs.ext4 -d) and CACHE_DIR/initrd.gz for the
# system tier:
#  - the Debian root file system from rootfs.sh,
#  - fridge's own .debs (fridge, fridge-agent), built from the tree with
#    dpkg-buildpackage (tests/package/build-debs.sh, once per tree state,
#    in CACHE_DIR/debs) and installed with dpkg -i chrooted into the root,
#    maintainer scripts and all, as on a user's machine,
#  - test-only, not part of the package: the guest kernel's modules, the
#    test driver (guest/), its desktop client and the scenarios, all below
#    /usr/lib/fridge-system-test and in fridge-system-test.service,
#  - a fixed machine-id (else every -snapshot boot is a first boot), root
#    logged in on the serial console for tools/try --system, and boot-only
#    units masked.
# With --initramfs-tools, also the root a user's installed machine has
# (for scenarios that boot it twice, hibernating in between):
# CACHE_DIR/root-itools.img, the same root plus the swap area in
# /etc/fstab and initramfs-tools' RESUME=UUID= (both the fixed UUID in
# CACHE_DIR/swap-uuid, which run-scenario.sh gives the swap disk), and the
# guest's own /boot/initrd.img-REL, made chrooted by update-initramfs with
# fridge's hook and local-premount script in it (checked with
# lsinitramfs), copied to CACHE_DIR/initrd-itools.img for qemu's -initrd.
# Each is rebuilt only when something in it changed (its .stamp).
set -euo pipefail
die() { echo "error: $*" >&2; exit 1; }
itools=0
[ "${1:-}" = --initramfs-tools ] && { itools=1; shift; }
[ $# -eq 2 ] || die "usage: $0 [--initramfs-tools] CACHE_DIR KERNEL_DIR"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
cache=$(cd "$1" && pwd)
kdir=$(cd "$2" && pwd)
rel=$(cat "$kdir/release")
img=$cache/root.img

exec 9>"$cache/.image.lock"
flock 9

# fridge as Debian packages: the test suite is not built into them (nocheck)
"$src/tests/package/build-debs.sh" "$src" "$cache/debs" "nocheck noddebs parallel=2" || die "the guest's .debs failed to build"
debs=$(cd "$cache/debs" && ls ./*.deb)

stamp=$( (cat "$cache/rootfs.stamp"; echo "$rel"; cd "$cache/debs" && sha1sum $debs;
          cd "$here" && find guest scenarios image.sh image-itools.sh guest-init.sh ../../debian/tests -type f -print0 | sort -z | xargs -0 sha1sum) | sha1sum | cut -d' ' -f1)
# fresh IMAGE INITRD: both there, made from this stamp
fresh() { [ -f "$1.stamp" ] && [ "$(cat "$1.stamp")" = "$stamp" ] && [ -s "$1" ] && [ -s "$2" ]; }
need_plain=1 need_itools=0
fresh "$img" "$cache/initrd.gz" && need_plain=0
[ $itools -eq 0 ] || fresh "$cache/root-itools.img" "$cache/initrd-itools.img" || need_itools=1
[ $need_plain -eq 1 ] || [ $need_itools -eq 1 ] || exit 0
t0=$SECONDS
st=$cache/staging
rm -rf "$st"
cp -a "$cache/rootfs" "$st"
# dpkg -i, not apt: no network; a dependency the root lacks fails here, by name.
# The root was made leaving out man pages, docs and locales (rootfs.sh's
# path-exclude, kept in dpkg.cfg.d); fridge's package is installed whole, as
# on a user's machine, so the autopkgtest finds its man pages and catalog
grep -l '^path-exclude' "$st"/etc/dpkg/dpkg.cfg.d/* 2>/dev/null | xargs -r rm -f
mkdir -p "$st/tmp/fridge-debs"
cp "$cache/debs"/*.deb "$st/tmp/fridge-debs/"
chroot "$st" dpkg -i $(cd "$cache/debs" && printf '/tmp/fridge-debs/%s ' *.deb) >"$cache/dpkg.log" 2>&1 \
  || { cat "$cache/dpkg.log" >&2; die "dpkg -i of fridge's .debs in the guest's root failed"; }
rm -rf "$st/tmp/fridge-debs"
mkdir -p "$st/lib/modules"
cp -a "$kdir/lib/modules/$rel" "$st/lib/modules/"

# the test driver
install -D -m 755 "$here/guest/run" "$st/usr/lib/fridge-system-test/run"
install -D -m 644 "$here/guest/lib.sh" "$st/usr/lib/fridge-system-test/lib.sh"
# the host's libsystemd is the guest's (same Debian release)
cc -O2 -Wall -Werror -o "$st/usr/lib/fridge-system-test/desktop-client" "$here/guest/desktop-client.c" \
  $(pkg-config --cflags --libs libsystemd) || die "cannot build the desktop client"
mkdir -p "$st/usr/lib/fridge-system-test/scenarios"
cp "$here"/scenarios/*.sh "$st/usr/lib/fridge-system-test/scenarios/"
# the package's autopkgtests, run by the autopkgtest scenario against what is installed
mkdir -p "$st/usr/lib/fridge-system-test/autopkgtest"
cp "$here"/../../debian/tests/* "$st/usr/lib/fridge-system-test/autopkgtest/"
install -D -m 644 "$here/guest/fridge-system-test.service" "$st/etc/systemd/system/fridge-system-test.service"
mkdir -p "$st/etc/systemd/system/multi-user.target.wants"
ln -sf ../fridge-system-test.service "$st/etc/systemd/system/multi-user.target.wants/fridge-system-test.service"

# a machine that boots the same way every time, quickly
echo 0123456789abcdef0123456789abcdef >"$st/etc/machine-id"
echo fridge-guest >"$st/etc/hostname"
: >"$st/etc/fstab"
mkdir -p "$st/etc/systemd/system/serial-getty@ttyS0.service.d"
cat >"$st/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'EOF_GETTY'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --noclear --keep-baud 115200,57600,38400,9600 %I $TERM
EOF_GETTY
for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer \
         systemd-timesyncd.service getty@tty1.service systemd-networkd-wait-online.service \
         systemd-tmpfiles-clean.timer man-db.timer; do
  ln -sf /dev/null "$st/etc/systemd/system/$u"
done
sed -i 's/^root:[^:]*:/root::/' "$st/etc/shadow"

# mkfs_root IMAGE: the staging tree as an ext4 image, with room to write
mkfs_root() {
  size=$(( $(du -sm "$st" | cut -f1) * 13 / 10 + 128 ))
  rm -f "$1"
  mkfs.ext4 -q -F -L root -d "$st" "$1" "${size}M"
}
if [ $need_plain -eq 0 ]; then
  . "$here/image-itools.sh"
  rm -rf "$st"
  exit 0
fi
mkfs_root "$img"

# the initrd: busybox, the disk and ext4 modules, guest-init.sh
ird=$cache/initrd.staging
rm -rf "$ird"
mkdir -p "$ird"/{bin,etc,lib/modules,proc,sys,dev,newroot}
cp "$(command -v busybox)" "$ird/bin/busybox"
for app in sh mount umount insmod sleep switch_root poweroff mkdir cat echo; do ln -s busybox "$ird/bin/$app"; done
mdir=$kdir/lib/modules/$rel
declare -A seen=()
add_module() {
  local path=$1 dep
  [ -z "${seen[$path]:-}" ] || return 0
  seen[$path]=1
  for dep in $(grep -m1 "^$path:" "$mdir/modules.dep" | cut -d: -f2); do add_module "$dep"; done
  mkdir -p "$ird/lib/modules/$(dirname "$path")"
  cp "$mdir/$path" "$ird/lib/modules/$path"
  echo "$path" >>"$ird/etc/modules-load"
}
: >"$ird/etc/modules-load"
for m in virtio_pci virtio_blk crc32c_generic ext4; do
  add_module "$(grep -m1 -E "(^|/)$m\.ko:" "$mdir/modules.dep" | cut -d: -f1)"
done
install -m 755 "$here/guest-init.sh" "$ird/init"
( cd "$ird" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet ) | gzip -1 >"$cache/initrd.gz"
rm -rf "$ird"
echo "$stamp" >"$img.stamp"
echo "image: $(basename "$img") ${size} MiB and initrd built in $((SECONDS - t0)) s" >&2
[ $need_itools -eq 0 ] || . "$here/image-itools.sh"
rm -rf "$st"
