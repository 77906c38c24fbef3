# Before fridged starts: fridge's own writer, and a scratch cgroup of the
# test's own that the cycle freezes (the holder goes there)
cat >/etc/fridge/fridge.conf <<'EOF_CONF'
[Sleep]
HibernateWriter=fridge
[Freeze]
Roots=fridge-test
EOF_CONF
mkdir -p /sys/fs/cgroup/fridge-test/app
