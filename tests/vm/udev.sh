# udev.sh: helpers for the udev-* and boot-* VM tests, sourced by them after
# lib.sh. The guest's root is a throwaway overlay, so the rules can be
# installed where a real system has them.

HC_UDEV_LOG=/tmp/udevd.log
HC_UDEV_RULES=/lib/udev/rules.d/69-hcache.rules

# hc_udev_install_rules: install udev/69-hcache.rules as `make install`
# would, but calling the tools of this tree instead of /usr/sbin.
hc_udev_install_rules() {
	sed "s#/usr/sbin/#$HC_ROOT/tools/#g" "$HC_ROOT/udev/69-hcache.rules" \
		>"$HC_UDEV_RULES" || hc_fail "cannot install $HC_UDEV_RULES"
	grep -q "$HC_ROOT/tools/hcache-register" "$HC_UDEV_RULES" ||
		hc_fail "the installed rules do not call $HC_ROOT/tools/hcache-register"
}

# hc_udev_start: run systemd-udevd in the background, with debug output in
# $HC_UDEV_LOG (not the kernel log), and wait until it answers.
hc_udev_start() {
	SYSTEMD_LOG_TARGET=console /lib/systemd/systemd-udevd --debug \
		>"$HC_UDEV_LOG" 2>&1 &
	HC_UDEVD_PID=$!
	# Keep udevd's log with the results, whatever the outcome.
	trap 'cp "$HC_UDEV_LOG" "$HC_RESULTS/udevd.log" 2>/dev/null || true' EXIT
	hc_wait hc_udev_ping
	hc_log "systemd-udevd running (pid $HC_UDEVD_PID)"
}

hc_udev_ping() {
	udevadm control --ping 2>/dev/null
}

# hc_udev_stop: stop the udevd that hc_udev_start started.
hc_udev_stop() {
	udevadm settle --timeout=30 || true
	udevadm control --exit || kill "$HC_UDEVD_PID" 2>/dev/null || true
	wait "$HC_UDEVD_PID" 2>/dev/null || true
}

# hc_udev_trigger ACTION DEV...: send ACTION (add, change) for the devices
# and wait until udev has handled them.
hc_udev_trigger() {
	local action=$1
	shift
	udevadm trigger --action="$action" --settle "$@" ||
		hc_fail "udevadm trigger --action=$action $*"
	udevadm settle --timeout=30 || hc_fail "udevadm settle timed out"
}

# hc_udev_no_failures: udevd ran no program that failed and logged no
# error about an hcache rule or tool. "Failed to find module 'hcache'" is
# the kmod builtin's debug-level note that the module is not installed
# (the tests insert it by path); it is not an error.
hc_udev_no_failures() {
	local bad
	bad=$(grep -E "failed with exit code|69-hcache.rules.*(error|invalid|unknown)|Failed to" \
		"$HC_UDEV_LOG" | grep -i -E "hcache" |
		grep -v -F "Failed to find module 'hcache'" || true)
	[ -z "$bad" ] || hc_fail "udevd reported: $bad"
}

# hc_link_is LINK TARGET: LINK exists and resolves to TARGET.
hc_link_is() {
	[ -L "$1" ] && [ "$(readlink -f "$1")" = "$2" ]
}

# hc_small_modules MODULE...: a module tree for this kernel at
# /tmp/modules/$HC_KVER holding only MODULE... and what they need, with the
# kernel's module lists, and print its path. depmod (make install's, DKMS's,
# mkinitramfs's, dracut's) over all of a kernel's modules takes minutes
# under TCG: the caller mounts this tree (in the guest's overlay) where
# they look.
hc_small_modules() {
	local mods=/lib/modules/$HC_KVER small=/tmp/modules/$HC_KVER f m
	mkdir -p "$small"
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		cp "$mods/$f" "$small/"
	done
	for m in "$@"; do
		modprobe -S "$HC_KVER" --show-depends "$m"
	done | awk '$1 == "insmod" { print $2 }' | sort -u | while read -r f; do
		install -D -m 0644 "$f" "$small/${f#"$mods"/}"
	done
	echo "$small"
}

# hc_boot_root_disks: the drives "root" and "cache" (# drives: root:64M
# cache:80M) made what the harness's second boot (# reboot-with:
# root=/dev/hcache0) starts from: root an attached, clean hcache backing
# device labelled hcroot holding an ext4 whose /sbin/init (busybox) prints
# "hcache-boot-test: / is ...", "hcache-boot-test: cache set id ..." and
# HCACHE-ROOT-INIT-REACHED, then powers off; cache its cache set. Both are
# left stopped and the module unloaded.
hc_boot_root_disks() {
	local rootfs=/tmp/rootfs root cache set_uuid
	mkdir -p $rootfs/bin $rootfs/sbin $rootfs/proc $rootfs/sys $rootfs/dev $rootfs/run $rootfs/tmp
	cp /bin/busybox $rootfs/bin/busybox
	cat >$rootfs/sbin/init <<'INIT'
#!/bin/busybox sh
export PATH=/bin
busybox mount -t proc proc /proc 2>/dev/null
busybox mount -t sysfs sysfs /sys 2>/dev/null
echo "hcache-boot-test: / is $(busybox awk '$2 == "/" { print $1 }' /proc/mounts | busybox tail -n 1)"
echo "hcache-boot-test: cache set id $(busybox cat /sys/block/hcache0/hcache/cache_set_id)"
busybox ls -l /dev/hcache/by-uuid /dev/hcache/by-label
echo HCACHE-ROOT-INIT-REACHED
busybox poweroff -f
INIT
	chmod 0755 $rootfs/sbin/init
	root=$(hc_drive root)
	cache=$(hc_drive cache)
	"$(hc_tool make-hcache)" -C "$cache" -B "$root" --label hcroot >/dev/null
	set_uuid=$("$(hc_tool hcache-super-show)" "$cache" | awk '$1 == "cset.uuid" { print $2 }')
	hc_load
	hc_write /sys/fs/hcache/register "$root"
	hc_write /sys/fs/hcache/register "$cache"
	hc_wait test -b /dev/hcache0
	hc_wait grep -q '^1$' /sys/block/hcache0/hcache/cache_set_id
	mkfs.ext4 -q -L hcroot -d $rootfs /dev/hcache0 || hc_fail "mkfs.ext4 on /dev/hcache0 failed"
	# Stopping the set stops its backing device: both are left attached.
	hc_write "/sys/fs/hcache/$set_uuid/stop" 1
	hc_wait test ! -e /dev/hcache0
	hc_wait test ! -e "/sys/fs/hcache/$set_uuid"
	hc_unload
	hc_log "disks root and cache: an attached backing device holding an ext4 root with /sbin/init, and its cache set"
}

# hc_install_small INSTALLED...: make install (scripts/install.sh, for the
# kernel whose headers are $kdir) over a module tree of this kernel holding
# only what a VM with its root on hcache over virtio needs
# (hc_small_modules), mounted over /lib/modules/$HC_KVER, so that its depmod
# and the initramfs builder stay quick; every file of INSTALLED... must be
# there. hc_uninstall_small INSTALLED...: make uninstall, none of them may
# be left, and the tree is unmounted.
hc_install_small() {
	local mods=/lib/modules/$HC_KVER f
	mount --bind "$(hc_small_modules virtio_pci virtio_blk ext4 libcrc32c crc32c_generic)" "$mods"
	hc_log "module tree: $(find "$mods" -name '*.ko*' | wc -l) modules"
	"$HC_ROOT/scripts/install.sh" install "" /usr/sbin /usr/share/man "$kdir" ||
		hc_fail "install.sh install failed"
	for f in "$@"; do
		[ -f "$f" ] || hc_fail "install.sh did not install $f"
	done
}
hc_uninstall_small() {
	local f
	"$HC_ROOT/scripts/install.sh" uninstall "" /usr/sbin /usr/share/man "$kdir" ||
		hc_fail "install.sh uninstall failed"
	for f in "$@"; do
		[ ! -e "$f" ] || hc_fail "install.sh uninstall left $f"
	done
	umount "/lib/modules/$HC_KVER"
}

# hc_waiting_backing: two registered backing devices, $clean (clean,
# labelled root) and $dirty (dirty, labelled data), formatted for the
# cache set $cset that never comes, so that both wait without running;
# $c and $d are their hcache sysfs directories. Loads the module.
hc_waiting_backing() {
	clean=$(hc_nullb clean 32)
	dirty=$(hc_nullb dirty 32)
	cset=01234567-89ab-cdef-0123-456789abcdef
	"$(hc_tool make-hcache)" -B "$clean" --label root --cset-uuid $cset >/dev/null
	"$(hc_tool make-hcache)" -B "$dirty" --label data --cset-uuid $cset >/dev/null
	python3 "$HC_ROOT/tests/vm/sbedit.py" "$clean" flags=$((1 << 4))
	python3 "$HC_ROOT/tests/vm/sbedit.py" "$dirty" flags=$((2 << 4))
	hc_load
	hc_write /sys/fs/hcache/register_quiet "$clean"
	hc_write /sys/fs/hcache/register_quiet "$dirty"
	c=/sys/class/block/$(basename "$(readlink -f "$clean")")/hcache
	d=/sys/class/block/$(basename "$(readlink -f "$dirty")")/hcache
	[ "$(cat "$c/running") $(cat "$d/running")" = "0 0" ] || hc_fail "a device started at registration"
}
