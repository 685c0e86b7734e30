# A flush that lies (data-safety path 4). A PREFLUSH on hcache0 flushes
# the backing device (when a write reached it since), inserts the keys of every cached write done so far
# and writes the journal, so that every write completed before it is
# durable. If the cache set fails in between (its metadata can no longer
# be written), the journal holding those keys is never written: the flush
# must then fail, as the writes it covers are not durable. The debug
# build's delay point flush_backing holds the flush after the backing
# device's flush for 3 s (times HC_TIME_SCALE), so the set fails exactly
# there.
#
# In writeback (journal_delay_ms 10 s, so no timer writes the entry; the
# test checks that none was written before the failure):
# 1 MiB is written and acknowledged (its keys in the open journal entry);
# an fsync of hcache0 starts and is held at the point; the cache device's
# writes start failing (dm-flakey error_writes) and a journal write is
# asked for (debugfs flush), which fails and fails the set. The held fsync
# must then return an error. Before the fix it returned success.
# timeout: 240
# expect-log: hcache: .*: cache set .*: .*failed
# expect-log: hcache: .*: cache set .*: .*(error -5|update failed half way)
# expect-log: hcache: .*: cache set .* failed: its metadata can no longer be written
# expect-log: hcache: .*:   (dirty sectors|[0-9]+ dirty ranges|\(the list ends early)
# expect-log: hcache: .*: stopping: its failed cache set

. "$HC_ROOT/tests/vm/io-lib.sh"

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
raw=$(hc_nullb cache 64)
back=$(hc_nullb back 128 irqmode=2 completion_nsec=1000000)
sectors=$(hc_size "$raw")
cache=$(hc_dm_create hc_fc "0 $sectors linear $raw 0")
"$(hc_tool make-hcache)" -C "$cache" -B "$back" --block 512 --bucket 64k --writeback >/dev/null ||
	hc_fail "make-hcache failed"
IO_UUID=$("$(hc_tool hcache-super-show)" "$raw" | awk '$1 == "cset.uuid" { print $2 }')
set=/sys/fs/hcache/$IO_UUID
dbg=/sys/kernel/debug/hcache/$IO_UUID
hc_load
hc_write /sys/fs/hcache/register "$cache"
dev=$(io_register_backing "$back")
sys=$(io_sysdir "$dev")
io_mode_is "$dev" writeback || hc_fail "not in writeback: $(cat "$sys/cache_mode")"
hc_write "$sys/writeback_running" 0
hc_write "$sys/sequential_cutoff" 0
hc_write "$set/journal_delay_ms" 10000
hc_write "$set/io_error_limit" 0

head -c 1M /dev/urandom >/tmp/data
entries=$(cat "$set/internal/journal_entries_written")
dd if=/tmp/data of=/dev/"$dev" bs=64k oflag=direct status=none || hc_fail "the writes failed"
[ "$(io_read_num "$sys/dirty_data")" -gt 0 ] || hc_fail "no dirty data after the writes"

# The hold scales with a slow (debug) kernel; sync(1) fsyncs the device,
# and starts in a fraction of python's time there, well inside the
# journal's 10 s.
hits=$(io_delay_arm flush_backing $((3000 * ${HC_TIME_SCALE:-1})))
sync /dev/"$dev" >/tmp/fsync.out 2>&1 &
syncer=$!
io_delay_wait flush_backing "$hits"
[ "$(cat "$set/internal/journal_entries_written")" = "$entries" ] ||
	hc_fail "a journal entry was written before the fsync reached the point: the writes' keys are durable, not in the window"
hc_dm_reload hc_fc "0 $sectors flakey $raw 0 0 3600 1 error_writes"
# On a slow (debug) kernel the hold may end during the reload: the held
# flush's own journal write then fails and fails the set, which is gone
# by now; that is the window too.
if [ -e "$set" ]; then
	[ "$(cat "$set/internal/journal_entries_written")" = "$entries" ] ||
		hc_fail "a journal entry was written before the cache device failed: the writes' keys are durable, not in the window"
	printf 'journal\n' >"$dbg/flush" 2>/dev/null && hc_fail "a journal write succeeded with every write failing"
	hc_log "the journal write failed while the fsync was held"
else
	hc_log "the set failed at the held flush's own journal write"
fi
rc=0
wait $syncer || rc=$?
hc_log "fsync of $dev, held while the set failed: status $rc, $(cat /tmp/fsync.out)"
[ $rc != 0 ] || hc_fail "the fsync returned success although the set failed before the keys of the writes it covers were journalled"
hc_wait test ! -e "$set"
hc_dm_reload hc_fc "0 $sectors linear $raw 0"
dmsetup remove --noudevsync hc_fc
hc_unload
