# A hot set is read from the cache: a 16 MiB region read at random twice
# (4k reads, sequential_cutoff 0), the second pass counts a hit for each
# of its 4096 reads and reads nothing from the backing device (its own
# block-layer read counter stays exactly flat: nothing else reads it).
# Then the set is stopped and both devices registered again (a warm
# restart): the hot set still hits and the backing device still reads
# nothing; after clear_stats, the hit ratio of that pass is at least 99
# (100 but for the few partition-table reads of the registration, should
# they be counted after the clear) and agrees with the hits and misses.
# The decaying windows count the hits too; the set-level statistics are
# the sums over the backing device; every statistics file exists in every
# window, at both levels.
# timeout: 240
# one-kernel: hit accounting and a warm restart; io-fio-modes reads its data back after a stop and register on both kernels

. "$HC_ROOT/tests/vm/io-lib.sh"

io_setup 128 256
dev=hcache0
io_cutoff $dev 0
io_stats_files

hot=$((32 << 20))
size=$((16 << 20))
n=$((size / 4096))
# pass NAME SEED: read the hot set in random order, 4k each, once.
pass() {
	fio --name="$1" --filename=/dev/$dev --rw=randread --bs=4k --iodepth=16 \
		--ioengine=libaio --direct=1 --offset=$hot --size=$size \
		--randseed="$2" --output="/tmp/fio.$1" ||
		hc_fail "fio $1 failed: $(tail -5 "/tmp/fio.$1")"
	io_fio_ok "/tmp/fio.$1" || hc_fail "fio $1: $(grep -i -E 'err|bad' "/tmp/fio.$1" | head -5)"
}

# hot_pass NAME SEED: a pass that must be all hits and leave the backing
# device alone.
hot_pass() {
	local h0 m0 r0 r1 hits
	io_settle
	h0=$(io_stat $dev cache_hits)
	m0=$(io_stat $dev cache_misses)
	r0=$(io_bstat "$IO_BDEV" 3)
	pass "$1" "$2"
	r1=$(io_bstat "$IO_BDEV" 3)
	io_wait_stat $dev cache_hits $((h0 + n))
	hits=$(( $(io_stat $dev cache_hits) - h0 ))
	hc_log "$1: $hits hits, $(( $(io_stat $dev cache_misses) - m0 )) misses, $((r1 - r0)) sectors read from the backing device"
	[ "$r1" = "$r0" ] ||
		hc_fail "$1: the hot set read $((r1 - r0)) sectors from the backing device"
}

# The first pass misses everything and reads it all from the backing
# device.
m0=$(io_stat $dev cache_misses)
r0=$(io_bstat "$IO_BDEV" 3)
pass cold 1
r1=$(io_bstat "$IO_BDEV" 3)
[ $((r1 - r0)) -ge $((size / 512)) ] ||
	hc_fail "the cold pass read only $((r1 - r0)) sectors from the backing device"
io_wait_stat $dev cache_misses $((m0 + n))
hc_log "cold: $(io_stats_line $dev)"

hot_pass hot 2
hc_log "hot: $(io_stats_line $dev)"
for w in stats_five_minute stats_hour stats_day; do
	io_wait_stat $dev cache_hits 1 $w
done
io_check_sums
io_check

# A warm restart: the cached keys survive a clean stop.
hc_log "warm restart"
io_restart
io_check
io_mode_is $dev writethrough || hc_fail "cache_mode after restart: $(cat "$(io_sysdir $dev)/cache_mode")"
hc_log "sequential_cutoff after restart: $(cat "$(io_sysdir $dev)/sequential_cutoff")"
io_cutoff $dev 0
# Registration reads the partition table through the cache: clear that.
# The ratio may still count those few reads (if they are folded in after
# the clear): 4096 hits against a handful of misses is 99 or 100.
io_settle
hc_write "$IO_SET/clear_stats" 1
hc_write "$(io_sysdir $dev)/clear_stats" 1
hot_pass warm 3
io_settle
h=$(io_stat $dev cache_hits)
m=$(io_stat $dev cache_misses)
ratio=$(io_stat $dev cache_hit_ratio)
hc_log "warm: $(io_stats_line $dev)"
[ "$ratio" -ge 99 ] || hc_fail "cache_hit_ratio after an all-hit pass: $ratio ($h hits, $m misses)"
[ $((ratio - 100 * h / (h + m))) -le 1 ] && [ $((100 * h / (h + m) - ratio)) -le 1 ] ||
	hc_fail "cache_hit_ratio $ratio with $h hits and $m misses"
io_check_sums
io_teardown
