#!/bin/bash
# build-debs.sh SOURCE_ROOT DIR [DEB_BUILD_OPTIONS]: builds fridge's .debs
# with `dpkg-buildpackage -us -uc -b` from a copy of the tree (tracked and
# new files, not the ignored build dirs) in DIR/fridge-VERSION; the .debs
# land in DIR, the build's output in DIR/build.log. DIR/source.sha1 names
# the tree state they were built from: when it matches the tree, nothing is
# built again (the system tier builds its guest's package once per state).
# Shared by tests/package/test-deb.sh and tests/system/image.sh.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 SOURCE_ROOT DIR [DEB_BUILD_OPTIONS]" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2"
dir=$(cd "$2" && pwd)
opts=${3:-}
version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
tree=$dir/fridge-$version

rm -rf "$dir/tree.new"
mkdir -p "$dir/tree.new"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  # files git knows of that were deleted in the tree are left out
  (cd "$src" && git ls-files -z --cached --others --exclude-standard \
     | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
     | xargs -0 cp --parents -t "$dir/tree.new/")
else
  (cd "$src" && tar --exclude='./build*' -cf - .) | tar -C "$dir/tree.new" -xf -
fi
sum=$( (echo "$opts"; cd "$dir/tree.new" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha1sum) \
       | sha1sum | cut -d' ' -f1)
if [ -f "$dir/source.sha1" ] && [ "$(cat "$dir/source.sha1")" = "$sum" ] && ls "$dir"/*.deb >/dev/null 2>&1; then
  rm -rf "$dir/tree.new"
  exit 0
fi
rm -rf "$tree" "$dir"/*.deb "$dir"/*.changes "$dir"/*.buildinfo "$dir/source.sha1"
mv "$dir/tree.new" "$tree"
(cd "$tree" && DEB_BUILD_OPTIONS="$opts" dpkg-buildpackage -us -uc -b >"$dir/build.log" 2>&1) \
  || { tail -n 40 "$dir/build.log" >&2; echo "error: dpkg-buildpackage failed (see $dir/build.log)" >&2; exit 1; }
rm -rf "$tree"
echo "$sum" >"$dir/source.sha1"
