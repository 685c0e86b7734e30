# Writeback against stock bcache: with mostly contiguous dirty data on a
# slow backing device, writeback must issue far fewer, larger backing
# writes than there are dirty extents. In one guest, hcache and bcache
# each get identical null_blk devices: a 256 MiB cache and a 128 MiB
# backing device at 2 ms a request (irqmode=2), requests of up to 1 MiB
# (max_sectors 2048), scheduler none on every device (so that the counts
# show what each writeback issues, not what an elevator merged; both still
# plug), 128 KiB buckets, 512-byte blocks, writeback, sequential_cutoff 0.
# For each case, writeback is paused (hcache: writeback_running 0; bcache:
# writeback_running 0, writeback_percent 40), the same fio job writes 32
# MiB, then writeback resumes at full speed (hcache: idle; bcache:
# writeback_percent 0, which also lifts its rate limit; writeback_delay 0
# on both, or bcache sleeps 30 s after each pass over its index whatever
# wakes it) and the test measures, until dirty_data is 0: the backing
# device's write requests (field 5 of its stat) and sectors (field 7), as
# writes per MiB flushed, and the time; for hcache also
# writeback_backing_writes, the bios it issued. Cases:
#   dense    4 KiB random writes covering 32 MiB, each block once
#            (256 dirty extents a MiB, all contiguous)
#   seq64k   32 MiB written sequentially in 64 KiB writes (16 a MiB)
#   seq4k    32 MiB written sequentially in 4 KiB writes (256 a MiB)
#   seq64k-paced  hcache alone: seq64k flushed at writeback_rate 6 MiB/s
#            while 20 reads a second keep the device from idling, so that
#            every batch is a quarter second's share (1.5 MiB, not a whole
#            number of runs): still exactly 32 bios, in 3 to 20 s
# Each prints "RESULT wb-CASE: ... hcache writes_per_mib=.. secs=..
# bcache writes_per_mib=.. secs=.. ratio=.." (ratio: hcache's writes per
# MiB over bcache's), also appended to the results. It passes when, in
# every case, hcache's writes per MiB are at most half bcache's; hcache
# issued exactly one writeback bio per MiB (32: a run is at most 1 MiB,
# and each region starts on a MiB of the backing device, whose data
# offset is 1 MiB); each bio reached the disk as one request (at most one
# request more, the superblock going clean: a bio of 256 separate pages
# would be split at null_blk's 128 segments); and hcache's data reads back
# from the raw backing device. Without bcache
# (no make-bcache: Debian's bcache-tools; or the module does not load)
# the bcache half is skipped, loudly, and hcache must instead issue at
# most a quarter as many writes as there are dirty extents.
# timeout: 300
# one-kernel: a 2 min comparison of backing writes with stock bcache; wb-basic flushes on both kernels
# long-only: a comparison with stock bcache; wb-basic and wb-crash cover writeback on both kernels

. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
W=$(mktemp -d /tmp/wb-vs-bcache.XXXXXX)
back_attrs="irqmode=2 completion_nsec=2000000"
modprobe -q configfs
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
modprobe -q null_blk nr_devices=0
if grep -q max_sectors /sys/kernel/config/nullb/features; then
	back_attrs+=" max_sectors=2048"
else
	hc_log "null_blk has no max_sectors here: requests keep its default size"
fi
# shellcheck disable=SC2086 # a list of attributes
IO_BACK_ATTRS=$back_attrs io_setup 256 128 --bucket 128k
dev=hcache0
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0
wb_set $dev writeback_delay 0

# sched_none DEV: scheduler none on DEV (a /dev node), if it has a choice.
sched_none() {
	local q
	q=/sys/class/block/$(basename "$(readlink -f "$1")")/queue/scheduler
	grep -q none "$q" && echo none >"$q"
	hc_log "$1: scheduler $(cat "$q"), max_sectors_kb $(cat "${q%/scheduler}/max_sectors_kb"), max_segments $(cat "${q%/scheduler}/max_segments")"
}
sched_none "$IO_CDEV"
sched_none "$IO_BDEV"

# ---- bcache --------------------------------------------------------------
bc=
bc_skip() {
	hc_log "SKIP bcache: $*; measuring hcache alone"
	echo "SKIP wb-vs-bcache on $HC_KVER: bcache half skipped: $*" >>"$HC_RESULTS/result"
}
bc_setup() {
	local b
	if ! command -v make-bcache >/dev/null; then
		bc_skip "make-bcache not found (Debian package bcache-tools)"
		return
	fi
	if ! modprobe bcache; then
		bc_skip "modprobe bcache failed"
		return
	fi
	BC_CDEV=$(hc_nullb bccache 256)
	# shellcheck disable=SC2086
	BC_BDEV=$(hc_nullb bcback 128 $back_attrs)
	sched_none "$BC_CDEV"
	sched_none "$BC_BDEV"
	make-bcache -C "$BC_CDEV" -B "$BC_BDEV" --bucket 128k --block 512 >"$W/make-bcache.out" 2>&1 || {
		bc_skip "make-bcache failed: $(tail -3 "$W/make-bcache.out")"
		return
	}
	echo "$BC_CDEV" >/sys/fs/bcache/register 2>/dev/null || true
	echo "$BC_BDEV" >/sys/fs/bcache/register 2>/dev/null || true
	for _ in $(seq 300); do
		for b in /sys/block/bcache*; do
			[ -e "$b/bcache/state" ] || continue
			case $(cat "$b/bcache/state") in
			clean | dirty) bc=${b##*/} ;;
			esac
		done
		[ -n "$bc" ] && break
		sleep 0.2
	done
	if [ -z "$bc" ]; then
		bc_skip "no bcache device attached to its cache after registering ($(ls /sys/fs/bcache 2>&1 | tr '\n' ' '))"
		return
	fi
	BC_SYS=/sys/block/$bc/bcache
	BC_SET=$(readlink -f "$BC_SYS/cache")
	echo writeback >"$BC_SYS/cache_mode"
	echo 0 >"$BC_SYS/sequential_cutoff"
	# No bypass because the cache device looks congested.
	echo 0 >"$BC_SET/congested_read_threshold_us"
	echo 0 >"$BC_SET/congested_write_threshold_us"
	echo 0 >"$BC_SYS/writeback_running"
	echo 40 >"$BC_SYS/writeback_percent"
	echo 0 >"$BC_SYS/writeback_delay"
	hc_log "bcache: $bc on $BC_BDEV, cache $BC_CDEV: $(cat "$BC_SYS/cache_mode"); set $(basename "$BC_SET"), bucket $(cat "$BC_SET/bucket_size"), block $(cat "$BC_SET/block_size")"
}
bc_setup

# ---- measuring -----------------------------------------------------------
# dirty SYSTEM: its dirty data in bytes.
dirty() {
	if [ "$1" = hcache ]; then
		wb_dirty $dev
	else
		io_knum "$(cat "$BC_SYS/dirty_data")"
	fi
}

# quiet BDEV: BDEV has nothing in flight and its stat is unchanged for 0.5 s.
quiet() {
	local f a b
	f=/sys/class/block/$(basename "$(readlink -f "$1")")
	b=$(cat "$f/stat")
	while :; do
		sleep 0.5
		a=$b
		b=$(cat "$f/stat")
		[ "$a" = "$b" ] && [ "$(wb_inflight "$1")" = "0 0" ] && return 0
	done
}

# write SYSTEM CASE: the case's fio job on SYSTEM's device, writeback paused.
write() {
	local target=/dev/$dev
	[ "$1" = bcache ] && target=/dev/$bc
	case $2 in
	dense) set -- --rw=randwrite --bs=4k --offset=0 --randseed=7 ;;
	seq64k) set -- --rw=write --bs=64k --offset=32m ;;
	seq4k) set -- --rw=write --bs=4k --offset=64m ;;
	seq64k-paced) set -- --rw=write --bs=64k --offset=32m ;;
	esac
	fio --name=fill --filename="$target" --size=32m --iodepth=8 --ioengine=libaio \
		--direct=1 --randrepeat=0 "$@" --output="$W/fio.out" >/dev/null 2>&1 ||
		hc_fail "fio on $target failed: $(tail -5 "$W/fio.out")"
}

# flush SYSTEM CASE: resume writeback, wait for dirty_data 0 (180 s at
# most), and set WPM (writes per MiB flushed), SECS, MIB, WRITES, and HB
# (hcache's writeback bios; empty for bcache).
flush() {
	local sys=$1 bdev=$IO_BDEV t0 w0 s0 m0 w1 s1 m1 d e n=0 hb0=0
	HB=
	[ "$sys" = bcache ] && bdev=$BC_BDEV
	io_settle_dev "$bdev"
	d=$(dirty "$sys")
	w0=$(io_bstat "$bdev" 5)
	s0=$(io_bstat "$bdev" 7)
	m0=$(io_bstat "$bdev" 6)
	[ "$sys" = hcache ] && hb0=$(wb_get $dev writeback_backing_writes)
	t0=$(io_now)
	if [ "$sys" = hcache ]; then
		wb_set $dev writeback_running 1
	else
		echo 0 >"$BC_SYS/writeback_percent"
		echo 1 >"$BC_SYS/writeback_running"
	fi
	while [ "$(dirty "$sys")" != 0 ]; do
		e=$(io_elapsed "$t0")
		[ "${e%.*}" -lt 180 ] || hc_fail "$sys $2: dirty data $(dirty "$sys") 180 s after writeback resumed"
		n=$((n + 1))
		[ $((n % 20)) = 0 ] && hc_log "$sys $2: $(dirty "$sys") bytes dirty after $e s"
		sleep 0.1
	done
	SECS=$(io_elapsed "$t0")
	quiet "$bdev"
	w1=$(io_bstat "$bdev" 5)
	s1=$(io_bstat "$bdev" 7)
	m1=$(io_bstat "$bdev" 6)
	WRITES=$((w1 - w0))
	MIB=$(awk -v s=$((s1 - s0)) 'BEGIN { printf "%.2f", s / 2048 }')
	WPM=$(awk -v w=$WRITES -v m="$MIB" 'BEGIN { printf "%.2f", (m > 0 ? w / m : 0) }')
	local extra=
	if [ "$sys" = hcache ]; then
		HB=$(($(wb_get $dev writeback_backing_writes) - hb0))
		extra=", writeback_backing_writes +$HB"
	fi
	hc_log "$sys $2: $d bytes dirty flushed in $SECS s: $WRITES backing write requests ($((m1 - m0)) merged), $MIB MiB: $WPM writes per MiB$extra"
	if [ "$sys" = hcache ]; then
		wb_set $dev writeback_running 0
	else
		echo 0 >"$BC_SYS/writeback_running"
		echo 40 >"$BC_SYS/writeback_percent"
	fi
}

# io_settle_dev DEV: DEV and the cache devices idle for a second.
io_settle_dev() {
	quiet "$1"
	sleep 1.5
}

declare -A extents=([dense]=256 [seq64k]=16 [seq4k]=256)
declare -A offsets=([dense]=0 [seq64k]=32 [seq4k]=64)
[ "$IO_OFFSET" = 2048 ] || hc_fail "data offset $IO_OFFSET sectors, not 2048: the regions do not start on a MiB"
bad=

# hcache_checks CASE OFFSET_MIB: after flush hcache CASE, the 32 MiB at
# OFFSET_MIB read back from the raw backing device; and into bad: not
# exactly one bio per MiB, a bio split into more requests (one request
# more is the superblock going clean), or less than 32 MiB flushed.
hcache_checks() {
	io_get /dev/$dev $(($2 * MiB)) $((32 * MiB)) "$W/got"
	io_get_raw $(($2 * MiB)) $((32 * MiB)) "$W/raw"
	wb_same "$1: the raw backing device after writeback" "$W/raw" "$W/got" $(($2 * MiB))
	[ "$HB" = 32 ] || bad+=" $1 (hcache issued $HB writeback bios for 32 MiB);"
	[ "$WRITES" -le $((HB + 1)) ] || bad+=" $1 ($WRITES backing write requests for $HB writeback bios: bios split);"
	awk -v m="$MIB" 'BEGIN { exit !(m >= 32) }' || bad+=" $1 (hcache flushed only $MIB MiB);"
}
for case in dense seq64k seq4k; do
	write hcache $case
	[ -z "$bc" ] || write bcache $case
	flush hcache $case
	h_wpm=$WPM h_secs=$SECS
	hcache_checks $case "${offsets[$case]}"
	if [ -n "$bc" ]; then
		flush bcache $case
		b_wpm=$WPM b_secs=$SECS
		ratio=$(awk -v h="$h_wpm" -v b="$b_wpm" 'BEGIN { printf "%.3f", (b > 0 ? h / b : 0) }')
		line="RESULT wb-$case: kernel $HC_KVER, 32 MiB, backing 2 ms: hcache writes_per_mib=$h_wpm secs=$h_secs bcache writes_per_mib=$b_wpm secs=$b_secs ratio=$ratio"
		awk -v h="$h_wpm" -v b="$b_wpm" 'BEGIN { exit !(h > 0 && h <= b / 2) }' ||
			bad+=" $case (hcache $h_wpm, bcache $b_wpm writes per MiB);"
	else
		line="RESULT wb-$case: kernel $HC_KVER, 32 MiB, backing 2 ms: hcache writes_per_mib=$h_wpm secs=$h_secs bcache skipped (dirty extents per MiB ${extents[$case]})"
		awk -v h="$h_wpm" -v x="${extents[$case]}" 'BEGIN { exit !(h > 0 && h <= x / 4) }' ||
			bad+=" $case (hcache $h_wpm writes per MiB for ${extents[$case]} dirty extents per MiB);"
	fi
	echo "$line"
	echo "$line" >>"$HC_RESULTS/result"
done
[ -z "$bc" ] || hc_log "bcache: every case measured"

# ---- paced: the rate's share ends a batch only where a run ends ----------
# seq64k again, over its clean region, hcache alone, but flushed paced
# rather than at full speed: writeback_rate 6 MiB/s, held there by
# writeback_rate_minimum 6 MiB/s (the controller's terms for 32 MiB dirty
# stay far below it), whose quarter-second share, 1.5 MiB, is not a whole
# number of runs; and fio reading the first region 20 times a second, so
# that the device never turns idle (full speed). Cutting a batch at the
# share would cut runs; it must still be 32 bios.
wb_set $dev writeback_rate_minimum 6M
wb_set $dev writeback_rate 6M
write hcache seq64k-paced
fio --name=trickle --filename=/dev/$dev --rw=randread --bs=4k --size=32m \
	--ioengine=libaio --direct=1 --rate_iops=20 --time_based --runtime=600 \
	--output="$W/trickle.out" >/dev/null 2>&1 &
trickle=$!
sleep 1.5
idle=$(sed -n 's/^idle: *//p' "$(io_sysdir $dev)/writeback_rate_debug")
[ "$idle" = 0 ] || hc_fail "seq64k-paced: writeback_rate_debug says idle '$idle' under the trickle of reads"
flush hcache seq64k-paced
kill "$trickle" 2>/dev/null
wait "$trickle" 2>/dev/null || true
p_secs=$SECS
rate=$(wb_get $dev writeback_rate)
hc_log "seq64k-paced: writeback_rate_debug after: $(tr '\n' ' ' <"$(io_sysdir $dev)/writeback_rate_debug")"
hcache_checks seq64k-paced 32
line="RESULT wb-seq64k-paced: kernel $HC_KVER, 32 MiB at writeback_rate $rate: hcache writeback bios=$HB backing write requests=$WRITES secs=$p_secs"
echo "$line"
echo "$line" >>"$HC_RESULTS/result"
[ "$rate" = $((6 * MiB)) ] || bad+=" seq64k-paced (writeback_rate became $rate, not 6 MiB/s);"
# Paced, 32 MiB at 6 MiB/s takes over 5 s; at full speed it took well under.
awk -v s="$p_secs" 'BEGIN { exit !(s >= 3) }' || bad+=" seq64k-paced (flushed in $p_secs s: not paced);"
awk -v s="$p_secs" 'BEGIN { exit !(s <= 20) }' || bad+=" seq64k-paced (flushed in $p_secs s: slower than the rate);"
[ -z "$bad" ] || hc_fail "too many backing writes:$bad"

if [ -n "$bc" ]; then
	echo 1 >"$BC_SYS/stop"
	echo 1 >"$BC_SET/stop"
	io_wait 30 test ! -e "$BC_SET"
fi
io_teardown
rm -rf "$W"
