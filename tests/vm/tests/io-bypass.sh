# sequential_cutoff: a 32 MiB sequential direct read bypasses the cache
# once the stream passes the cutoff (4 MiB by default): bypass_sequential
# and bypassed rise, and a second pass still reads at least 24 MiB from
# the backing device. Random 4k reads are cached (a second pass reads
# nothing from the backing device); with sequential_cutoff 0 the same
# sequential read is cached. A sequential write past the cutoff over
# cached data bypasses too, and the cache does not keep the old data. In
# mode none reads are not promoted (a second pass reads the backing
# device, nearly nothing is written to the cache) and count in
# bypass_mode.
# The file takes 1k, 4M and 0 and refuses junk and -1. Two backing
# devices in one set: the set-level statistics equal their sums, and
# clear_stats works at both levels.
# timeout: 300
# one-kernel: the sequential cutoff's accounting; io-fio-modes goes around the cache in writearound and none on both kernels

. "$HC_ROOT/tests/vm/io-lib.sh"

io_setup 128 256
io_add_backing back1 256
dev=hcache0
dev1=$IO_NEW
bdev1=$IO_NEW_BDEV
sys=$(io_sysdir $dev)
io_stats_files

# The file itself.
cut=$(io_read_num "$sys/sequential_cutoff")
[ "$cut" = 4194304 ] || hc_fail "default sequential_cutoff: $(cat "$sys/sequential_cutoff")"
for v in 1k:1024 4M:4194304 0:0 512k:524288; do
	io_cutoff $dev "${v%%:*}"
	[ "$(io_read_num "$sys/sequential_cutoff")" = "${v#*:}" ] ||
		hc_fail "sequential_cutoff reads '$(cat "$sys/sequential_cutoff")' after writing ${v%%:*}"
done
hc_write_fails "Invalid argument" "$sys/sequential_cutoff" junk
before=$(cat "$sys/sequential_cutoff")
if err=$( { printf '%s\n' -1 >"$sys/sequential_cutoff"; } 2>&1 ); then
	hc_fail "sequential_cutoff took -1 (now '$(cat "$sys/sequential_cutoff")')"
fi
hc_log "as expected, -1 > sequential_cutoff: ${err##*: }"
[ "$(cat "$sys/sequential_cutoff")" = "$before" ] || hc_fail "a refused write changed sequential_cutoff"
io_cutoff $dev 4M
hc_log "sequential_cutoff: $(cat "$sys/sequential_cutoff") (hcache1: $(cat "$(io_sysdir "$dev1")/sequential_cutoff"))"

# seq_read OFFSET_MIB: read 32 MiB sequentially, 1 MiB direct reads.
seq_read() {
	dd if=/dev/$dev of=/dev/null bs=1M count=32 skip="$1" iflag=direct status=none ||
		hc_fail "sequential read at $1 MiB failed"
}

hc_log "a sequential read past the cutoff bypasses"
io_settle
s0=$(io_stat $dev bypass_sequential)
b0=$(io_stat $dev bypassed)
bm0=$(io_stat $dev cache_bypass_misses)
seq_read 64
io_wait_stat $dev bypass_sequential $((s0 + 1))
io_wait_stat $dev bypassed $((b0 + 1))
hc_log "first pass: $(io_stats_line $dev)"
[ "$(io_stat $dev cache_bypass_misses)" -gt "$bm0" ] ||
	hc_log "note: cache_bypass_misses did not rise ($bm0)"
io_settle
r0=$(io_bstat "$IO_BDEV" 3)
seq_read 64
r1=$(io_bstat "$IO_BDEV" 3)
hc_log "second pass: $(( (r1 - r0) / 2048 )) MiB read from the backing device; $(io_stats_line $dev)"
[ $((r1 - r0)) -ge $((24 * 2048)) ] ||
	hc_fail "the second sequential pass read only $((r1 - r0)) sectors from the backing device: it was cached"

hc_log "random reads are cached (hcache1, default cutoff)"
rand_pass() {
	fio --name="$1" --filename=/dev/"$dev1" --rw=randread --bs=4k --iodepth=16 \
		--ioengine=libaio --direct=1 --offset=16m --size=8m --randseed="$2" \
		--output="/tmp/fio.$1" || hc_fail "fio $1 failed: $(tail -5 "/tmp/fio.$1")"
}
rand_pass rand1 1
io_settle
h0=$(io_stat "$dev1" cache_hits)
r0=$(io_bstat "$bdev1" 3)
rand_pass rand2 2
r1=$(io_bstat "$bdev1" 3)
io_wait_stat "$dev1" cache_hits $((h0 + 2048))
hc_log "second random pass: $((r1 - r0)) sectors from the backing device; $(io_stats_line "$dev1")"
[ "$r1" = "$r0" ] || hc_fail "cached random reads read $((r1 - r0)) sectors from the backing device"

hc_log "with sequential_cutoff 0 a sequential read is cached"
io_cutoff $dev 0
seq_read 128
io_settle
h0=$(io_stat $dev cache_hits)
r0=$(io_bstat "$IO_BDEV" 3)
seq_read 128
r1=$(io_bstat "$IO_BDEV" 3)
io_wait_stat $dev cache_hits $((h0 + 32))
hc_log "second pass: $((r1 - r0)) sectors from the backing device; $(io_stats_line $dev)"
[ "$r1" = "$r0" ] || hc_fail "with no cutoff, the second pass read $((r1 - r0)) sectors from the backing device"

hc_log "a sequential write past the cutoff over cached data"
io_cutoff $dev 4M
io_pattern /tmp/new 32
s0=$(io_stat $dev bypass_sequential)
dd if=/tmp/new of=/dev/$dev bs=1M seek=128 oflag=direct status=none ||
	hc_fail "sequential write failed"
io_wait_stat $dev bypass_sequential $((s0 + 1))
io_cutoff $dev 0
io_get /dev/$dev $((128 << 20)) $((32 << 20)) /tmp/got
cmp /tmp/new /tmp/got || hc_fail "reading back the bypassed write returned other data"
io_get /dev/$dev $((128 << 20)) $((32 << 20)) /tmp/got
cmp /tmp/new /tmp/got || hc_fail "reading back the bypassed write twice returned other data"
io_get_raw $((128 << 20)) $((32 << 20)) /tmp/raw
cmp /tmp/new /tmp/raw || hc_fail "the backing device does not hold the written data"
hc_log "after the write: $(io_stats_line $dev)"

hc_log "mode none: reads bypass and are not promoted"
io_mode "$dev1" none
io_settle
b0=$(io_stat "$dev1" bypass_mode)
w0=$(io_bstat "$IO_CDEV" 7)
none_pass() {
	fio --name="$1" --filename=/dev/"$dev1" --rw=randread --bs=4k --iodepth=16 \
		--ioengine=libaio --direct=1 --offset=64m --size=4m --randseed="$2" \
		--output="/tmp/fio.$1" || hc_fail "fio in mode none failed"
}
none_pass none1 1
io_settle
r0=$(io_bstat "$bdev1" 3)
none_pass none2 2
r1=$(io_bstat "$bdev1" 3)
w1=$(io_bstat "$IO_CDEV" 7)
io_wait_stat "$dev1" bypass_mode $((b0 + 1024))
hc_log "mode none: bypass_mode $b0 -> $(io_stat "$dev1" bypass_mode); second pass read $((r1 - r0)) sectors from the backing device; $((w1 - w0)) sectors written to the cache; $(io_stats_line "$dev1")"
[ $((r1 - r0)) -ge $((4 << 11)) ] || hc_fail "mode none: the second pass read only $((r1 - r0)) sectors from the backing device"
[ $((w1 - w0)) -lt 2048 ] || hc_fail "mode none: $((w1 - w0)) sectors written to the cache by reads"
io_mode "$dev1" writethrough

# Both levels: the set is the sum; clear_stats clears.
io_check_sums
hc_log "set: $(io_stats_line set)"
[ "$(io_stat set cache_hits)" -gt 0 ] && [ "$(io_stat set bypass_sequential)" -gt 0 ] ||
	hc_fail "set-level counters: $(io_stats_line set)"
io_settle
hc_write "$(io_sysdir "$dev1")/clear_stats" 1
io_wait 10 io_stat_is "$dev1" cache_hits 0
[ "$(io_stat "$dev1" cache_misses)" = 0 ] || hc_fail "clear_stats left misses: $(io_stats_line "$dev1")"
[ "$(io_stat $dev cache_hits)" -gt 0 ] || hc_fail "clearing hcache1 cleared hcache0 too"
hc_write "$IO_SET/clear_stats" 1
[ "$(io_stat set cache_hits)" = 0 ] && [ "$(io_stat set bypass_sequential)" = 0 ] ||
	hc_fail "clear_stats on the set left: $(io_stats_line set)"
hc_write "$sys/clear_stats" 1
for f in $IO_COUNTERS; do
	for d in $dev "$dev1" set; do
		[ "$(io_stat "$d" "$f")" = 0 ] || hc_fail "$d $f is $(io_stat "$d" "$f") after clear_stats"
	done
done
hc_log "clear_stats cleared both levels"
seq_read 128
io_check_sums
io_teardown
