# Before fridged starts: fridge's own writer, and a reboot after the write
cat >/etc/fridge/fridge.conf <<'EOF_CONF'
[Sleep]
HibernateWriter=fridge
HibernateMode=reboot
EOF_CONF
