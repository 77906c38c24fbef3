# Scenario 16 (issue 17, point 5): Esc on an installed Debian, twice. As in
# hibernate-initramfs, `fridgectl hibernate` goes through fridged to the
# socket-activated fridge-image-writer.service, here with its bar and keys
# on the serial line (a drop-in giving --console=/dev/ttyS0, as an admin
# with a serial console would); tmpfs is filled with incompressible data
# so the write lasts. The host types Esc on the serial line at the first
# bar of cycle 1 and when the bar of cycle 2 is half full. Each time the
# machine runs on in the same boot: the cycle ends aborted in the writer's
# words, nothing is frozen, the holder answers, the swap area is mkswap's
# page byte for byte and in use, and `fridgectl history` says how far each
# write got.
# system-boot: initramfs-tools 512M
# system-serial-keys: Esc aborts
# system-serial-keys: \[##########
# system-timeout: 600
. /usr/lib/fridge-system-test/scenarios/hibernate-lib.sh
nothing_resumed() { fail "a second boot: an Esc did not stop the write, and the machine hibernated"; }
first_boot_or nothing_resumed
writer_on_serial
swap_on_vdb
use_fridges_writer
swap_page0 $state/page0.mkswap
holder_and_file
head -c 134217728 /dev/urandom >/dev/shm/fill || fail "cannot fill tmpfs"
for cycle in 1 2; do
  hibernate
  [ $rc -ne 0 ] || fail "cycle $cycle: fridgectl hibernate exited 0: the Esc came too late"
  grep -q "\"event\":\"finished\",\"cycle\":$cycle,\"result\":\"aborted\"" /run/out.json || fail "cycle $cycle did not end aborted"
  grep -q 'the image write was cancelled: Esc typed on the console; no image, unfrozen' /run/out.json \
    || fail "cycle $cycle: the message is not the writer's word on the Esc"
  still_running "cycle $cycle"
done
fridgectl --no-pager history >/run/history.txt
cat /run/history.txt
[ "$(grep -c ' image: the write stopped at [0-9]* of [0-9]* MiB' /run/history.txt)" = 2 ] \
  || fail "fridgectl history does not say where both writes stopped"
pass
