# Metadata writes fail (dm-flakey with error_writes under the cache
# device, reads still working) and io_error_limit is 0, so no error count
# can fail the set: the first metadata write that fails (a node or the
# journal) fails it by itself, cleanly. The writethrough device goes on
# stale with the right data, the writeback one stops with its dirty data
# kept; with writes working again the set recovers from its journal, the
# dirty data comes back and the consistency check passes.
# timeout: 300
# expect-log: hcache: .*: cache set .*: .*failed
# expect-log: hcache: .*: cache set .*: .*(error -5|update failed half way)
# expect-log: hcache: .*: cache set .* failed: its metadata can no longer be written
# expect-log: hcache: .*:   (dirty sectors|[0-9]+ dirty ranges|\(the list ends early)
# expect-log: hcache: .*: stopping: its failed cache set

. "$HC_ROOT/tests/vm/io-lib.sh"

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
raw=$(hc_nullb cache 64)
wt=$(hc_nullb wt 64)
wb=$(hc_nullb wb 64)
sectors=$(hc_size "$raw")
cache=$(hc_dm_create hc_c "0 $sectors linear $raw 0")
"$(hc_tool make-hcache)" -C "$cache" -B "$wt" "$wb" --block 512 --bucket 64k >/dev/null
IO_UUID=$("$(hc_tool hcache-super-show)" "$raw" | awk '$1 == "cset.uuid" { print $2 }')
set=/sys/fs/hcache/$IO_UUID
dbg=/sys/kernel/debug/hcache/$IO_UUID
hc_load
hc_write /sys/fs/hcache/register "$cache"
h_wt=$(io_register_backing "$wt")
h_wb=$(io_register_backing "$wb")
s_wt=$(io_sysdir "$h_wt")
s_wb=$(io_sysdir "$h_wb")
hc_write "$s_wb/cache_mode" writeback
hc_write "$s_wb/writeback_running" 0
for d in wt wb; do
	head -c 2M /dev/urandom >/tmp/$d.1
	h=h_$d
	dd if=/tmp/$d.1 of=/dev/${!h} bs=64k oflag=direct conv=fsync status=none
done
hc_write "$set/io_error_limit" 0
hc_log "wb dirty_data $(cat "$s_wb/dirty_data"); io_error_limit 0"

hc_dm_reload hc_c "0 $sectors flakey $raw 0 0 3600 1 error_writes"
# Enough keys to split leaves and write the journal: those writes fail.
echo "1000 0 20000 8 16" >"$dbg/fill" 2>/dev/null &&
	hc_fail "inserting 20000 keys succeeded with every write failing"
for _ in $(seq 300); do
	[ -d "$set" ] || break
	sleep 0.1
done
[ ! -d "$set" ] || hc_fail "the set did not fail: errors $(cat "$set/errors")"
hc_kmsg_has "cache set $IO_UUID failed: its metadata can no longer be written"
[ "$(cat "$s_wt/state")" = stale ] || hc_fail "wt is $(cat "$s_wt/state"), not stale"
cmp -s /tmp/wt.1 <(dd if=/dev/$h_wt bs=64k count=32 iflag=direct status=none) ||
	hc_fail "wt reads wrong after the failure"
[ ! -e "$s_wb" ] || hc_fail "wb still registered"
hc_log "a failed metadata write failed the set: wt stale and right, wb stopped"

hc_dm_reload hc_c "0 $sectors linear $raw 0"
hc_write /sys/fs/hcache/register "$cache"
[ -d "$set" ] || hc_fail "the set did not register again"
h_wb=$(io_register_backing "$wb")
cmp -s /tmp/wb.1 <(dd if=/dev/$h_wb bs=64k count=32 iflag=direct status=none) ||
	hc_fail "wb's dirty data did not come back"
[ "$(cat "$dbg/check")" = ok ] || hc_fail "check: $(cat "$dbg/check")"
hc_log "writes working again: recovered, wb's data back, check ok"
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
dmsetup remove --noudevsync hc_c
hc_unload
