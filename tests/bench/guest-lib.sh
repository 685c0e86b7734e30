# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the one-guest bench tools' guest halves (profile-guest.sh,
# pair-guest.sh), after tests/vm/io-lib.sh: their settings from the kernel
# command line and the disks and dm-writecache as tests/bench/guest.sh
# builds them for make bench.

# fio's arguments for bench workload c (4 KiB random writes over 64 MiB)
# and d (random reads of what c wrote), as tests/bench/guest.sh runs them.
# shellcheck disable=SC2034 # used by the scripts that source this
BENCH_JOB_C=(--rw=randwrite --norandommap --offset=128m --size=64m)
# shellcheck disable=SC2034
BENCH_JOB_D=(--rw=randread --norandommap --offset=128m --size=64m)

# bench_arg NAME DEFAULT: hcbench.NAME=VALUE from the kernel command line
# (the host passes its settings that way), or DEFAULT.
bench_arg() {
	local v
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^hcbench\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}

# bench_disks: null_blk ready; BENCH_BACK_ATTRS and BENCH_CACHE_ATTRS the
# attributes of the bench's backing disks (4 ms a request, requests of up
# to 1 MiB where null_blk allows it) and cache disks (50 us).
bench_disks() {
	modprobe -q configfs
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	modprobe -q null_blk nr_devices=0
	BENCH_BACK_ATTRS="irqmode=2 completion_nsec=4000000"
	grep -q max_sectors /sys/kernel/config/nullb/features &&
		BENCH_BACK_ATTRS+=" max_sectors=2048"
	BENCH_CACHE_ATTRS="irqmode=2 completion_nsec=50000"
}

# bench_dmwc CACHE BACK: /dev/mapper/dmwc, dm-writecache in ssd mode with
# 4 KiB blocks over new null_blk disks named CACHE (128 MiB) and BACK
# (8192 MiB); DMWC_CDEV and DMWC_BDEV their nodes. After bench_disks.
bench_dmwc() {
	modprobe dm-writecache || hc_fail "modprobe dm-writecache failed"
	# shellcheck disable=SC2086 # lists of attributes
	DMWC_CDEV=$(hc_nullb "$1" 128 $BENCH_CACHE_ATTRS)
	# shellcheck disable=SC2086
	DMWC_BDEV=$(hc_nullb "$2" 8192 $BENCH_BACK_ATTRS)
	dmsetup create dmwc --table "0 $(hc_size "$DMWC_BDEV") writecache s $DMWC_BDEV $DMWC_CDEV 4096 0" ||
		hc_fail "dmsetup create dmwc failed"
	# No udev in the guest: dmsetup makes the node.
	dmsetup mknodes dmwc >/dev/null 2>&1
	[ -b /dev/mapper/dmwc ] || hc_fail "no /dev/mapper/dmwc"
}
