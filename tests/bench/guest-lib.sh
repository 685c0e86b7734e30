# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by every bench guest half (guest.sh for make bench,
# profile-guest.sh, pair-guest.sh, scale-guest.sh), and by vm/io-mkfs for
# bench_mkfs_local, after tests/vm/io-lib.sh: their
# settings from the kernel command line, the device model, and the disks and
# dm-writecache as make bench builds them.

# fio's arguments for bench workload c (4 KiB random writes over 64 MiB),
# d (random reads of what c wrote) and h (4 KiB random writes over another
# 64 MiB, one at a time, each followed by an fsync: a database's commits),
# for make bench and the tools that repeat them. h's --iodepth=1 comes
# after the tools' own --iodepth.
# shellcheck disable=SC2034 # used by the scripts that source this
BENCH_JOB_C=(--rw=randwrite --norandommap --offset=128m --size=64m)
# shellcheck disable=SC2034
BENCH_JOB_D=(--rw=randread --norandommap --offset=128m --size=64m)
# shellcheck disable=SC2034
BENCH_JOB_H=(--rw=randwrite --norandommap --offset=256m --size=64m
	--iodepth=1 --fsync=1)

# bench_arg NAME DEFAULT: hcbench.NAME=VALUE from the kernel command line
# (the host passes its settings that way), or DEFAULT.
bench_arg() {
	local v
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^hcbench\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}

# The device model of every bench tool: backing disks of BENCH_BACK_NSEC a
# request (default 10 ms: a 7200 rpm disk's seek plus half a turn), cache
# disks of BENCH_CACHE_NSEC (default 50 us). The backing disk must be bound
# by its latency, not by the guest's CPU: under TCG one CPU completes about
# 5000 to 6000 null_blk requests a second, and at 4 ms and iodepth 32 the
# backing disk's bound (8000 a second) was above that, so the "slow" disk
# ran as fast as the cache disk and every ratio to it measured CPU time.
# At 10 ms the bound is 3200 a second. report.py checks it held.
BENCH_BACK_NSEC=$(bench_arg back_nsec 10000000)
BENCH_CACHE_NSEC=$(bench_arg cache_nsec 50000)

# bench_disks: null_blk ready; BENCH_BACK_ATTRS and BENCH_CACHE_ATTRS the
# attributes of the bench's backing disks (BENCH_BACK_NSEC a request,
# requests of up to 1 MiB where null_blk allows it) and cache disks
# (BENCH_CACHE_NSEC).
bench_disks() {
	modprobe -q configfs
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	modprobe -q null_blk nr_devices=0
	BENCH_BACK_ATTRS="irqmode=2 completion_nsec=$BENCH_BACK_NSEC"
	grep -q max_sectors /sys/kernel/config/nullb/features &&
		BENCH_BACK_ATTRS+=" max_sectors=2048"
	BENCH_CACHE_ATTRS="irqmode=2 completion_nsec=$BENCH_CACHE_NSEC"
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

# bench_mkfs_local: mkfs.ext4's binary, the libraries it loads and its
# configuration copied from the host's root (virtio-9p, under the guest's
# overlay) into the overlay's upper layer, in the guest's memory. Every
# mkfs run opened and looked up these files over 9p: about 90 ms of a
# 0.7 s run on the raw cache disk (6.1, 2026-12-02), a wait for the host
# whose length is the host's: on the instruction clock it costs the guest
# what the host's load makes it, and e moved with other guests on the
# host. A write open (appending nothing) copies a file up, data and all.
# vm/io-mkfs, on the host's clock, keeps reading them over 9p: its runs
# are too short to time without the first run's loading (d318115).
bench_mkfs_local() {
	local bin f
	bin=$(command -v mkfs.ext4) || hc_fail "no mkfs.ext4"
	for f in "$bin" /etc/ld.so.cache /etc/mke2fs.conf \
		$(ldd "$bin" | awk '$3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
		f=$(readlink -f "$f")
		[ -f "$f" ] || continue
		: >>"$f" 2>/dev/null || hc_log "mkfs.ext4: $f stays on 9p"
	done
	mkfs.ext4 -V >/dev/null 2>&1 || true
}
