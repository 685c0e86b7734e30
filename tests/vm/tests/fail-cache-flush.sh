# A flush after an overwrite in place has no key to journal: it flushes the
# cache device itself (commit.c, hc_flush_cache_data()). If that flush
# fails, what the device held in its volatile cache may be gone, while a
# later flush could go well and make keys durable over it: the set must
# fail, as for a failed metadata write, and the flush must fail too. The
# debug build's fault point cache_flush fails it as the device would.
#
# hcache0 in writeback (writeback not running) on a cache disk with a
# volatile write cache: 64 KiB of version 1, flushed (its key in the
# journal); 4 KiB of version 2 written in place; then, with the fault
# armed, fsync must fail with an I/O error, the set must fail and the
# device, dirty, stop. Registered again, the set replays its journal:
# hcache0 reads version 1 around the 4 KiB, and version 1 or 2 there (the
# disk did not really lose its cache), and the consistency check passes.
# timeout: 240
# expect-log: hcache: .*: cache set .*: flush of the cache device failed: error -5
# expect-log: hcache: .*: cache set .* failed: its metadata can no longer be written
# expect-log: hcache: .*: stopping: its failed cache set
# expect-log: hcache: .*:   (dirty sectors|[0-9]+ dirty ranges)

. "$HC_ROOT/tests/vm/io-lib.sh"

KiB=1024
W=$(mktemp -d /tmp/fail-cache-flush.XXXXXX)
IO_CACHE_ATTRS="cache_size=8" io_setup 64 256 --bucket 64k
dev=hcache0
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0

# fsync_dev DEV: fsync(2) on DEV, a PREFLUSH to it; fails as fsync does.
fsync_dev() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.fsync(fd)' "$1"
}

head -c $((64 * KiB)) /dev/urandom >"$W/v1"
io_put "$W/v1" /dev/$dev 0
fsync_dev /dev/$dev || hc_fail "the first fsync failed"
n0=$(io_stat $dev writes_in_place)
head -c 4096 /dev/urandom >"$W/v2"
io_put "$W/v2" /dev/$dev $((8 * KiB))
[ $(($(io_stat $dev writes_in_place) - n0)) = 1 ] ||
	hc_fail "the 4 KiB write did not go in place"

hits=$(io_fault_arm cache_flush)
fsync_dev /dev/$dev 2>"$W/err" &&
	hc_fail "fsync succeeded though the cache device's flush failed"
grep -q 'Input/output error' "$W/err" ||
	hc_fail "fsync failed, but not with an I/O error: $(cat "$W/err")"
[ "$(io_point_hits fail cache_flush)" -gt "$hits" ] ||
	hc_fail "the flush did not pass the fault point"
for _ in $(seq 300); do
	[ -d "$IO_SET" ] || break
	sleep 0.1
done
[ ! -d "$IO_SET" ] ||
	hc_fail "the set did not fail after its cache device's flush failed (errors $(cat "$IO_SET/errors"))"
hc_kmsg_has "flush of the cache device failed: error -5"
hc_wait test ! -e /dev/$dev
hc_log "a failed flush of the cache device failed the fsync and the set; hcache0 stopped"

hc_write /sys/fs/hcache/register "$IO_CDEV"
[ -d "$IO_SET" ] || hc_fail "the set did not register again"
dev=$(io_register_backing "$IO_BDEV")
io_get /dev/$dev 0 $((64 * KiB)) "$W/got"
cp "$W/v1" "$W/want2"
dd if="$W/v2" of="$W/want2" bs=4096 seek=2 conv=notrunc status=none
if ! cmp -s "$W/got" "$W/v1" && ! cmp -s "$W/got" "$W/want2"; then
	hc_fail "after the failure, $dev reads neither version: $(wb_diff "$W/got" "$W/v1" 0)"
fi
[ "$(cat "$IO_DBG/check")" = ok ] || hc_fail "check: $(cat "$IO_DBG/check")"
hc_log "registered again: $dev reads version 1 around the 4 KiB, $(cmp -s "$W/got" "$W/want2" && echo 2 || echo 1) there; check ok"
io_stop
hc_unload
rm -rf "$W"
