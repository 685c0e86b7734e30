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
# most buckets; trigger_gc, repeated for up to 60 s, must raise
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
# alone: no I/O may take 5 s, a bound two busy guests on 2 cores can approach

. "$HC_ROOT/tests/vm/io-lib.sh"

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
GC_FILES="gc_runs gc_last_duration_ms gc_nodes_rewritten gc_keys_dropped gc_buckets_moved gc_sectors_moved buckets_gen_wrapped buckets_gen_limited buckets_invalidated free_data"
R=/tmp/gc-overwrite
mkdir -p $R

# gc_counters: the GC and allocator counters on one line ("?" if missing).
gc_counters() {
	local f out=
	for f in $GC_FILES; do
		out+="$f=$(cat "$IO_SET/internal/$f" 2>/dev/null || echo '?') "
	done
	echo "${out% }"
}

# gc_counter NAME: one of them, as a number; fails if missing.
gc_counter() {
	io_read_num "$IO_SET/internal/$1"
}

# gc_usage: bucket_usage on one line.
gc_usage() {
	tr -s '\n' ' ' <"$IO_SET/bucket_usage" | sed 's/ $//'
}

# fio_job NAME SEED IO_SIZE [FIO_OPTION...]: the writing job (with
# --verify_only=1 its replay) over the first FIO_REGION_MIB (default
# region_mib) MiB of hcache0, in the background under io_watch; JSON in
# R/NAME.json, stderr in R/NAME.err. Fails the test on any fio error.
fio_job() {
	local name=$1 seed=$2 size=$3 rc
	shift 3
	fio --name=w --filename=/dev/hcache0 --rw=randwrite --bsrange=4k-64k \
		--ioengine=libaio --direct=1 --iodepth=16 --size="${FIO_REGION_MIB:-$region_mib}m" \
		--io_size="$size" --norandommap=1 --serialize_overlap=1 \
		--verify=crc32c --verify_fatal=1 --randrepeat=0 --randseed="$seed" \
		--output-format=json --output="$R/$name.json" "$@" 2>"$R/$name.err" &
	io_watch $! && rc=0 || rc=$?
	[ $rc = 0 ] || hc_fail "fio $name exited with $rc: $(grep -v 'verify limited' "$R/$name.err" | head -5)"
	io_fio_ok "$R/$name.err" || hc_fail "fio $name: $(head -5 "$R/$name.err")"
}

# fio_result NAME: per job of R/NAME.json one line "JOB ERROR WBYTES
# WIOPS WLATMAX RBYTES RIOPS RLATMAX" (latencies in ns, IOPS over the
# job's run time).
fio_result() {
	python3 - "$R/$1.json" <<'EOF' || hc_fail "cannot parse $R/$1.json"
import json, sys
t = open(sys.argv[1]).read()
d = json.loads(t[t.index("{"):])	# after any warnings fio printed
for j in d["jobs"]:
    w, r = j["write"], j["read"]
    # IOPS over the whole job: fio's own divide by each direction's
    # active time, which for the verifying reads is a small part of it.
    ms = max(j.get("job_runtime", 0), 1)
    print(j["jobname"], j["error"], w["io_bytes"], w["total_ios"] * 1000 // ms,
          w["lat_ns"]["max"], r["io_bytes"], r["total_ios"] * 1000 // ms,
          r["lat_ns"]["max"])
EOF
}

# fio_check NAME: no job counted an error or took 5 s for an I/O; logs
# the numbers and sets WROTE to the bytes written.
fio_check() {
	local job err wb wi wl rb ri rl
	WROTE=0
	while read -r job err wb wi wl rb ri rl; do
		hc_log "$1 ($job): wrote $((wb / MiB)) MiB at $wi IOPS, read $((rb / MiB)) MiB at $ri IOPS; max latency write $((wl / 1000000)) ms, read $((rl / 1000000)) ms"
		[ "$err" = 0 ] || hc_fail "fio $1: job $job ended with error $err"
		[ "$wl" -lt $max_lat_ns ] || hc_fail "fio $1: a write took $((wl / 1000000)) ms"
		[ "$rl" -lt $max_lat_ns ] || hc_fail "fio $1: a read took $((rl / 1000000)) ms"
		WROTE=$((WROTE + wb))
		READ=$rb
	done < <(fio_result "$1")
}

# sampler: cache_available_percent, dirty_data and more every 5 s until
# R/stop exists.
sampler() {
	local t0=$SECONDS
	while [ ! -e $R/stop ]; do
		hc_log "t=$((SECONDS - t0))s available $(cat "$IO_SET/cache_available_percent")% dirty_data $(cat "$(io_sysdir hcache0)/dirty_data") free_data $(cat "$IO_SET/internal/free_data") gc_runs $(cat "$IO_SET/internal/gc_runs" 2>/dev/null) bypass_full $(cat "$(io_sysdir hcache0)/stats_total/bypass_full")"
		sleep 5
	done
}

# takes_writes MIB: the cache takes new data again: with writeback paused,
# 8 MiB written in random pieces at MIB MiB of hcache0 (past the region)
# is all dirty data; then writeback empties the cache again.
takes_writes() {
	local d
	wb_set hcache0 writeback_running 0
	io_pattern $R/new 8
	wb_scatter $R/new /dev/hcache0 $(($1 * MiB)) 4096 65536 3
	d=$(wb_dirty hcache0)
	[ "$d" = $((8 * MiB)) ] ||
		hc_fail "after GC, 8 MiB written in writeback left dirty_data $d: the cache did not take it (free_data $(cat "$IO_SET/internal/free_data"), bypass_full $(io_stat hcache0 bypass_full))"
	wb_set hcache0 writeback_running 1
	wb_wait_clean hcache0 120
	hc_log "after GC the cache took 8 MiB of new dirty data; written back in $WB_SECS s"
}

# no_trouble: the kernel log shows no hung task, warning or bug.
no_trouble() {
	local t
	t=$(dmesg | grep -E 'blocked for more than|WARNING:|BUG:|Oops|soft lockup' | head -5)
	[ -z "$t" ] || hc_fail "kernel log: $t"
}

# region_md5 DEV BYTE_OFFSET [MIB]: md5 of the region's bytes (or of MIB
# MiB) on DEV from there.
region_md5() {
	dd if="$1" bs=1M iflag=direct,skip_bytes,count_bytes skip="$2" \
		count=$((${3:-$region_mib} * MiB)) status=none | md5sum | cut -d' ' -f1
}

# same_as_backing MIB: hcache0 and the raw backing device hold the same
# first MIB MiB.
same_as_backing() {
	local h1 h2
	h1=$(region_md5 /dev/hcache0 0 "$1")
	h2=$(region_md5 "$IO_BDEV" $((IO_OFFSET * 512)) "$1")
	[ "$h1" = "$h2" ] || hc_fail "hcache0 ($h1) and the raw backing device ($h2) differ in the first $1 MiB"
	hc_log "hcache0 and the raw backing device hold the same $1 MiB"
}

# avail_line: cache_available_percent, dirty_data, GC's moves and
# bucket_usage, for the moving GC log.
avail_line() {
	echo "available $(cat "$IO_SET/cache_available_percent")% dirty_data $(wb_dirty hcache0) gc_buckets_moved $(gc_counter gc_buckets_moved) gc_sectors_moved $(gc_counter gc_sectors_moved); $(gc_usage)"
}

# moving_gc SEED: dirty data spread thin, then compacted. With writeback
# paused, fio writes 192 MiB (verified) over the first 96 MiB: the cache
# fills with dirty data and the later writes leave most buckets partly
# dirty. trigger_gc, again and again for up to 60 s, must raise
# cache_available_percent by 10 points (moving GC copies the dirty data
# of buckets at most half dirty into buckets of its own); the check
# passes, fio's replay finds every block intact, and once writeback has
# run the backing device holds the same as hcache0.
moving_gc() {
	local a0 a m0 m end n=0
	hc_log "writeback: moving GC: writeback paused, 192 MiB written over the first 96 MiB"
	wb_set hcache0 writeback_running 0
	FIO_REGION_MIB=96 fio_job writeback-move "$1" 192m
	fio_check writeback-move
	hc_log "writeback: before GC: $(avail_line)"
	a0=$(cat "$IO_SET/cache_available_percent")
	m0=$(gc_counter gc_buckets_moved)
	end=$((SECONDS + 60))
	while :; do
		hc_write "$IO_SET/internal/trigger_gc" 1
		n=$((n + 1))
		a=$(cat "$IO_SET/cache_available_percent")
		hc_log "writeback: after trigger_gc $n: $(avail_line)"
		[ "$a" -lt $((a0 + 10)) ] || break
		[ $SECONDS -lt $end ] ||
			hc_fail "moving GC: cache_available_percent went from $a0 to $a in 60 s ($n runs)"
	done
	m=$(gc_counter gc_buckets_moved)
	[ "$m" -gt "$m0" ] || hc_fail "moving GC: gc_buckets_moved stayed $m0"
	hc_log "writeback: moving GC raised cache_available_percent from $a0 to $a in $n runs, moving $((m - m0)) buckets"
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
