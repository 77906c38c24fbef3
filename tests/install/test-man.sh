#!/bin/sh
# The man pages format without a warning (groff -ww: every warning).
set -eu
status=0
for page in "$@"; do
        out=$(groff -man -ww -z "$page" 2>&1) || status=1
        if [ -n "$out" ]; then
                echo "$page:"
                echo "$out"
                status=1
        fi
        out=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$page" 2>&1 >/dev/null) || status=1
        if [ -n "$out" ]; then
                echo "$page (man):"
                echo "$out"
                status=1
        fi
done
[ $status -eq 0 ] && echo "$# pages clean"
exit $status
