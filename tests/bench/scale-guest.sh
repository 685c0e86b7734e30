#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-scale, the guest half (run by tests/bench/scale.sh through
# tests/vm/run-test.sh, on two CPUs under multi-threaded TCG and the host's
# clock): do cache hits scale across CPUs? 4 KiB random reads over a
# 32 MiB region that is wholly cached, with one fio job and then two
# (iodepth 16 each), on the raw cache disk, hcache and bcache, in turns,
# hcbench.rounds times (default 5). Each system has its own null_blk
# disks with make bench's latencies (the cache-speed ones with a
# submission queue per CPU): hcache in writeback with
# first_access admission, bcache in writeback; both warmed by one read of
# every block of the region. What a system gains from the second job is
# compared with what the raw cache disk gains (scale.sh).
#
# Output in $HC_RESULTS/scale.txt, one line per run: system (rawc, hcache
# or bcache), jobs, round, IOPS, and the share of reads that were hits
# (that did not read the backing disk; - for the raw disk). A run whose
# reads were not at least 95% hits fails the test: it would not measure
# the hit path.
# timeout: 1200
# memory: 3G
# smp: 2

. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/bench/guest-lib.sh"

ROUNDS=$(bench_arg rounds 5)
R=$HC_RESULTS
REGION=32m
[ "$(nproc)" = 2 ] || hc_fail "the guest has $(nproc) CPUs, not 2"

bench_disks
# A submission queue per CPU on the cache-speed disks, so that the raw
# disk itself can scale.
CATTRS="$BENCH_CACHE_ATTRS submit_queues=2"
# shellcheck disable=SC2086 # a list of attributes
RAWC=$(hc_nullb rawc 128 $CATTRS)

IO_CACHE_ATTRS=$CATTRS IO_BACK_ATTRS=$BENCH_BACK_ATTRS \
	io_setup 128 1024 --bucket 64k
io_mode hcache0 writeback
HC_SYS=$(io_sysdir hcache0)
hc_write "$HC_SYS/admission_policy" first_access

modprobe bcache || hc_fail "modprobe bcache failed"
command -v make-bcache >/dev/null || hc_fail "make-bcache not found (Debian package bcache-tools)"
# shellcheck disable=SC2086
bcc=$(hc_nullb bccache 128 $CATTRS)
# shellcheck disable=SC2086
bcb=$(hc_nullb bcback 1024 $BENCH_BACK_ATTRS)
make-bcache -C "$bcc" -B "$bcb" --bucket 64k --block 512 >/tmp/make-bcache.out 2>&1 ||
	hc_fail "make-bcache failed: $(tail -1 /tmp/make-bcache.out)"
echo "$bcc" >/sys/fs/bcache/register 2>/dev/null || true
echo "$bcb" >/sys/fs/bcache/register 2>/dev/null || true
bc_attached() {
	local s
	for s in /sys/block/bcache*/bcache/state; do
		[ -e "$s" ] || continue
		case $(cat "$s") in clean | dirty) BC=${s%/bcache/state}; BC=${BC##*/}; return 0 ;; esac
	done
	return 1
}
hc_wait bc_attached
BC_SYS=/sys/block/$BC/bcache
BC_SET=$(readlink -f "$BC_SYS/cache")
echo writeback >"$BC_SYS/cache_mode"
echo 0 >"$BC_SET/congested_read_threshold_us"
echo 0 >"$BC_SET/congested_write_threshold_us"

# dev_of SYS: the device a system's fio runs on.
dev_of() {
	case $1 in
	rawc) echo "$RAWC" ;;
	hcache) echo /dev/hcache0 ;;
	bcache) echo "/dev/$BC" ;;
	esac
}

# backing_reads SYS: reads its backing disk has completed so far (0 for
# the raw disk). A hit never reads the backing disk; the counters of
# bcache lag by up to 14 s (its accounting interval), so both systems
# are judged by their backing disks instead.
backing_reads() {
	case $1 in
	hcache) awk '{ print $1 }' "/sys/block/$(basename "$IO_BDEV")/stat" ;;
	bcache) awk '{ print $1 }' "/sys/block/$(basename "$bcb")/stat" ;;
	*) echo 0 ;;
	esac
}

# Warm both caches: every 4 KiB block of the region read once (fio's
# random map visits each block once), then the caches' writes settle.
for sys in hcache bcache; do
	fio --name="warm-$sys" --filename="$(dev_of $sys)" --direct=1 --ioengine=libaio \
		--rw=randread --bs=4k --iodepth=32 --size=$REGION --randseed=7 \
		--output=/dev/null || hc_fail "fio warming $sys failed"
	hc_log "$sys warmed: its backing disk has read $(backing_reads $sys) times"
done
sleep 2

for round in $(seq "$ROUNDS"); do
	for sys in rawc hcache bcache; do
		for jobs in 1 2; do
			b0=$(backing_reads $sys)
			fio --name="scale-$sys-$jobs-$round" --filename="$(dev_of $sys)" --direct=1 \
				--ioengine=libaio --rw=randread --norandommap --bs=4k --iodepth=16 \
				--size=$REGION --numjobs="$jobs" --group_reporting --runtime=10 \
				--time_based --randseed=$((9000 + round)) \
				--output-format=terse --output=/tmp/fio.terse || hc_fail "fio on $sys failed"
			b1=$(backing_reads $sys)
			reads=$(awk -F';' '{ print $6 / 4 }' /tmp/fio.terse)
			iops=$(awk -F';' '{ printf "%d\n", $8 }' /tmp/fio.terse)
			hit=-
			if [ $sys != rawc ]; then
				hit=$(awk -v b=$((b1 - b0)) -v n="$reads" 'BEGIN { printf "%.3f", n ? 1 - b / n : 0 }')
				awk -v x="$hit" 'BEGIN { exit !(x >= 0.95) }' ||
					hc_fail "$sys, $jobs jobs, round $round: only $hit of the reads were hits"
			fi
			echo "$sys $jobs $round $iops $hit" >>"$R/scale.txt"
			hc_log "$sys $jobs jobs round $round: $iops IOPS, hits $hit"
		done
	done
done
io_check
