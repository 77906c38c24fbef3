#!/bin/sh
# The installed polkit policy carries every language of po/LINGUAS: each
# action's description and message in it, as msgfmt merged them.
# Usage: test-polkit-policy.sh POLICY LINGUAS
set -u
policy=$1
linguas=$2
failed=0
actions=$(xmllint --xpath 'count(//action)' "$policy") || exit 1
[ "$actions" -gt 0 ] || { echo "FAIL: $policy has no actions"; exit 1; }
for lang in $(sed 's/#.*//' "$linguas"); do
        for el in description message; do
                n=$(xmllint --xpath "count(//action/$el[@xml:lang='$lang' and normalize-space()])" "$policy")
                if [ "$n" != "$actions" ]; then
                        echo "FAIL: $n of $actions actions have a <$el xml:lang=\"$lang\">"
                        failed=1
                fi
        done
done
[ $failed -eq 0 ] && echo "$actions actions, each translated into $(sed 's/#.*//' "$linguas" | xargs)"
exit $failed
