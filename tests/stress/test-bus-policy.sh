#!/usr/bin/env bash
# Permissions at the bus: a system-type dbus-daemon with Debian's default
# system policy and fridge's dbus/io.fridge.Fridge1.conf. A fridged run as
# uid 65534 may not own io.fridge.Fridge1 (it exits, saying so); run as
# root it may, and then uid 65534 can read it (status) but is refused a
# Sleep by fridged itself (no polkit here). Prints a FIGURE line.
set -euo pipefail
: "${FRIDGED:?}" "${FRIDGECTL:?}" "${FRIDGE_BUS_POLICY:?}"
command -v setpriv >/dev/null || { echo "SKIP: setpriv (util-linux) is missing"; exit 77; }
[ "$(id -u)" -eq 0 ] || { echo "SKIP: needs root (to run clients as another uid)"; exit 77; }

T=$(mktemp -d)
chmod 755 "$T"
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$T"/*.log; do echo "--- $f"; cat "$f"; done; exit 1; }

mkdir -p "$T/state" "$T/nocg" "$T/sys/sys/power" "$T/conf" "$T/vendor"
chmod 777 "$T/state"
echo "freeze mem" >"$T/sys/sys/power/state"
cat >"$T/bus.conf" <<EOF_CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$T/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
$(for t in method_return error; do echo "    <allow send_requested_reply=\"true\" send_type=\"$t\"/>"; done)
$(for t in method_call method_return error signal; do echo "    <allow receive_type=\"$t\"/>"; done)
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <include>$FRIDGE_BUS_POLICY</include>
</busconfig>
EOF_CONF
dbus-daemon --config-file="$T/bus.conf" --nofork --print-address=1 >"$T/address" 2>"$T/dbus.log" &
pids+=($!)
for _ in $(seq 100); do [ -s "$T/address" ] && break; sleep 0.05; done
addr=$(head -n1 "$T/address")
[ -n "$addr" ] || fail "dbus-daemon did not start"

args=(--bus-address="$addr" --state-dir="$T/state" --persistent-dir="$T/lib" --cgroup-root="$T/nocg" --sysfs-root="$T/sys"
      --config-dir="$T/conf" --vendor-dir="$T/vendor" --config-root="$T/root")
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --)

rc=0
timeout 20 "${nobody[@]}" "$FRIDGED" "${args[@]}" 2>"$T/fridged-nobody.log" || rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "fridged as uid 65534 did not exit with an error (status $rc)"
grep -q "Failed to own io.fridge.Fridge1: .*not allowed to own" "$T/fridged-nobody.log" \
  || fail "fridged as uid 65534 did not report the policy refusal"
grep -q "Permission denied" "$T/fridged-nobody.log" || fail "the refusal is not reported as permission denied"

"$FRIDGED" "${args[@]}" 2>"$T/fridged-root.log" &
pids+=($!)
for _ in $(seq 100); do grep -q ready "$T/fridged-root.log" && break; sleep 0.05; done
grep -q "ready on io.fridge.Fridge1" "$T/fridged-root.log" || fail "fridged as root did not own the name"

"${nobody[@]}" "$FRIDGECTL" --bus-address="$addr" status >"$T/status.log" 2>&1 || fail "uid 65534 cannot read status"
grep -q 'State: idle' "$T/status.log" || fail "status as uid 65534 shows no State"
rc=0
"${nobody[@]}" "$FRIDGECTL" --bus-address="$addr" suspend --dry-run --no-progress >"$T/sleep.log" 2>&1 || rc=$?
[ $rc -eq 4 ] && grep -q AccessDenied "$T/sleep.log" || fail "Sleep as uid 65534 was not refused (exit $rc)"
echo "FIGURE: permissions: bus policy: fridged as uid 65534 may not own io.fridge.Fridge1 (exits: permission denied), as root it may; uid 65534 reads status, its Sleep is refused with AccessDenied (exit 4)"
