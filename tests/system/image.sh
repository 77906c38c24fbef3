#!/usr/bin/env bash
# image.sh CACHE_DIR KERNEL_DIR [uninstalled]: makes CACHE_DIR/root.img (ext4, no loop
# mounts: mkfs.ext4 -d) and CACHE_DIR/initrd.gz for the system tier:
#  - the Debian root file system from rootfs.sh,
#  - fridge built with --prefix=/usr and installed the way a package would
#    (meson install --destdir), from CACHE_DIR/build,
#  - the guest kernel's modules, the test driver (guest/) and scenarios,
#  - a fixed machine-id (else every -snapshot boot is a first boot), root
#    logged in on the serial console for tools/try --system, and boot-only
#    units masked.
# Rebuilt only when something in it changed (CACHE_DIR/image.stamp).
# With "uninstalled": CACHE_DIR/root-uninstalled.img, where fridge was
# installed into the root and then removed again by the documented
# uninstall step (ninja -C BUILD uninstall), every file of meson's install
# log checked gone; the guest then proves the machine still sleeps.
set -euo pipefail
die() { echo "error: $*" >&2; exit 1; }
[ $# -ge 2 ] || die "usage: $0 CACHE_DIR KERNEL_DIR [uninstalled]"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
cache=$(cd "$1" && pwd)
kdir=$(cd "$2" && pwd)
rel=$(cat "$kdir/release")
variant=${3:-}
img=$cache/root${variant:+-$variant}.img

exec 9>"$cache/.image.lock"
flock 9

# fridge, as a package would lay it out
if [ ! -f "$cache/build/build.ninja" ]; then
  meson setup "$cache/build" "$src" --prefix=/usr --sysconfdir=/etc --localstatedir=/var \
    --buildtype=debugoptimized -Dtests=false >"$cache/meson-setup.log" 2>&1 \
    || { cat "$cache/meson-setup.log" >&2; die "meson setup of the guest build failed"; }
fi
ninja -C "$cache/build" -j2 >"$cache/ninja.log" 2>&1 || { tail -n 30 "$cache/ninja.log" >&2; die "guest build failed"; }
rm -rf "$cache/fridge-root"
meson install -C "$cache/build" --no-rebuild --destdir "$cache/fridge-root" >"$cache/install.log" 2>&1 \
  || { cat "$cache/install.log" >&2; die "meson install failed"; }

stamp=$( (cat "$cache/rootfs.stamp"; echo "$rel"; cd "$cache/fridge-root" && find . -type f -print0 | sort -z | xargs -0 sha1sum;
          cd "$here" && find guest scenarios image.sh guest-init.sh ../../debian/tests -type f -print0 | sort -z | xargs -0 sha1sum) | sha1sum | cut -d' ' -f1)
if [ -f "$img.stamp" ] && [ "$(cat "$img.stamp")" = "$stamp" ] && [ -s "$img" ] && [ -s "$cache/initrd.gz" ]; then
  exit 0
fi
t0=$SECONDS
st=$cache/staging
rm -rf "$st"
cp -a "$cache/rootfs" "$st"
if [ "$variant" = uninstalled ]; then
  # the documented step, on what meson install laid into this root
  meson install -C "$cache/build" --no-rebuild --destdir "$st" >"$cache/install-uninstalled.log" 2>&1
  ninja -C "$cache/build" uninstall >>"$cache/install-uninstalled.log" 2>&1 || die "ninja uninstall failed"
  n=0
  while read -r f; do
    case $f in "#"*|"") continue ;; esac
    [ ! -e "$f" ] && [ ! -L "$f" ] || die "uninstall left $f"
    n=$((n + 1))
  done <"$cache/build/meson-logs/install-log.txt"
  [ $n -gt 0 ] || die "the install log lists no files"
  mkdir -p "$st/usr/lib/fridge-system-test"
  echo "$n" >"$st/usr/lib/fridge-system-test/uninstalled-files"
else
  cp -a "$cache/fridge-root/." "$st/"
fi
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

size=$(( $(du -sm "$st" | cut -f1) * 13 / 10 + 128 ))
rm -f "$img"
mkfs.ext4 -q -F -L root -d "$st" "$img" "${size}M"
rm -rf "$st"

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
