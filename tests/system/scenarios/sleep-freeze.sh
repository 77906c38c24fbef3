# Scenario 13: fridge's drop-ins keep systemd-sleep from freezing user.slice
# itself (systemd >= 256): each of the four sleep services has
# SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=false as systemd reads it, and on
# Debian 12's systemd 252 fridged's version gate says "not affected"
# (SleepFreeze, and fridgectl status).
# system-timeout: 180
for s in suspend hibernate hybrid-sleep suspend-then-hibernate; do
  env=$(systemctl show -p Environment --value systemd-$s.service)
  echo "systemd-$s.service: Environment=$env"
  grep -qw SYSTEMD_SLEEP_FREEZE_USER_SESSIONS=false <<<"$env" || fail "systemd-$s.service lacks fridge's drop-in"
done
# systemd's version is asked asynchronously (again when PID1 joins the
# bus): while booting, "unknown" may stand until PID1 answers
sleep_freeze() { busctl get-property io.fridge.Fridge1 /io/fridge/Fridge1 io.fridge.Fridge1 SleepFreeze; }
known() { v=$(sleep_freeze) && case $v in '"unknown: '*) false ;; esac; }
wait_for 30 known || true
v=$(sleep_freeze) || fail "no SleepFreeze"
echo "SleepFreeze: $v"
case $v in *'"not affected: systemd 252 '*) ;; *) fail "SleepFreeze says $v on systemd 252" ;; esac
fridgectl status | grep SleepFreeze || fail "fridgectl status does not show SleepFreeze"
pass
