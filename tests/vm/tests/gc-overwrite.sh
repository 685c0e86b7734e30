# Garbage collection under sustained overwrite, with fio verifying all the
# way. In writeback and then in writethrough, each on a fresh set (128 MiB
# cache of 128 KiB buckets, a backing device at 0.1 ms a request,
# sequential_cutoff 0): fio randwrite of 4 KiB to 64 KiB blocks, iodepth
# 16, over the first 384 MiB of hcache0 (3x the cache), until 256 MiB
# (2x the cache; 5x under make check-long) is written. Random offsets with
# no random map, so blocks are overwritten and overlapped;
# serialize_overlap keeps overlapping writes from being in flight
# together; crc32c verification with verify_backlog 512 reads back and
# checks what was written while the writes go on, and the final pass
# checks every block not since overwritten. So the cache evicts, bypasses
# when full (writeback fills it with dirty data), and GC runs by itself
# (gc_runs is logged, not required: an eighth of the cache allocated is
# enough to start one).
#
# Each mode passes when: fio exits 0 with no error and no verify failure;
# no I/O, write or read, took 5 s or more (fio's lat_ns max); then, once
# writeback has emptied the cache (writeback_percent 0, dirty_data 0),
# trigger_gc returns and cache_available_percent is above 20 within 60 s
# (logged every 2 s); in writeback the cache then takes new data (8 MiB
# written in random pieces past the region with writeback paused must
# all be dirty_data); the consistency check passes and the set counted no
# error; after a stop and register of the set, fio's verify_only pass
# (the same job replayed for exactly the bytes it wrote) finds every
# block intact; hcache0 and the raw backing device (at its data offset)
# hold the same 384 MiB; and the kernel log shows no hung task, WARNING
# or BUG.
#
# Then, in writeback only, moving GC: with writeback paused, 192 MiB over
# the first 96 MiB leaves the cache full of dirty data spread thinly over
# most buckets; one trigger_gc must raise
# cache_available_percent by 10 points and move buckets
# (gc_buckets_moved); the check passes, fio's replay finds every block
# intact, and once written back the backing device matches hcache0.
#
# Logged: MiB written and read, IOPS, the largest latencies,
# cache_available_percent and dirty_data every 5 s during the run,
# bypass_full (writeback: usually nonzero, as the cache fills; not
# required), the gc_* counters and bucket_usage before and after the
# triggered GC.
# timeout: 600
# one-kernel: a 4 min soak of GC under writes; the kernel-facing paths run in the io- and wb- tests on both
# long-only: a soak of GC under writes (overwriting the cache many times); cache-set-crash runs moving GC on both kernels in make check
# alone: no I/O may take 5 s, a bound two busy guests on 2 cores can approach

. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/vm/gc-lib.sh"

MiB=$((1 << 20))
cache_mib=128
region_mib=$((3 * cache_mib))
back_mib=$((region_mib + 16))
mult=2
[ "${HC_LONG:-0}" = 1 ] && mult=5
write_mib=$((mult * cache_mib))
# fio stops writing at io_size, or when writes plus the reads verifying
# them reach io_size plus size, whichever comes first: within the region
# that is io_size exactly; past it, ask for twice as much and replay the
# bytes actually written.
io_mib=$write_mib
[ $write_mib -le $region_mib ] || io_mib=$((2 * write_mib))
max_lat_ns=5000000000
R=/tmp/gc-overwrite
mkdir -p $R

# sampler: cache_available_percent, dirty_data and more every 5 s until
# R/stop exists.
sampler() {
	local t0=$SECONDS
	while [ ! -e $R/stop ]; do
		hc_log "t=$((SECONDS - t0))s available $(cat "$IO_SET/cache_available_percent")% dirty_data $(cat "$(io_sysdir hcache0)/dirty_data") free_data $(cat "$IO_SET/internal/free_data") gc_runs $(cat "$IO_SET/internal/gc_runs" 2>/dev/null) bypass_full $(cat "$(io_sysdir hcache0)/stats_total/bypass_full")"
		sleep 5
	done
}

# avail_line: cache_available_percent, dirty_data, GC's moves and
# bucket_usage, for the moving GC log.
avail_line() {
	echo "available $(cat "$IO_SET/cache_available_percent")% dirty_data $(wb_dirty hcache0) gc_buckets_moved $(gc_counter gc_buckets_moved) gc_sectors_moved $(gc_counter gc_sectors_moved); $(gc_usage)"
}

# moving_gc SEED: dirty data spread thin, and compacted as it comes. With
# writeback paused, fio writes 192 MiB (verified) over the first 96 MiB:
# the cache fills with dirty data and the later writes leave most buckets
# partly dirty. Moving GC must keep the cache taking the writes: it runs
# alone (gc_move_runs) whenever under 10% of the buckets can take data,
# copying the dirty data of buckets at most half dirty into buckets of its
# own, so that at most 1000 of the 49152 writes bypass for want of room
# (bypass_full; 0 to 258 measured; 1395 when moving waited for whole GC
# runs, and the cache ended with 49 MiB dirty, not 76 to 84).
# Then one trigger_gc must move more buckets and leave more of the cache
# free, at least 10%; the check passes, fio's replay finds every block
# intact, and once writeback has run the backing device holds the same as
# hcache0.
moving_gc() {
	local a0 a m0 m r0 r b0 b mr0 mr d
	hc_log "writeback: moving GC: writeback paused, 192 MiB written over the first 96 MiB"
	wb_set hcache0 writeback_running 0
	b0=$(io_stat hcache0 bypass_full)
	mr0=$(gc_counter gc_move_runs)
	FIO_REGION_MIB=96 fio_job writeback-move "$1" 192m
	fio_check writeback-move
	b=$(io_stat hcache0 bypass_full)
	mr=$(gc_counter gc_move_runs)
	d=$(wb_dirty hcache0)
	hc_log "writeback: before GC: $(avail_line); during the writes: bypass_full $((b - b0)), gc_move_runs $((mr - mr0))"
	[ "$mr" -gt "$mr0" ] || hc_fail "moving GC: gc_move_runs stayed $mr0 while the cache filled with dirty data"
	[ $((b - b0)) -le 1000 ] ||
		hc_fail "moving GC: $((b - b0)) writes bypassed for want of room (the cache holds $d bytes dirty)"
	a0=$(cat "$IO_SET/cache_available_percent")
	m0=$(gc_counter gc_buckets_moved)
	r0=$(gc_counter gc_move_rounds)
	hc_write "$IO_SET/internal/trigger_gc" 1
	a=$(cat "$IO_SET/cache_available_percent")
	m=$(gc_counter gc_buckets_moved)
	r=$(gc_counter gc_move_rounds)
	hc_log "writeback: after trigger_gc: $(avail_line) gc_move_rounds $r"
	[ "$m" -gt "$m0" ] || hc_fail "moving GC: gc_buckets_moved stayed $m0"
	[ "$a" -gt "$a0" ] && [ "$a" -ge 10 ] ||
		hc_fail "moving GC: one trigger_gc took cache_available_percent from $a0 to $a only, in $((r - r0)) rounds"
	hc_log "writeback: moving GC raised cache_available_percent from $a0 to $a in one run of $((r - r0)) rounds, moving $((m - m0)) buckets"
	io_check
	FIO_REGION_MIB=96 fio_job writeback-move-verify "$1" "$WROTE" --verify_only=1
	fio_check writeback-move-verify
	hc_log "writeback: after moving GC fio verify_only found every block intact"
	wb_set hcache0 writeback_running 1
	wb_wait_clean hcache0 120
	same_as_backing 96
}

# nullb_remove: take away the null_blk disks io_setup made.
nullb_remove() {
	local d
	for d in /sys/kernel/config/nullb/cache /sys/kernel/config/nullb/back; do
		[ -d $d ] || continue
		echo 0 >$d/power
		rmdir $d
	done
}

# run_mode MODE SEED
run_mode() {
	local mode=$1 seed=$2 t0 a avail ok runs0 runs1 sampler_pid
	hc_log "=== $mode: writing $write_mib MiB over $region_mib MiB of hcache0 ($cache_mib MiB cache)"
	IO_BACK_ATTRS="irqmode=2 completion_nsec=100000" io_setup $cache_mib $back_mib --bucket 128k
	io_mode hcache0 "$mode"
	io_cutoff hcache0 0
	[ -e "$IO_SET/internal/trigger_gc" ] || hc_fail "$IO_SET/internal/trigger_gc is missing: a module without GC"
	[ -r "$IO_SET/bucket_usage" ] || hc_fail "$IO_SET/bucket_usage is missing"
	hc_log "$mode: bucket_usage at the start: $(gc_usage)"

	rm -f $R/stop
	sampler &
	sampler_pid=$!
	t0=$(io_now)
	fio_job "$mode" "$seed" ${io_mib}m --verify_backlog=512
	touch $R/stop
	wait $sampler_pid
	hc_log "$mode: fio took $(io_elapsed "$t0") s"
	fio_check "$mode"
	[ $WROTE -ge $((write_mib * MiB)) ] || hc_fail "fio $mode wrote $WROTE bytes, not $write_mib MiB"
	[ "$READ" -gt 0 ] || hc_fail "fio $mode verified nothing (no read)"
	hc_log "$mode: after the run: $(io_stats_line hcache0); bypass_full $(io_stat hcache0 bypass_full); dirty_data $(wb_dirty hcache0); available $(cat "$IO_SET/cache_available_percent")%"
	hc_log "$mode: $(gc_counters)"

	if [ "$mode" = writeback ]; then
		wb_set hcache0 writeback_percent 0
		wb_wait_clean hcache0 300
		hc_log "$mode: written back in $WB_SECS s; bypass_full $(io_stat hcache0 bypass_full)"
	fi

	hc_log "$mode: bucket_usage before GC: $(gc_usage)"
	runs0=$(gc_counter gc_runs)
	t0=$(io_now)
	hc_write "$IO_SET/internal/trigger_gc" 1
	hc_log "$mode: trigger_gc returned after $(io_elapsed "$t0") s"
	runs1=$(gc_counter gc_runs)
	[ "$runs1" -gt "$runs0" ] || hc_fail "gc_runs $runs0 before trigger_gc, $runs1 after"
	hc_log "$mode: $(gc_counters)"
	ok=0
	for a in $(seq 0 2 60); do
		avail=$(cat "$IO_SET/cache_available_percent")
		hc_log "$mode: ${a}s after GC: cache_available_percent $avail"
		if [ "$avail" -gt 20 ]; then
			ok=1
			break
		fi
		sleep 2
	done
	[ $ok = 1 ] || hc_fail "$mode: cache_available_percent $avail 60 s after GC"
	hc_log "$mode: bucket_usage after GC: $(gc_usage)"
	[ "$mode" != writeback ] || takes_writes $((region_mib + 4))
	io_check
	no_trouble

	# What fio wrote, after a stop and register: the same job replayed.
	io_restart
	io_cutoff hcache0 0
	t0=$(io_now)
	fio_job "$mode-verify" "$seed" "$WROTE" --verify_only=1
	fio_check "$mode-verify"
	hc_log "$mode: after the restart fio verify_only found every block intact ($(io_elapsed "$t0") s)"
	same_as_backing $region_mib
	[ "$mode" != writeback ] || moving_gc $((seed + 100))
	hc_log "$mode: at the end: $(gc_counters)"
	io_teardown
	nullb_remove
	no_trouble
}

run_mode writeback 11
run_mode writethrough 12
