# Sourced by every scenario in the guest.
pass() { echo PASS >/run/fridge-system-test.result; exit 0; }
fail() { echo "FAIL: $*"; exit 1; }
# as_nobody CMD...: an unprivileged user without a session
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
# wait_for TIMEOUT_S CMD...: until CMD succeeds
wait_for() {
  local t=$1 i=0; shift
  until "$@" >/dev/null 2>&1; do
    i=$((i + 1)); [ $i -le $((t * 10)) ] || return 1
    sleep 0.1
  done
}
