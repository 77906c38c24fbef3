# Sourced by the hibernation benchmarks (bench/vm-hibernate-*.sh), as
# /usr/lib/vm/hibernate-load-lib.sh: the same memory and the same swap
# for every writer measured.
# hibernate_load MIB: the guest's own binaries and libraries (compressible
# as real memory is) copied into tmpfs up to MIB, so the image is not only
# the initramfs; and no shrinking of memory before the image (image_size
# above it), so every writer saves the same pages
hibernate_load() {
  # the same bytes in every guest: fridge's own writer and resume tool,
  # which only some guests carry, left out
  find /usr/bin /usr/sbin /usr/lib -type f -size +16k ! -name 'fridge-*' 2>/dev/null | sort >/run/load.files
  while xargs cat </run/load.files; do :; done 2>/dev/null | head -c $(($1 * 1048576)) >/dev/shm/load \
    || fail "could not make the load"
  [ "$(du -sm /dev/shm | cut -f1)" -ge "$1" ] || fail "the load is $(du -sm /dev/shm | cut -f1) MiB, not $1"
  echo "load: $(du -sm /dev/shm | cut -f1) MiB in tmpfs; $(sed -n 's/^MemFree: *//p' /proc/meminfo) free"
  echo $((200 * 1024 * 1024)) >/sys/power/image_size
}
# swap_fresh DISK: a new swap area on /dev/DISK, in use
swap_fresh() {
  swapoff "/dev/$1" 2>/dev/null
  mkswap "/dev/$1" >/dev/null || fail "mkswap /dev/$1 failed"
  swapon "/dev/$1" || fail "swapon /dev/$1 failed"
}
