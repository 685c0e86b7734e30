#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-keys, the guest half (run by tests/bench/keys.sh through
# tests/vm/run-test.sh with the debug build, on the instruction clock):
# what a set's number of keys costs at registration. A 64 GiB null_blk
# cache device (512 KiB buckets) in front of a 1 TiB one, memory-backed:
# only what is written takes memory, and their I/O completes in the guest,
# so the instruction clock counts it (a virtio disk's completions come
# from the host, and a guest idle waiting for one jumps to its next
# timer: on qcow2 drives every metadata I/O cost a tick). The keys are
# clean, of 512 bytes, one every KiB (the i-th at sector 2i of hcache0):
# the first hcbench.real_keys (default 1000000) are written by fio through
# hcache0 in writethrough (sequential_cutoff 0), the rest by the debug
# build's fill with its data mode, which gives each key cache space as a
# write would and writes zeros there, what the backing device holds. 512
# bytes, not 4 KiB, so that the 10 million keys' data (4.8 GiB) fits in
# the guest's memory: 14 GiB, for about 5.5 GiB of cache-device pages, 1
# GiB of backing-device pages and 1.6 GiB of nodes at 10 million keys (in
# 10 GiB the run stalled at the end of its fill: a null_blk write that
# allocated pages held up the fill, and the fill held meta_lock).
# For each count in hcbench.keys (default 100000 1000000 10000000), the
# set is filled up to it, its btree written (flush), stopped cleanly, the
# page cache dropped (and the programs the timed span runs read back in),
# and registered again; then the backing device registers and one 4 KiB
# read of a key's block is timed. After a clean stop the mark pass runs
# behind I/O: its end is waited for (its time from the kernel log). Three
# times, the medians counting; then the tree must count every key, and
# fio reads the keys' blocks at random for 5 s, one at a time, every read
# a hit with every node cached.
#
# Then the registration after a power cut: hcbench.cut_keys (default
# 10000) more keys, spread evenly over the gaps between the keys that
# count's fill added (so that they land in many leaves, as random writes
# would, and split none), and only the journal written (flush journal, as
# an fsync would): they are durable in the journal and in no btree node.
# The cache disk's power is cut (null_blk's power 0, as vm/fail-cache-
# unplug does; the set sees its device removed) and the set stopped: it
# can write neither its nodes nor a clean superblock. Powered on again,
# the page cache dropped, the set registers as after the clean stop,
# timed the same way; it must log that it was not shut down cleanly and
# recovered from the journal, replay at least one key, and hold every
# key, the journalled ones too, and a read of the last of those must be a
# hit. Each count's fill counts the keys of the cuts before it, so the
# clean registration always holds exactly the count.
#
# Why not the power cut of vm/powercut-*: there a dm-linear device over
# each disk is suspended first, so that both disks stop at one instant,
# and the disks have volatile write caches (cache_size). The backing disk
# holds nothing at stake here (the keys are clean and no data is
# written); every metadata write of hcache is FUA, which a volatile cache
# does not hold back, so it would lose nothing; and dm-linear with a
# volatile cache under the cache device made a hit 18% dearer on the
# instruction clock (9598 hits a second at 20,000 keys became 8116; 3%
# of it the cache's), shifting the other columns. A removed device
# fails every I/O from the instant of the cut, as dm's error table does.
#
# Output in $HC_RESULTS/keys.txt, one line per count: keys, registration
# seconds (the register write until the set's directory shows), seconds
# from the register write to the first read served, btree nodes cached
# once the mark pass ended, the vmalloc and slab growth in KiB from before
# the registration to then, the hits a second (fio's JSON in
# hits-KEYS.json), and, for the registration after the power cut (the set
# then holds KEYS plus hcbench.cut_keys keys), its seconds, the journal
# entries it replayed and the keys in them (from its "journal replayed"
# line); then the seconds the mark pass behind I/O took (0 if it ran
# before the set appeared).
# One CPU, as make bench's guest: under TCG two CPUs run round-robin on
# one host thread and share one instruction clock, so the mark pass behind
# I/O, busy on the other CPU, was charged in full to the first read's
# time, whatever its nice (at 1 million keys: 2.63 and 2.79 s in two
# registrations, 1.15 s in a third where the scheduler put the pass beside
# the reader). On one CPU the scheduler weighs the pass at its nice, as on
# a machine where it has a CPU of its own.
# timeout: 3000
# memory: 14G
# smp: 1
# The power cut fails the set's metadata writes as it stops:
# expect-log: hcache: .*: cache set .* failed: the cache device was removed; going on without it
# expect-log: hcache: .*: cache set .*: metadata write at sector [0-9]+ failed: error -5

. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/bench/guest-lib.sh"

KEYS=$(bench_arg keys "100000,1000000,10000000")
KEYS=${KEYS//,/ }
CUT_KEYS=$(bench_arg cut_keys 10000)
REAL_KEYS=$(bench_arg real_keys 1000000)
R=$HC_RESULTS
batch=100000
unclean="was not shut down cleanly; recovered from the journal"

# kb_keys_are N [WHEN]: the tree holds N keys.
kb_keys_are() {
	[ "$(io_read_num "$IO_SET/internal/btree_leaf_keys")" = "$1" ] ||
		hc_fail "the tree holds $(cat "$IO_SET/internal/btree_leaf_keys") keys, not $1${2:+ $2}"
}

# kb_register: the page cache dropped, the cache device registered: sets
# t0 (the register write), t1 (the set's directory shows), and vm0,
# slab0, vm1, slab1 (io_meminfo before and after).
kb_register() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	# The programs the timed span runs, read back in over 9p now: a
	# guest idle waiting for 9p jumps its instruction clock ahead, which
	# moved the first read by seconds.
	seq 1 >/dev/null
	readlink -f /dev/null >/dev/null
	cat /dev/null
	sleep 0
	dd if=/dev/zero of=/dev/null count=1 status=none
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
}

# kb_register_backing: the backing device registered and running attached
# as hcache0. io_register_backing's hc_wait polls every 0.1 s, which would
# round the first read's time up by as much, twice.
kb_register_backing() {
	local i
	hc_write /sys/fs/hcache/register "$IO_BDEV"
	for ((i = 0; i < 6000; i++)); do
		io_attached hcache0 && return 0
		sleep 0.01
	done
	hc_fail "$IO_BDEV did not run attached as hcache0 within 60 s of its registration"
}

# kb_pass_wait: the mark pass behind I/O of the set ended; sets pass_ms to
# the time it took, from the kernel log.
kb_pass_wait() {
	local i
	for ((i = 0; i < 6000; i++)); do
		grep -q " $IO_UUID background-mark " /sys/fs/hcache/loading || break
		sleep 0.1
	done
	grep -q " $IO_UUID background-mark " /sys/fs/hcache/loading &&
		hc_fail "the mark pass behind I/O did not end in 600 s at $want keys"
	pass_ms=$(dmesg | sed -n "s/.*cache set $IO_UUID: [0-9]* leaves, $want keys counted behind I\\/O in \\([0-9]*\\) ms\$/\\1/p" | tail -1)
	[ -n "$pass_ms" ] || hc_fail "no mark pass behind I/O counting $want keys in the kernel log"
}

io_setup $((64 * 1024)) $((1024 * 1024)) --bucket 512k
hc_log "make-hcache $IO_MKFS_SECS s, registration $IO_REG_SECS s"
: >"$R/keys.txt"
# kb_write_real N: N more keys written by fio through hcache0, 512 bytes
# each at sectors 2 * have, 2 * (have + 1), ... (rw=write:512 leaves a
# 512-byte hole after each write); sequential_cutoff 0, so that none
# bypasses the cache.
kb_write_real() {
	io_cutoff hcache0 0
	fio --name=real --filename=/dev/hcache0 --direct=1 --ioengine=libaio \
		--iodepth=16 --rw=write:512 --bs=512 --offset=$((have * 1024)) \
		--size=$(($1 * 1024)) --output="$R/real-$want.txt" >/dev/null 2>&1 ||
		hc_fail "fio's $1 writes at $want keys failed: $(tail -3 "$R/real-$want.txt")"
}

# The keys: the i-th (0 <= i < have), 512 bytes at sector 2i, the first
# REAL_KEYS of them written through hcache0, the others filled; the power
# cuts' (cut in all) in the gaps between them.
have=0
cut=0
for want in $KEYS; do
	[ "$want" -gt $((have + cut)) ] ||
		hc_fail "hcbench.keys: $want keys, but the set holds $((have + cut)) (counts ascending, each above the one before plus hcbench.cut_keys=$CUT_KEYS)"
	first=$have
	t0=$(io_now)
	while [ $((have + cut)) -lt "$want" ]; do
		n=$((want - have - cut < batch ? want - have - cut : batch))
		if [ "$have" -lt "$REAL_KEYS" ]; then
			n=$((REAL_KEYS - have < n ? REAL_KEYS - have : n))
			kb_write_real "$n"
		else
			hc_write "$IO_DBG/fill" "1 $((have * 2)) $n 1 2 data"
		fi
		have=$((have + n))
	done
	kb_keys_are "$want"
	real=$((have < REAL_KEYS ? have : REAL_KEYS))
	hc_log "filled to $want keys in $(io_elapsed "$t0") s: $real written by fio, $((want - real)) filled with their data"
	hc_write "$IO_DBG/flush" btree
	# Three clean stops and registrations, each timed to the set's
	# directory and to the first read; the medians count. Each waits for
	# the mark pass behind I/O to end, so that the stop after it marks
	# the empty buckets again.
	regs=()
	firsts=()
	for rep in 1 2 3; do
		io_stop
		kb_register
		kb_register_backing
		# The block of the middle key.
		dd if=/dev/hcache0 of=/dev/null bs=512 count=1 skip=$((have / 2 * 2)) \
			iflag=direct status=none || hc_fail "the first read failed"
		t2=$(io_now)
		io_stat_is hcache0 cache_hits 1 || hc_fail "the first read was not a hit: $(io_stats_line hcache0)"
		regs+=("$(io_elapsed_at "$t0" "$t1")")
		firsts+=("$(io_elapsed_at "$t0" "$t2")")
		kb_pass_wait
	done
	reg=$(printf '%s\n' "${regs[@]}" | sort -n | sed -n 2p)
	firstread=$(printf '%s\n' "${firsts[@]}" | sort -n | sed -n 2p)
	hc_log "$want keys, three registrations: ${regs[*]} s; first reads ${firsts[*]} s after the register write"
	kb_keys_are "$want" "once the mark pass ended"
	read -r vm1 slab1 < <(io_meminfo)
	nodes=$(io_read_num "$IO_SET/internal/btree_nodes_cached")
	# Hits with every node cached: 512-byte random reads of the keys'
	# sectors only (1 KiB aligned), one at a time; on the instruction clock the
	# IOPS measure the instructions a hit costs.
	fio --name=hits --filename=/dev/hcache0 --direct=1 --ioengine=psync \
		--rw=randread --bs=512 --blockalign=1k --norandommap --size=$((have * 1024)) \
		--runtime=5 --time_based --output-format=json --output="$R/hits-$want.json" \
		>/dev/null 2>&1 || hc_fail "fio's hits at $want keys failed"
	# fio may print a notice before its JSON.
	iops=$(python3 -c 'import json, sys; t = open(sys.argv[1]).read(); print(int(json.loads(t[t.index("{"):])["jobs"][0]["read"]["iops"]))' "$R/hits-$want.json") ||
		hc_fail "no IOPS in fio's output: $(head -3 "$R/hits-$want.json")"
	io_stat_is hcache0 cache_misses 0 || hc_fail "reads of the keys' blocks missed: $(io_stats_line hcache0)"
	row="$want $reg $firstread $nodes $((vm1 - vm0)) $((slab1 - slab0)) $iops"
	hc_log "$want keys: registration $reg s, first read $firstread s after the register write (medians of three); mark pass behind I/O $pass_ms ms; $nodes nodes cached; vmalloc +$(((vm1 - vm0) / 1024)) MiB, slab +$(((slab1 - slab0) / 1024)) MiB; $iops hits a second"

	# Registration after a power cut. CUT_KEYS more keys, spread evenly
	# over the gaps of the keys this count's fill added, so that they
	# land in many leaves (as random writes would) and split none; only
	# the journal is written (as an fsync would), so they are durable
	# there and in no btree node, and must all be there after the cut.
	stride=$(((have - first) / CUT_KEYS))
	[ "$stride" -ge 1 ] ||
		hc_fail "hcbench.cut_keys=$CUT_KEYS: more than the $((have - first)) keys the fill added for $want"
	hc_write "$IO_DBG/fill" "1 $((first * 2 + 1)) $CUT_KEYS 1 $((stride * 2)) data"
	cut=$((cut + CUT_KEYS))
	hc_write "$IO_DBG/flush" journal
	kb_keys_are $((want + CUT_KEYS))
	hc_log "$CUT_KEYS keys more, one in every $stride gaps: journal_seq $(cat "$IO_SET/internal/journal_seq"), journal_last_seq $(cat "$IO_SET/internal/journal_last_seq"), $(cat "$IO_SET/internal/btree_node_writes") node writes"
	echo "hcache-bench: power cut at $want keys" >/dev/kmsg
	io_power_cut
	kb_register
	log=$(dmesg | sed -n "/hcache-bench: power cut at $want keys\$/,\$p")
	echo "$log" | grep -q -F "hcache: $IO_CNAME: cache set $IO_UUID $unclean" ||
		hc_fail "after the power cut at $want keys the kernel log lacks '$IO_CNAME: cache set $IO_UUID $unclean'"
	# "journal replayed: entries FIRST to LAST, N keys"
	read -r jfirst jlast jkeys < <(echo "$log" | sed -n "s/.*hcache: $IO_CNAME: journal replayed: entries \([0-9]*\) to \([0-9]*\), \([0-9]*\) keys$/\1 \2 \3/p") ||
		hc_fail "after the power cut at $want keys the kernel log lacks '$IO_CNAME: journal replayed'"
	[ "$jkeys" -gt 0 ] || hc_fail "after the power cut at $want keys the journal replayed no key (entries $jfirst to $jlast)"
	kb_keys_are $((want + CUT_KEYS)) "after the power cut"
	io_register_backing "$IO_BDEV" >/dev/null
	# The block of the last key the cut's fill added.
	dd if=/dev/hcache0 of=/dev/null bs=512 count=1 skip=$(((first + (CUT_KEYS - 1) * stride) * 2 + 1)) \
		iflag=direct status=none || hc_fail "the read after the power cut failed"
	io_stat_is hcache0 cache_hits 1 || hc_fail "the last key journalled before the power cut was not a hit: $(io_stats_line hcache0)"
	echo "$row $(io_elapsed_at "$t0" "$t1") $((jlast - jfirst + 1)) $jkeys $((pass_ms / 1000)).$(printf %03d $((pass_ms % 1000)))" >>"$R/keys.txt"
	hc_log "$((want + CUT_KEYS)) keys after a power cut: registration $(io_elapsed_at "$t0" "$t1") s; journal entries $jfirst to $jlast replayed, $jkeys keys"
done
io_teardown
