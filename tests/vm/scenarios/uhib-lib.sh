# Helpers of the uhib-* scenarios (fridge's own hibernation image, issue 17)
# swap_page0 FILE: the swap header page of /dev/vda as the disk has it now
swap_page0() {
  sync
  echo 3 >/proc/sys/vm/drop_caches
  dd if=/dev/vda of="$1" bs=4096 count=1 2>/dev/null
}
# The signature at the page's end, and mkswap's UUID (bytes 1036-1051)
swap_sig() { tail -c 10 "$1"; }
swap_uuid() { dd if="$1" bs=1 skip=1036 count=16 2>/dev/null | od -An -tx1 | tr -d ' \n'; }
# val FILE KEY: KEY's value in a key=value output
val() { sed -n "s/^$2=//p" "$1" | head -n1; }
# swap_and_holder: /dev/vda made a swap area in use (its header page kept in
# /run/page0.mkswap), and a process holding a random value in its memory
# ($holder, $value); `ask` prints what it answers over a fifo: "PID VALUE"
swap_and_holder() {
  mkswap /dev/vda >/dev/null || fail "mkswap /dev/vda failed"
  swapon /dev/vda || fail "swapon /dev/vda failed"
  swap_page0 /run/page0.mkswap
  value=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
  mkfifo /run/ask /run/answer
  # (its output away from the log's pipe, or a fail would wait on it)
  sh -c 'v=$1; while read -r q </run/ask; do echo "$$ $v" >/run/answer; done' holder "$value" >/dev/null 2>&1 &
  holder=$!
}
ask() { echo "?" >/run/ask; read -r a </run/answer; echo "$a"; }
