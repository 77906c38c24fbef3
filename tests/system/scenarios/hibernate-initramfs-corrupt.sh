# Scenario 15 (issue 17, point 5): a corrupt image on an installed
# Debian. Boot 1 hibernates through fridge's writer as in
# hibernate-initramfs; between the boots the host overwrites 64 KiB of the
# swap disk inside the image. Boot 2: fridge's local-premount script runs
# fridge-resume from the guest's own initrd, which refuses the image on
# the console and gives the swap area its own header back; the boot goes
# on to this scenario again, from its top: the swap area is mkswap's page
# byte for byte, blkid sees it by its UUID, systemd turned it on from
# fstab, and it can be turned off and on again.
# system-boot: initramfs-tools 512M
# system-corrupt-swap: 4
# system-console: swap signature restored, boot continues
# system-timeout: 600
. /usr/lib/fridge-system-test/scenarios/hibernate-lib.sh
boot2() {
  swap_on_vdb
  swap_page0 /run/page0.now
  cmp -s /run/page0.now $state/page0.mkswap || fail "the swap header page is not mkswap's byte for byte after the refusal"
  swapoff /dev/vdb || fail "swapoff /dev/vdb failed"
  swapon /dev/vdb || fail "swapon /dev/vdb failed after the refusal"
  swap_on_vdb
  journalctl -b -o cat -u fridged.service | grep -i 'cycle' | head -n 5
  pass
}
first_boot_or boot2
hibernate_boot1
fail "the corrupt-image scenario's first boot was resumed (rc $rc): the image was not corrupted where it lies"
