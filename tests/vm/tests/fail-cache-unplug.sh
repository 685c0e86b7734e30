# The cache device is hot-unplugged (its null_blk powered off) under two
# attached backing devices: wt (writethrough) and wb (writeback, with
# dirty data, writeback paused). The first error on the removed device
# fails the set, whatever io_error_limit says: reads of wt's clean data
# are answered right from the backing device, wt goes on stale in
# passthrough, wb stops, and "hcache show --json" lists it as failed with
# its dirty data (from failed_dirty). Plugged back in (the memory-backed device keeps
# its data), the cache registers again and brings wb's dirty data back.
# timeout: 300
# expect-log: hcache: .*: cache set .*: (read|write|metadata|lookup|promotion|writeback).* failed
# expect-log: hcache: .*: cache set .*: .*(error -5|error -6|update failed half way)
# expect-log: hcache: .*: cache set .* failed: the cache device was removed
# expect-log: hcache: .*:   (dirty sectors|[0-9]+ dirty ranges|\(the list ends early)
# expect-log: hcache: .*: stopping: its failed cache set

. "$HC_ROOT/tests/vm/io-lib.sh"

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
cache=$(hc_nullb cache 64)
wt=$(hc_nullb wt 64)
wb=$(hc_nullb wb 64)
"$(hc_tool make-hcache)" -C "$cache" -B "$wt" "$wb" --block 512 --bucket 64k >/dev/null
IO_UUID=$("$(hc_tool hcache-super-show)" "$cache" | awk '$1 == "cset.uuid" { print $2 }')
set=/sys/fs/hcache/$IO_UUID
hc_load
hc_write /sys/fs/hcache/register "$cache"
[ -d "$set" ] || hc_fail "no $set after register"
h_wt=$(io_register_backing "$wt")
h_wb=$(io_register_backing "$wb")
s_wt=$(io_sysdir "$h_wt")
s_wb=$(io_sysdir "$h_wb")
hc_write "$s_wb/cache_mode" writeback
hc_write "$s_wb/writeback_running" 0
for d in wt wb; do
	head -c 4M /dev/urandom >/tmp/$d.1
	h=h_$d
	dd if=/tmp/$d.1 of=/dev/${!h} bs=64k oflag=direct conv=fsync status=none
done
cmp -s /tmp/wt.1 <(dd if=/dev/$h_wt bs=64k iflag=direct status=none count=64) ||
	hc_fail "wt reads wrong before the unplug"
[ "$(cat "$s_wb/state")" = dirty ] || hc_fail "wb is $(cat "$s_wb/state"), not dirty"
hc_log "wb dirty_data $(cat "$s_wb/dirty_data"); io_error_limit $(cat "$set/io_error_limit")"

echo 0 >/sys/kernel/config/nullb/cache/power
cmp -s /tmp/wt.1 <(dd if=/dev/$h_wt bs=64k iflag=direct status=none count=64) ||
	hc_fail "a read of wt's clean data went wrong after the unplug"
for _ in $(seq 300); do
	[ -d "$set" ] || break
	sleep 0.1
done
[ ! -d "$set" ] || hc_fail "the set did not fail: io_errors $(cat "$set/io_errors")"
hc_kmsg_has "cache set $IO_UUID failed: the cache device was removed"
[ "$(cat "$s_wt/state")" = stale ] || hc_fail "wt is $(cat "$s_wt/state"), not stale"
cmp -s /tmp/wt.1 <(dd if=/dev/$h_wt bs=64k iflag=direct status=none count=64) ||
	hc_fail "wt reads wrong after the set failed"
[ ! -e "$s_wb" ] || hc_fail "wb still registered"
hc_log "unplugged: the set failed at once, wt runs stale, wb stopped"
# hcache show lists wb as failed, with its dirty data, from failed_dirty.
"$(hc_tool hcache)" show --json >/tmp/show.json || hc_fail "hcache show failed after the set failed"
python3 - /tmp/show.json "$(basename "$(readlink -f "$wb")")" <<'PY' || hc_fail "hcache show: $(cat /tmp/show.json)"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["hcache"] if r["name"] == sys.argv[2]]
sys.exit(not (len(rows) == 1 and rows[0]["state"] == "failed" and rows[0]["dirty"] > 0))
PY

echo 1 >/sys/kernel/config/nullb/cache/power
[ -b "$cache" ] || hc_fail "$cache did not come back"
hc_write /sys/fs/hcache/register "$cache"
[ -d "$set" ] || hc_fail "the cache did not register after plugging it back"
h_wb=$(io_register_backing "$wb")
cmp -s /tmp/wb.1 <(dd if=/dev/$h_wb bs=64k iflag=direct status=none count=64) ||
	hc_fail "wb's dirty data did not come back"
hc_wait io_attached "$h_wt"
[ "$(cat "/sys/kernel/debug/hcache/$IO_UUID/check")" = ok ] ||
	hc_fail "check: $(cat "/sys/kernel/debug/hcache/$IO_UUID/check")"
hc_log "plugged back: wb's data back, wt attached again"
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_unload
