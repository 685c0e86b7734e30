#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# hcache: dracut module, the counterpart of the initramfs-tools hook
# (initramfs/hooks/hcache). Puts into the initramfs what assembles hcache
# devices at boot: the module, 69-hcache.rules and the two tools they call;
# and what bounds the wait for a missing cache device: the initramfs-tools
# boot script itself (initramfs/scripts/local-block/hcache, installed beside
# this file as wait-for-cache by scripts/install.sh), run by hcache-wait.sh,
# an initqueue/settled hook. Settings come from the kernel command line
# (and dracut's /etc/cmdline.d). Installed in
# /usr/lib/dracut/modules.d/90hcache/; read Documentation/hcache/boot.rst.
#
# dracut sources this file and sets hostonly, mount_needs, host_fs_types,
# kernel and moddir:
# shellcheck disable=SC2154

# hcache_dev DEV: DEV is /dev/hcacheN (or a partition of it), or a
# registered backing or cache device (its sysfs directory has hcache/), or
# blkid names it hcache.
hcache_dev() {
	local name
	name=$(readlink -f "$1")
	name=${name##*/}
	[[ $name == hcache* ]] && return 0
	[[ ${host_fs_types[$1]} == hcache ]] && return 0
	[[ -d /sys/class/block/$name/hcache ]]
}

# called by dracut. Without the tools: never (1). Host-only: when a device
# the host needs at boot (the root, /usr, and what they sit on) is hcache;
# else only when asked for (--add hcache: 255). A generic image: always.
check() {
	local dev

	require_binaries /usr/sbin/probe-hcache /usr/sbin/hcache-register || return 1
	if [[ $hostonly ]] || [[ $mount_needs ]]; then
		for dev in "${!host_fs_types[@]}"; do
			hcache_dev "$dev" && return 0
		done
		return 255
	fi
	return 0
}

# called by dracut. udev assembles the devices.
depends() {
	echo udev-rules
	return 0
}

# called by dracut. The module and what it needs (crc32c), whether or not
# the host has it loaded now. A kernel without hcache built for it gets
# none, and a note, as with initramfs-tools.
installkernel() {
	hostonly='' instmods -c -s hcache ||
		dwarn "hcache: no hcache module for kernel $kernel; hcache devices will not assemble at boot"
}

# called by dracut
install() {
	inst_multiple /usr/sbin/probe-hcache /usr/sbin/hcache-register
	# A copy in /etc/udev/rules.d overrides the packaged one (host-only
	# images take both, and udev reads the /etc one), as udev does.
	inst_rules 69-hcache.rules
	# What the boot script runs besides shell builtins.
	inst_multiple cat grep mkdir
	inst_script "$moddir/wait-for-cache" /usr/lib/hcache/wait-for-cache
	inst_hook initqueue/settled 50 "$moddir/hcache-wait.sh"
	dracut_need_initqueue
}
