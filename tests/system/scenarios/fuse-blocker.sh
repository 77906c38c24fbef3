# Scenario 9: inside the installed, hardened unit (no CAP_SYS_ADMIN, so no
# /proc/TID/stack), a task blocked on a FUSE mount is named with the mount:
# alice's bindfs (type plain "fuse", source her src directory: no server's
# name) is named with its mount point in the plan; stopped, it leaves a
# reader of its mirror unfreezable, and the FreezeTimeout names the reader
# and /home/alice/mnt. Nothing stays frozen.
# Driver=direct: under the logind driver the failed cycle does not stop
# systemd-sleep, which then writes the state itself; the kernel's freezer
# refuses the same reader after 20 s per state tried (minutes in all).
# system-timeout: 180
. /usr/lib/fridge-system-test/scenarios/user-lib.sh
mkdir -p /etc/fridge/fridge.conf.d
printf '[Sleep]\nDriver=direct\n' >/etc/fridge/fridge.conf.d/50-direct.conf
systemctl try-restart fridged.service
make_alice
runuser -u alice -- sh -c 'echo data >/home/alice/src/file'
fridgectl plan
reason=$(fridgectl --json plan | tr '{' '\n' | grep '"unit":"fuse-server.service"')
echo "$reason" | grep -q '"reason":"FUSE server bindfs (pid [0-9]*) of /home/alice/mnt"' \
  || fail "the plan does not name bindfs's mount: $reason"

pid=$(systemctl show -p MainPID --value fridged.service)
capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' "/proc/$pid/status")
echo "fridged $pid CapEff $capeff"
[ $(( (0x$capeff >> 21) & 1 )) -eq 0 ] || fail "fridged has CAP_SYS_ADMIN: not the hardened unit"

server=$(head -n1 "$ALICE/fuse-server.service/cgroup.procs")
kill -STOP "$server" || fail "cannot stop bindfs"
alice_run --unit=reader cat /home/alice/mnt/file || fail "the reader did not start"
reader=$(head -n1 "$ALICE/reader.service/cgroup.procs")
blocked() { s=$(cat "/proc/$reader/syscall"); [ -n "$s" ] && [ "$s" != running ] && [ "$(cat "/proc/$reader/wchan")" != 0 ]; }
wait_for 30 blocked || fail "the reader did not block on the stopped bindfs"
echo "reader $reader: wchan $(cat "/proc/$reader/wchan"), syscall $(cut -d' ' -f1 "/proc/$reader/syscall")"

out=$(fridgectl --no-progress suspend --pm-test devices --freeze-timeout=2000 2>&1) && fail "the cycle did not fail: $out"
echo "fridgectl: $out"
kill -CONT "$server"
journalctl -b -u fridged.service -o cat | grep -q 'started: suspend (driver direct)' || fail "the cycle's driver is not direct"
echo "$out" | grep -q "reader.service: pid $reader (cat) state . wchan [^ ]* on FUSE mount /home/alice/mnt" \
  || fail "the freeze timeout does not name the reader's FUSE mount"
wait_for 30 sh -c "! test -s $ALICE/reader.service/cgroup.procs" || fail "the reader did not finish"
[ "$(frozen producer.service)" = 0 ] && [ "$(frozen fuse-server.service)" = 0 ] || fail "left frozen"
pass
