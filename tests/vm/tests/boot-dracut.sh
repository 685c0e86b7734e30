# The dracut module, as boot-initramfs is the initramfs-tools hook's test.
# `make install`'s script, run in the guest's throwaway root, puts the
# dracut module in /usr/lib/dracut/modules.d/90hcache; dracut (the host's
# dracut-core) then builds a generic image with that module and no more
# than a root on a virtio disk needs, and it must hold hcache.ko (with
# libcrc32c and crc32c), 69-hcache.rules as in the tree, the two tools it
# calls, the initramfs-tools boot script byte for byte as
# /usr/lib/hcache/wait-for-cache and the initqueue/settled hook that runs
# it. Uninstall takes every installed file away again.
# The bounded wait, from the image itself: two registered backing devices
# (one clean, one dirty) wait for a cache set that never comes, and the
# image's hook, sourced in the image's own shell as dracut's initqueue
# sources it (twice, then again after rd.hcache.wait, read from the
# image's /etc/cmdline.d), must print exactly what the initramfs-tools
# script prints run beside it, and the sourcing shell must go on.
# As in boot-initramfs, the image is left in the results folder
# (initrd.img), the disk "root" holds an attached, clean hcache backing
# device with an ext4 whose /sbin/init prints HCACHE-ROOT-INIT-REACHED,
# and the disk "cache" its cache set: the harness's second VM boots them
# with root=/dev/hcache0 and must reach that init, attached.
# timeout: 240
# one-kernel: the dracut module and udev rules do not depend on the kernel; 2 min
# long-only: builds and boots a dracut image (2 min); udev-assemble runs the same udev rules on both kernels in make check
# drives: root:64M cache:80M
# The harness's second boot, from the initrd.img left behind:
# reboot-with: root=/dev/hcache0
# expect-console2: dracut: Mounted root filesystem /dev/hcache0
# expect-console2: HCACHE-ROOT-INIT-REACHED
# expect-console2: hcache-boot-test: / is /dev/hcache0
# expect-console2: hcache-boot-test: cache set id 1
# distro-kernel-only: dracut needs the kernel's module files

. "$HC_ROOT/tests/vm/udev.sh"

kdir=$(readlink -f "/lib/modules/$HC_KVER/build")
[ -e "$kdir/Makefile" ] || hc_fail "no kernel headers for $HC_KVER"
command -v dracut >/dev/null || hc_fail "no dracut (the host's dracut-core package)"
dracutmod=/usr/lib/dracut/modules.d/90hcache
installed="/lib/modules/$HC_KVER/updates/hcache.ko /usr/sbin/probe-hcache
/usr/sbin/hcache-register /lib/udev/rules.d/69-hcache.rules
$dracutmod/module-setup.sh $dracutmod/hcache-wait.sh $dracutmod/wait-for-cache"

# shellcheck disable=SC2086 # one word a file
hc_install_small $installed
cmp "$dracutmod/wait-for-cache" "$HC_ROOT/initramfs/scripts/local-block/hcache" ||
	hc_fail "the dracut module's wait-for-cache is not the initramfs-tools boot script"
hc_log "installed; modinfo finds $(modinfo -k "$HC_KVER" -n hcache)"

# A generic image (no host-only guesses about this guest's 9p root): the
# modules a root on a block device needs, hcache, and the drivers of a
# virtio disk with ext4; uncompressed and unstripped, which saves a minute
# under TCG.
img=/tmp/initrd.img
hc_log "running dracut"
dracut --no-hostonly --no-hostonly-cmdline -m "rootfs-block hcache" \
	--drivers "virtio_pci virtio_blk ext4" --no-early-microcode --nofscks \
	--no-compress --nostrip --nohardlink --force "$img" "$HC_KVER" \
	>/tmp/dracut.log 2>&1 || hc_fail "dracut failed: $(tail -n 20 /tmp/dracut.log)"
cp /tmp/dracut.log "$HC_RESULTS/dracut.log"
if grep -i -E 'hcache|error|FAILED' /tmp/dracut.log | grep -v -E 'Including module: hcache|Executing: '; then
	hc_fail "dracut complained"
fi
grep -q 'Including module: hcache' /tmp/dracut.log || hc_fail "dracut did not include the hcache module"
hc_log "dracut: $(stat -c %s "$img") bytes"
# Kept for booting a VM with its root on /dev/hcache0 (boot.rst).
cp "$img" "$HC_RESULTS/initrd.img"

lsinitrd "$img" >/tmp/initrd.list
cp /tmp/initrd.list "$HC_RESULTS/initrd.list"
# in_image PATH: the image holds PATH (or PATH.xz/.zst), under / or /usr.
in_image() {
	awk -v w="$1" '{ n = $9; sub(/\.(xz|zst)$/, "", n) }
		n == w || n == "usr/" w { found = 1; print n; exit }
		END { exit !found }' /tmp/initrd.list
}
for want in "lib/modules/$HC_KVER/updates/hcache.ko" \
	"lib/modules/$HC_KVER/kernel/lib/libcrc32c.ko" \
	"lib/modules/$HC_KVER/kernel/crypto/crc32c_generic.ko" \
	"lib/modules/$HC_KVER/kernel/drivers/block/virtio_blk.ko" \
	lib/udev/rules.d/69-hcache.rules \
	sbin/probe-hcache sbin/hcache-register \
	lib/x86_64-linux-gnu/libblkid.so.1 lib/x86_64-linux-gnu/libuuid.so.1 \
	lib/hcache/wait-for-cache lib/dracut/hooks/initqueue/settled/50-hcache-wait.sh; do
	got=$(in_image "$want") || hc_fail "the image lacks $want"
	hc_log "image has $got"
done
sed -n '/^dracut modules:/,/^=/p' /tmp/initrd.list | grep -q -x hcache ||
	hc_fail "lsinitrd does not list the dracut module hcache"
unpacked=/tmp/unpacked
mkdir "$unpacked"
(cd "$unpacked" && lsinitrd --unpack "$img") || hc_fail "lsinitrd --unpack failed"
cmp "$unpacked/usr/lib/udev/rules.d/69-hcache.rules" "$HC_ROOT/udev/69-hcache.rules" ||
	hc_fail "the image's rules differ from udev/69-hcache.rules"
cmp "$unpacked/usr/lib/hcache/wait-for-cache" "$HC_ROOT/initramfs/scripts/local-block/hcache" ||
	hc_fail "the image's wait-for-cache is not the initramfs-tools boot script"
cmp "$unpacked/usr/lib/dracut/hooks/initqueue/settled/50-hcache-wait.sh" "$HC_ROOT/dracut/90hcache/hcache-wait.sh" ||
	hc_fail "the image's settled hook differs from dracut/90hcache/hcache-wait.sh"

# shellcheck disable=SC2086
hc_uninstall_small $installed
[ ! -e "$dracutmod" ] || hc_fail "install.sh uninstall left $dracutmod"
hc_log "uninstalled"

# The bounded wait, run from the image. rd.hcache.wait for the timed
# step: 3 s, longer on a slow (debug) kernel, as in boot-wait.
W=$((3 * HC_TIME_SCALE))
hc_waiting_backing

# The image's root, with this guest's /proc, /sys and /dev, and the
# setting as dracut --kernel-cmdline would leave it in the image.
for m in proc sys dev; do
	mkdir -p "$unpacked/$m"
	mount --bind "/$m" "$unpacked/$m"
done
mkdir -p "$unpacked/etc/cmdline.d" "$unpacked/run"
echo "rd.hcache.wait=$W" >"$unpacked/etc/cmdline.d/90-hcache-test.conf"
echo "rd.hcache.wait=$W" >/tmp/cmdline
# pass: one pass of dracut's initqueue over its settled hooks, in the
# image's shell with dracut-lib.sh sourced, its stderr (dracut's console)
# to /tmp/console.dracut; and beside it the initramfs-tools script with the
# same setting, its console to /tmp/console.itools.
pass() {
	# shellcheck disable=SC2016 # for the image's shell
	chroot "$unpacked" /bin/sh -c '. /lib/dracut-lib.sh
		for job in /lib/dracut/hooks/initqueue/settled/*.sh; do
			job=$job . "$job"
		done
		echo "the initqueue went on"' >/tmp/loop.out 2>>/tmp/console.dracut ||
		hc_fail "the image's shell failed: $(cat /tmp/loop.out /tmp/console.dracut)"
	grep -q -x "the initqueue went on" /tmp/loop.out ||
		hc_fail "the settled hook ended dracut's loop: $(cat /tmp/loop.out)"
	HCACHE_CMDLINE=/tmp/cmdline HCACHE_CONF=/nonexistent HCACHE_RUNDIR=/tmp/itools-run \
		sh "$HC_ROOT/initramfs/scripts/local-block/hcache" >>/tmp/console.itools 2>&1 ||
		hc_fail "the initramfs-tools script failed"
}
console_has() {
	grep -q -F -- "$1" /tmp/console.dracut || hc_fail "dracut's console lacks: $1; it has: $(cat /tmp/console.dracut)"
}
pass
pass
console_has "(label root), state clean, is waiting for its cache device; waiting up to $W s"
console_has "(label data), state dirty, is waiting for its cache device; waiting up to $W s"
[ "$(wc -l </tmp/console.dracut)" = 2 ] || hc_fail "the hook repeated itself: $(cat /tmp/console.dracut)"
sleep "$W"
pass
pass
console_has "(label root): its cache device did not appear within $W s (rd.hcache.wait); NOT starting it without its cache: rd.hcache.run_without_cache=clean is not set"
console_has "(label data): its cache device did not appear within $W s (rd.hcache.wait); NOT starting it: its cache holds dirty data"
[ "$(wc -l </tmp/console.dracut)" = 4 ] || hc_fail "the hook decided twice: $(cat /tmp/console.dracut)"
[ "$(cat "$c/running") $(cat "$d/running")" = "0 0" ] || hc_fail "a device started"
cmp /tmp/console.dracut /tmp/console.itools ||
	hc_fail "dracut's messages differ from initramfs-tools': $(diff /tmp/console.itools /tmp/console.dracut)"
hc_log "the image's hook, sourced as dracut does, prints what initramfs-tools prints:"
cat /tmp/console.dracut
for m in proc sys dev; do
	umount "$unpacked/$m"
done
hc_write "$c/stop" 1
hc_write "$d/stop" 1
hc_wait test ! -e "$c"
hc_wait test ! -e "$d"
hc_unload

# The root filesystem for the boot, and its cache set.
hc_boot_root_disks
