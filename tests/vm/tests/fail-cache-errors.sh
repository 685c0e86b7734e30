# The cache device starts failing every I/O (dm-linear under it turned
# into dm-error). Three backing devices are attached: wt (writethrough),
# wb (writeback, with dirty data, writeback paused) and al (writethrough,
# stop_when_cache_set_failed=always). Reads of wt's cached clean data are
# all answered right, from the backing device; the errors reach
# io_error_limit and the set fails: wt goes on in passthrough, marked
# stale, and keeps reading and writing right; wb stops (the log says how
# much of its data was not written back, and which ranges, also listed in
# /sys/fs/hcache/failed_dirty) and so does al; the set stops.
# With the cache device repaired, registering it and wb brings wb's dirty
# data back, and wt attaches again under a new id, so the cache's old copy
# of its data is never read.
# timeout: 300
# expect-log: hcache: .*: cache set .*: (read|write|metadata|lookup|promotion).* failed
# expect-log: hcache: .*: cache set .*: .*(error -5|update failed half way)
# expect-log: hcache: .*: cache set .* failed: [0-9]+ I/O errors
# expect-log: hcache: .*:   (dirty sectors|[0-9]+ dirty ranges|\(the list ends early)
# expect-log: hcache: .*: stopping: its (failed )?cache set

. "$HC_ROOT/tests/vm/io-lib.sh"

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
raw=$(hc_nullb cache 64)
wt=$(hc_nullb wt 64)
wb=$(hc_nullb wb 64)
al=$(hc_nullb al 64)
sectors=$(hc_size "$raw")
cache=$(hc_dm_create hc_c "0 $sectors linear $raw 0")
"$(hc_tool make-hcache)" -C "$cache" -B "$wt" "$wb" "$al" --block 512 --bucket 64k >/dev/null
IO_UUID=$("$(hc_tool hcache-super-show)" "$raw" | awk '$1 == "cset.uuid" { print $2 }')
set=/sys/fs/hcache/$IO_UUID
IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
hc_load
hc_write /sys/fs/hcache/register "$cache"
[ -d "$set" ] || hc_fail "no $set after register"
h_wt=$(io_register_backing "$wt")
h_wb=$(io_register_backing "$wb")
h_al=$(io_register_backing "$al")
s_wt=$(io_sysdir "$h_wt")
s_wb=$(io_sysdir "$h_wb")
s_al=$(io_sysdir "$h_al")
hc_write "$s_wb/cache_mode" writeback
hc_write "$s_wb/writeback_running" 0
hc_write "$s_al/stop_when_cache_set_failed" always
grep -q '\[always\]' "$s_al/stop_when_cache_set_failed" ||
	hc_fail "stop_when_cache_set_failed: $(cat "$s_al/stop_when_cache_set_failed")"
[ "$(cat "$set/io_error_limit") $(cat "$set/io_error_halflife")" = "64 60" ] ||
	hc_fail "defaults: io_error_limit $(cat "$set/io_error_limit"), io_error_halflife $(cat "$set/io_error_halflife")"

for d in wt wb al; do
	head -c 8M /dev/urandom >/tmp/$d.1
	h=h_$d
	dd if=/tmp/$d.1 of=/dev/${!h} bs=1M oflag=direct conv=fsync status=none
done
# Read wt twice: whatever the first read did not find cached is now.
for _ in 1 2; do
	cmp -s /tmp/wt.1 <(dd if=/dev/$h_wt bs=64k count=128 iflag=direct status=none) ||
		hc_fail "wt reads wrong before the failure"
done
[ "$(cat "$s_wb/state")" = dirty ] || hc_fail "wb is $(cat "$s_wb/state"), not dirty"
dirty=$(cat "$s_wb/dirty_data")
hc_write "$set/io_error_limit" 16
hc_log "three devices attached; wb dirty_data $dirty; io_error_limit 16"

# The cache device fails.
hc_dm_reload hc_c "0 $sectors error"
cmp -s /tmp/wt.1 <(dd if=/dev/$h_wt bs=4k count=2048 iflag=direct status=none) ||
	hc_fail "a read of wt's clean data went wrong on the failing cache"
for _ in $(seq 300); do
	[ -d "$set" ] || break
	sleep 0.1
done
[ ! -d "$set" ] || hc_fail "the set did not fail: io_errors $(cat "$set/io_errors"), errors $(cat "$set/errors")"
hc_kmsg_has "cache set $IO_UUID failed:"
hc_log "$(dmesg | grep -o "cache set $IO_UUID failed:.*" | head -1)"

# wt goes on alone, stale; wb and al stopped.
[ -b "/dev/$h_wt" ] || hc_fail "wt stopped"
[ "$(cat "$s_wt/state")" = stale ] || hc_fail "wt is $(cat "$s_wt/state"), not stale"
[ "$(cat "$s_wt/cache_set_id")" = 0 ] || hc_fail "wt still attached: id $(cat "$s_wt/cache_set_id")"
cmp -s /tmp/wt.1 <(dd if=/dev/$h_wt bs=1M count=8 iflag=direct status=none) ||
	hc_fail "wt reads wrong after the failure"
head -c 8M /dev/urandom >/tmp/wt.2
dd if=/tmp/wt.2 of=/dev/$h_wt bs=1M oflag=direct conv=fsync status=none ||
	hc_fail "writing wt after the failure"
cmp -s /tmp/wt.2 <(dd if=/dev/$h_wt bs=1M count=8 iflag=direct status=none) ||
	hc_fail "wt reads back wrong after the failure"
[ ! -e "$s_wb" ] && [ ! -e "$s_al" ] || hc_fail "wb or al still registered"
[ ! -b "/dev/$h_wb" ] && [ ! -b "/dev/$h_al" ] || hc_fail "wb or al still running"
dmesg | grep -q "stopping: its failed cache set $IO_UUID holds [1-9][0-9]* KiB of its data not yet written back" ||
	hc_fail "no line saying how much of wb's data was not written back: $(dmesg | grep stopping)"
hc_kmsg_has "stopping: its cache set $IO_UUID failed (stop_when_cache_set_failed is always)"
# failed_dirty lists wb's dirty ranges, as many bytes as dirty_data said.
listed=$(awk -v d="${wb#/dev/}" '$1 == d { split($3, r, "-"); n += r[2] - r[1] + 1 } END { print n * 512 }' /sys/fs/hcache/failed_dirty)
[ "$listed" = "$dirty" ] ||
	hc_fail "failed_dirty lists $listed bytes of wb, dirty_data was $dirty: $(cat /sys/fs/hcache/failed_dirty)"
hc_kmsg_has "dirty ranges in all (sectors of the hcache device), listed in /sys/fs/hcache/failed_dirty"
hc_log "wt runs stale and right; wb and al stopped: $(dmesg | grep -o 'holds [0-9]* KiB of its data not yet written back' | head -1)"

# Repaired: the set comes back; wb's dirty data with it; wt under a new id.
hc_dm_reload hc_c "0 $sectors linear $raw 0"
hc_write /sys/fs/hcache/register "$cache"
[ -d "$set" ] || hc_fail "the repaired cache did not register"
h_wb=$(io_register_backing "$wb")
hc_wait io_attached "$h_wt"
cmp -s /tmp/wb.1 <(dd if=/dev/$h_wb bs=1M count=8 iflag=direct status=none) ||
	hc_fail "wb's data did not come back with the set"
cmp -s /tmp/wt.2 <(dd if=/dev/$h_wt bs=1M count=8 iflag=direct status=none) ||
	hc_fail "wt reads its old cached data after attaching again"
[ "$(cat "$IO_DBG/check")" = ok ] ||
	hc_fail "check: $(cat "$IO_DBG/check")"
hc_log "repaired: wb's dirty data back ($(cat "$(io_sysdir "$h_wb")/dirty_data") dirty), wt attached as id $(cat "$s_wt/cache_set_id") with its new data"

hc_write "$set/stop" 1
hc_wait test ! -e "$set"
for d in "$h_wt" "$h_wb"; do
	[ -b "/dev/$d" ] || continue
	hc_write "$(io_sysdir "$d")/stop" 1
done
dmsetup remove --noudevsync hc_c
hc_unload
