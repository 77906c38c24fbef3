# Shared by scenarios (sourced): a lingering user "alice" (uid 1000) with a
# data producer and a FUSE server (bindfs) as services of her own manager.
make_alice() {
  useradd -m -u 1000 alice || fail "useradd alice"
  loginctl enable-linger alice || fail "enable-linger alice"
  wait_for 60 systemctl is-active -q user@1000.service || fail "user@1000.service did not start"
  wait_for 30 test -S /run/user/1000/bus || fail "alice's user bus did not appear"
  alice_run() { systemd-run -M alice@ --user --quiet "$@"; }
  alice_run --unit=producer sh -c 'while :; do date >>"$HOME/log"; sleep 0.2; done' || fail "producer did not start"
  runuser -u alice -- mkdir -p /home/alice/src /home/alice/mnt
  alice_run --unit=fuse-server bindfs -f --no-allow-other /home/alice/src /home/alice/mnt || fail "bindfs did not start"
  # (root may not stat a FUSE mount without allow_other: read the mount table)
  wait_for 30 grep -q ' /home/alice/mnt ' /proc/mounts || fail "bindfs did not mount /home/alice/mnt"
  ALICE=/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice
}
# plan_class UNIT: its class in `fridgectl plan --json`
plan_class() {
  fridgectl --json plan | tr '{' '\n' | grep "\"unit\":\"$1\"" | sed -n 's/.*"class":"\([a-z]*\)".*/\1/p' | head -n1
}
frozen() { sed -n 's/^frozen //p' "$ALICE/$1/cgroup.events"; }
# last_result: fridged's LastResult, unquoted
last_result() { busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 LastResult | sed 's/^s "\(.*\)"$/\1/'; }
last_result_is() { [ "$(last_result)" = "$1" ]; }
# line N of PATTERN in the journal of this boot (merged, in time order)
jline() { journalctl -b --no-pager -o short-monotonic | grep -n -m1 -E "$1" | cut -d: -f1; }
