# Scenario 4: staged freezing on the guest's real cgroup v2, with real
# processes: slowfs (the test's FUSE server, fuse.ko loaded) is classed
# late (it holds /dev/fuse), a client reading from its mount early. A real
# S3 cycle (bzImage, RTC wake) completes; fridged's log shows the early
# stage frozen, then the late one, both before the kernel phase (each
# "frozen" is the kernel's own cgroup.events), and the thaw after; both
# cgroups are thawed at the end and the client still runs.
# vm-kernel: bzImage
# vm-modules: fuse
# vm-binaries: SLOWFS
# vm-timeout: 150
. /usr/lib/vm/fuse-lib.sh
start_fuse_server
start_client
server_class=$(plan_class fuse-server); client_class=$(plan_class client)
fctl plan
[ "$server_class" = late ] || fail "the FUSE server is classed '$server_class', not late"
[ "$client_class" = early ] || fail "the FUSE client is classed '$client_class', not early"

fctl --json --no-progress suspend --mem-sleep deep --wake-after 5 >/run/out.json
rc=$?
cat /run/out.json
[ $rc -eq 0 ] || fail "fridgectl suspend exited with $rc"
grep -q '"event":"finished".*"result":"done"' /run/out.json || fail "the S3 cycle did not finish done"
dmesg | grep -q 'PM: suspend entry (deep)' || fail "the kernel did not enter S3"

# The order, from fridged's log: early frozen, late frozen, then on the way
# back the thaw first and the resumed report after it (issue 15 point 7: the
# wake sources are read and the knobs put back while the cgroups run)
order=$(grep -nE 'early stage frozen|late stage frozen|resumed after|thawed [0-9]+ cgroups' /run/fridged.log)
echo "$order"
line() { echo "$order" | grep "$1" | head -n1 | cut -d: -f1; }
e=$(line 'early stage frozen .*(1 cgroups'); l=$(line 'late stage frozen .*(2 cgroups'); r=$(line 'resumed after'); t=$(line 'thawed 2 cgroups')
[ -n "$e" ] && [ -n "$l" ] && [ -n "$r" ] && [ -n "$t" ] || fail "fridged's log lacks a stage (early '$e' late '$l' resumed '$r' thawed '$t')"
[ "$e" -lt "$l" ] && [ "$l" -lt "$t" ] && [ "$t" -lt "$r" ] || fail "stages out of order: early $e, late $l, thawed $t, resumed $r"
expect_thawed
pass
