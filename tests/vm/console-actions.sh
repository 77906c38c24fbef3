# Sourced by the vm and system tiers' run-scenario.sh: what the host does
# to a running guest when its console (T/boot.log) shows a pattern. Uses
# $T, $qemu_pid and $power_cut of the runner.
# Esc once per pattern of PATTERNS, in order, each when the console shows
# it after the previous Esc (an earlier write's bar does not count): BYTES
# (printf %b) written to FIFO, on the serial line or to the monitor
# (vm-keyboard-keys: sendkey, the PS/2 keyboard)
# Usage: press_esc PATTERNS FIFO BYTES WHAT (WHAT: the log's words for it)
press_esc() {
  exec 6>"$2"
  local pattern from=1
  while IFS= read -r pattern; do
    # grep -q stops at the match and tail may die of SIGPIPE: under the
    # runners' pipefail that would read as no match, and the Esc would
    # wait until little enough of the console followed the pattern
    until { tail -c "+$from" "$T/boot.log" 2>/dev/null || true; } | grep -q -- "$pattern"; do sleep 0.02; done
    printf '%b' "$3" >&6
    from=$(($(stat -c %s "$T/boot.log") + 1))
    echo "$4 (the console showed \"$pattern\")" >>"$T/qemu.out"
  done <<<"$1"
}
# A power cut: SIGKILL of this boot's qemu the moment the console shows the
# pattern (what the guest wrote to its disks stays: they are files on the host)
cut_power() {
  until grep -q -- "$power_cut" "$T/boot.log" 2>/dev/null; do sleep 0.02; done
  kill -KILL "$qemu_pid"
  : >"$T/power-cut"
  echo "power cut: qemu SIGKILLed when the console showed \"$power_cut\"" >>"$T/qemu.out"
}
