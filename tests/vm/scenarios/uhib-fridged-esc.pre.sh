# Before fridged starts: fridge's own writer for hibernation
cat >/etc/fridge/fridge.conf <<'EOF_CONF'
[Sleep]
HibernateWriter=fridge
EOF_CONF
