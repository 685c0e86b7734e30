# `make install`'s script, run in the guest's throwaway root, puts the
# module, tools, udev rules and initramfs-tools hook and boot script in
# place; mkinitramfs then builds an initramfs holding hcache.ko (with the
# modules it needs), 69-hcache.rules calling /usr/sbin tools, those tools
# and their libraries, and the local-block script. Uninstall takes every
# installed file away again. The image is left in the results folder
# (initrd.img), the disk "root" holds an hcache backing device with an
# ext4 on it whose /sbin/init prints HCACHE-ROOT-INIT-REACHED, and the disk
# "cache" its cache set (the backing device is attached and clean, so it
# waits for the set). A VM booted with them and root=/dev/hcache0 must
# assemble the set in its initramfs and reach that init, attached: the
# harness boots that second VM after the test ("reboot-with" below).
# timeout: 180
# one-kernel: the initramfs hook and udev rules do not depend on the kernel; 3 min
# long-only: builds and boots an initramfs (3 min); udev-assemble runs the same udev rules on both kernels in make check
# drives: root:64M cache:80M
# The harness's second boot, from the initrd.img left behind:
# reboot-with: root=/dev/hcache0
# expect-console2: HCACHE-ROOT-INIT-REACHED
# expect-console2: hcache-boot-test: cache set id 1
# distro-kernel-only: mkinitramfs needs /boot/config-KVER and module files

. "$HC_ROOT/tests/vm/udev.sh"

kdir=$(readlink -f "/lib/modules/$HC_KVER/build")
[ -e "$kdir/Makefile" ] || hc_fail "no kernel headers for $HC_KVER"
installed="/lib/modules/$HC_KVER/updates/hcache.ko /usr/sbin/probe-hcache
/usr/sbin/hcache-register /usr/sbin/make-hcache /usr/sbin/hcache-super-show
/usr/share/man/man8/make-hcache.8 /lib/udev/rules.d/69-hcache.rules
/usr/share/initramfs-tools/hooks/hcache
/usr/share/initramfs-tools/scripts/local-block/hcache"

# shellcheck disable=SC2086 # one word a file
hc_install_small $installed
modinfo -k "$HC_KVER" -n hcache | grep -q "/updates/hcache.ko" ||
	hc_fail "depmod does not know the installed hcache.ko: $(modinfo -k "$HC_KVER" -n hcache 2>&1)"
hc_log "installed; modinfo finds $(modinfo -k "$HC_KVER" -n hcache)"

# The system's initramfs-tools configuration, with only the modules the
# hooks ask for (MODULES=list: quick under TCG) and gzip.
conf=/tmp/initramfs-tools
cp -r /etc/initramfs-tools "$conf"
sed -i 's/^MODULES=.*/MODULES=list/; s/^COMPRESS=.*/COMPRESS=gzip/' "$conf/initramfs.conf"
# What a VM with its root on /dev/hcache0 over virtio needs besides.
printf '%s\n' virtio_pci virtio_blk ext4 >>"$conf/modules"
hc_log "running mkinitramfs"
mkinitramfs -d "$conf" -o /tmp/initrd.img "$HC_KVER" 2>/tmp/mkinitramfs.err ||
	hc_fail "mkinitramfs failed: $(cat /tmp/mkinitramfs.err)"
if grep -i hcache /tmp/mkinitramfs.err; then
	hc_fail "the hook complained"
fi
hc_log "mkinitramfs: $(stat -c %s /tmp/initrd.img) bytes"
# Kept for booting a VM with its root on /dev/hcache0 (boot.rst).
cp /tmp/initrd.img "$HC_RESULTS/initrd.img"

lsinitramfs /tmp/initrd.img >/tmp/initrd.list
cp /tmp/initrd.list "$HC_RESULTS/initrd.list"
# in_image PATH: the image holds PATH (or PATH.xz/.zst), under / or /usr.
in_image() {
	awk -v w="$1" '{ n = $0; sub(/\.(xz|zst)$/, "", n) }
		n == w || n == "usr/" w { found = 1; print n; exit }
		END { exit !found }' /tmp/initrd.list
}
for want in "lib/modules/$HC_KVER/updates/hcache.ko" \
	"lib/modules/$HC_KVER/kernel/lib/libcrc32c.ko" \
	"lib/modules/$HC_KVER/kernel/drivers/block/virtio_blk.ko" \
	lib/udev/rules.d/69-hcache.rules \
	sbin/probe-hcache sbin/hcache-register \
	lib/x86_64-linux-gnu/libblkid.so.1 lib/x86_64-linux-gnu/libuuid.so.1 \
	scripts/local-block/hcache; do
	got=$(in_image "$want") || hc_fail "the initramfs lacks $want"
	hc_log "initramfs has $got"
done
mkdir /tmp/unpacked
unmkinitramfs /tmp/initrd.img /tmp/unpacked
rules=$(find /tmp/unpacked -name 69-hcache.rules | head -n 1)
cmp "$rules" "$HC_ROOT/udev/69-hcache.rules" || hc_fail "the initramfs's rules differ from udev/69-hcache.rules"
# shellcheck disable=SC2016 # $devnode is udev's, not ours
grep -q -F 'RUN+="/usr/sbin/hcache-register --async $devnode"' "$rules" || hc_fail "the rules do not call /usr/sbin/hcache-register"
grep -q '/scripts/local-block/hcache' "$(find /tmp/unpacked -path '*/scripts/local-block/ORDER' | head -n 1)" ||
	hc_fail "the local-block script is not in scripts/local-block/ORDER"

# shellcheck disable=SC2086
hc_uninstall_small $installed
hc_log "uninstalled"

# The root filesystem for the boot, and its cache set.
hc_boot_root_disks
