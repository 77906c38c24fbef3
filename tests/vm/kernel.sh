#!/usr/bin/env bash
# kernel.sh CACHE_DIR: makes sure CACHE_DIR/kernel holds Debian's current
# linux-image-*-amd64 for the qemu tests, fetched once and reused:
#   CACHE_DIR/kernel/vmlinuz          the bzImage (needed for real S3)
#   CACHE_DIR/kernel/vmlinux          the same kernel, uncompressed (fast boots)
#   CACHE_DIR/kernel/release          the kernel release, e.g. 6.1.0-57-amd64
#   CACHE_DIR/kernel/config           its boot/config-REL (update-initramfs
#                                     reads it in the system tier's guest)
#   CACHE_DIR/kernel/lib/modules/REL  its modules, with modules.dep
# The package is fetched with `apt-get download` and unpacked with
# `dpkg-deb -x`: nothing is installed on the host and its /boot is left alone.
# Exit status 77 (meson's "skipped") when the kernel cannot be had, with the
# reason on stderr; 1 on other errors.
set -euo pipefail

skip() { echo "SKIP: $*" >&2; exit 77; }
die() { echo "error: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 CACHE_DIR"
cache=$1
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
dest=$cache/kernel

ready() { [ -s "$dest/vmlinuz" ] && [ -s "$dest/vmlinux" ] && [ -s "$dest/release" ] && [ -s "$dest/config" ]; }

# One fetch at a time (a test run and tools/try --vm may share a cache).
exec 9>"$cache/.kernel.lock"
flock 9

if ready; then
  exit 0
fi

for t in apt-cache apt-get dpkg-deb xz od; do
  command -v "$t" >/dev/null || skip "$t not found: cannot fetch Debian's kernel"
done

# The versioned package linux-image-amd64 points to, e.g. linux-image-6.1.0-57-amd64.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null \
      | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)
[ -n "$pkg" ] || skip "apt-cache knows no linux-image-amd64 (no Debian package lists? try apt-get update)"

work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "fetching $pkg (apt-get download, dpkg-deb -x) into $dest" >&2
( cd "$work" && apt-get download -q "$pkg" >download.log 2>&1 ) || {
  # an empty or stale list: one update, then one more try
  if [ "$(id -u)" -eq 0 ] && apt-get update -qq >/dev/null 2>&1; then
    pkg2=$(apt-cache depends linux-image-amd64 2>/dev/null \
           | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n1)
    [ -n "$pkg2" ] && pkg=$pkg2
    ( cd "$work" && apt-get download -q "$pkg" >download.log 2>&1 )
  else
    false
  fi
} || { sed 's/^/  /' "$work/download.log" >&2; skip "apt-get download $pkg failed (no network?)"; }

deb=$(ls "$work"/*.deb 2>/dev/null | head -n1)
[ -n "$deb" ] || skip "apt-get download $pkg produced no .deb"
mkdir "$work/x"
dpkg-deb -x "$deb" "$work/x" || die "dpkg-deb -x $deb failed"
rm -f "$deb"

vmlinuz=$(ls "$work"/x/boot/vmlinuz-* 2>/dev/null | head -n1)
[ -n "$vmlinuz" ] || die "$pkg holds no boot/vmlinuz-*"
release=${vmlinuz##*/vmlinuz-}
[ -d "$work/x/lib/modules/$release" ] || die "$pkg holds no lib/modules/$release"

mkdir -p "$work/k/lib/modules"
mv "$vmlinuz" "$work/k/vmlinuz"
mv "$work/x/boot/config-$release" "$work/k/config" || die "$pkg holds no boot/config-$release"
mv "$work/x/lib/modules/$release" "$work/k/lib/modules/$release"
# Drop the big module trees no guest here needs (sound, networking, GPUs,
# cameras, ...): about 250 of the 430 MB; then depmod for a consistent
# modules.dep.
m=$work/k/lib/modules/$release/kernel
rm -rf "$m/sound" "$m/net" "$m/drivers/net" "$m/drivers/gpu" "$m/drivers/media" \
       "$m/drivers/infiniband" "$m/drivers/iio" "$m/drivers/staging" "$m/drivers/bluetooth" \
       "$m/drivers/hwmon" "$m/drivers/usb" "$m/drivers/isdn" "$m/drivers/mtd"
command -v depmod >/dev/null || PATH=$PATH:/sbin:/usr/sbin
depmod -b "$work/k" "$release" || die "depmod -b $work/k $release failed"

# extract-vmlinux: the bzImage carries an xz stream (magic FD 37 7A 58 5A 00);
# decompress from the first offset where that gives an ELF file.
found=0
for off in $(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$work/k/vmlinuz" | cut -d: -f1); do
  tail -c +$((off + 1)) "$work/k/vmlinuz" | xz -dc >"$work/k/vmlinux" 2>/dev/null || true
  if [ "$(od -An -c -N4 "$work/k/vmlinux" 2>/dev/null | tr -d ' ')" = '177ELF' ]; then
    found=1
    break
  fi
done
[ $found -eq 1 ] || die "no xz-compressed ELF kernel found in $vmlinuz"

echo "$release" >"$work/k/release"
echo "$pkg" >"$work/k/package"
rm -rf "$dest"
mv "$work/k" "$dest"
echo "kernel $release ready in $dest" >&2
