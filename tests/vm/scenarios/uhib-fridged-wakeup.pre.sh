# Before fridged starts: fridge's own writer, and a scratch cgroup of the
# test's own that the cycle freezes (the holder goes there)
. /usr/lib/vm/uhib-lib.sh
writer_and_scratch_conf
