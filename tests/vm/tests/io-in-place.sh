# Overwrites in place (write.c, hc_write_in_place()): in writeback, a
# write that falls within one dirty key goes over that key's data in the
# cache, with no new key and no cache space. Writeback runs only where the
# test says, writeback_percent 0, 64 KiB buckets; the cache disk has a
# volatile write cache (null_blk cache_size), so that flushes reach it.
#
#  1. Version 1, 256 KiB in one write, is one dirty key; 16 writes of 4 KiB
#     inside it (in random order) must go in place: writes_in_place rises
#     by 16, dirty_data does not move. These must not: a 4 KiB write that
#     runs past the key's end, a FUA write (O_DSYNC) inside it, and a
#     write inside data written in writethrough (clean). hcache0 then
#     reads what was written, and so does the backing device itself once
#     writeback has run.
#  2. Durable at a flush. Version 1 of another 64 KiB, flushed (its key in
#     the journal); a 4 KiB write in place, then a flush, which has no key
#     to journal: it must flush the cache disk itself (its stat's flush
#     count rises), or the write would be in the disk's volatile cache
#     only. (A power cut cannot show the loss here: null_blk writes an
#     overwrite of a page it stored straight to storage.)
#  3. Moving GC. A bucket holding 4 KiB of dirty data among clean data is
#     one moving GC empties. trigger_gc runs, and the debug build's delay
#     point move_copied holds it once it has read and copied that data,
#     before it swaps the key; an overwrite of those 4 KiB then must not go
#     in place (the bucket is being moved): in place, it would land in the
#     old copy after GC read it, and the swapped key would point at the
#     new copy, which holds version 1. hcache0 must read version 2 after.
# Writeback racing an overwrite in place is vm/race-wb-checked's kind
# "in-place".
# timeout: 300

. "$HC_ROOT/tests/vm/io-lib.sh"

KiB=1024
W=$(mktemp -d /tmp/io-in-place.XXXXXX)
IO_CACHE_ATTRS="cache_size=8" io_setup 64 256 --bucket 64k
dev=hcache0
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0
wb_set $dev writeback_percent 0

inplace() { io_stat $dev writes_in_place; }

# put FILE BYTE_OFFSET [DD_OFLAG]: one direct write of FILE to hcache0.
put() {
	dd if="$1" of=/dev/$dev bs="$(stat -c %s "$1")" count=1 seek="$2" \
		oflag=direct,seek_bytes${3:+,$3} conv=notrunc status=none ||
		hc_fail "writing $1 at $2 failed"
}

# expect_in_place WHAT BEFORE N: writes_in_place rose by N since BEFORE.
expect_in_place() {
	local now
	now=$(inplace)
	[ $((now - $2)) = "$3" ] ||
		hc_fail "$1: writes_in_place rose by $((now - $2)), expected $3"
}

# ---- 1. Which writes go in place ------------------------------------------
head -c $((256 * KiB)) /dev/urandom >"$W/v1"
cp "$W/v1" "$W/want"
put "$W/v1" 0
dirty0=$(wb_dirty $dev)
[ "$dirty0" = $((256 * KiB)) ] || hc_fail "version 1: dirty_data $dirty0, expected $((256 * KiB))"
n0=$(inplace)
for blk in $(seq 0 63 | shuf | head -16); do
	head -c 4096 /dev/urandom >"$W/b"
	put "$W/b" $((blk * 4096))
	dd if="$W/b" of="$W/want" bs=4096 seek="$blk" conv=notrunc status=none
done
expect_in_place "16 writes of 4 KiB inside a dirty key" "$n0" 16
[ "$(wb_dirty $dev)" = "$dirty0" ] ||
	hc_fail "writes in place changed dirty_data: $(wb_dirty $dev), was $dirty0"

n0=$(inplace)
head -c 4096 /dev/urandom >"$W/b"
put "$W/b" $((254 * KiB))
dd if="$W/b" of="$W/want" bs=1024 seek=254 conv=notrunc status=none
expect_in_place "a write past the key's end" "$n0" 0
n0=$(inplace)
head -c 4096 /dev/urandom >"$W/b"
put "$W/b" $((100 * KiB)) dsync
dd if="$W/b" of="$W/want" bs=1024 seek=100 conv=notrunc status=none
expect_in_place "a FUA write" "$n0" 0
io_mode $dev writethrough
head -c $((64 * KiB)) /dev/urandom >"$W/c1"
put "$W/c1" $((1024 * KiB))
io_mode $dev writeback
head -c 4096 /dev/urandom >"$W/b"
put "$W/b" $((1024 * KiB + 8192))
dd if="$W/b" of="$W/c1" bs=4096 seek=2 conv=notrunc status=none
expect_in_place "a write over clean data" "$n0" 0
# The write past the end reached 258 KiB.
[ "$(stat -c %s "$W/want")" = $((258 * KiB)) ] || hc_fail "the expected data is $(stat -c %s "$W/want") bytes"
io_get /dev/$dev 0 $((258 * KiB)) "$W/got"
cmp -s "$W/got" "$W/want" || hc_fail "hcache0 after the writes: $(wb_diff "$W/got" "$W/want" 0)"
io_get /dev/$dev $((1024 * KiB)) $((64 * KiB)) "$W/gotc"
cmp -s "$W/gotc" "$W/c1" || hc_fail "hcache0, the clean region after a write over it: $(wb_diff "$W/gotc" "$W/c1" $((1024 * KiB)))"
wb_set $dev writeback_running 1
wb_wait_clean $dev 60 "writeback of part 1"
wb_set $dev writeback_running 0
io_get_raw 0 $((258 * KiB)) "$W/raw"
cmp -s "$W/raw" "$W/want" || hc_fail "the backing device after writeback: $(wb_diff "$W/raw" "$W/want" 0)"
hc_log "part 1: 16 writes in place, 3 not (past the end, FUA, over clean data); hcache0 and then the backing device hold every write"

# ---- 2. Durable at a flush -------------------------------------------------
base=$((2048 * KiB))
head -c $((64 * KiB)) /dev/urandom >"$W/d1"
put "$W/d1" $base
sync /dev/$dev
n0=$(inplace)
head -c 4096 /dev/urandom >"$W/b"
put "$W/b" $((base + 8192))
dd if="$W/b" of="$W/d1" bs=4096 seek=2 conv=notrunc status=none
expect_in_place "the write before the flush" "$n0" 1
# /sys/block/X/stat: field 16 counts the flush requests completed.
flushes() { awk '{ print $16 }' "/sys/block/$IO_CNAME/stat"; }
f0=$(flushes)
sync /dev/$dev
f1=$(flushes)
[ "$f1" -gt "$f0" ] ||
	hc_fail "part 2: a flush after a write in place did not flush the cache disk ($f0 flushes before, $f1 after)"
io_get /dev/$dev $base $((64 * KiB)) "$W/gotd"
cmp -s "$W/gotd" "$W/d1" || hc_fail "part 2: $(wb_diff "$W/gotd" "$W/d1" $base)"
hc_log "part 2: the flush after a write in place flushed the cache disk ($f0 flushes before, $f1 after)"
wb_set $dev writeback_running 1
wb_wait_clean $dev 60 "writeback of part 2"
wb_set $dev writeback_running 0

# ---- 3. Moving GC ----------------------------------------------------------
# One bucket: 28 KiB clean, 4 KiB dirty (A), then clean data past its end.
base=$((8192 * KiB))
io_mode $dev writethrough
head -c $((28 * KiB)) /dev/urandom >"$W/f"
put "$W/f" $base
io_mode $dev writeback
head -c 4096 /dev/urandom >"$W/a1"
put "$W/a1" $((base + 512 * KiB))
io_mode $dev writethrough
head -c $((96 * KiB)) /dev/urandom >"$W/f"
put "$W/f" $((base + 64 * KiB))
io_mode $dev writeback
[ "$(wb_dirty $dev)" = 4096 ] || hc_fail "part 3: dirty_data $(wb_dirty $dev), expected 4096 (A alone)"
moved0=$(io_read_num "$IO_SET/internal/gc_buckets_moved")
hold_ms=$((3000 * ${HC_TIME_SCALE:-1}))
hits=$(io_delay_arm move_copied $hold_ms)
hc_write "$IO_SET/internal/trigger_gc" 1 &
gc_pid=$!
io_delay_wait move_copied "$hits"
held_at=$(io_now)
n0=$(inplace)
head -c 4096 /dev/urandom >"$W/a2"
put "$W/a2" $((base + 512 * KiB))
n1=$(inplace)
wend=$(io_now)
awk -v a="$held_at" -v b="$wend" -v ms=$hold_ms 'BEGIN { exit !((b - a) * 1000 < ms) }' ||
	hc_fail "part 3: the write ended $(io_elapsed_at "$held_at" "$wend") s into moving GC's hold of $hold_ms ms: not in the window"
wait $gc_pid || hc_fail "trigger_gc failed"
[ "$(io_read_num "$IO_SET/internal/gc_buckets_moved")" -gt "$moved0" ] ||
	hc_fail "part 3: moving GC chose no bucket"
io_get /dev/$dev $((base + 512 * KiB)) 4096 "$W/gota"
if ! cmp -s "$W/gota" "$W/a2"; then
	cmp -s "$W/gota" "$W/a1" &&
		hc_fail "part 3: hcache0 reads version 1 of A after moving GC (the overwrite went in place: $((n1 - n0)))"
	hc_fail "part 3: hcache0 reads neither version of A"
fi
[ $((n1 - n0)) = 0 ] || hc_fail "part 3: the overwrite went in place in a bucket being moved"
hc_log "part 3: an overwrite during moving GC's copy took a new place; hcache0 reads it after"
io_teardown
