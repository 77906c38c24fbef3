#!/bin/sh
# po/POTFILES lists exactly the sources with translated text: every C file
# that calls _(), N_() or ngettext() on a string, and the polkit policy.
# Usage: test-potfiles.sh SRCDIR
set -u
src=$1
cd "$src" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the installed programs' sources; tests and tools are never translated
grep -rlE '(^|[^A-Za-z0-9_])(N_|_|ngettext)\("' --include='*.c' --include='*.h' \
        agent client common daemon | sort >"$tmp/sources"
ls polkit/*.policy.in >>"$tmp/sources"
sort -o "$tmp/sources" "$tmp/sources"
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' po/POTFILES | sort >"$tmp/listed"
if ! diff -u "$tmp/listed" "$tmp/sources"; then
        echo "FAIL: po/POTFILES (-) and the files with translated text (+) differ"
        exit 1
fi
echo "po/POTFILES lists the $(wc -l <"$tmp/sources") files with translated text"
