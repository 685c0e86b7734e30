# The promotion race: a read miss that is being promoted must not put old
# data in the cache over a write that came in meanwhile. The backing
# device is slow (null_blk, 20 ms a request). Each round takes a cold
# 256 KiB range (written beforehand in mode none: on the backing device,
# not cached), starts a direct read of it in 4 KiB pieces in the
# background (about 64 x 20 ms), and at a random moment while that is in
# flight writes new data over the whole range in one direct write. Once
# both are done, two direct reads of the range (the first may promote,
# the second may hit) must both return the new data, and in writethrough
# and writearound so must the backing device itself. Eight rounds each in
# writeback, writearound and writethrough. cache_miss_collisions is
# logged and must be above 0 at the end: the race was exercised.
# timeout: 300
# one-kernel: promotion racing writes, in the module's own locking; io-fio-modes and race-promote-track promote on both kernels

. "$HC_ROOT/tests/vm/io-lib.sh"

IO_BACK_ATTRS="irqmode=2 completion_nsec=20000000" io_setup 128 256
dev=hcache0
io_cutoff $dev 0
rounds=8
len=$((256 << 10))
base=$((64 << 20))
modes="writeback writearound writethrough"
nranges=$((rounds * 3))

hc_log "old data on the backing device only (mode none)"
io_mode $dev none
io_pattern /tmp/old $((nranges * len >> 20))
dd if=/tmp/old of=/dev/$dev bs=1M seek=$((base >> 20)) oflag=direct status=none ||
	hc_fail "writing the old data failed"
io_settle

k=0
for mode in $modes; do
	io_mode $dev "$mode"
	c0=$(io_stat $dev cache_miss_collisions)
	for r in $(seq $rounds); do
		off=$((base + k * len))
		head -c $len /dev/urandom >/tmp/new
		cp /tmp/new /tmp/new.$k
		dd if=/dev/$dev of=/dev/null bs=4k count=$((len / 4096)) skip=$((off / 4096)) \
			iflag=direct status=none &
		reader=$!
		sleep "0.$((RANDOM % 8 + 1))"
		kill -0 $reader 2>/dev/null || hc_log "$mode round $r: the read was over before the write"
		io_put /tmp/new /dev/$dev $off
		wait $reader || hc_fail "$mode round $r: the read failed"
		io_get /dev/$dev $off $len /tmp/got
		cmp -s /tmp/got /tmp/new ||
			hc_fail "$mode round $r: a read after the write returns old data ($(cmp /tmp/got /tmp/new 2>&1 | head -1); old matches: $(cmp -s /tmp/got <(tail -c +$((k * len + 1)) /tmp/old | head -c $len) && echo all || echo partly))"
		io_get /dev/$dev $off $len /tmp/got
		cmp -s /tmp/got /tmp/new || hc_fail "$mode round $r: the second read after the write returns other data"
		if [ "$mode" != writeback ]; then
			io_get_raw $off $len /tmp/raw
			cmp -s /tmp/raw /tmp/new || hc_fail "$mode round $r: the backing device does not hold the new data"
		fi
		k=$((k + 1))
	done
	io_settle
	hc_log "$mode: $rounds rounds; cache_miss_collisions $c0 -> $(io_stat $dev cache_miss_collisions); $(io_stats_line $dev)"
done
io_wait_stat $dev cache_miss_collisions 1

# Every range once more, now and after a stop and register of the set.
check_all() {
	local k
	for k in $(seq 0 $((nranges - 1))); do
		io_get /dev/$dev $((base + k * len)) $len /tmp/got
		cmp -s /tmp/got /tmp/new."$k" || hc_fail "$1: range $k does not hold its new data"
	done
	hc_log "$1: all $nranges ranges hold their new data"
}
check_all "at the end"
hc_log "cache_miss_collisions: $(io_stat $dev cache_miss_collisions) (set: $(io_stat set cache_miss_collisions))"
io_restart
check_all "after a restart"
io_teardown
