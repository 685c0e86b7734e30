#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-pair, the guest half (run by tests/bench/pair.sh through
# tests/vm/run-test.sh): bench workload c (4 KiB random writes over 64 MiB,
# iodepth 32, 10 s), h with hcbench.workload=h (4 KiB random writes over
# another 64 MiB, iodepth 1, an fsync after each, 10 s), or d with
# hcbench.workload=d (4 KiB random reads, iodepth 32, 10 s, of what one
# run of c wrote first on each system), on hcache and on dm-writecache,
# in turns, in one guest, hcbench.rounds times (default 4).
# Both are set up as tests/bench/guest.sh sets them up, each on its own
# pair of null_blk disks: hcache in writeback, 64 KiB buckets,
# second_access; dm-writecache in ssd mode with 4 KiB blocks. Under TCG
# the host's speed drifts by tens of percent from minute to minute, and
# more between guests; runs next to each other in one guest are what can
# be compared.
#
# Output in $HC_RESULTS/pair.txt, one line per run: system (hcache or
# dmwc), round, IOPS, then per I/O the requests its cache disk read and
# wrote and its backing disk wrote, and the guest's interrupts and
# context switches (from the disks' stat and /proc/stat); hcache's lines
# end with what its cache did meanwhile: writes bypassed for want of room
# (bypass_full), writes over dirty data in place (writes_in_place), GC
# runs, buckets moving GC emptied, the share of buckets
# that could take data at the end, and the dirty data left.
# timeout: 900
# memory: 3G
# smp: 1

. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/bench/guest-lib.sh"

ROUNDS=$(bench_arg rounds 4)
WL=$(bench_arg workload c)
R=$HC_RESULTS
case $WL in
c) job=("${BENCH_JOB_C[@]}") seed=3000 ;;
h) job=("${BENCH_JOB_H[@]}") seed=5000 ;;
d) job=("${BENCH_JOB_D[@]}") seed=4000 ;;
*) hc_fail "hcbench.workload=$WL: c, d or h" ;;
esac

CSUM=$(bench_arg checksum "")
bench_disks
IO_CACHE_ATTRS=$BENCH_CACHE_ATTRS IO_BACK_ATTRS=$BENCH_BACK_ATTRS \
	io_setup 128 8192 --bucket 64k ${CSUM:+--checksum "$CSUM"}
hc_log "hcache's data checksums: $(cat "$IO_SET/checksum")"
io_mode hcache0 writeback
hc_write "$(io_sysdir hcache0)/admission_policy" second_access
bench_dmwc wcc wcb

# counts CACHE BACKING: cache reads, cache writes, backing writes,
# interrupts, context switches so far.
counts() {
	echo "$(awk '{ print $1, $5 }' "/sys/block/$(basename "$(readlink -f "$1")")/stat")" \
		"$(awk '{ print $5 }' "/sys/block/$(basename "$(readlink -f "$2")")/stat")" \
		"$(awk '$1 == "intr" { i = $2 } $1 == "ctxt" { x = $2 } END { print i, x }' /proc/stat)"
}

# hc_counts: hcache's bypass_full, GC runs, buckets moved and writes in
# place so far.
hc_counts() {
	echo "$(cat "$(io_sysdir hcache0)/stats_total/bypass_full")" \
		"$(cat "$IO_SET/internal/gc_runs")" \
		"$(cat "$IO_SET/internal/gc_buckets_moved")" \
		"$(cat "$(io_sysdir hcache0)/stats_total/writes_in_place")"
}

# d reads what c wrote: one run of c on each system first, as make bench
# runs c before d.
if [ "$WL" = d ]; then
	for dev in /dev/hcache0 /dev/mapper/dmwc; do
		fio --name=c-fill --filename="$dev" --direct=1 --ioengine=libaio \
			--bs=4k --iodepth=32 "${BENCH_JOB_C[@]}" --runtime=10 \
			--time_based --randseed=3001 --output=/dev/null ||
			hc_fail "fio c on $dev failed"
	done
fi

for round in $(seq "$ROUNDS"); do
	for sys in hcache dmwc; do
		case $sys in
		hcache) dev=/dev/hcache0 cdev=$IO_CDEV bdev=$IO_BDEV ;;
		dmwc) dev=/dev/mapper/dmwc cdev=$DMWC_CDEV bdev=$DMWC_BDEV ;;
		esac
		read -r cr0 cw0 bw0 in0 cx0 < <(counts "$cdev" "$bdev")
		read -r bf0 gr0 gm0 ip0 < <(hc_counts)
		fio --name="$WL-$sys-$round" --filename="$dev" --direct=1 --ioengine=libaio \
			--bs=4k --iodepth=32 "${job[@]}" --runtime=10 --time_based \
			--randseed=$((seed + round)) \
			--output-format=terse --output=/tmp/fio.terse || hc_fail "fio on $sys failed"
		read -r cr1 cw1 bw1 in1 cx1 < <(counts "$cdev" "$bdev")
		read -r bf1 gr1 gm1 ip1 < <(hc_counts)
		iops=$(awk -F';' '{ printf "%d\n", $8 + $49 }' /tmp/fio.terse)
		awk -v s="$sys" -v r="$round" -v n="$iops" -v cr=$((cr1 - cr0)) \
			-v cw=$((cw1 - cw0)) -v bw=$((bw1 - bw0)) -v ni=$((in1 - in0)) \
			-v cx=$((cx1 - cx0)) 'BEGIN { w = n * 10; if (!w) w = 1
			printf "%s %d %d IOPS; per I/O: cache reads %.2f writes %.2f, backing writes %.2f, interrupts %.2f, context switches %.2f",
				s, r, n, cr / w, cw / w, bw / w, ni / w, cx / w }' >>"$R/pair.txt"
		[ $sys = hcache ] &&
			printf '; bypass_full %d, in place %d, GC runs %d, buckets moved %d, available %s%%, dirty %s' \
				$((bf1 - bf0)) $((ip1 - ip0)) $((gr1 - gr0)) $((gm1 - gm0)) \
				"$(cat "$IO_SET/cache_available_percent")" \
				"$(cat "$(io_sysdir hcache0)/dirty_data")" >>"$R/pair.txt"
		echo >>"$R/pair.txt"
		hc_log "$(tail -n 1 "$R/pair.txt")"
	done
done
io_check
