# Before fridged starts: it may freeze only the test's own cgroups. Two
# FUSE cgroups (server and client, from fuse-lib.sh) and four busy ones.
cat >/etc/fridge/fridge.conf <<'EOF_CONF'
[Freeze]
Roots=fridge-test
TimeoutMs=3000
EOF_CONF
mkdir -p /sys/fs/cgroup/fridge-test/fuse-server /sys/fs/cgroup/fridge-test/client /mnt/slow
for i in 1 2 3 4; do mkdir -p /sys/fs/cgroup/fridge-test/busy$i; done
