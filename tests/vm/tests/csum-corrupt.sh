# Data checksums (make-hcache --checksum crc32c, csum.c): cached data is
# corrupted on the cache device under a live set, by direct writes to the
# raw cache disk where the debugfs key dump says the data is.
#
#  1. Clean data (writethrough): a corrupted 4 KiB chunk is read through
#     hcache0 as it is on the backing device; csum_errors counts 1, the
#     log names the set's device, the cache sector and the backing
#     device's sector; the extent is dropped (reading it again counts no
#     new error), and its neighbours in the same key still read right.
#  2. Reads that do not cover whole chunks (512-byte reads inside a chunk,
#     and a key trimmed to start inside a chunk by a 512-byte overwrite)
#     are checked too, through the chunks read into pages of our own.
#  3. Dirty data (writeback, writeback stopped): a read covering the
#     corrupted chunk fails with EIO, never other bytes; reads of the
#     blocks around it, in the same 64 KiB key, succeed. It is counted
#     once however often it is read, and csum_bad_dirty lists it.
#  4. Writeback, started with writeback_percent 0, cleans the other
#     dirty data but never copies the bad chunk's run to the backing
#     device: dirty_data stays at that run, and the backing device keeps
#     what it had.
#  5. The checksums persist: after the set is stopped and registered
#     again, every good block still reads right with no mismatch logged
#     but the bad dirty chunk's (the checksum table was written before
#     the keys), and that chunk still fails, counted once.
# expect-log: hcache: .*data checksum mismatch at cache sector
# timeout: 300

. "$HC_ROOT/tests/vm/io-lib.sh"

KiB=1024
W=$(mktemp -d /tmp/csum-corrupt.XXXXXX)
io_setup 64 128 --bucket 64k --checksum crc32c
dev=hcache0
[ "$(cat "$IO_SET/checksum")" = crc32c ] ||
	hc_fail "checksum reads $(cat "$IO_SET/checksum"), expected crc32c"
io_cutoff $dev 0

errors() { cat "$IO_SET/csum_errors"; }

# logged REGEX: the kernel log has a line matching REGEX.
logged() { dmesg | grep -q -E -- "$1"; }

# cache_sector BYTE_OFFSET: the cache sector holding hcache0's byte, from
# the debugfs key dump ("bdev:start-end @sector gen g c|d").
cache_sector() {
	local s=$(($1 / 512))
	awk -v s="$s" '{
		split($1, a, /[:-]/); c = substr($2, 2)
		if (s >= a[2] && s < a[3]) { print c + s - a[2]; found = 1; exit }
	} END { if (!found) exit 1 }' "$IO_DBG/keys" ||
		hc_fail "no key covers hcache0 byte $1: $(cat "$IO_DBG/keys")"
}

# corrupt BYTE_OFFSET: overwrite the 4 KiB chunk holding hcache0's byte
# on the raw cache disk; prints that chunk's cache sector.
corrupt() {
	local sec chunk
	sec=$(cache_sector "$1")
	chunk=$((sec / 8 * 8))
	head -c 4096 /dev/urandom >"$W/junk"
	dd if="$W/junk" of="$IO_CDEV" bs=4096 count=1 seek=$((chunk / 8)) \
		oflag=direct conv=notrunc status=none ||
		hc_fail "corrupting cache sector $chunk failed"
	echo "$chunk"
}

# same FILE DEV_OFFSET LEN WHAT: hcache0 holds FILE's bytes [DEV_OFFSET,
# DEV_OFFSET + LEN) at DEV_OFFSET (FILE is the whole device's content).
same() {
	io_get /dev/$dev "$2" "$3" "$W/got"
	cmp -s "$W/got" <(tail -c +$(($2 + 1)) "$1" | head -c "$3") ||
		hc_fail "$4: hcache0 bytes $2..$(($2 + $3 - 1)) differ from what was written"
}

# ---- 1. Clean data -----------------------------------------------------------
head -c $((1024 * KiB)) /dev/urandom >"$W/want"
io_put "$W/want" /dev/$dev 0
same "$W/want" 0 $((1024 * KiB)) "clean data, untouched"
[ "$(errors)" = 0 ] || hc_fail "csum_errors $(errors) before any corruption"
chunk=$(corrupt $((256 * KiB)))
hc_log "clean: corrupted cache sector $chunk (hcache0 byte $((256 * KiB)))"
same "$W/want" $((256 * KiB)) $((4 * KiB)) "the corrupted clean chunk"
[ "$(errors)" = 1 ] || hc_fail "csum_errors $(errors) after one bad clean chunk, expected 1"
logged "data checksum mismatch at cache sector $chunk: clean data of .* sector 512, read from the backing device instead" ||
	hc_fail "no log line names cache sector $chunk and backing sector 512"
same "$W/want" 0 $((1024 * KiB)) "clean data around the bad chunk"
[ "$(errors)" = 1 ] || hc_fail "csum_errors $(errors) after reading it again: the bad extent was not dropped"

# ---- 2. Reads that are not whole chunks --------------------------------------
same "$W/want" $((64 * KiB + 512)) 512 "512 bytes inside a chunk"
same "$W/want" $((68 * KiB + 3584)) 1024 "1 KiB across two chunks"
head -c 512 /dev/urandom >"$W/s"
io_put "$W/s" /dev/$dev $((128 * KiB + 1024))
dd if="$W/s" of="$W/want" bs=512 seek=$((256 + 2)) conv=notrunc status=none
same "$W/want" $((128 * KiB)) $((8 * KiB)) "a chunk split by a 512-byte overwrite"
[ "$(errors)" = 1 ] || hc_fail "csum_errors $(errors) after partial-chunk reads of good data"

# ---- 3. Dirty data -------------------------------------------------------------
io_mode $dev writeback
wb_set $dev writeback_running 0
D=$((2048 * KiB))
head -c $((64 * KiB)) /dev/urandom >"$W/dirty"
io_get_raw $D $((64 * KiB)) "$W/under"
io_put "$W/dirty" /dev/$dev $D
[ "$(wb_dirty $dev)" = $((64 * KiB)) ] || hc_fail "dirty_data $(wb_dirty $dev) after 64 KiB written back-less"
bad=$((D + 16 * KiB))
chunk=$(corrupt $bad)
hc_log "dirty: corrupted cache sector $chunk (hcache0 byte $bad)"
for i in 1 2 3; do
	if dd if=/dev/$dev of="$W/got" bs=4096 count=1 skip=$((bad / 4096)) \
		iflag=direct status=none 2>"$W/err"; then
		hc_fail "read $i of the bad dirty chunk succeeded: $(cmp "$W/got" <(tail -c +$((16 * KiB + 1)) "$W/dirty" | head -c 4096) >/dev/null && echo 'with the right bytes' || echo 'with wrong bytes')"
	fi
	grep -q "Input/output error" "$W/err" || hc_fail "read $i of the bad dirty chunk: $(cat "$W/err")"
done
cp "$W/dirty" "$W/dirty.want"
io_get /dev/$dev $D $((16 * KiB)) "$W/got"
cmp -s "$W/got" <(head -c $((16 * KiB)) "$W/dirty") || hc_fail "dirty blocks before the bad chunk read wrong"
io_get /dev/$dev $((bad + 4 * KiB)) $((44 * KiB)) "$W/got"
cmp -s "$W/got" <(tail -c +$((20 * KiB + 1)) "$W/dirty") || hc_fail "dirty blocks after the bad chunk read wrong"
[ "$(errors)" = 2 ] || hc_fail "csum_errors $(errors) after the bad dirty chunk was read 3 times, expected 2 (counted once)"
grep -q "^$chunk " "$IO_SET/csum_bad_dirty" ||
	hc_fail "csum_bad_dirty does not list cache sector $chunk: $(cat "$IO_SET/csum_bad_dirty")"
logged "data checksum mismatch at cache sector $chunk: dirty data of .* sector $((bad / 512)), the only copy" ||
	hc_fail "no log line for the bad dirty chunk"

# ---- 4. Writeback leaves it dirty ----------------------------------------------
head -c $((64 * KiB)) /dev/urandom >"$W/dirty2"
io_put "$W/dirty2" /dev/$dev $((4096 * KiB))
wb_set $dev writeback_percent 0
wb_set $dev writeback_running 1
dirty_at_most() { [ "$(wb_dirty $dev)" -le "$1" ]; }
hc_wait dirty_at_most $((64 * KiB))
sleep 3
[ "$(wb_dirty $dev)" = $((64 * KiB)) ] ||
	hc_fail "dirty_data $(wb_dirty $dev) with writeback running: the bad run is $((64 * KiB))"
io_get_raw $((4096 * KiB)) $((64 * KiB)) "$W/got"
cmp -s "$W/got" "$W/dirty2" || hc_fail "the good dirty data was not written back"
io_get_raw $D $((64 * KiB)) "$W/got"
cmp -s "$W/got" "$W/under" || hc_fail "writeback wrote the run holding the bad chunk to the backing device"
[ "$(errors)" = 2 ] || hc_fail "csum_errors $(errors) after writeback met the bad chunk, expected 2"

# ---- 5. After a restart --------------------------------------------------------
hc_log "csum_blocks_written $(cat "$IO_SET/internal/csum_blocks_written")"
wb_set $dev writeback_running 0
io_restart
same "$W/want" 0 $((1024 * KiB)) "clean data after a restart"
io_get /dev/$dev $((4096 * KiB)) $((64 * KiB)) "$W/got"
cmp -s "$W/got" "$W/dirty2" || hc_fail "written-back data after a restart read wrong"
# Only the bad dirty chunk may fail (hcache0's probes at registration may
# read it first): the one clean mismatch logged is phase 1's.
others=$(dmesg | grep "data checksum mismatch at cache sector" |
	grep -v -c "cache sector $chunk:")
[ "$others" = 1 ] || hc_fail "$others mismatches logged other than the bad dirty chunk's, expected phase 1's only: the checksums did not persist: $(dmesg | grep 'data checksum mismatch' | tail -3)"
if dd if=/dev/$dev of="$W/got" bs=4096 count=1 skip=$((bad / 4096)) \
	iflag=direct status=none 2>/dev/null; then
	hc_fail "the bad dirty chunk read without error after a restart"
fi
[ "$(errors)" = 1 ] || hc_fail "csum_errors $(errors) after the bad dirty chunk was read after a restart, expected 1"
[ "$(cat "$IO_SET/csum_bad_dirty")" = "$chunk 1 $((bad / 512))" ] ||
	hc_fail "csum_bad_dirty after a restart: $(cat "$IO_SET/csum_bad_dirty")"
# Every error the set counted is the bad dirty chunk's.
[ "$(cat "$IO_SET/errors")" = 1 ] || hc_fail "errors $(cat "$IO_SET/errors"), expected the one mismatch"
[ "$(cat "$IO_DBG/check")" = ok ] || hc_fail "consistency check: $(cat "$IO_DBG/check")"
io_stop
hc_unload
echo PASS
