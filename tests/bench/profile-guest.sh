#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-profile, the guest half (run by tests/bench/profile.sh through
# tests/vm/run-test.sh): where hcache's time goes in one bench workload.
# hcache alone on the bench's disks (tests/bench/guest.sh), in mode
# hcbench.mode (default writeback) with admission_policy hcbench.admit
# (default second_access), writeback_running hcbench.writeback_running
# (default 1; 0 shows a workload without writeback's cost);
# 20 s of random reads over 512 MiB fill the cache with clean data, as the
# bench's earlier workloads do (not for a); then the workload
# (hcbench.workload=a, make bench's warm-up: zipf:1.1 reads over 512 MiB
# from an empty cache; b, cold uniform random reads; c, 4 KiB random
# writes over 64 MiB; d, random reads of those 64 MiB after 30 s of
# c's writes, untimed; or e, mkfs.ext4 -E nodiscard on the whole device
# over and over, make bench's e, its mean time per run reported) runs
# three times for 10 s. The second run is traced: ftrace function_graph on the
# hcache functions that take or wait for meta_lock or do metadata I/O,
# summed per function by tests/bench/ftrace-summary.py. Tracing slows the
# guest: compare the untraced runs with each other, the traced one only
# with itself. The third run (hcbench.sample_run: 1, 2 or 3; the second
# then is not traced) is sampled from the host instead
# (tests/bench/rip-sample.py, through the QEMU monitor): where all of the
# guest CPU's time goes, hcache's or not.
#
# hcbench.system=dmwc (dm-writecache, as the bench sets it up) or rawc (the
# cache disk alone) runs the same steps on that system instead, so that its
# samples can be set beside hcache's; nothing is traced then, and only
# the disks' request counts are in counters.txt.
#
# Output in $HC_RESULTS: runs.txt (IOPS of each run, how busy the guest
# CPU was: under TCG a busy CPU is what bounds I/O, and its context
# switches per I/O, which TCG makes dear), counters.txt (the
# set's counters and the disks' request counts after each step),
# ftrace-summary.txt, kallsyms.txt (for rip-sample.py).
# timeout: 600
# memory: 3G
# smp: 1

. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/bench/guest-lib.sh"

W=$(bench_arg workload c)
MODE=$(bench_arg mode writeback)
ADMIT=$(bench_arg admit second_access)
WB=$(bench_arg writeback_running 1)
SYSTEM=$(bench_arg system hcache)
SAMPLE=$(bench_arg sample_run 3)
R=$HC_RESULTS
case $W in
a) job=(--rw=randread --random_distribution=zipf:1.1 --norandommap --size=512m) ;;
b) job=(--rw=randread --size=1800m) ;;
c) job=("${BENCH_JOB_C[@]}") ;;
d) job=("${BENCH_JOB_D[@]}") ;;
e) job=() ;;
*) hc_fail "hcbench.workload=$W: a, b, c, d or e" ;;
esac

bench_disks
case $SYSTEM in
hcache)
	IO_CACHE_ATTRS=$BENCH_CACHE_ATTRS IO_BACK_ATTRS=$BENCH_BACK_ATTRS \
		io_setup 128 8192 --bucket 64k
	io_mode hcache0 "$MODE"
	S=$(io_sysdir hcache0)
	hc_write "$S/admission_policy" "$ADMIT"
	hc_write "$S/writeback_running" "$WB"
	DEV=/dev/hcache0 CDEV=$IO_CDEV BDEV=$IO_BDEV
	;;
dmwc)
	bench_dmwc cache back
	DEV=/dev/mapper/dmwc CDEV=$DMWC_CDEV BDEV=$DMWC_BDEV
	;;
rawc)
	# shellcheck disable=SC2086
	DEV=$(hc_nullb rawc 8192 $BENCH_CACHE_ATTRS)
	CDEV=$DEV BDEV=$DEV
	;;
*) hc_fail "hcbench.system=$SYSTEM: hcache, dmwc or rawc" ;;
esac
[ -b "$DEV" ] || hc_fail "$SYSTEM: no block device $DEV"
hc_log "system $SYSTEM: $DEV"

# disk_ios DEV: requests the disk completed, "READS WRITES" (its stat).
disk_ios() {
	awk '{ print $1, $5 }' "/sys/block/$(basename "$(readlink -f "$1")")/stat"
}

counters() {
	local f
	echo "== $1"
	# Every system: what the disks under it were asked to do, per request.
	echo "cache_disk_reads_writes $(disk_ios "$CDEV")"
	echo "backing_disk_reads_writes $(disk_ios "$BDEV")"
	[ "$SYSTEM" = hcache ] || return 0
	for f in stats_total/cache_hits stats_total/cache_misses stats_total/bypass_full \
		cache_available_percent internal/gc_runs internal/gc_buckets_moved \
		internal/gc_sectors_moved internal/gc_nodes_rewritten; do
		echo "$f $(cat "$IO_SET/$f")"
	done
	echo "dirty_data $(cat "$S/dirty_data")"
} >>"$R/counters.txt"

# cpu_ticks: busy and total jiffies of the guest so far, and its context
# switches (/proc/stat).
cpu_ticks() {
	awk '$1 == "cpu" { for (i = 2; i <= NF; i++) t += $i; idle = $5 + $6 }
	     $1 == "ctxt" { x = $2 }
	     END { print t - idle, t, x }' /proc/stat
}

fio_run() {	# NAME ARGS...: IOPS (read + write) on $DEV
	local name=$1
	shift
	fio --name="$name" --filename="$DEV" --direct=1 --ioengine=libaio \
		--bs=4k --iodepth=32 --time_based --output-format=terse \
		--output="/tmp/$name.terse" "$@" || hc_fail "fio $name failed"
	awk -F';' '{ printf "%d\n", $8 + $49 }' "/tmp/$name.terse"
}

# mkfs_loop: make bench's e for 10 s: mkfs.ext4 on $DEV until 10 s have
# passed. Prints "RUNS SECONDS-PER-RUN", the mean of the mkfs runs alone:
# the loop forks nothing else, as a program read over 9p while the guest
# idles can cost any time on the instruction clock (run-test.sh), which
# skips to the next timer while the host answers (one such run took 36 s
# for what was 10, 2026-12-02).
mkfs_loop() {
	local start t0 t1 sum=0 n=0
	start=${EPOCHREALTIME/./}
	while :; do
		t0=${EPOCHREALTIME/./}
		mkfs.ext4 -q -F -E nodiscard "$DEV" >/tmp/mkfs.out 2>&1 ||
			hc_fail "mkfs.ext4 failed: $(cat /tmp/mkfs.out)"
		t1=${EPOCHREALTIME/./}
		sum=$((sum + t1 - t0))
		n=$((n + 1))
		[ $((t1 - start)) -lt 10000000 ] || break
	done
	sum=$((sum / n))
	printf '%d %d.%06d\n' $n $((sum / 1000000)) $((sum % 1000000))
}
[ "$W" != e ] || bench_mkfs_local

T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs none $T
echo 0 >$T/tracing_on
# trace_on/trace_off: function_graph on hcache's functions for run 2 only,
# so that the graph tracer's hooks cost nothing in the sampled run.
trace_on() {
	local fn
	[ "$SYSTEM" = hcache ] || return 0
	: >$T/set_ftrace_filter
	for fn in hc_cache_space hc_open_bucket_take hc_bucket_alloc hc_alloc_refill \
		hc_prio_write_to hc_journal_write hc_journal_make_room hc_btree_insert \
		hc_btree_lookup hc_node_write hc_node_rewrite hc_node_split \
		hc_btree_gc_leaf hc_meta_io hc_read_range hc_promote_write_pass \
		hc_insert; do
		echo "$fn" >>$T/set_ftrace_filter 2>/dev/null || hc_log "not traceable: $fn"
	done
	echo function_graph >$T/current_tracer
	echo funcgraph-tail >$T/trace_options
	echo 262144 >$T/buffer_size_kb
	: >$T/trace
	echo 1 >$T/tracing_on
}
trace_off() {
	local lost
	[ "$SYSTEM" = hcache ] || return 0
	echo 0 >$T/tracing_on
	cat $T/trace >/tmp/trace.txt
	lost=$(sed -n 's/^overrun: //p' $T/per_cpu/cpu0/stats)
	[ "${lost:-0}" = 0 ] || hc_log "the trace buffer overflowed: $lost events lost"
	echo nop >$T/current_tracer
	python3 "$HC_ROOT/tests/bench/ftrace-summary.py" /tmp/trace.txt >"$R/ftrace-summary.txt" ||
		hc_fail "ftrace-summary.py failed"
}

if [ "$W" != a ]; then
	hc_log "fill: $(fio_run fill --rw=randread --offset=1g --size=512m --runtime=20) IOPS"
	counters fill
fi
if [ "$W" = d ]; then
	# What d reads back: c's writes, as long as make bench's three runs.
	hc_log "c before d: $(fio_run c "${BENCH_JOB_C[@]}" --runtime=30 --randseed=3001) IOPS"
	counters c
fi
for run in 1 2 3; do
	[ $run != 2 ] || [ "$SAMPLE" = 2 ] || trace_on
	case $W in b) off=(--offset=$((run * 2))g) ;; *) off=() ;; esac
	read -r busy0 total0 ctxt0 < <(cpu_ticks)
	# The host's rip-sample.py samples this run (tests/bench/profile.sh).
	[ $run != "$SAMPLE" ] || touch "$R/sample-start"
	if [ "$W" = e ]; then
		read -r n secs < <(mkfs_loop)
	else
		iops=$(fio_run "$W$run" "${job[@]}" "${off[@]}" --runtime=10 --randseed=$((3000 + run)))
	fi
	[ $run != "$SAMPLE" ] || touch "$R/sample-stop"
	# The I/Os of the sampled run (4 KiB each), for instructions per I/O
	# (tests/bench/insn-count.c); mkfs runs for e.
	if [ $run = "$SAMPLE" ]; then
		if [ "$W" = e ]; then
			echo "$n" >"$R/sampled-ios"
		else
			awk -F';' '{ printf "%d\n", ($6 + $47) / 4 }' "/tmp/$W$run.terse" >"$R/sampled-ios"
		fi
	fi
	read -r busy1 total1 ctxt1 < <(cpu_ticks)
	busy="CPU $(((busy1 - busy0) * 100 / (total1 - total0 + 1)))% busy"
	if [ "$W" = e ]; then
		ctxt=$(( (ctxt1 - ctxt0) / n ))
		iops="$n mkfs runs, $secs s each, $busy, $ctxt context switches per run"
	else
		ctxt=$(awk -v x=$((ctxt1 - ctxt0)) -v n="$iops" 'BEGIN { printf "%.2f", n ? x / (n * 10) : 0 }')
		iops="$iops IOPS, $busy, $ctxt context switches per I/O"
	fi
	[ $run != 2 ] || [ "$SAMPLE" = 2 ] || trace_off
	echo "$W run $run$([ $run = 2 ] && [ "$SAMPLE" != 2 ] && [ "$SYSTEM" = hcache ] && echo ' (traced)')$([ $run = "$SAMPLE" ] && echo ' (sampled)'): $iops" >>"$R/runs.txt"
	hc_log "$W run $run: $iops"
	counters "$W$run"
done
# Names for the host's samples: kernel and module addresses of this boot.
echo 0 >/proc/sys/kernel/kptr_restrict
cp /proc/kallsyms "$R/kallsyms.txt"
[ "$SYSTEM" != hcache ] || io_check
