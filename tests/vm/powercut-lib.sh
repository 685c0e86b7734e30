# powercut-lib.sh: power cuts of two memory-backed null_blk disks with
# volatile write caches, for the powercut-* VM tests (sourced after
# io-lib.sh). Each disk has cache_size set, so writes stay in RAM until a
# flush or FUA, and are dropped when the disk is powered off through
# configfs: what a disk's write cache does at a power cut. hcache uses a
# dm-linear device over each disk (pc_c, pc_b), so that a cut is one
# instant for both: both dm devices are suspended without flushing, and
# only then are the disks powered off; nothing reaches either disk after
# the first suspend.
#
# null_blk keeps in its volatile cache only writes to pages it never
# stored (an overwrite of a stored page goes to storage at once), and a
# discard frees the pages again. Tests write to space never written, and
# let hcache discard cache buckets before their reuse.
#
# The caller sets pc_cache_mib, pc_backing_mib and pc_cache_args,
# pc_backing_args (null_blk attributes), then calls pc_disks.
# shellcheck shell=bash disable=SC2034,SC2154 # variables for the tests, and from them

pc_cfg=/sys/kernel/config/nullb

# pc_disks: the two disks (configfs names pcc and pcb) and the dm devices.
pc_disks() {
	# shellcheck disable=SC2086 # the attribute lists are word lists
	hc_nullb pcc "$pc_cache_mib" $pc_cache_args >/dev/null
	# shellcheck disable=SC2086
	hc_nullb pcb "$pc_backing_mib" $pc_backing_args >/dev/null
	pc_c_sectors=$(hc_size "$(pc_disk pcc)")
	pc_b_sectors=$(hc_size "$(pc_disk pcb)")
	pc_dm_point
}

# pc_disk NAME: the /dev node of null_blk NAME now (6.1 names the disk
# after its configfs directory, 6.12 nullbINDEX).
pc_disk() {
	if [ -b "/dev/$1" ]; then
		echo "/dev/$1"
	else
		echo "/dev/nullb$(cat "$pc_cfg/$1/index")"
	fi
}

# pc_dm_point: the dm devices at the disks (created or reloaded); sets
# io-lib.sh's IO_CDEV, IO_BDEV and the rest, and c_raw, b_raw.
pc_dm_point() {
	c_raw=$(pc_disk pcc)
	b_raw=$(pc_disk pcb)
	if dmsetup info pc_c >/dev/null 2>&1; then
		hc_dm_reload pc_c "0 $pc_c_sectors linear $c_raw 0"
		hc_dm_reload pc_b "0 $pc_b_sectors linear $b_raw 0"
	else
		hc_dm_create pc_c "0 $pc_c_sectors linear $c_raw 0" >/dev/null
		hc_dm_create pc_b "0 $pc_b_sectors linear $b_raw 0" >/dev/null
	fi
	IO_CDEV=/dev/$(dmsetup info -c --noheadings -o blkdevname pc_c)
	IO_BDEV=/dev/$(dmsetup info -c --noheadings -o blkdevname pc_b)
	IO_CNAME=${IO_CDEV#/dev/}
	IO_BNAME=${IO_BDEV#/dev/}
	IO_BDEVS=("$IO_BDEV")
}

# pc_format MAKE-HCACHE-ARGS...: format the pair, set IO_UUID, IO_OFFSET,
# IO_SET, IO_DBG.
pc_format() {
	"$(hc_tool make-hcache)" -C "$IO_CDEV" -B "$IO_BDEV" "$@" >/dev/null ||
		hc_fail "make-hcache -C $IO_CDEV -B $IO_BDEV $* failed"
	IO_UUID=$("$(hc_tool hcache-super-show)" "$IO_CDEV" | awk '$1 == "cset.uuid" { print $2 }')
	IO_OFFSET=$("$(hc_tool hcache-super-show)" "$IO_BDEV" | awk '$1 == "backing.data_offset" { print $2 }')
	IO_SET=/sys/fs/hcache/$IO_UUID
	IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
	blockdev --flushbufs "$IO_CDEV" "$IO_BDEV"
}

# pc_cut: the power cut, then everything of hcache gone and unloaded, and
# the disks powered on again under the dm devices.
pc_cut() {
	dmsetup suspend --noflush --noudevsync pc_c pc_b || hc_fail "dmsetup suspend failed"
	echo 0 >"$pc_cfg/pcc/power"
	echo 0 >"$pc_cfg/pcb/power"
	if ! dmsetup load pc_c --table "0 $pc_c_sectors error" ||
		! dmsetup load pc_b --table "0 $pc_b_sectors error" ||
		! dmsetup resume --noudevsync pc_c ||
		! dmsetup resume --noudevsync pc_b; then
		hc_fail "dmsetup: no error tables"
	fi
	[ ! -d "$IO_SET" ] || printf '1\n' >"$IO_SET/stop" 2>/dev/null || :
	hc_wait test ! -e "$IO_SET"
	hc_wait io_no_hcache
	hc_unload
	echo 1 >"$pc_cfg/pcc/power"
	echo 1 >"$pc_cfg/pcb/power"
	udevadm settle 2>/dev/null || :
	pc_dm_point
}

# pc_up: load the module and register the set as at boot (io-lib.sh's
# io_register); hcache0's sysfs directory in $sys.
pc_up() {
	io_register
	sys=$(io_sysdir hcache0)
}

# pc_remove: the dm devices gone (after the set is stopped).
pc_remove() {
	dmsetup remove --noudevsync pc_c pc_b
}
