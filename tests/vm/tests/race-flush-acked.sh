# A flush (writeback_flush, `hcache flush --wait`) must write back every
# write acknowledged before it, including one whose key is not in the tree
# yet. In writeback mode a cached write without FUA is acknowledged as soon
# as its data is on the cache device, and write_work inserts its key a
# moment later; until then dirty_data does not count it. The writeback
# thread used to clear the flush as soon as it found no dirty sector, and
# the tool to return once dirty_data read 0: both could end the flush with
# that write still only in the cache, and an admin would then use the
# backing device (a snapshot, a move) without it.
#
# The debug build's delay point write_insert holds write_work for 4 s
# (times HC_TIME_SCALE) before it inserts: 256 KiB written with O_DIRECT is
# acknowledged, held there, and `hcache flush --wait` starts with
# dirty_data 0 and writeback paused (writeback_running 0). It must wait
# for the key, write the data back, and return only then; the raw backing
# device must hold the data. Before the fix it returned at once, and the
# backing device held zeros. Then writeback_flush reads 0 (nothing
# pending), and a flush called off (0) ends a pending one.
# timeout: 150

. "$HC_ROOT/tests/vm/io-lib.sh"

W=$(mktemp -d /tmp/race-flush-acked.XXXXXX)
io_setup 128 128
dev=hcache0
sys=$(io_sysdir $dev)
io_mode $dev writeback
io_cutoff $dev 0
hc_write "$sys/writeback_running" 0
off=$((1 << 20))
head -c 256k /dev/urandom >"$W/data"

hold=$((4000 * ${HC_TIME_SCALE:-1}))
hits=$(io_delay_arm write_insert $hold)
io_put "$W/data" /dev/$dev $off
io_delay_wait write_insert "$hits"
[ "$(wb_dirty $dev)" = 0 ] ||
	hc_fail "dirty_data reads $(wb_dirty $dev) while the write's key is held out of the tree: the window is not open"
[ "$(cat "$sys/writeback_flush")" = 0 ] || hc_fail "writeback_flush reads 1 before any flush"

start=$(io_now)
"$(hc_tool hcache)" flush --wait /dev/$dev >"$W/flush.out" 2>&1 ||
	hc_fail "hcache flush --wait failed: $(cat "$W/flush.out")"
took=$(io_elapsed "$start")
io_get_raw $off $((256 << 10)) "$W/raw"
cmp -s "$W/raw" "$W/data" ||
	hc_fail "hcache flush --wait returned after $took s with the acknowledged write not on the backing device: $(wb_diff "$W/raw" "$W/data" $off)"
[ "$(wb_dirty $dev)" = 0 ] || hc_fail "dirty_data reads $(wb_dirty $dev) after the flush"
[ "$(cat "$sys/writeback_flush")" = 0 ] || hc_fail "writeback_flush still reads 1 after the flush ended"
[ "$(cat "$sys/writeback_running")" = 0 ] || hc_fail "the flush changed writeback_running"
hc_log "flush --wait took $took s over a write held for $hold ms before its key went in: it waited, and the backing device holds the write"

# Called off: a flush pending behind another held write ends at 0, and
# the write stays dirty (writeback is paused).
head -c 64k /dev/urandom >"$W/data2"
hits=$(io_delay_arm write_insert $hold)
io_put "$W/data2" /dev/$dev $((4 << 20))
io_delay_wait write_insert "$hits"
hc_write "$sys/writeback_flush" 1
[ "$(cat "$sys/writeback_flush")" = 1 ] || hc_fail "writeback_flush does not read 1 while a flush waits for a write's key"
hc_write "$sys/writeback_flush" 0
[ "$(cat "$sys/writeback_flush")" = 0 ] || hc_fail "writeback_flush reads 1 after the flush was called off"
dirtied() { [ "$(wb_dirty $dev)" -gt 0 ]; }
hc_wait dirtied
sleep 2
[ "$(wb_dirty $dev)" = $((64 << 10)) ] ||
	hc_fail "dirty_data reads $(wb_dirty $dev), not 65536: the called-off flush wrote back anyway"

hc_log "a called-off flush leaves the data dirty"
io_check
