# Writeback, the basics: dirty data written in writeback mode with
# writeback paused is counted in dirty_data, exactly (the bytes of every
# 512-byte sector written at least once), and makes the backing
# superblock dirty; the raw backing device holds none of it yet: every
# sector of the region reads there as it did before the writes (zeros),
# a difference in any 4 KiB block fails, naming the blocks. Resumed,
# writeback empties the cache: dirty_data 0, state clean, the raw backing
# device holds every byte written, far fewer backing writes than dirty
# extents (contiguous ones are merged), and the consistency check (which
# also recounts each device's dirty sectors) passes. Dirty data survives a
# stop of the set and a register, and a detach with dirty data writes it
# back first.
# timeout: 240

. "$HC_ROOT/tests/vm/io-lib.sh"

io_setup 128 128
dev=hcache0
sys=$(io_sysdir $dev)
region=$((16 << 20))
io_pattern /tmp/wbb-pat 16
truncate -s $region /tmp/wbb-expect
dd if=/dev/zero of=/dev/$dev bs=1M count=16 oflag=direct status=none
io_mode $dev writeback
io_cutoff $dev 0
hc_write "$sys/writeback_delay" 0
hc_write "$sys/writeback_running" 0
[ "$(cat "$sys/state")" = clean ] || hc_fail "state before dirty writes: $(cat "$sys/state")"

# put SECTOR COUNT SRC_SECTOR: write and mirror (as io-detach-raw.sh).
put() {
	dd if=/tmp/wbb-pat bs=512 skip="$3" count="$2" status=none >/tmp/wbb-piece
	io_put /tmp/wbb-piece /dev/$dev $(($1 * 512))
	dd if=/tmp/wbb-piece of=/tmp/wbb-expect bs=512 seek="$1" conv=notrunc status=none
}

dirty_round() {
	local i s
	# 4 MiB sequentially in 4 KiB direct writes: 1024 contiguous extents.
	dd if=/tmp/wbb-pat of=/dev/$dev bs=4k count=1024 oflag=direct \
		conv=notrunc status=none || hc_fail "sequential writes failed"
	dd if=/tmp/wbb-pat of=/tmp/wbb-expect bs=4k count=1024 conv=notrunc \
		status=none
	# Scattered pieces of odd sizes, some overlapping.
	for ((i = 0; i < 60; i++)); do
		s=$((RANDOM * 3 % (region / 512 - 300)))
		put "$s" $((RANDOM % 250 + 1)) $((RANDOM * 2 % 30000))
	done
}

# written FILE: the bytes of FILE's 512-byte sectors that are not all
# zeros: over the zeroed region, the sectors written since (the pattern
# is random: none of its sectors is zeros).
written() {
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
z = bytes(512)
print(sum(512 for i in range(0, len(d), 512) if d[i:i + 512] != z))' "$1"
}

# What the backing device holds before any dirty write: the zeros.
io_get_raw 0 $region /tmp/wbb-before
cmp -s /tmp/wbb-before /tmp/wbb-expect || hc_fail "the raw backing device does not hold the zeros written through hcache0: $(wb_diff /tmp/wbb-before /tmp/wbb-expect)"

hc_log "writeback paused: dirtying"
dirty_round
d=$(cat "$sys/dirty_data")
want=$(written /tmp/wbb-expect)
hc_log "dirty_data $d (sectors written: $want bytes), state $(cat "$sys/state")"
[ "$d" = "$want" ] || hc_fail "dirty_data $d after writing $want bytes (distinct sectors) in writeback"
[ "$(cat "$sys/state")" = dirty ] || hc_fail "state after dirty writes: $(cat "$sys/state")"
io_get_raw 0 $region /tmp/wbb-raw
wb_same "with writeback paused, the raw backing device must hold none of the new data; it changed in" \
	/tmp/wbb-raw /tmp/wbb-before
hc_log "the raw backing device holds none of the $want bytes written: every sector as before"
io_check

hc_log "restart with dirty data"
io_restart
[ "$(cat "$sys/dirty_data")" = "$d" ] || hc_fail "dirty_data $(cat "$sys/dirty_data") after a restart, $d before"
io_get /dev/$dev 0 $region /tmp/wbb-got
cmp /tmp/wbb-got /tmp/wbb-expect || hc_fail "hcache0 differs after a restart"
hc_write "$sys/writeback_delay" 0

hc_log "writeback resumed"
before=$(io_bstat "$IO_BNAME" 5)
t0=$(date +%s.%N)
hc_write "$sys/writeback_running" 1
i=0
while [ "$(cat "$sys/dirty_data")" != 0 ] || [ "$(cat "$sys/state")" != clean ]; do
	i=$((i + 1))
	[ $i -le 1200 ] || hc_fail "not clean after 120 s: dirty_data $(cat "$sys/dirty_data"), state $(cat "$sys/state")"
	sleep 0.1
done
t1=$(date +%s.%N)
writes=$(($(io_bstat "$IO_BNAME" 5) - before))
hc_log "clean in $(echo "$t1 - $t0" | bc) s: keys $(cat "$sys/writeback_keys_written"), sectors $(cat "$sys/writeback_sectors_written"), writeback bios $(cat "$sys/writeback_backing_writes"), backing write requests $writes"
cat "$sys/writeback_rate_debug"
io_get_raw 0 $region /tmp/wbb-raw
cmp /tmp/wbb-raw /tmp/wbb-expect || hc_fail "the backing device differs after writeback: $(cmp /tmp/wbb-raw /tmp/wbb-expect 2>&1 | head -1)"
io_get /dev/$dev 0 $region /tmp/wbb-got
cmp /tmp/wbb-got /tmp/wbb-expect || hc_fail "hcache0 differs after writeback"
[ "$(cat "$sys/writeback_backing_writes")" -lt 200 ] || hc_fail "$(cat "$sys/writeback_backing_writes") writeback bios for over 1000 extents"
io_check

hc_log "detach with dirty data"
hc_write "$sys/writeback_running" 0
dirty_round
[ "$(cat "$sys/state")" = dirty ] || hc_fail "state: $(cat "$sys/state")"
hc_write "$sys/writeback_running" 1
hc_write "$sys/detach" 1
i=0
while [ -n "$(tr -d '0-' <"$sys/cache_set_uuid")" ]; do
	i=$((i + 1))
	[ $i -le 1200 ] || hc_fail "still attached after 120 s: dirty_data $(cat "$sys/dirty_data"), detaching $(cat "$sys/detaching")"
	sleep 0.1
done
[ "$(cat "$sys/detaching")" = 0 ] || hc_fail "detaching still 1 after the detach"
io_get_raw 0 $region /tmp/wbb-raw
cmp /tmp/wbb-raw /tmp/wbb-expect || hc_fail "the backing device differs after the detach"
hc_log "detached; the backing device holds every byte"
hc_write "$sys/stop" 1
hc_wait io_no_hcache
io_teardown
