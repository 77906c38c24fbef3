# Shared by the FUSE scenarios (sourced): slowfs, the test's own FUSE server,
# in cgroup fridge-test/fuse-server on /mnt/slow, and a client of it in
# fridge-test/client. Neither holds the scenario's stdout (the console pipe
# would never close), and both are stopped however the scenario ends.
CG=/sys/fs/cgroup/fridge-test
trap stop_fuse EXIT
start_fuse_server() {
  sh -c "echo \$\$ >$CG/fuse-server/cgroup.procs && exec slowfs /mnt/slow" >/dev/null 2>/run/slowfs.log &
  SERVER_PID=$!
  i=0
  until grep -q ' /mnt/slow ' /proc/mounts; do
    i=$((i + 1)); [ $i -le 100 ] || fail "slowfs did not mount /mnt/slow: $(cat /run/slowfs.log)"
    sleep 0.1
  done
}
start_client() { # a reader of the mount, looping
  echo data >/mnt/slow/file || fail "cannot write /mnt/slow/file"
  sh -c "echo \$\$ >$CG/client/cgroup.procs && while :; do cat /mnt/slow/file >/dev/null; usleep 100000; done" >/dev/null 2>&1 &
  CLIENT_PID=$!
}
frozen() { sed -n 's/^frozen //p' "$CG/$1/cgroup.events"; }
expect_thawed() {
  for g in fuse-server client; do
    [ "$(frozen $g)" = 0 ] || fail "$g is still frozen after the cycle: $(cat $CG/$g/cgroup.events)"
    [ "$(cat $CG/$g/cgroup.freeze)" = 0 ] || fail "$g still has cgroup.freeze 1"
  done
  kill -0 "$CLIENT_PID" || fail "the client died"
}
# plan_class CGROUP: its class in `fridgectl plan --json`
plan_class() {
  fctl --json plan | tr '{' '\n' | grep "fridge-test/$1\"" | sed -n 's/.*"class":"\([a-z]*\)".*/\1/p' | head -n1
}
stop_fuse() {
  [ -z "${WRITER_PID:-}" ] || { echo release >/mnt/slow/.control; kill "$WRITER_PID" 2>/dev/null; }
  [ -z "${CLIENT_PID:-}" ] || kill "$CLIENT_PID" 2>/dev/null
  [ -z "${SERVER_PID:-}" ] || { umount /mnt/slow 2>/dev/null; kill "$SERVER_PID" 2>/dev/null; }
  CLIENT_PID= SERVER_PID=
}
