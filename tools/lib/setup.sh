# Shared by tools/try, tools/test and tools/bench: install what is missing,
# configure and build. Sourced, not run.

FRIDGE_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

FRIDGE_PACKAGES=(
  meson ninja-build gcc clang pkg-config python3
  libsystemd-dev libudev-dev libglib2.0-dev libfuse3-dev fuse3 bindfs
  libumockdev-dev umockdev
  # hibernate/: the image's compression and checksums; the initramfs read
  # before a write (gzip and xz besides)
  libzstd-dev liblz4-dev libxxhash-dev zlib1g-dev liblzma-dev
  dbus libxml2-utils librsvg2-bin imagemagick
  systemd groff-base man-db
  # po/: xgettext, msgfmt, msgcmp (the .mo files, the merged polkit policy
  # and the test that keeps fridge.pot current)
  gettext
  # tests/integration/test-desktop.c: a display, a terminal, a notification
  # server, typing and screenshots (xwd), a notification to wait for dunst,
  # and convert for the PNG it keeps
  xvfb xterm xdotool dunst x11-apps libnotify-bin imagemagick
  # tests/integration/test-terminal.c: the terminal chain through the real
  # multiplexers and sudo (script(1), from bsdutils, is the emulator)
  tmux screen sudo
  # tests/integration/test-agent.c: the notification server mock
  python3-dbusmock
  # tests/unit/test-docs.c: the zsh completion, parsed and run; the pager
  # test runs fridgectl on a terminal with script(1)
  zsh bsdutils
)

# Only for the real-kernel tests in qemu (tests/vm, tools/try --vm):
# installed by fridge_ensure_vm_packages, not part of the default list.
FRIDGE_VM_PACKAGES=(qemu-system-x86 busybox-static cpio xz-utils kmod)
# And the whole-system tier (tests/system, tools/try --system) on top:
# the guest's root file system is built with mmdebstrap, its image with
# mkfs.ext4 -d; fridge goes in as its own .debs (dpkg-buildpackage).
FRIDGE_SYSTEM_PACKAGES=(mmdebstrap e2fsprogs debhelper dpkg-dev fakeroot)
# The real shells (tests/integration/test-shells.c, the desktop suite):
# gnome-shell headless with its notification proxy (gjs), plasmashell
# under Xvfb, sway headless with foot, mako, Xwayland, wtype and grim;
# about 800 MB, so installed by fridge_ensure_desktop_packages only
FRIDGE_DESKTOP_PACKAGES=(gnome-shell gjs libgl1-mesa-dri fonts-dejavu-core plasma-workspace plasma-desktop
  sway foot mako-notifier xwayland wtype grim)
# The Debian package (tests/package): dpkg-buildpackage and lintian, and
# the Build-Depends the main list lacks (initramfs-tools-core: the unit
# suite's initramfs case at the package build)
FRIDGE_PACKAGE_PACKAGES=(debhelper dpkg-dev fakeroot lintian initramfs-tools-core)

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

fridge_ensure_packages() {
  local missing=() p
  for p in "${FRIDGE_PACKAGES[@]}" "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  [ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}); run as root or install them"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed"
}

# fridge_build DIR [meson options...]: configure once, then build.
fridge_build() {
  local dir=$1; shift
  if [ ! -f "$dir/build.ninja" ]; then
    say "configuring $dir"
    meson setup "$dir" "$FRIDGE_SRC" "$@" >"$dir.setup.log" 2>&1 \
      || { cat "$dir.setup.log" >&2; die "meson setup $dir failed"; }
  fi
  say "building $dir"
  ninja -C "$dir" >"$dir.build.log" 2>&1 || { cat "$dir.build.log" >&2; die "build in $dir failed"; }
}

# fridge_ensure_vm_packages: what the qemu-based tests need on the host.
fridge_ensure_vm_packages() {
  local FRIDGE_PACKAGES=()
  fridge_ensure_packages "${FRIDGE_VM_PACKAGES[@]}" "$@"
}

fridge_ensure_package_packages() {
  local FRIDGE_PACKAGES=()
  fridge_ensure_packages "${FRIDGE_PACKAGE_PACKAGES[@]}"
}

fridge_ensure_desktop_packages() {
  local FRIDGE_PACKAGES=()
  fridge_ensure_packages "${FRIDGE_DESKTOP_PACKAGES[@]}"
}

fridge_ensure_system_packages() {
  fridge_ensure_vm_packages "${FRIDGE_SYSTEM_PACKAGES[@]}"
}
