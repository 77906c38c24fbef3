# Sourced by image.sh --initramfs-tools, after the staging root ($st) has
# fridge's .debs and the kernel's modules: turns it into an installed
# machine's root as Debian's installer leaves it for hibernation, and makes
# CACHE_DIR/root-itools.img and CACHE_DIR/initrd-itools.img from it.
#  - the swap area: in /etc/fstab (systemd turns it on at boot, fridged
#    finds it in /proc/swaps) and in /etc/initramfs-tools/conf.d/resume
#    (RESUME=UUID=, the one source initramfs-tools and fridge's
#    local-premount script read), by a fixed UUID that run-scenario.sh
#    gives the swap disk it makes (mkswap -U), read from CACHE_DIR/swap-uuid;
#  - /boot/initrd.img-REL made by the guest's own update-initramfs,
#    chrooted: initramfs-tools with fridge's hook, which must put
#    fridge-resume and scripts/local-premount/fridge in it.
swap_uuid=5e7f21d9-6b1c-4c8e-9a3d-f1d9e0a2b7c4
t_itools=$SECONDS
printf 'UUID=%s none swap sw 0 0\n' "$swap_uuid" >"$st/etc/fstab"
mkdir -p "$st/etc/initramfs-tools/conf.d" "$st/boot"
printf 'RESUME=UUID=%s\n' "$swap_uuid" >"$st/etc/initramfs-tools/conf.d/resume"
# (mkinitramfs reads the kernel's config: which compressions it can unpack)
cp "$kdir/config" "$st/boot/config-$rel"
chroot "$st" update-initramfs -c -k "$rel" >"$cache/update-initramfs.log" 2>&1 \
  || { cat "$cache/update-initramfs.log" >&2; die "update-initramfs -c -k $rel in the guest's root failed"; }
[ -s "$st/boot/initrd.img-$rel" ] || die "update-initramfs made no /boot/initrd.img-$rel"
chroot "$st" lsinitramfs "/boot/initrd.img-$rel" >"$cache/lsinitramfs.txt" \
  || die "lsinitramfs cannot read the guest's /boot/initrd.img-$rel"
for f in usr/libexec/fridge-resume scripts/local-premount/fridge scripts/local-premount/resume; do
  grep -Eqx "(\./)?$f" "$cache/lsinitramfs.txt" \
    || die "the guest's initrd has no $f (fridge's initramfs-tools hook; list in $cache/lsinitramfs.txt)"
done
grep -Eq "^(\./)?conf/conf.d/resume$" "$cache/lsinitramfs.txt" \
  || die "the guest's initrd has no conf/conf.d/resume (RESUME=): list in $cache/lsinitramfs.txt"
cp "$st/boot/initrd.img-$rel" "$cache/initrd-itools.img"
mkfs_root "$cache/root-itools.img"
echo "$swap_uuid" >"$cache/swap-uuid"
echo "$stamp" >"$cache/root-itools.img.stamp"
echo "image: root-itools.img ${size} MiB and the guest's own initrd ($(du -k "$cache/initrd-itools.img" | cut -f1) KiB, update-initramfs) built in $((SECONDS - t_itools)) s" >&2
