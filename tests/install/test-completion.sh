#!/bin/bash
# The bash completion of fridgectl parses and completes what fridgectl
# takes. Usage: test-completion.sh COMPLETION_FILE
set -u
file=$1
bash -n "$file" || { echo "FAIL: $file does not parse"; exit 1; }
source "$file"
complete -p fridgectl >/dev/null || { echo "FAIL: no completion registered for fridgectl"; exit 1; }

failed=0
# expect "WANTED" WORDS...: complete the last word
expect() {
        local want=$1
        shift
        COMP_WORDS=("$@")
        COMP_CWORD=$(($# - 1))
        COMP_LINE="$*"
        COMPREPLY=()
        _fridgectl
        local got="${COMPREPLY[*]}"
        if [ "$got" != "$want" ]; then
                echo "FAIL: [$*]: got '$got', want '$want'"
                failed=1
        fi
}
expect "suspend" fridgectl su
# hook is for systemd-sleep's hook, not offered to users (it still works)
expect "hibernate hybrid-sleep hold history" fridgectl h
expect "status suspend hibernate hybrid-sleep cancel monitor plan plot hold inhibit inhibitors history can-sleep cat-config" fridgectl ""
expect "plan plot" fridgectl --json pl
expect "plot" fridgectl plo
expect "suspend" fridgectl --bus=session su
expect "early late nofreeze ui" fridgectl hold ""
expect "late" fridgectl hold la
expect "--" fridgectl hold late ""
expect "--who= --why=" fridgectl hold late --w
expect "--dry-run" fridgectl suspend --dr
expect "" fridgectl status --dr
expect "deep" fridgectl suspend --mem-sleep d
expect "deep" fridgectl suspend --mem-sleep = d
expect "none core processors platform devices freezer" fridgectl suspend --pm-test ""
expect "system session" fridgectl --bus ""
expect "" fridgectl suspend --wake-after ""
expect "inhibit inhibitors" fridgectl in
expect "block delay" fridgectl inhibit --mode ""
expect "delay" fridgectl inhibit --mode=d
expect "--who= --why=" fridgectl inhibit --w
expect "--" fridgectl inhibit --mode=delay ""
expect "pre post budget" fridgectl hook ""
expect "" fridgectl hook budget ""
expect "suspend suspend-then-hibernate" fridgectl hook pre sus
expect "" fridgectl hook pre suspend ""
expect "hibernate hybrid-sleep" fridgectl can-sleep h
expect "" fridgectl can-sleep suspend ""
expect "--quiet --queue --queue-timeout=" fridgectl suspend --q
expect "" fridgectl suspend --queue-timeout ""
expect "--lines=" fridgectl history --l
expect "--root=" fridgectl cat-config --r
expect "" fridgectl history -n ""
expect "" fridgectl history --lines ""
expect "" fridgectl history 3 ""
[ $failed -eq 0 ] && echo "completion ok"
exit $failed
