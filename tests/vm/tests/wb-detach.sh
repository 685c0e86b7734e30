# Writeback keeps dirty data until it is written, and a detach writes it
# all before letting go. The backing device is throttled to 10 MiB/s
# (null_blk mbps) so that writing back takes seconds and can be watched.
#
# 1. Detach flushes: in writeback with sequential_cutoff 0 and
#    writeback_running 0, 64 MiB of a random reference file go to
#    hcache0: 32 MiB as 4 KiB writes in random order (over 8 MiB of other
#    data written there first), 32 MiB as sequential runs of 128 KiB and
#    1 MiB. dirty_data must say 64 MiB, state dirty; hcache0 returns the
#    reference, the backing device (read raw at its data offset) still
#    zeros. Then writeback_running 1 and detach: detaching reads 1 at
#    once, writes to hcache0 made meanwhile (new data, and an overwrite
#    of 1 MiB of the dirty data) complete, dirty_data falls in every
#    sample (logged) until the device detaches (cache_set_id 0,
#    cache_set_uuid empty, no cache_set link, state none) within 120 s;
#    then the raw backing device holds exactly what was written.
# 2. A stop keeps dirty data: attached again, 16 MiB dirty; the backing
#    device is stopped and registered again, then the whole set is: each
#    time writeback is paused again at once, dirty_data plus what was
#    written back since it registered (writeback_sectors_written) is the
#    16 MiB, and hcache0 reads the data. Then writeback empties it.
# 3. A device whose superblock says dirty does not run without its cache:
#    4 MiB dirty, the set stopped, the backing device registered alone:
#    running 0, state dirty, running=1 refused with EBUSY; running=force
#    starts it (critical log line, state stale) and it returns what the
#    backing device holds. New data written then must survive the set's
#    return: the device attaches under a new id and the lost dirty data
#    is never written back (writeback_keys_written stays 0).
# timeout: 300
# one-kernel: writeback and detach bookkeeping over bio paths that wb-basic and wb-crash run on both kernels; 2.5 min
# expect-log: hcache: .*dirty data in the cache is LOST
# expect-log: hcache: .*write "force" to running

. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
W=$(mktemp -d /tmp/wb-detach.XXXXXX)
IO_BACK_ATTRS="mbps=10" io_setup 256 256
dev=hcache0
sys=$(io_sysdir $dev)
# Everything below happens in [base, base + span) of hcache0; expect is
# what it must hold (the backing device starts as zeros).
base=$((8 * MiB))
span=$((88 * MiB))
truncate -s $span "$W/expect"

# put FILE OFFSET: FILE is now at OFFSET (from base) in the expected image.
expect_put() {
	dd if="$1" of="$W/expect" bs=4k seek=$(($2 / 4096)) conv=notrunc status=none
}

# check WHAT: hcache0 and the raw backing device both hold the image.
check() {
	io_get /dev/$dev $base $span "$W/got"
	wb_same "$1: hcache0" "$W/got" "$W/expect" $base
	io_get_raw $base $span "$W/raw"
	wb_same "$1: the raw backing device" "$W/raw" "$W/expect" $base
	hc_log "$1: hcache0 and the raw backing device hold what was written"
}

# written_back: bytes written back since the device registered.
written_back() {
	echo $(($(wb_get $dev writeback_sectors_written) * 512))
}

# quiet_writeback: writeback_running is 0 and what was in flight is done
# (writeback_sectors_written unchanged for a second).
quiet_writeback() {
	local a b
	b=$(written_back)
	while :; do
		sleep 1
		a=$b
		b=$(written_back)
		[ "$a" != "$b" ] || break
	done
}

hc_log "part 1: 64 MiB dirty, then detach"
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0
[ "$(cat "$sys/writeback_running")" = 0 ] || hc_fail "writeback_running reads $(cat "$sys/writeback_running") after writing 0"
io_pattern "$W/ref" 64
head -c $((32 * MiB)) "$W/ref" >"$W/ref-a"
tail -c $((32 * MiB)) "$W/ref" >"$W/ref-b"
# Other data first over part of the random region: overwritten dirty data.
io_pattern "$W/junk" 8
dd if="$W/junk" of=/dev/$dev bs=1M seek=$(((base + 8 * MiB) / MiB)) oflag=direct status=none ||
	hc_fail "writing the junk failed"
wb_scatter "$W/ref-a" /dev/$dev $base 4096 4096 1
expect_put "$W/ref-a" 0
dd if="$W/ref-b" of=/dev/$dev bs=128k count=128 seek=$(((base + 32 * MiB) / 131072)) \
	oflag=direct status=none || hc_fail "sequential 128 KiB writes failed"
dd if="$W/ref-b" of=/dev/$dev bs=1M skip=16 count=16 seek=$(((base + 48 * MiB) / MiB)) \
	oflag=direct status=none || hc_fail "sequential 1 MiB writes failed"
expect_put "$W/ref-b" $((32 * MiB))
d=$(wb_dirty $dev)
hc_log "dirty_data $d after 64 MiB written ($(grep -c ' d$' "$IO_DBG/keys" || true) dirty keys); state $(cat "$sys/state")"
[ "$d" -ge $((64 * MiB)) ] && [ "$d" -le $((64 * MiB + 640 * 1024)) ] ||
	hc_fail "dirty_data is $d after writing 64 MiB ($((64 * MiB)) bytes) of dirty data"
[ "$(cat "$sys/state")" = dirty ] || hc_fail "state is $(cat "$sys/state") with dirty data"
io_get /dev/$dev $base $((64 * MiB)) "$W/got"
wb_same "hcache0 before writeback" "$W/got" "$W/ref" $base
io_get_raw $base $((64 * MiB)) "$W/raw"
cmp -s -n $((64 * MiB)) "$W/raw" /dev/zero ||
	hc_fail "with writeback_running 0 the backing device changed: $(wb_diff "$W/raw" <(head -c $((64 * MiB)) /dev/zero) $base)"
hc_log "hcache0 returns the dirty data; the backing device still holds zeros"

wb_set $dev writeback_running 1
t0=$(io_now)
hc_write "$sys/detach" 1
det=$(cat "$sys/detaching")
[ "$det" = 1 ] || hc_fail "detaching reads '$det' right after detach with $d bytes dirty"
# Progress samples from now until the device is detached, in the
# background, so that a slow guest (a debug kernel) still takes several.
# Only shell builtins between the sleeps: on a KASAN kernel each fork
# costs enough that a sampler of cat and awk took its first sample 18 s
# into a 25 s detach. The times are converted afterwards.
(
	while read -r id <"$sys/cache_set_id" && [ "$id" != 0 ]; do
		read -r d <"$sys/dirty_data" || break
		read -r det <"$sys/detaching" || break
		echo "$EPOCHREALTIME $d $det"
		sleep 0.5
	done 2>/dev/null
) >"$W/samples" &
sampler=$!
# Written during the detach: 4 MiB of new data past the dirty region and
# 1 MiB over dirty data that may be on its way to the backing device.
io_pattern "$W/during" 5
head -c $((4 * MiB)) "$W/during" >"$W/during-new"
tail -c $((1 * MiB)) "$W/during" >"$W/during-over"
io_put "$W/during-new" /dev/$dev $((base + 64 * MiB))
expect_put "$W/during-new" $((64 * MiB))
wb_scatter "$W/during-over" /dev/$dev $((base + 20 * MiB)) 4096 65536 2
expect_put "$W/during-over" $((20 * MiB))
hc_log "wrote 5 MiB during the detach ($(io_elapsed "$t0") s after it)"

while ! wb_detached $dev; do
	[ "$(io_elapsed "$t0" | cut -d. -f1)" -lt 120 ] ||
		hc_fail "not detached 120 s after detach: dirty_data $(cat "$sys/dirty_data" 2>/dev/null), detaching $(cat "$sys/detaching" 2>/dev/null)"
	sleep 0.5
done
secs=$(io_elapsed "$t0")
wait $sampler || true
samples=0
falls=0
prev=
while read -r t d det; do
	hc_log "t=$(io_elapsed_at "$t0" "$t") s dirty_data $d detaching $det"
	samples=$((samples + 1))
	if [ -n "$prev" ]; then
		[ "$d" -le "$prev" ] || hc_fail "dirty_data rose during the detach, from $prev to $d"
		[ "$d" -lt "$prev" ] && falls=$((falls + 1))
	fi
	prev=$d
done <"$W/samples"
hc_log "detached after $secs s; dirty_data fell in $falls of $samples samples"
[ "$falls" -ge 2 ] || hc_fail "dirty_data did not visibly fall during the detach ($falls falls in $samples samples)"
[ "$(cat "$sys/detaching" 2>/dev/null || echo 0)" = 0 ] || hc_fail "detaching reads $(cat "$sys/detaching") after the detach"
[ ! -e "$sys/cache_set" ] || hc_fail "the cache_set link is still there after the detach"
[ "$(cat "$sys/state")" = none ] || hc_fail "state after the detach: $(cat "$sys/state")"
check "after the detach"
io_check

hc_log "part 2: a stop keeps dirty data"
hc_write "$sys/attach" "$IO_UUID"
hc_wait io_attached $dev
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0
io_pattern "$W/stop" 16
head -c $((8 * MiB)) "$W/stop" >"$W/stop-a"
tail -c $((8 * MiB)) "$W/stop" >"$W/stop-b"
wb_scatter "$W/stop-a" /dev/$dev $((base + 68 * MiB)) 4096 16384 3
dd if="$W/stop-b" of=/dev/$dev bs=256k seek=$(((base + 76 * MiB) / 262144)) oflag=direct status=none ||
	hc_fail "sequential 256 KiB writes failed"
expect_put "$W/stop" $((68 * MiB))
dirty=$(wb_dirty $dev)
[ "$dirty" = $((16 * MiB)) ] || hc_fail "dirty_data $dirty after writing 16 MiB"

# after_register WHAT: right after a registration: pause writeback (it
# may have started: the device is idle), then dirty_data plus what was
# written back since must be the 16 MiB, and hcache0 must return the data.
after_register() {
	local d w
	wb_set $dev writeback_running 0
	quiet_writeback
	d=$(wb_dirty $dev)
	w=$(written_back)
	hc_log "$1: dirty_data $d, $w bytes written back since it registered"
	[ $((d + w)) -ge $((16 * MiB)) ] && [ $((d + w)) -le $((16 * MiB + 512 * 1024)) ] ||
		hc_fail "$1: dirty_data $d plus $w written back is not the 16 MiB that was dirty"
	[ "$d" = 0 ] || [ "$(cat "$sys/state")" = dirty ] || hc_fail "$1: state $(cat "$sys/state") with $d bytes dirty"
	io_get /dev/$dev $((base + 68 * MiB)) $((16 * MiB)) "$W/got"
	wb_same "$1: hcache0" "$W/got" "$W/stop" $((base + 68 * MiB))
}

state_is() {
	[ "$(cat "$sys/state")" = "$1" ]
}

hc_write "$sys/stop" 1
hc_wait test ! -e /dev/$dev
hc_write /sys/fs/hcache/register "$IO_BDEV"
hc_wait io_hcache_of "$IO_BDEV" >/dev/null
[ "$(io_hcache_of "$IO_BDEV")" = $dev ] || hc_fail "registered again as $(io_hcache_of "$IO_BDEV")"
hc_wait io_attached $dev
after_register "after stopping the backing device"
io_restart
after_register "after stopping the set"
io_mode_is $dev writeback || hc_fail "cache_mode after the restart: $(cat "$sys/cache_mode")"
# Not kept across a registration.
io_cutoff $dev 0
wb_set $dev writeback_running 1
wb_wait_clean $dev 60
hc_log "written back in $WB_SECS s"
hc_wait state_is clean
check "after writing back the data kept over two stops"

hc_log "part 3: a dirty device does not run without its cache"
wb_set $dev writeback_running 0
io_pattern "$W/lost" 4
io_put "$W/lost" /dev/$dev $((base + 84 * MiB))
[ "$(wb_dirty $dev)" = $((4 * MiB)) ] || hc_fail "dirty_data $(wb_dirty $dev) after writing 4 MiB"
io_check
io_stop
bsys=/sys/class/block/$IO_BNAME/hcache
hc_write /sys/fs/hcache/register "$IO_BDEV"
hc_wait test -d "$bsys"
[ "$(cat "$bsys/state")" = dirty ] || hc_fail "state $(cat "$bsys/state") of a device stopped dirty"
[ "$(cat "$bsys/running")" = 0 ] || hc_fail "a dirty device runs without its cache"
[ ! -e /dev/$dev ] || hc_fail "/dev/$dev exists for a dirty device without its cache"
hc_write_fails "Device or resource busy" "$bsys/running" 1
[ ! -e /dev/$dev ] || hc_fail "running=1 started a dirty device"
hc_write "$bsys/running" force
hc_wait test -b /dev/$dev
hc_kmsg_has "dirty data in the cache is LOST"
[ "$(cat "$bsys/state")" = stale ] || hc_fail "state $(cat "$bsys/state") after running=force"
# The lost dirty data never reached the backing device: zeros there.
io_get /dev/$dev $((base + 84 * MiB)) $((4 * MiB)) "$W/got"
cmp -s -n $((4 * MiB)) "$W/got" /dev/zero ||
	hc_fail "after running=force, hcache0 does not return what the backing device holds"
io_pattern "$W/after" 2
io_put "$W/after" /dev/$dev $((base + 84 * MiB))
expect_put "$W/after" $((84 * MiB))
hc_log "forced to run; the set comes back"
hc_write /sys/fs/hcache/register "$IO_CDEV"
hc_wait test -d "$IO_SET"
hc_wait io_attached $dev
io_mode $dev writeback
wb_set $dev writeback_running 1
sleep 5
d=$(wb_dirty $dev)
k=$(wb_get $dev writeback_keys_written)
hc_log "attached again as id $(cat "$sys/cache_set_id"): dirty_data $d, writeback_keys_written $k"
[ "$d" = 0 ] || hc_fail "dirty_data $d after attaching again: the lost dirty data came back"
[ "$k" = 0 ] || hc_fail "$k keys written back after attaching again: the lost dirty data was written"
check "after the forced run and the set's return"
io_teardown
rm -rf "$W"
