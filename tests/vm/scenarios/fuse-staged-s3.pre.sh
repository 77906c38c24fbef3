# Before fridged starts: it may freeze only the test's own cgroups, and
# they exist (a FUSE server's, and its client's).
cat >/etc/fridge/fridge.conf <<'EOF_CONF'
[Freeze]
Roots=fridge-test
EOF_CONF
mkdir -p /sys/fs/cgroup/fridge-test/fuse-server /sys/fs/cgroup/fridge-test/client /mnt/slow
