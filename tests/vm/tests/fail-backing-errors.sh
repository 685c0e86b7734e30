# The backing device fails every I/O (dm-linear under it turned into
# dm-error). Reads the cache can answer still succeed, with the right data;
# reads it cannot and writethrough writes fail with EIO, and a range whose
# write failed is never read from the cache afterwards. Writeback-mode
# writes succeed into the cache; their writeback fails, the data stays
# dirty and is retried; once the backing device works again it is written
# back and reads right, on hcache0 and on the raw device. Backing-device
# errors never count against the cache set's io_error_limit.
# timeout: 300
# expect-log: hcache: .*: writeback of sectors [0-9]+-[0-9]+ failed \(error -5\)
# expect-log: hcache: .*: flush after writeback failed

. "$HC_ROOT/tests/vm/io-lib.sh"

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
cache=$(hc_nullb cache 64)
raw=$(hc_nullb back 64)
sectors=$(hc_size "$raw")
back=$(hc_dm_create hc_b "0 $sectors linear $raw 0")
"$(hc_tool make-hcache)" -C "$cache" -B "$back" --block 512 --bucket 64k >/dev/null
IO_UUID=$("$(hc_tool hcache-super-show)" "$cache" | awk '$1 == "cset.uuid" { print $2 }')
offset=$("$(hc_tool hcache-super-show)" "$raw" | awk '$1 == "backing.data_offset" { print $2 }')
set=/sys/fs/hcache/$IO_UUID
hc_load
hc_write /sys/fs/hcache/register "$cache"
h=$(io_register_backing "$back")
sys=$(io_sysdir "$h")
hc_write "$sys/sequential_cutoff" 0

# 4 MiB written through and read back: cached, clean.
head -c 4M /dev/urandom >/tmp/a
dd if=/tmp/a of=/dev/$h bs=64k oflag=direct conv=fsync status=none
cmp -s /tmp/a <(dd if=/dev/$h bs=64k count=64 iflag=direct status=none) ||
	hc_fail "reads wrong before the failure"

backing_fails() {
	hc_dm_reload hc_b "0 $sectors $1"
}
backing_fails error

cmp -s /tmp/a <(dd if=/dev/$h bs=64k count=64 iflag=direct status=none) ||
	hc_fail "a cached read went wrong with the backing device failing"
dd if=/dev/$h of=/dev/null bs=64k skip=100 count=4 iflag=direct status=none 2>/dev/null &&
	hc_fail "a read the cache cannot answer succeeded"
dd if=/dev/urandom of=/dev/$h bs=64k count=4 oflag=direct status=none 2>/dev/null &&
	hc_fail "a writethrough write succeeded on a failing backing device"
dd if=/dev/$h of=/dev/null bs=64k count=4 iflag=direct status=none 2>/dev/null &&
	hc_fail "the range of a failed write was read from the cache"
cmp -s <(tail -c +262145 /tmp/a) <(dd if=/dev/$h bs=64k skip=4 count=60 iflag=direct status=none) ||
	hc_fail "the rest of the cached data reads wrong"
hc_log "writethrough: cached reads right, misses and writes fail with EIO"

# Writeback. The mode and the dirty state are kept in the backing
# superblock, so both are set while the device works (a first dirty write
# on a failing device fails: it cannot be recorded as dirty). Then writes
# go into the cache; writeback fails and keeps them dirty.
backing_fails "linear $raw 0"
hc_write "$sys/cache_mode" writeback
hc_write "$sys/writeback_running" 0
hc_write "$sys/writeback_delay" 0
dd if=/dev/urandom of=/dev/$h bs=64k seek=512 count=1 oflag=direct status=none
[ "$(cat "$sys/state")" = dirty ] || hc_fail "state $(cat "$sys/state") after a writeback write"
backing_fails error
head -c 1M /dev/urandom >/tmp/b
dd if=/tmp/b of=/dev/$h bs=64k seek=256 oflag=direct status=none ||
	hc_fail "a writeback write failed"
hc_write "$sys/writeback_running" 1
wb_failed() {
	dmesg | grep -q "writeback of sectors"
}
hc_wait wb_failed
sleep 3
[ "$(cat "$sys/dirty_data")" -ge 1048576 ] || hc_fail "dirty_data $(cat "$sys/dirty_data") after failed writebacks"
[ "$(cat "$sys/state")" = dirty ] || hc_fail "state $(cat "$sys/state")"
cmp -s /tmp/b <(dd if=/dev/$h bs=64k skip=256 count=16 iflag=direct status=none) ||
	hc_fail "the dirty data reads wrong"
hc_log "writeback: $(dmesg | grep -c 'writeback of sectors') failed writebacks logged; dirty_data $(cat "$sys/dirty_data")"

backing_fails "linear $raw 0"
for _ in $(seq 600); do
	[ "$(cat "$sys/dirty_data")" = 0 ] && break
	sleep 0.1
done
[ "$(cat "$sys/dirty_data")" = 0 ] || hc_fail "not written back once the backing device works: $(cat "$sys/dirty_data")"
cmp -s /tmp/b <(dd if="$raw" bs=512 skip=$((offset + 256 * 128)) count=2048 iflag=direct status=none) ||
	hc_fail "the raw backing device lacks the data written back"
cmp -s /tmp/b <(dd if=/dev/$h bs=64k skip=256 count=16 iflag=direct status=none) ||
	hc_fail "reads wrong after writeback"
[ "$(cat "$set/errors") $(cat "$set/io_errors")" = "0 0" ] ||
	hc_fail "backing errors counted against the cache: errors $(cat "$set/errors"), io_errors $(cat "$set/io_errors")"
[ "$(cat "/sys/kernel/debug/hcache/$IO_UUID/check")" = ok ] ||
	hc_fail "check: $(cat "/sys/kernel/debug/hcache/$IO_UUID/check")"
hc_log "backing device back: written back, right on both; the set counted no error"

hc_write "$set/stop" 1
hc_wait test ! -e "$set"
dmsetup remove --noudevsync hc_b
hc_unload
