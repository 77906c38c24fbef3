# 20 scratch cgroups with a sleeping process each, fridged's to freeze
cat >/etc/fridge/fridge.conf <<'EOF_CONF'
[Freeze]
Roots=bench
EOF_CONF
for i in $(seq 1 20); do
  mkdir -p /sys/fs/cgroup/bench/g$i
  sh -c "echo \$\$ >/sys/fs/cgroup/bench/g$i/cgroup.procs && exec sleep 100000" >/dev/null 2>&1 &
done
