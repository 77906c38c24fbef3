#!/bin/sh
# meson install into a DESTDIR: every file at its place, the generated files
# naming the installed paths, nothing unexpected; then uninstall removes them.
# Usage: test-install.sh BUILD_DIR (install directories come from the env).
set -eu
build=$1
dest=$(mktemp -d "${TMPDIR:-/tmp}/fridge-install.XXXXXX")
log=$build/meson-logs/install-log.txt
saved=
# Keep the log of a real install, so its `ninja uninstall` still works
if [ -f "$log" ]; then
        saved=$dest.log
        cp "$log" "$saved"
fi
cleanup() {
        rm -rf "$dest"
        if [ -n "$saved" ]; then mv "$saved" "$log"; else rm -f "$log"; fi
}
trap cleanup EXIT

fail() { echo "FAIL: $*"; exit 1; }

meson install -C "$build" --destdir "$dest" --no-rebuild --quiet >/dev/null

expected="
$FRIDGED_PATH
$FRIDGECTL_PATH
$FRIDGE_AGENT_PATH
$FRIDGE_RESUME_PATH
$FRIDGE_IMAGE_WRITER_PATH
$USERUNITDIR/fridge-agent.service
$AUTOSTARTDIR/fridge-agent.desktop
$UNITDIR/fridged.service
$UNITDIR/fridge-image-writer.service
$UNITDIR/fridge-image-writer.socket
$UNITDIR/systemd-suspend.service.d/fridge.conf
$UNITDIR/systemd-hibernate.service.d/fridge.conf
$UNITDIR/systemd-hybrid-sleep.service.d/fridge.conf
$UNITDIR/systemd-suspend-then-hibernate.service.d/fridge.conf
$DBUSPOLICYDIR/io.fridge.Fridge1.conf
$DBUSSERVICEDIR/io.fridge.Fridge1.service
$DATADIR/dbus-1/interfaces/io.fridge.Fridge1.xml
$POLKITACTIONDIR/io.fridge.Fridge1.policy
$CONFIGDIR/fridge.conf
$VENDORDIR/classes.d/50-default.conf
$VENDORDIR/classes.d/60-desktop.conf
$MANDIR/man8/fridged.8
$MANDIR/man8/fridge-resume.8
$MANDIR/man8/fridge-image-writer.8
$MANDIR/man1/fridgectl.1
$MANDIR/man1/fridge-agent.1
$MANDIR/man5/fridge.conf.5
$MANDIR/man5/io.fridge.Fridge1.5
$CATALOGDIR/fridge.catalog
$BASHCOMPLETIONDIR/fridgectl
$DATADIR/zsh/vendor-completions/_fridgectl
$DATADIR/initramfs-tools/hooks/fridge
$DATADIR/initramfs-tools/scripts/local-premount/fridge
"
for lang in $LANGUAGES; do
        expected="$expected $LOCALEDIR/$lang/LC_MESSAGES/fridge.mo"
done
n=0
for f in $expected; do
        [ -f "$dest$f" ] || fail "$f was not installed"
        n=$((n + 1))
done
initramfs_hook=$DATADIR/initramfs-tools/hooks/fridge
initramfs_script=$DATADIR/initramfs-tools/scripts/local-premount/fridge
for f in "$FRIDGED_PATH" "$FRIDGE_IMAGE_WRITER_PATH" "$FRIDGECTL_PATH" "$FRIDGE_AGENT_PATH" "$FRIDGE_RESUME_PATH" \
         "$initramfs_hook" "$initramfs_script"; do
        [ -x "$dest$f" ] || fail "$f is not executable"
done
found=$(find "$dest" -type f | wc -l)
if [ "$found" -ne "$n" ]; then
        find "$dest" -type f | sed "s|^$dest||" | sort
        fail "$found files installed, $n expected: add the new one to this test"
fi

# The generated files name the installed binaries
grep -qx "ExecStart=$FRIDGED_PATH" "$dest$UNITDIR/fridged.service" || fail "fridged.service: ExecStart is not $FRIDGED_PATH"
grep -qx "ExecStopPost=$FRIDGED_PATH --thaw-all" "$dest$UNITDIR/fridged.service" || fail "fridged.service: ExecStopPost"
grep -qx "ExecStart=$FRIDGE_IMAGE_WRITER_PATH --serve --snapshot=/dev/snapshot --console=vt --idle-exit=60" \
        "$dest$UNITDIR/fridge-image-writer.service" || fail "fridge-image-writer.service: ExecStart"
# the bar on a VT of its own: the VTs' devices, and the capability their switch needs
grep -qx "DeviceAllow=char-tty rw" "$dest$UNITDIR/fridge-image-writer.service" \
        || fail "fridge-image-writer.service: no DeviceAllow=char-tty rw for --console=vt"
grep -q "^CapabilityBoundingSet=.*CAP_SYS_TTY_CONFIG" "$dest$UNITDIR/fridge-image-writer.service" \
        || fail "fridge-image-writer.service: no CAP_SYS_TTY_CONFIG for --console=vt's VT switch"
# where fridged (--state-dir's default, /run/fridge) looks for the writer
grep -qx "ListenStream=/run/fridge/image-writer.sock" "$dest$UNITDIR/fridge-image-writer.socket" \
        || fail "fridge-image-writer.socket does not listen where fridged connects"
grep -qx "Exec=$FRIDGED_PATH" "$dest$DBUSSERVICEDIR/io.fridge.Fridge1.service" || fail "activation file: Exec is not $FRIDGED_PATH"
grep -qx "SystemdService=fridged.service" "$dest$DBUSSERVICEDIR/io.fridge.Fridge1.service" || fail "activation file: SystemdService"
# the sleep hook is fridgectl by another name (client/sleep-hook.c): a link
[ -L "$dest$SLEEPDIR/fridge" ] || fail "$SLEEPDIR/fridge was not installed as a link"
[ "$(readlink "$dest$SLEEPDIR/fridge")" = "$FRIDGECTL_PATH" ] \
        || fail "the sleep hook points to $(readlink "$dest$SLEEPDIR/fridge"), not $FRIDGECTL_PATH"
grep -qx "	copy_exec $FRIDGE_RESUME_PATH" "$dest$initramfs_hook" || fail "initramfs hook does not copy $FRIDGE_RESUME_PATH"
grep -qx "fridge_resume=\$root$FRIDGE_RESUME_PATH" "$dest$initramfs_script" \
        || fail "initramfs script does not run $FRIDGE_RESUME_PATH"
for k in suspend hibernate hybrid-sleep suspend-then-hibernate; do
        grep -qx "Environment=SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=false" "$dest$UNITDIR/systemd-$k.service.d/fridge.conf" \
                || fail "systemd-$k.service.d/fridge.conf does not keep systemd from freezing user.slice"
done
grep -q "^\.TH" "$dest$MANDIR/man8/fridged.8" || fail "fridged.8 is not a man page"
# fridge-agent starts with the graphical session, once: the user unit
# where systemd runs the session, the autostart file elsewhere, which
# systemd's xdg-autostart-generator then skips
unit=$dest$USERUNITDIR/fridge-agent.service desktop=$dest$AUTOSTARTDIR/fridge-agent.desktop
grep -qx "ExecStart=$FRIDGE_AGENT_PATH" "$unit" || fail "fridge-agent.service: ExecStart is not $FRIDGE_AGENT_PATH"
grep -qx "PartOf=graphical-session.target" "$unit" || fail "fridge-agent.service is not PartOf=graphical-session.target"
grep -qx "WantedBy=graphical-session.target" "$unit" || fail "fridge-agent.service is not WantedBy=graphical-session.target"
grep -qx "Restart=on-failure" "$unit" || fail "fridge-agent.service: no Restart=on-failure"
grep -qx "\[Desktop Entry\]" "$desktop" || fail "fridge-agent.desktop has no [Desktop Entry]"
grep -qx "Type=Application" "$desktop" || fail "fridge-agent.desktop: Type is not Application"
grep -qx "Exec=$FRIDGE_AGENT_PATH" "$desktop" || fail "fridge-agent.desktop: Exec is not $FRIDGE_AGENT_PATH"
grep -qx "X-GNOME-HiddenUnderSystemd=true" "$desktop" \
        || fail "fridge-agent.desktop would start a second agent beside the user unit (no X-GNOME-HiddenUnderSystemd=true)"
if command -v desktop-file-validate >/dev/null; then
        desktop-file-validate "$desktop" || fail "fridge-agent.desktop: desktop-file-validate"
fi
# (the catalog's @FIELD@s are journalctl's, filled from each entry)
if grep -l "@[A-Za-z_]*@" $(for f in $expected; do [ "$f" = "$FRIDGED_PATH" ] || [ "$f" = "$FRIDGECTL_PATH" ] || [ "$f" = "$FRIDGE_AGENT_PATH" ] || [ "$f" = "$FRIDGE_RESUME_PATH" ] || [ "$f" = "$FRIDGE_IMAGE_WRITER_PATH" ] || [ "$f" = "$CATALOGDIR/fridge.catalog" ] || echo "$dest$f"; done); then
        fail "a placeholder was left unsubstituted"
fi
echo "installed $n files"

# The documented uninstall: meson recorded what it installed, DESTDIR included
ninja -C "$build" uninstall >/dev/null
for f in $expected; do
        [ ! -e "$dest$f" ] || fail "uninstall left $f"
done
echo "uninstall removed them"
