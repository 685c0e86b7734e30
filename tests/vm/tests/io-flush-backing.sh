# A flush of hcache0 flushes the backing device only when a write reached
# it since its last flush; in writeback mode an fsync then costs the cache
# device's journal write, not a flush of the slow disk. Both disks have a
# volatile write cache (null_blk cache_size), so their flushes are real and
# counted (the flush requests in their stat). Passes when:
# - writeback, writeback paused, the superblock already dirty: 20 writes
#   of 4 KiB, each followed by an fdatasync, flush the backing device 0
#   times (and the cache device at least 20 times);
# - writearound, on blocks never cached (so no journal write, which would
#   flush the backing device on its own): 5 such write+fdatasync pairs
#   flush it at least 5 times;
# - mode none, then writeback: a write sent around the cache in mode
#   none, then an fdatasync in writeback, flushes it once;
# - a write+fdatasync that reached the backing device, then fdatasync
#   alone: the second flushes it no more;
# - detached, a write (passed through, with no cache set to count it);
#   attached again, an fdatasync flushes the backing device.
# Before a flush looked at what reached the backing device, the writeback
# case flushed it 20 times.
# timeout: 120

. "$HC_ROOT/tests/vm/io-lib.sh"

IO_CACHE_ATTRS="cache_size=8" IO_BACK_ATTRS="cache_size=8" io_setup 64 128 --bucket 64k
dev=hcache0
sys=$(io_sysdir $dev)
io_cutoff $dev 0
head -c 4096 /dev/urandom >/tmp/fb-blk

# flushes DEV: flush requests DEV has completed (the stat's 16th field).
flushes() {
	io_bstat "$1" 16
}

# put BLOCK [SYNC]: write /tmp/fb-blk at 4 KiB block BLOCK of hcache0,
# direct; with SYNC, an fdatasync after it.
put() {
	dd if=/tmp/fb-blk of=/dev/$dev bs=4k count=1 seek="$1" oflag=direct \
		conv=notrunc${2:+,fdatasync} status=none || hc_fail "writing block $1 failed"
}

# sync_only: an fdatasync of hcache0 with nothing written.
sync_only() {
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.fdatasync(fd)
os.close(fd)' /dev/$dev || hc_fail "fdatasync of $dev failed"
}

# sync_flushes: an fdatasync of hcache0 alone; prints how many flushes
# the backing device did meanwhile.
sync_flushes() {
	local b0
	b0=$(flushes "$IO_BDEV")
	sync_only
	echo $(( $(flushes "$IO_BDEV") - b0 ))
}

[ "$(flushes "$IO_BDEV")" != "" ] || hc_fail "no flush count in $IO_BDEV's stat"

io_mode $dev writeback
hc_write "$sys/writeback_running" 0
put 0 sync		# the superblock goes dirty: a flush of its own
io_settle
b0=$(flushes "$IO_BDEV")
c0=$(flushes "$IO_CDEV")
for ((i = 1; i <= 20; i++)); do
	put $((i * 7)) sync
done
bf=$(( $(flushes "$IO_BDEV") - b0 ))
c=$(( $(flushes "$IO_CDEV") - c0 ))
hc_log "writeback: 20 write+fdatasync: backing flushes $bf, cache flushes $c"
[ "$bf" = 0 ] || hc_fail "writeback: 20 fdatasyncs of cached writes flushed the backing device $bf times"
[ "$c" -ge 20 ] || hc_fail "writeback: 20 fdatasyncs flushed the cache device only $c times"

hc_write "$sys/writeback_running" 1
hc_write "$sys/writeback_percent" 0
clean() { [ "$(cat "$sys/dirty_data")" = 0 ]; }
hc_wait clean
io_mode $dev writearound
io_settle
b0=$(flushes "$IO_BDEV")
for ((i = 0; i < 5; i++)); do
	put $((1000 + i * 3)) sync
done
bf=$(( $(flushes "$IO_BDEV") - b0 ))
hc_log "writearound: 5 write+fdatasync on blocks never cached: backing flushes $bf"
[ "$bf" -ge 5 ] || hc_fail "writearound: 5 fdatasyncs after writes to the backing device flushed it $bf times"

io_mode $dev none
put 2000
io_mode $dev writeback
io_settle
bf=$(sync_flushes)
hc_log "a write in mode none, then an fdatasync in writeback: backing flushes $bf"
[ "$bf" -ge 1 ] || hc_fail "an fdatasync after a write sent around the cache in mode none did not flush the backing device"
bf=$(sync_flushes)
hc_log "and a second fdatasync: backing flushes $bf"
[ "$bf" = 0 ] || hc_fail "a second fdatasync with nothing written flushed the backing device $bf times"
io_check

hc_write "$sys/detach" 1
detached() { [ -z "$(tr -d '0-' <"$sys/cache_set_uuid")" ]; }
hc_wait detached
put 3000
hc_write "$sys/attach" "$IO_UUID"
hc_wait io_attached $dev
io_mode $dev writeback
io_settle
bf=$(sync_flushes)
hc_log "a write while detached, then an fdatasync attached: backing flushes $bf"
[ "$bf" -ge 1 ] || hc_fail "an fdatasync after a write passed through while detached did not flush the backing device"
io_check
