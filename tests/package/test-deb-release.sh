#!/bin/bash
# The package on another Debian release: test-deb-release.sh SOURCE_ROOT RELEASE
# A chroot of RELEASE (mmdebstrap, which keeps its own apt configuration:
# the host's sources are never touched) with fridge's Build-Depends as
# debian/control names them, the tree built there as an unprivileged user
# (as buildds do) with its unit suite, and that release's lintian finding
# no error and no warning. Prints which unit tests skipped at the build and
# why: only what needs root or loop devices may.
set -euo pipefail
src=$1 release=$2
for t in mmdebstrap unshare setpriv; do
  command -v "$t" >/dev/null || { echo "SKIP: $t is not installed (tools/lib/setup.sh: FRIDGE_SYSTEM_PACKAGES)"; exit 77; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: not root (mmdebstrap and chroot need it)"; exit 77; }
work=$(mktemp -d /var/tmp/fridge-deb-"$release"-XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root

# The first alternative of each Build-Depends entry, without versions,
# architectures or build profiles: what a buildd of that release installs
deps=$(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$src/debian/control" | sed '$d' | sed 's/^Build-Depends://' \
       | tr '\n' ' ' | tr ',' '\n' | sed 's/|.*//; s/([^)]*)//g; s/\[[^]]*\]//g; s/<[^>]*>//g' \
       | awk 'NF { print $1 }' | paste -sd, -)
echo "$release: Build-Depends: $deps"
if ! mmdebstrap --variant=apt --include="build-essential,fakeroot,lintian,$deps" "$release" "$root" \
     >"$work/mmdebstrap.log" 2>&1; then
  tail -n 20 "$work/mmdebstrap.log"
  if grep -qE 'Failed to fetch|Could not resolve|Temporary failure|Connection failed' "$work/mmdebstrap.log"; then
    echo "SKIP: the $release mirror could not be reached"; exit 77
  fi
  echo "FAIL: mmdebstrap $release with the Build-Depends"; exit 1
fi

# The tree: tracked and new files, not the ignored build dirs
mkdir -p "$root/build/fridge"
(cd "$src" && git ls-files -z --cached --others --exclude-standard \
   | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
   | xargs -0 cp --parents -t "$root/build/fridge/")
chown -R 65534:65534 "$root/build"

# as nobody (Rules-Requires-Root: no), /proc and /dev from the host
in_chroot() {
  unshare --mount --propagation private sh -c \
    "mount -t proc proc '$root/proc' && mount --rbind /dev '$root/dev' && exec chroot '$root' \"\$@\"" sh "$@"
}
if ! in_chroot setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/build \
     sh -c 'cd /build/fridge && dpkg-buildpackage -us -uc -b' >"$work/build.log" 2>&1; then
  tail -n 40 "$work/build.log"; echo "FAIL: dpkg-buildpackage on $release"; exit 1
fi
# the unit suite's skips at the build, each with its reason
log=$(ls "$root"/build/fridge/obj-*/meson-logs/testlog.txt 2>/dev/null | head -1)
[ -n "$log" ] && grep -E '^ *[0-9]+/[0-9]+ .* SKIP' "$log" | sed "s/^/$release build: /" || true
[ -n "$log" ] && grep -E '^SKIP: |# SKIP ' "$log" | sort -u | sed "s/^/$release build: /" || true

version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
out=$(in_chroot lintian --fail-on error,warning --show-overrides "/build/fridge_${version}_amd64.changes" 2>&1) || {
  echo "$out"; echo "FAIL: $release's lintian reports errors or warnings"; exit 1; }
echo "$out" | grep -v '^running with root' || true

# units and the sleep hook where that release's systemd.pc puts them
unitdir=$(in_chroot pkg-config --variable=systemdsystemunitdir systemd)
list=$(dpkg-deb -c "$root/build/fridge_${version}_amd64.deb")
for f in ".$unitdir/fridged.service" ".$(dirname "$unitdir")/system-sleep/fridge"; do
  grep -q " $f\( ->.*\)\?\$" <<<"$list" || { echo "FAIL: the $release package lacks $f"; exit 1; }
done
dpkg-deb -I "$root/build/fridge_${version}_amd64.deb" postinst | grep -q 'deb-systemd-helper.*fridged.service' \
  || { echo "FAIL: on $release nothing enables fridged.service at install"; exit 1; }
echo "PASS: $release (units in $unitdir)"
