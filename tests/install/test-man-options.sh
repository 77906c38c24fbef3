#!/bin/sh
# Each option a program's --help names is documented in its man page:
#   test-man-options.sh PROGRAM PAGE [PROGRAM PAGE]...
# The programs' option tables are their getopt arrays; --help is printed
# from the same file, so a new option that --help shows and the page does
# not fails here.
set -eu
status=0 checked=0
while [ $# -ge 2 ]; do
        prog=$1 page=$2
        shift 2
        opts=$("$prog" --help | grep -o -- '--[a-z][a-z-]*' | sort -u)
        [ -n "$opts" ] || { echo "$prog --help names no option"; exit 1; }
        for o in $opts; do
                # roff writes a hyphen as \-
                esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
                if ! grep -q -- "$esc" "$page"; then
                        echo "$(basename "$page"): $o (in $(basename "$prog") --help) is not documented"
                        status=1
                fi
                checked=$((checked + 1))
        done
done
[ $status -eq 0 ] && echo "$checked options documented"
exit $status
