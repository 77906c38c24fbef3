#!/bin/sh
# The initramfs-tools integration under dash, as the initramfs's busybox
# sh runs it. The local-premount script with initramfs-tools' own
# scripts/functions and scripts/local (package initramfs-tools-core,
# installed or unpacked by this test; skipped when neither can be), blkid, fstype and udevadm stubbed, and a stub
# fridge-resume recording its arguments: the device it is given comes from
# $resume (resume=, RESUME=) resolved as initramfs-tools' resume does,
# with resume_offset; nothing configured, a device that never appears and
# a refusal all end in exit 0, the last two with a line saying so. Under
# noresume (init exports noresume=y and an empty $resume, keeping RESUME
# to itself) the device comes from resume= in proc/cmdline, else RESUME=
# in conf.d, and fridge-resume is asked to --discard the image. The
# hook under a stub copy_exec: it asks for the installed fridge-resume.
# Usage: test-initramfs.sh SCRIPT HOOK LIBEXECDIR (the configured copies in
# the build dir: only the installed ones are executable)
set -u
script=$1
hook=$2
libexecdir=$3
its=/usr/share/initramfs-tools/scripts
# Not installed: the package's own files, unpacked (not installed: udev
# would come with it) into FRIDGE_INITRAMFS_TOOLS_DIR once
if { [ ! -f "$its/functions" ] || [ ! -f "$its/local" ]; } && [ -n "${FRIDGE_INITRAMFS_TOOLS_DIR:-}" ]; then
        unpacked=$FRIDGE_INITRAMFS_TOOLS_DIR
        if [ ! -f "$unpacked/usr/share/initramfs-tools/scripts/local" ]; then
                rm -rf "$unpacked" && mkdir -p "$unpacked" \
                        && (cd "$unpacked" && apt-get download initramfs-tools-core >/dev/null 2>&1 \
                                && dpkg-deb -x initramfs-tools-core_*.deb .) \
                        || echo "cannot unpack initramfs-tools-core into $unpacked (apt-get download)"
        fi
        its=$unpacked/usr/share/initramfs-tools/scripts
fi
if [ ! -f "$its/functions" ] || [ ! -f "$its/local" ]; then
        echo "SKIP: $its/functions and local (package initramfs-tools-core) are not there"
        exit 77
fi
echo "initramfs-tools' scripts from $its"
shell=$(command -v dash || command -v sh)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fridge-initramfs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

stub() { # stub PATH BODY: an executable shell script
        mkdir -p "${1%/*}"
        printf '#!/bin/sh\n%s\n' "$2" >"$1"
        chmod +x "$1"
}

root=$tmp/root
mkdir -p "$root/scripts"
cp "$its/functions" "$its/local" "$root/scripts/"
# a tag (UUID=, LABEL=) it looks for itself: STUB_TAG_RC, 3 (not found) unless told
stub "$root$libexecdir/fridge-resume" "echo \"\$*\" >>$tmp/args
case \$1 in --device=UUID=*|--device=LABEL=*) exit \${STUB_TAG_RC:-3};; esac
exit \${STUB_RC:-0}"
stub "$tmp/bin/blkid" "[ \"\$*\" = '-l -t UUID=0123-abcd -o device' ] && echo $tmp/swap"
stub "$tmp/bin/fstype" 'echo FSTYPE=swap'
stub "$tmp/bin/udevadm" 'exit 0'
stub "$tmp/bin/sleep" 'exit 0'
: >"$tmp/swap"

run() { # run VAR=VALUE...: the script as init runs it, its output in $tmp/out
        rm -f "$tmp/args"
        env -i PATH="$tmp/bin:$PATH" FRIDGE_INITRAMFS_ROOT="$root" quiet=n resume= resume_offset= noresume= \
                UBIMTD= starttime=-1000 "$@" "$shell" "$script" >"$tmp/out" 2>&1
        rc=$?
        [ "$rc" -eq 0 ] || fail "exit status $rc with $*: $(cat "$tmp/out")"
}
args_are() { # args_are WHAT EXPECTED: fridge-resume ran once, with EXPECTED
        [ -f "$tmp/args" ] || fail "$1: fridge-resume did not run: $(cat "$tmp/out")"
        [ "$(cat "$tmp/args")" = "$2" ] || fail "$1: fridge-resume got \"$(cat "$tmp/args")\", not \"$2\""
}
not_run() {
        [ ! -f "$tmp/args" ] || fail "$1: fridge-resume ran: $(cat "$tmp/args")"
}
says() {
        grep -qF -- "$2" "$tmp/out" || fail "$1: the output does not say \"$2\": $(cat "$tmp/out")"
}

run resume=/dev/null
args_are "a path" "--device=/dev/null --snapshot=/dev/snapshot"
[ ! -s "$tmp/out" ] || fail "nothing to resume is not silent: $(cat "$tmp/out")"

# a tag: fridge-resume first (blkid cannot name a swap area holding fridge's
# image); when it finds none, resolved and waited for as initramfs-tools does
run resume=UUID=0123-abcd
args_are "UUID=" "--device=UUID=0123-abcd --snapshot=/dev/snapshot
--device=$tmp/swap --snapshot=/dev/snapshot"
run resume=UUID=0123-abcd STUB_TAG_RC=0
args_are "UUID= found by fridge-resume" "--device=UUID=0123-abcd --snapshot=/dev/snapshot"
[ ! -s "$tmp/out" ] || fail "UUID= found by fridge-resume, nothing to resume, is not silent: $(cat "$tmp/out")"
run resume=LABEL=swap STUB_TAG_RC=1
args_are "LABEL= refused" "--device=LABEL=swap --snapshot=/dev/snapshot"
says "LABEL= refused" "fridge: no image resumed from LABEL=swap (fridge-resume exit 1); boot continues"
run resume=UUID=0123-abcd resume_offset=34816
args_are "UUID= with resume_offset (a swap file)" "--device=$tmp/swap --snapshot=/dev/snapshot --offset=34816"

run resume=/dev/null resume_offset=34816
args_are "resume_offset" "--device=/dev/null --snapshot=/dev/snapshot --offset=34816"

run
not_run "no resume device"
says "no resume device" "fridge: no resume device configured (resume=, RESUME=): nothing to resume"
run quiet=y
[ ! -s "$tmp/out" ] || fail "no resume device under quiet is not silent: $(cat "$tmp/out")"

run noresume=y
not_run "noresume"
says "noresume" "fridge: noresume: not resumed"

# noresume: init's parsing, from its real source: noresume=y, resume empty
mkdir -p "$root/proc" "$root/conf/conf.d"
echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1 resume=UUID=0123-abcd ro noresume quiet" >"$root/proc/cmdline"
run noresume=y resume_offset=34816
args_are "noresume, resume=" "--device=$tmp/swap --discard --offset=34816"
[ ! -s "$tmp/out" ] || fail "noresume on plain swap is not silent: $(cat "$tmp/out")"
# a tag under noresume: found by fridge-resume, and discarded, never resumed
run noresume=y STUB_TAG_RC=0
args_are "noresume, resume=UUID=" "--device=UUID=0123-abcd --discard"
echo "BOOT_IMAGE=/vmlinuz root=/dev/sda1 noresume" >"$root/proc/cmdline"
echo "RESUME=/dev/null" >"$root/conf/conf.d/resume"
run noresume=y
args_are "noresume, RESUME= in conf.d" "--device=/dev/null --discard"
run noresume=y STUB_RC=1
says "noresume, not discarded" "fridge: noresume: the image on /dev/null was not discarded; boot continues"
echo "RESUME=none" >"$root/conf/conf.d/resume"
run noresume=y
not_run "noresume, RESUME=none"
rm -r "$root/proc" "$root/conf"

run resume=/dev/null STUB_RC=1
args_are "a refusal" "--device=/dev/null --snapshot=/dev/snapshot"
says "a refusal" "fridge: no image resumed from /dev/null (fridge-resume exit 1); boot continues"

# waited for as initramfs-tools waits (starttime: the wait is already over)
run resume=/dev/fridge-test-no-such-device
not_run "a missing device"
says "a missing device" "fridge: resume device /dev/fridge-test-no-such-device did not appear: not resumed; boot continues"
run resume=UUID=ffff-0000
args_are "an unknown UUID" "--device=UUID=ffff-0000 --snapshot=/dev/snapshot"
says "an unknown UUID" "resume device UUID=ffff-0000 did not appear"

# a device that appears while initramfs-tools waits (a USB disk, a slow
# controller, a stacked device): blkid finds it only on its third look,
# and it is resumed from. (blkid names a swap area holding fridge's image:
# TYPE=swsuspend with mkswap's UUID, unit test swap-signature.)
stub "$tmp/bin/blkid" "echo \"\$*\" >>$tmp/blkid.calls
[ \"\$*\" = '-l -t UUID=0123-abcd -o device' ] && [ \$(grep -c . $tmp/blkid.calls) -ge 3 ] && echo $tmp/swap"
: >"$tmp/blkid.calls"
run resume=UUID=0123-abcd starttime="$(cut -d. -f1 /proc/uptime)"
args_are "a device that appears late" "--device=UUID=0123-abcd --snapshot=/dev/snapshot
--device=$tmp/swap --snapshot=/dev/snapshot"
says "a device that appears late" "Waiting for suspend/resume device"
[ "$(grep -c . "$tmp/blkid.calls")" -ge 3 ] || fail "a device that appears late: blkid asked only $(grep -c . "$tmp/blkid.calls") times"

mv "$root$libexecdir/fridge-resume" "$tmp/fridge-resume"
run resume=/dev/null
not_run "fridge-resume missing"
says "fridge-resume missing" "fridge-resume is not in the initramfs (update-initramfs -u): not resumed; boot continues"

"$shell" "$script" prereqs >"$tmp/out" || fail "script prereqs: exit status $?"

# The hook: copy_exec asked for the installed fridge-resume, and only if it is there
mkdir -p "$root/usr/share/initramfs-tools"
printf 'copy_exec() { echo "$*" >>%s/copied; }\n' "$tmp" >"$root/usr/share/initramfs-tools/hook-functions"
env FRIDGE_INITRAMFS_ROOT="$root" "$shell" "$hook" || fail "hook without fridge-resume: exit status $?"
[ ! -f "$tmp/copied" ] || fail "the hook copied a missing fridge-resume: $(cat "$tmp/copied")"
mv "$tmp/fridge-resume" "$root$libexecdir/fridge-resume"
env FRIDGE_INITRAMFS_ROOT="$root" "$shell" "$hook" || fail "hook: exit status $?"
[ "$(cat "$tmp/copied")" = "$libexecdir/fridge-resume" ] || fail "the hook copied \"$(cat "$tmp/copied")\""
"$shell" "$hook" prereqs >"$tmp/out" || fail "hook prereqs: exit status $?"
echo "ok: the local-premount script in 20 cases, the hook in 2"
