#!/bin/bash
# The Debian package: dpkg-buildpackage -us -uc -b builds it from a copy of
# the tree, lintian finds no error and no warning (overrides carry their
# reason), a second build (nocheck) gives byte-identical .debs, and the package holds
# what meson install installs. Usage: test-deb.sh SOURCE_ROOT
set -euo pipefail
src=$1
for t in dpkg-buildpackage lintian dh fakeroot; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (tools/lib/setup.sh: FRIDGE_PACKAGE_PACKAGES)"; exit 77; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)

# build DIR [DEB_BUILD_OPTIONS]: the package from the tree (build-debs.sh)
build() {
  "$(dirname "$0")/build-debs.sh" "$src" "$work/$1" "${2:-}" || { echo "FAIL: dpkg-buildpackage in $1"; exit 1; }
}
# the first with its unit suite; the second without (nocheck builds no
# test either), which must not change a byte of what is shipped
build one
build two nocheck

debs=$(cd "$work/one" && ls ./*.deb)
echo "built: $debs"
for d in $debs; do
  if ! cmp -s "$work/one/$d" "$work/two/$d"; then
    echo "FAIL: $d differs between two builds (not reproducible)"
    exit 1
  fi
done
echo "reproducible: two builds gave byte-identical .debs"

out=$(lintian --fail-on error,warning --show-overrides "$work/one"/*.changes 2>&1) || {
  echo "$out"; echo "FAIL: lintian reports errors or warnings"; exit 1; }
echo "$out" | grep -v '^running with root' || true
if echo "$out" | grep -q '^O: ' && ! grep -q '^#' "$src"/debian/*.lintian-overrides; then
  echo "FAIL: a lintian override without a comment saying why"; exit 1
fi

# What the package holds: the files a user needs
list=$(dpkg-deb -c "$work/one/fridge_${version}_amd64.deb")
# units and the hook where this release's systemd.pc says (debian/rules)
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
sleepdir=$(pkg-config --variable=systemdsleepdir systemd)
grep -q " .$sleepdir/fridge -> .*bin/fridgectl\$" <<<"$list" || { echo "FAIL: the package lacks $sleepdir/fridge"; exit 1; }
for f in ./usr/libexec/fridged ./usr/bin/fridgectl ".$unitdir/fridged.service" \
         ./usr/share/dbus-1/system.d/io.fridge.Fridge1.conf \
         ./usr/share/polkit-1/actions/io.fridge.Fridge1.policy ./etc/fridge/fridge.conf \
         ./usr/share/man/man8/fridged.8.gz ./usr/share/doc/fridge/copyright \
         ./usr/share/locale/de/LC_MESSAGES/fridge.mo ./usr/libexec/fridge-resume \
         ./usr/share/man/man8/fridge-resume.8.gz ./usr/share/initramfs-tools/hooks/fridge \
         ./usr/share/initramfs-tools/scripts/local-premount/fridge; do
  grep -q " $f\$" <<<"$list" || { echo "FAIL: the package lacks $f"; exit 1; }
done
list=$(dpkg-deb -c "$work/one/fridge-agent_${version}_amd64.deb")
for f in ./usr/bin/fridge-agent ./usr/lib/systemd/user/fridge-agent.service \
         ./etc/xdg/autostart/fridge-agent.desktop ./usr/share/man/man1/fridge-agent.1.gz; do
  grep -q " $f\$" <<<"$list" || { echo "FAIL: fridge-agent lacks $f"; exit 1; }
done
dpkg-deb -I "$work/one/fridge_${version}_amd64.deb" conffiles | grep -qx /etc/fridge/fridge.conf \
  || { echo "FAIL: /etc/fridge/fridge.conf is not a conffile"; exit 1; }
# dh_installinitramfs's trigger, for the hook: the initramfs gets fridge-resume at install
dpkg-deb -I "$work/one/fridge_${version}_amd64.deb" triggers | grep -qx "activate-noawait update-initramfs" \
  || { echo "FAIL: the package does not trigger update-initramfs"; exit 1; }
echo "PASS"
