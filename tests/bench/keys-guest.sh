#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-keys, the guest half (run by tests/bench/keys.sh through
# tests/vm/run-test.sh with the debug build, on the instruction clock):
# what a set's number of keys costs at registration. A 64 GiB null_blk
# cache device (512 KiB buckets) in front of a 1 TiB one, memory-backed:
# only what is written takes memory, and their I/O completes in the guest,
# so the instruction clock counts it (a virtio disk's completions come
# from the host, and a guest idle waiting for one jumps to its next
# timer: on qcow2 drives every metadata I/O cost a tick); the debug build's fill
# inserts clean 4 KiB keys, one every 8 KiB, each given cache space as a
# write would (no data is written: registration reads only metadata).
# For each count in hcbench.keys (default 100000 1000000 10000000), the
# set is filled up to it, its btree written (flush), stopped cleanly, the
# page cache dropped, and registered again; then the backing device
# registers and one 4 KiB read of a key's block is timed; then fio reads
# the keys' blocks at random for 5 s, one at a time, every read a hit
# with every node cached.
#
# Output in $HC_RESULTS/keys.txt, one line per count: keys, registration
# seconds (the register write until the set's directory shows), seconds
# from the register write to the first read served, btree nodes cached
# after registration, the vmalloc and slab growth in KiB across the
# registration, and the hits a second (fio's JSON in hits-KEYS.json).
# timeout: 3000
# memory: 6G

. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/bench/guest-lib.sh"

KEYS=$(bench_arg keys "100000,1000000,10000000")
KEYS=${KEYS//,/ }
R=$HC_RESULTS
batch=100000

io_setup $((64 * 1024)) $((1024 * 1024)) --bucket 512k
hc_log "make-hcache $IO_MKFS_SECS s, registration $IO_REG_SECS s"
: >"$R/keys.txt"
have=0
for want in $KEYS; do
	t0=$(io_now)
	while [ $have -lt "$want" ]; do
		n=$((want - have < batch ? want - have : batch))
		hc_write "$IO_DBG/fill" "1 $((have * 16)) $n 8 16"
		have=$((have + n))
	done
	[ "$(io_read_num "$IO_SET/internal/btree_leaf_keys")" = "$have" ] ||
		hc_fail "the tree holds $(cat "$IO_SET/internal/btree_leaf_keys") keys, not $have"
	hc_log "filled to $have keys in $(io_elapsed "$t0") s"
	hc_write "$IO_DBG/flush" btree
	io_stop
	sync
	echo 3 >/proc/sys/vm/drop_caches
	read -r vm0 slab0 < <(io_meminfo)
	# The write returns once the set is loaded, so its directory is
	# there at once. hc_wait would first start seq, a program read over
	# 9p (the page cache just dropped) while the guest idles, and an idle
	# guest's instruction clock jumps to its next timer: that put 0.05 to
	# 0.6 s of noise into the figure.
	t0=$EPOCHREALTIME
	hc_write /sys/fs/hcache/register "$IO_CDEV"
	[ -d "$IO_SET" ] || hc_wait test -d "$IO_SET"
	t1=$EPOCHREALTIME
	read -r vm1 slab1 < <(io_meminfo)
	io_register_backing "$IO_BDEV" >/dev/null
	# The block of the middle key.
	dd if=/dev/hcache0 of=/dev/null bs=4k count=1 skip=$((have / 2 * 2)) \
		iflag=direct status=none || hc_fail "the first read failed"
	t2=$(io_now)
	io_stat_is hcache0 cache_hits 1 || hc_fail "the first read was not a hit: $(io_stats_line hcache0)"
	nodes=$(io_read_num "$IO_SET/internal/btree_nodes_cached")
	# Hits with every node cached: 4 KiB random reads of the keys' blocks
	# only (8 KiB aligned), one at a time; on the instruction clock the
	# IOPS measure the instructions a hit costs.
	fio --name=hits --filename=/dev/hcache0 --direct=1 --ioengine=psync \
		--rw=randread --bs=4k --blockalign=8k --norandommap --size=$((have * 8192)) \
		--runtime=5 --time_based --output-format=json --output="$R/hits-$have.json" \
		>/dev/null 2>&1 || hc_fail "fio's hits at $have keys failed"
	# fio may print a notice before its JSON.
	iops=$(python3 -c 'import json, sys; t = open(sys.argv[1]).read(); print(int(json.loads(t[t.index("{"):])["jobs"][0]["read"]["iops"]))' "$R/hits-$have.json") ||
		hc_fail "no IOPS in fio's output: $(head -3 "$R/hits-$have.json")"
	io_stat_is hcache0 cache_misses 0 || hc_fail "reads of the keys' blocks missed: $(io_stats_line hcache0)"
	echo "$have $(io_elapsed_at "$t0" "$t1") $(io_elapsed_at "$t0" "$t2") $nodes $((vm1 - vm0)) $((slab1 - slab0)) $iops" >>"$R/keys.txt"
	hc_log "$have keys: registration $(io_elapsed_at "$t0" "$t1") s, first read $(io_elapsed_at "$t0" "$t2") s after the register write; $nodes nodes cached; vmalloc +$(((vm1 - vm0) / 1024)) MiB, slab +$(((slab1 - slab0) / 1024)) MiB; $iops hits a second"
done
io_teardown
