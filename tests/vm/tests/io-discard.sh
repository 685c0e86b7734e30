# Discard on /dev/hcache0 invalidates what the cache holds of the range
# and passes the discard down. An 8 MiB range is written and read twice
# (the second read hits, nothing read from the backing device); 4 MiB of
# it is discarded: the backing device's discard counters rise, reading
# that part misses and returns exactly what the backing device itself
# returns there (null_blk returns zeros, so the old data is gone), and the
# parts around it still hit. A 7-sector discard inside a cached 64 KiB
# extent (not aligned to 4k) cuts it. In writeback, a discard over dirty
# data drops it: that part reads as the backing device, the dirty data
# around it stays.
# timeout: 240

. "$HC_ROOT/tests/vm/io-lib.sh"

IO_BACK_ATTRS="discard=1" io_setup 128 256
dev=hcache0
io_cutoff $dev 0
[ "$(cat /sys/block/$dev/queue/discard_max_bytes)" != 0 ] ||
	hc_fail "hcache0 does not take discards"
MiB=$((1 << 20))

# read_hits OFFSET LEN: reading the range hits and reads nothing from the
# backing device.
read_hits() {
	local h0 r0 r1
	io_settle
	h0=$(io_stat $dev cache_hits)
	r0=$(io_bstat "$IO_BDEV" 3)
	io_get /dev/$dev "$1" "$2" /tmp/hit
	r1=$(io_bstat "$IO_BDEV" 3)
	io_wait_stat $dev cache_hits $((h0 + 1))
	[ "$r1" = "$r0" ] ||
		hc_fail "reading cached [$1, +$2) read $((r1 - r0)) sectors from the backing device"
}

# discard OFFSET LEN: discard the range of hcache0; the backing device must
# see it.
discard() {
	local n0 s0 n1 s1
	n0=$(io_bstat "$IO_BDEV" 12)
	s0=$(io_bstat "$IO_BDEV" 14)
	blkdiscard -o "$1" -l "$2" /dev/$dev || hc_fail "blkdiscard -o $1 -l $2 failed"
	n1=$(io_bstat "$IO_BDEV" 12)
	s1=$(io_bstat "$IO_BDEV" 14)
	hc_log "discarded [$1, +$2): the backing device saw $((n1 - n0)) discards, $((s1 - s0)) sectors"
	[ "$n1" -gt "$n0" ] || hc_fail "the discard did not reach the backing device"
	[ $((s1 - s0)) -ge $(($2 / 512)) ] || hc_fail "the backing device discarded $((s1 - s0)) sectors of $(($2 / 512))"
}

# expect_backing OFFSET LEN: reading the range of hcache0 misses and
# returns what the backing device holds there, not the old data.
expect_backing() {
	local m0
	io_settle
	m0=$(io_stat $dev cache_misses)
	io_get /dev/$dev "$1" "$2" /tmp/got
	io_wait_stat $dev cache_misses $((m0 + 1))
	io_get_raw "$1" "$2" /tmp/raw
	cmp /tmp/got /tmp/raw ||
		hc_fail "[$1, +$2) after discard: hcache0 returns other data than the backing device"
	# Again, now that it may have been promoted.
	io_get /dev/$dev "$1" "$2" /tmp/got
	cmp /tmp/got /tmp/raw || hc_fail "[$1, +$2) after discard, second read: other data than the backing device"
}

hc_log "writethrough: cache a range, discard the middle"
io_pattern /tmp/old 8
io_put /tmp/old /dev/$dev $((16 * MiB))
io_get /dev/$dev $((16 * MiB)) $((8 * MiB)) /tmp/got
cmp /tmp/old /tmp/got || hc_fail "the range does not read back"
read_hits $((16 * MiB)) $((8 * MiB))
discard $((18 * MiB)) $((4 * MiB))
io_get_raw $((18 * MiB)) $((4 * MiB)) /tmp/raw
if cmp -s /tmp/raw <(tail -c +$((2 * MiB + 1)) /tmp/old | head -c $((4 * MiB))); then
	hc_fail "the backing device still returns the old data after a discard: this test cannot tell"
fi
[ -z "$(tr -d '\0' </tmp/raw | head -c 1)" ] && what=zeros || what="other data"
hc_log "the backing device returns $what for the discarded range"
expect_backing $((18 * MiB)) $((4 * MiB))
read_hits $((16 * MiB)) $((2 * MiB))
cmp /tmp/hit <(head -c $((2 * MiB)) /tmp/old) || hc_fail "the part before the discard changed"
read_hits $((22 * MiB)) $((2 * MiB))
cmp /tmp/hit <(tail -c $((2 * MiB)) /tmp/old) || hc_fail "the part after the discard changed"
hc_log "$(io_stats_line $dev)"

hc_log "a 7-sector discard inside a cached 64 KiB extent"
off=$((30 * MiB))
io_pattern /tmp/small 1
io_put /tmp/small /dev/$dev $off 65536
io_get /dev/$dev $off 65536 /tmp/got
read_hits $off 65536
discard $((off + 4096 + 512)) 3584
io_get /dev/$dev $off 65536 /tmp/got
io_get_raw $off 65536 /tmp/raw
cmp /tmp/got /tmp/raw || hc_fail "after a 7-sector discard hcache0 differs from the backing device: $(cmp /tmp/got /tmp/raw 2>&1 | head -1)"
cmp -s /tmp/raw <(head -c 65536 /tmp/small) &&
	hc_log "note: the backing device ignored the 7-sector discard"

hc_log "writeback: a discard drops dirty data"
off=$((40 * MiB))
io_pattern /tmp/io-discard-clean 8
io_put /tmp/io-discard-clean /dev/$dev $off
io_mode $dev writeback
io_pattern /tmp/io-discard-dirty 8
io_put /tmp/io-discard-dirty /dev/$dev $off
io_get_raw $off $((8 * MiB)) /tmp/raw
cmp -s /tmp/raw /tmp/io-discard-clean || hc_fail "writeback: the write reached the backing device"
io_get /dev/$dev $off $((8 * MiB)) /tmp/got
cmp /tmp/got /tmp/io-discard-dirty || hc_fail "writeback: the dirty data does not read back"
discard $((off + 2 * MiB)) $((2 * MiB))
io_get_raw $((off + 2 * MiB)) $((2 * MiB)) /tmp/mid
{ head -c $((2 * MiB)) /tmp/io-discard-dirty; cat /tmp/mid; tail -c $((4 * MiB)) /tmp/io-discard-dirty; } >/tmp/expect
io_get /dev/$dev $off $((8 * MiB)) /tmp/got
cmp /tmp/got /tmp/expect || hc_fail "writeback: after a discard over dirty data: $(cmp /tmp/got /tmp/expect 2>&1 | head -1)"
for m in writethrough writearound none; do
	io_mode $dev $m
	io_get /dev/$dev $off $((8 * MiB)) /tmp/got
	cmp /tmp/got /tmp/expect || hc_fail "$m: the dirty data around the discard does not read back"
done
io_teardown
