#!/bin/sh
# po/fridge.pot is what xgettext makes of po/POTFILES now, and every
# language of po/LINGUAS has exactly its messages, all translated: a _()
# added without `meson compile fridge-pot` and a translation fails here.
# Usage: test-pot.sh SRCDIR XGETTEXT_ARGS... (po/meson.build's own)
set -u
src=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

# as meson's fridge-pot target runs it
GETTEXTDATADIRS=$src/po xgettext --package-name=fridge -f "$src/po/POTFILES" -D "$src" -k_ \
        -o "$tmp/fridge.pot" "$@" || { echo "FAIL: xgettext failed"; exit 1; }
grep -v '^"POT-Creation-Date: ' "$src/po/fridge.pot" >"$tmp/committed"
grep -v '^"POT-Creation-Date: ' "$tmp/fridge.pot" >"$tmp/sources"
if ! diff -u "$tmp/committed" "$tmp/sources"; then
        echo "FAIL: po/fridge.pot differs from the sources (- committed, + sources):" \
             "run meson compile -C BUILD fridge-pot fridge-update-po, and translate"
        failed=1
fi

for lang in $(sed 's/#.*//' "$src/po/LINGUAS"); do
        po=$src/po/$lang.po
        [ -f "$po" ] || { echo "FAIL: po/LINGUAS names $lang, but po/$lang.po does not exist"; failed=1; continue; }
        # each way: no message of the sources missing, none left over
        if ! msgcmp --use-untranslated "$po" "$tmp/fridge.pot"; then
                echo "FAIL: po/$lang.po misses messages of the sources"
                failed=1
        fi
        if ! msgcmp --use-untranslated "$tmp/fridge.pot" "$po"; then
                echo "FAIL: po/$lang.po has messages the sources no longer have"
                failed=1
        fi
        stats=$(LC_ALL=C msgfmt --check --statistics -o /dev/null "$po" 2>&1) || {
                echo "FAIL: msgfmt --check po/$lang.po: $stats"
                failed=1
        }
        case $stats in
        *fuzzy* | *untranslated*)
                echo "FAIL: po/$lang.po is not complete: $stats"
                failed=1
                ;;
        esac
done
[ $failed -eq 0 ] && echo "fridge.pot and $(sed 's/#.*//' "$src/po/LINGUAS" | xargs) are current"
exit $failed
