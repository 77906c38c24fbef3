# Scenario 1: fridged, enabled by the package and stopped, is started by D-Bus activation (a plain busctl call),
# runs under its hardened unit, and systemd-analyze verify and security
# accept it (the exposure score is printed).
# system-timeout: 180
# the package enables fridged (it starts with the machine); stopped, the bus starts it again
systemctl is-enabled -q fridged.service || fail "the package did not enable fridged.service"
systemctl stop fridged.service
systemctl is-active -q fridged.service && fail "fridged still runs after systemctl stop"
busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 Version || fail "activation by busctl failed"
wait_for 10 systemctl is-active -q fridged.service || fail "fridged.service is not active after activation"
pid=$(systemctl show -p MainPID --value fridged.service)
echo "fridged.service active, pid $pid, $(grep -E '^(NoNewPrivs|CapEff)' /proc/$pid/status | tr '\n' ' ')"
grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$pid/status || fail "fridged runs without NoNewPrivileges"
systemctl show -p WatchdogUSec --value fridged.service | grep -qv '^0$' || fail "no watchdog"
fridgectl status || fail "fridgectl status failed"
systemd-analyze verify --man=no /usr/lib/systemd/system/fridged.service || fail "systemd-analyze verify failed" # (no man-db in the guest)
score=$(systemd-analyze security fridged.service --no-pager | tail -n1)
echo "FIGURE: systemd-analyze security fridged.service: $score"
pass
