# gc-lib.sh: helpers for the garbage-collection tests
# (tests/vm/tests/gc-*.sh), on top of io-lib.sh, which a test sources
# first. The test sets R (a scratch directory), region_mib (fio's region at
# the start of hcache0) and max_lat_ns (the longest an I/O may take).

# shellcheck shell=bash

GC_FILES="gc_runs gc_last_duration_ms gc_nodes_rewritten gc_keys_dropped gc_buckets_moved gc_sectors_moved buckets_gen_wrapped buckets_gen_limited buckets_invalidated free_data"

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

# fio_check NAME: no job counted an error or took max_lat_ns for an I/O;
# logs the numbers and sets WROTE to the bytes written (by every job:
# readers write nothing) and READ to the bytes the last job read.
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
