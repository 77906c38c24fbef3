#!/usr/bin/env bash
# mkinitramfs.sh [options] BINARY...: an initramfs for the qemu tests.
#   -o FILE         the initramfs to write (cpio newc, gzip)       (required)
#   -k KERNEL_DIR   kernel.sh's CACHE_DIR/kernel, for modules      (required)
#   -s SCENARIO     the scenario script, becomes /scenario         (required)
#   -m MODULE       a kernel module to load at boot, with its dependencies
#                   from modules.dep (repeatable)
#   -c KEY=VALUE    a line for /etc/vm.conf, read by /init (repeatable)
#   -p PRE          a script /init sources before fridged starts (/scenario.pre)
# Each BINARY goes to /usr/bin/ under its own name, with the shared
# libraries ldd lists for it and the dynamic loader. busybox (static
# preferred) provides the shell and tools; /init is tests/vm/init.sh.
set -euo pipefail

die() { echo "mkinitramfs: $*" >&2; exit 1; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

out='' kdir='' scenario='' pre=''
modules=() conf=()
while getopts o:k:s:m:c:p: opt; do
  case $opt in
    o) out=$OPTARG ;;
    k) kdir=$OPTARG ;;
    s) scenario=$OPTARG ;;
    m) modules+=("$OPTARG") ;;
    c) conf+=("$OPTARG") ;;
    p) pre=$OPTARG ;;
    *) die "bad option (see the header of $0)" ;;
  esac
done
shift $((OPTIND - 1))
[ -n "$out" ] && [ -n "$kdir" ] && [ -n "$scenario" ] || die "-o, -k and -s are required"
[ -f "$scenario" ] || die "no scenario $scenario"
busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
for t in cpio gzip ldd; do command -v $t >/dev/null || die "$t not found"; done

st=$(mktemp -d "${TMPDIR:-/tmp}/fridge-initramfs.XXXXXX")
trap 'rm -rf "$st"' EXIT

# merged /usr, as on the host, so ldd's paths work either way
mkdir -p "$st"/usr/{bin,sbin,lib,lib64} "$st"/{dev,proc,sys,tmp,run,root,etc/fridge,var}
ln -s usr/bin "$st/bin"; ln -s usr/sbin "$st/sbin"
ln -s usr/lib "$st/lib"; ln -s usr/lib64 "$st/lib64"

# copy_with_libs FILE: FILE's shared libraries (and the loader) at the
# paths ldd names
copy_libs() {
  local f=$1 lib
  # "name => /path (0x..)" and "/lib64/ld-linux-x86-64.so.2 (0x..)"
  for lib in $(ldd "$f" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p'); do
    [ -e "$st$lib" ] && continue
    mkdir -p "$st$(dirname "$lib")"
    cp -L "$lib" "$st$lib"
  done
}

cp "$busybox" "$st/usr/bin/busybox"
copy_libs "$busybox"   # nothing for busybox-static
for app in $("$busybox" --list); do
  [ "$app" = busybox ] || ln -sf busybox "$st/usr/bin/$app"
done

for b in "$@"; do
  [ -x "$b" ] || die "not an executable: $b"
  rm -f "$st/usr/bin/$(basename "$b")"     # a busybox applet of that name
  cp -L "$b" "$st/usr/bin/$(basename "$b")"
  copy_libs "$b"
done

# modules with their dependencies, in load order
rel=$(cat "$kdir/release")
mdir=$kdir/lib/modules/$rel
: >"$st/etc/vm-modules"
declare -A seen=()
add_module() { # add_module PATH-IN-MODULES.DEP
  local path=$1 dep deps
  [ -z "${seen[$path]:-}" ] || return 0
  seen[$path]=1
  deps=$(grep -m1 "^$path:" "$mdir/modules.dep" | cut -d: -f2) || die "$path not in modules.dep"
  for dep in $deps; do add_module "$dep"; done
  mkdir -p "$st/lib/modules/$(dirname "$path")"
  case $path in
    *.ko) cp "$mdir/$path" "$st/lib/modules/$path" ;;
    *.ko.xz) xz -dc "$mdir/$path" >"$st/lib/modules/${path%.xz}" ;;
    *.ko.zst) zstd -qdc "$mdir/$path" >"$st/lib/modules/${path%.zst}" ;;
    *) die "unknown module file $path" ;;
  esac
  echo "${path%.ko*}.ko" >>"$st/etc/vm-modules"
}
for m in "${modules[@]}"; do
  # module names treat - and _ alike
  re=$(sed 's/[-_]/[-_]/g' <<<"$m")
  path=$(grep -m1 -E "(^|/)$re\.ko(\.xz|\.zst)?:" "$mdir/modules.dep" | cut -d: -f1) \
    || die "module $m not found in $mdir/modules.dep (built in?)"
  add_module "$path"
done

cp "$here/init.sh" "$st/init"
chmod 755 "$st/init"
cp "$scenario" "$st/scenario"
[ -z "$pre" ] || cp "$pre" "$st/scenario.pre"
# helpers scenarios source, as /usr/lib/vm/NAME-lib.sh
mkdir -p "$st/usr/lib/vm"
for lib in "$(dirname "$scenario")"/*-lib.sh; do
  [ ! -f "$lib" ] || cp "$lib" "$st/usr/lib/vm/"
done
basename "$scenario" .sh >"$st/etc/vm-scenario-name"
printf '%s\n' "${conf[@]}" >"$st/etc/vm.conf"
echo 'root:x:0:0:root:/root:/bin/sh' >"$st/etc/passwd"
echo 'root:x:0:' >"$st/etc/group"
echo 0123456789abcdef0123456789abcdef >"$st/etc/machine-id"
mkdir -p "$st/var/lib/dbus"
ln -s /etc/machine-id "$st/var/lib/dbus/machine-id"
cat >"$st/etc/fridge-bus.conf" <<'EOF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=/run/fridge-bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF

mkdir -p "$(dirname "$out")"
( cd "$st" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet ) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
