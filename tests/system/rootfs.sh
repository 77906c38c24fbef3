#!/usr/bin/env bash
# rootfs.sh CACHE_DIR: makes sure CACHE_DIR/rootfs holds a minimal Debian 12
# system for the guest (systemd as PID 1, logind, polkitd, udev, bindfs,
# fridge's runtime libraries, initramfs-tools with busybox and zstd for the
# scenarios that boot the guest's own initrd: image.sh --initramfs-tools), built with mmdebstrap from the host's apt
# sources, once; CACHE_DIR/rootfs.stamp names the package set it was made
# with. Never committed: the tests build it. Exit 77 when mmdebstrap cannot
# run here (the reason on stderr).
set -euo pipefail
skip() { echo "SKIP: $*" >&2; exit 77; }
die() { echo "error: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: $0 CACHE_DIR"
mkdir -p "$1"
cache=$(cd "$1" && pwd)

packages=systemd,systemd-sysv,dbus,dbus-bin,dbus-user-session,udev,polkitd,kmod,libpam-systemd,procps,util-linux,passwd,bindfs,fuse3,libglib2.0-0,libfuse3-3,libxml2-utils,initramfs-tools,busybox,zstd
stamp="bookworm minbase $packages"

exec 9>"$cache/.rootfs.lock"
flock 9
if [ -f "$cache/rootfs.stamp" ] && [ "$(cat "$cache/rootfs.stamp")" = "$stamp" ] && [ -x "$cache/rootfs/sbin/init" ]; then
  exit 0
fi
command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed (tools/lib/setup.sh: FRIDGE_SYSTEM_PACKAGES)"
sources=/etc/apt/sources.list.d/debian.sources
[ -f "$sources" ] || sources=/etc/apt/sources.list
[ -f "$sources" ] || skip "no apt sources on the host to build the guest from"

rm -rf "$cache/rootfs" "$cache/rootfs.stamp"
t0=$SECONDS
if ! mmdebstrap --mode=root --variant=minbase --include="$packages" \
      --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
      --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
      bookworm "$cache/rootfs.tmp" "$sources" >"$cache/mmdebstrap.log" 2>&1; then
  tail -n 20 "$cache/mmdebstrap.log" >&2
  rm -rf "$cache/rootfs.tmp"
  skip "mmdebstrap failed (no Debian mirror reachable?); see $cache/mmdebstrap.log"
fi
mv "$cache/rootfs.tmp" "$cache/rootfs"
echo "$stamp" >"$cache/rootfs.stamp"
echo "rootfs: built in $((SECONDS - t0)) s, $(du -sh "$cache/rootfs" | cut -f1)" >&2
