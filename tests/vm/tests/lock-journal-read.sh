# Lookups must go on while a journal entry is written. Every flush, FUA
# write and delayed journal write ends its hold of meta_lock with the
# journal write: the backing devices' flush, the cache device's flush and
# the entry's own write, synchronous. With the lock held for writing across
# them, every read, hits included, waited behind each one: on the debug
# kernel a writer's stream of O_DSYNC writes left fio's reads at 77 in
# 180 s (io-stop-under-io). The entry is now encoded with the lock held
# for writing, which is then downgraded for the I/O
# (hc_journal_write_unlock()); and a change on the I/O path waits for that
# journal write before it queues for the lock (hc_meta_lock_write()), as
# an rwsem queues new readers behind a waiting writer.
#
# The debug build's delay point journal_write holds such a journal write
# 4 s (times HC_TIME_SCALE) with the lock downgraded. With 1 MiB written
# in writeback mode (writeback paused, so the data is in the cache alone),
# a 4 KiB write elsewhere gives the delayed journal write a key; once it
# is held, dirty_data is read (under meta_lock held for reading), another
# 4 KiB write starts (a change that must wait: its key's insert, or its
# bucket's opening), and 0.3 s later the 1 MiB is read back with O_DIRECT.
# All of that must take under 2 s, and the read under 1 s (both times
# HC_TIME_SCALE), as cache hits, with the bytes written; when it does, the
# journal entry must still be unwritten (internal/journal_entries_written
# unchanged) and the second write's key not in (dirty_data unchanged):
# else the test was not in its window. Then the entry is written, the
# second write completes and reads back, and the set passes its check.
# timeout: 120

. "$HC_ROOT/tests/vm/io-lib.sh"

W=$(mktemp -d /tmp/lock-journal-read.XXXXXX)
io_setup 128 128
dev=hcache0
sys=$(io_sysdir $dev)
io_mode $dev writeback
io_cutoff $dev 0
hc_write "$sys/writeback_running" 0
scale=${HC_TIME_SCALE:-1}

head -c 1M /dev/urandom >"$W/hot"
io_put "$W/hot" /dev/$dev 0
hot_in() { [ "$(wb_dirty $dev)" = $((1 << 20)) ]; }
hc_wait hot_in
head -c 4k /dev/urandom >"$W/small"
sleep 1
entries=$(cat "$IO_SET/internal/journal_entries_written")
hits0=$(io_stat $dev cache_hits)

hold=$((4000 * scale))
held=$(io_delay_arm journal_write $hold)
io_put "$W/small" /dev/$dev $((16 << 20))
io_delay_wait journal_write "$held"
t0=$(io_now)
dirty=$(wb_dirty $dev)
head -c 4k /dev/urandom >"$W/small2"
dd if="$W/small2" of=/dev/$dev bs=4k seek=$((20 << 8)) oflag=direct conv=notrunc status=none &
wpid=$!
sleep 0.3
start=$(io_now)
io_get /dev/$dev 0 $((1 << 20)) "$W/got"
took=$(io_elapsed "$start")
total=$(io_elapsed "$t0")
after=$(cat "$IO_SET/internal/journal_entries_written")
dirty2=$(wb_dirty $dev)
hits=$(($(io_stat $dev cache_hits) - hits0))

cmp -s "$W/got" "$W/hot" || hc_fail "the cached 1 MiB read back wrong while a journal write was held"
awk -v t="$total" -v s="$scale" 'BEGIN { exit !(t < 2 * s) }' ||
	hc_fail "reading dirty_data, starting a write and reading 1 MiB of cached data took $total s (the read $took s) while a journal write was held for $hold ms: lookups wait for the journal write"
awk -v t="$took" -v s="$scale" 'BEGIN { exit !(t < s) }' ||
	hc_fail "a read of cached data took $took s while a journal write was held for $hold ms, with a write waiting: lookups wait for the journal write"
[ "$after" = "$entries" ] ||
	hc_fail "the held journal write ended before the read did ($entries entries written before, $after after; the read took $took s): not in the window"
[ "$dirty2" = "$dirty" ] ||
	hc_fail "dirty_data went from $dirty to $dirty2 during the held journal write: the second write's key went in, so no change was waiting: not in the window"
[ "$hits" -gt 0 ] || hc_fail "the read counted no cache hit"
hc_log "1 MiB of cache hits read in $took s while a journal write was held for $hold ms and a write waited to go in"

wait $wpid || hc_fail "the write started during the held journal write failed"
written() { [ "$(cat "$IO_SET/internal/journal_entries_written")" -gt "$entries" ]; }
hc_wait written
io_get /dev/$dev $((20 << 20)) 4096 "$W/got2"
cmp -s "$W/got2" "$W/small2" || hc_fail "the write made during the held journal write reads back wrong"
io_check
