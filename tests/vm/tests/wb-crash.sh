# Writeback crash safety: hard kills of the VM while a writer's
# acknowledged writes pile up as dirty data and writeback copies them to
# the backing device. Every write acknowledged in writeback mode (an
# O_DSYNC write, i.e. FUA, that returned, or a write covered by an
# fdatasync, i.e. a flush, that returned) must survive the kill.
#
# Boot 1 formats a cache device and a backing device (virtio disks, which
# keep what the guest wrote across the kill), fills the first 8 MiB of the
# backing device's data area with version 0 of a checksummed pattern
# (tests/vm/wb-writer.py: each 512-byte sector names its block, version
# and the run's seed) and switches hcache0 to writeback. The write log
# (HC_RESULTS/wb-crash.log) is on the host: an intent line before each
# write and an acknowledgment line after it, each fsync'ed.
#
# Every boot registers both devices, pauses writeback, logs dirty_data
# and state (dirty data means state dirty) and reads the whole region
# through /dev/hcache0: each sector must hold its block's last
# acknowledged version or a version whose write was in flight after it
# (whole or, sector by sector, in part), never anything older; a block
# never written holds version 0. Then it reads the set's keys (debugfs)
# and the raw backing device: every sector under no dirty key must be the
# same there as through hcache0 (writeback marks a key clean only once its
# data is on the backing device). Then writeback runs, with
# sequential_cutoff 0, writeback_delay 1 and writeback_percent 0 (always
# work to do) or, on even boots and the last boot that is killed, 1
# (1.3 MB of dirty data stays for the next boot), and the region is read
# again while it writes back: the same bytes as before.
#
# Then, but for the last boot, the writer runs (random 4 KiB writes, a
# quarter of them 2 to 16 blocks, half of them in a hot first MiB: the
# same blocks are rewritten while being written back; O_DSYNC writes and
# plain writes with fdatasync) and the boot ends with sysrq-b at a random
# moment: odd boots with the writer busy (writeback at its controlled
# rate), even boots with the writer stopped (no foreground I/O: writeback
# at full speed) once the backing device has received 20 to 80% of the
# dirty data: in the middle of a batch, before its flush. Each kill logs
# what the writer acknowledged, dirty_data, writeback_sectors_written and
# the backing device's I/O in flight.
#
# The last boot also requires that some restart found dirty data and that
# writeback wrote something before some kill; then it writes everything
# back (dirty_data 0, state clean), checks the region through hcache0
# again, detaches, checks it once more, stops everything and checks the
# raw backing device at its data offset. What each of these reads must be
# the same, byte for byte, as what the first read of the boot found.
# 2 kills in make check, 20 in make check-long.
# timeout: 200
# drives: cache:128M backing:64M
# boots: 3
# boots-long: 21

# shellcheck disable=SC2034 # io-lib.sh's helpers read the IO_* variables
. "$HC_ROOT/tests/vm/io-lib.sh"

writer=$HC_ROOT/tests/vm/wb-writer.py
wlog=$HC_RESULTS/wb-crash.log
stats=$HC_RESULTS/wb-crash.stats
blocks=2048 # the region: the first 8 MiB of hcache0
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

# What io_setup would set (io-lib.sh's helpers read them).
cdev=$(hc_drive cache)
bdev=$(hc_drive backing)
io_devices "$cdev" "$bdev"
if [ "$HC_BOOT" = 1 ]; then
	"$(hc_tool make-hcache)" -C "$IO_CDEV" -B "$IO_BDEV" --block 512 --bucket 128k >/dev/null ||
		hc_fail "make-hcache -C $IO_CDEV -B $IO_BDEV failed"
fi
show=$("$(hc_tool hcache-super-show)" "$IO_CDEV")
IO_UUID=$(echo "$show" | awk '$1 == "cset.uuid" { print $2 }')
show=$("$(hc_tool hcache-super-show)" "$IO_BDEV")
IO_OFFSET=$(echo "$show" | awk '$1 == "backing.data_offset" { print $2 }')
if [ -z "$IO_UUID" ] || [ -z "$IO_OFFSET" ]; then
	hc_fail "hcache-super-show: no set uuid or data offset"
fi
IO_SET=/sys/fs/hcache/$IO_UUID
IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
if [ "$HC_BOOT" = 1 ]; then
	# Version 0, before the backing device ever runs.
	python3 "$writer" fill "$IO_BDEV" "$wlog" --blocks $blocks --offset $((IO_OFFSET * 512)) ||
		hc_fail "filling the backing device failed"
	: >"$stats"
fi

io_register
sys=$(io_sysdir hcache0)
# Paused first, to look at what the kill left (it may have started).
hc_write "$sys/writeback_running" 0
dirty=$(io_read_num "$sys/dirty_data")
state=$(cat "$sys/state")
echo "reg $HC_BOOT $dirty $state" >>"$stats"
hc_log "boot $HC_BOOT: registered; dirty_data $dirty, state $state, $(cat "$IO_SET/cache_available_percent")% of the cache available"
[ "$dirty" = 0 ] || [ "$state" = dirty ] ||
	hc_fail "dirty_data is $dirty but the backing superblock says $state"
if [ "$HC_BOOT" = 1 ]; then
	io_mode hcache0 writeback
else
	io_mode_is hcache0 writeback || hc_fail "cache_mode after the kill: $(cat "$sys/cache_mode")"
fi

clean() {
	[ "$(io_read_num "$sys/dirty_data")" = 0 ] && [ "$(cat "$sys/state")" = clean ]
}

# check WHEN [DEV OFFSET]: the region (through hcache0 unless DEV) holds
# what the log allows; saves what it read as /tmp/region.WHEN.
check() {
	local out
	out=$(python3 "$writer" verify "${2:-/dev/hcache0}" "$wlog" --offset "${3:-0}" \
		--dump "/tmp/region.$1" 2>&1) ||
		hc_fail "boot $HC_BOOT, $1: acknowledged writes lost:
$out"
	hc_log "boot $HC_BOOT, $1: $out"
}
check registered
# Writeback's ordering rule at the moment of the kill: what is under no
# dirty key (clean, or not cached) is on the backing device. hcache0 is
# read first, the keys next, the raw device last: a pass of writeback
# still running only makes dirty keys clean after writing them.
cat "$IO_DBG/keys" >/tmp/keys || hc_fail "cannot read $IO_DBG/keys"
io_get_raw 0 $((blocks * 4096)) /tmp/region.raw-registered
out=$(python3 "$writer" clean-check /tmp/region.registered /tmp/region.raw-registered \
	/tmp/keys --id "$(cat "$sys/cache_set_id")" 2>&1) ||
	hc_fail "boot $HC_BOOT: the backing device lacks data the cache holds as clean:
$out"
hc_log "boot $HC_BOOT: $out"

io_cutoff hcache0 0
# Writeback comes back to work within a second; with percent 0 it always
# has some, with 1 it keeps a little dirty data for the next boot.
pct=$((HC_BOOT % 2 == 0 || HC_BOOT == HC_BOOTS - 1))
[ "$HC_BOOT" != "$HC_BOOTS" ] || pct=0
hc_write "$sys/writeback_percent" $pct
hc_write "$sys/writeback_delay" 1
hc_write "$sys/writeback_running" 1
if [ "$dirty" != 0 ]; then
	check writing-back
	cmp -s /tmp/region.registered /tmp/region.writing-back ||
		hc_fail "boot $HC_BOOT: the region changed when writeback started"
fi
io_check

if [ "$HC_BOOT" = "$HC_BOOTS" ]; then
	[ "$HC_BOOTS" -gt 1 ] || hc_fail "wb-crash needs more than one boot"
	awk '$1 == "reg" && $2 > 1 && $3 > 0 { n++ } END { exit !n }' "$stats" ||
		hc_fail "no restart found dirty data: the kills never caught writeback with work ($(grep -c . "$stats") records in $stats)"
	awk '$1 == "kill" && $6 > 0 { n++ } END { exit !n }' "$stats" ||
		hc_fail "writeback wrote nothing before any kill"
	hc_log "restarts with dirty data: $(awk '$1 == "reg" && $2 > 1 && $3 > 0' "$stats" | wc -l) of $((HC_BOOTS - 1)); kills after writeback wrote: $(awk '$1 == "kill" && $6 > 0' "$stats" | wc -l)"

	# Everything written back: dirty_data 0, the superblock clean.
	start=$(io_now)
	io_wait 120 clean
	hc_log "written back in $(io_elapsed "$start") s: $(cat "$sys/writeback_sectors_written") sectors, $(cat "$sys/writeback_keys_written") keys, $(cat "$sys/writeback_backing_writes") backing writes since registration"
	check written-back
	cmp -s /tmp/region.registered /tmp/region.written-back ||
		hc_fail "the region changed while it was written back"

	hc_write "$sys/detach" 1
	hc_wait wb_detached hcache0
	[ "$(cat "$sys/state")" = none ] || hc_fail "state after detach: $(cat "$sys/state")"
	check detached
	cmp -s /tmp/region.registered /tmp/region.detached ||
		hc_fail "after detach, hcache0 differs from what it read before"
	io_check
	hc_write "$sys/stop" 1
	hc_wait test ! -e /dev/hcache0
	hc_write "$IO_SET/stop" 1
	hc_wait test ! -e "$IO_SET"
	hc_unload
	check raw "$IO_BDEV" $((IO_OFFSET * 512))
	cmp -s /tmp/region.registered /tmp/region.raw ||
		hc_fail "the raw backing device differs from what hcache0 read"
	counts=$(python3 "$writer" stats "$wlog") || hc_fail "wb-writer.py stats failed"
	read -r _ _ intended acked <<<"$counts"
	hc_log "the backing device holds all $acked acknowledged writes ($intended intended) of $((HC_BOOTS - 1)) boots"
	exit 0
fi

first=$((HC_BOOT * 1000000 + 1))
python3 "$writer" write /dev/hcache0 "$wlog" --first-version $first \
	--note "boot $HC_BOOT" >/tmp/writer.out 2>&1 &
wpid=$!
sleep "$((RANDOM % 6 + 3)).$((RANDOM % 10))"
kill -0 $wpid 2>/dev/null || hc_fail "the writer stopped: $(cat /tmp/writer.out)"
counts=$(python3 "$writer" stats "$wlog" --first-version $first) || hc_fail "wb-writer.py stats failed"
read -r intended acked _ total <<<"$counts"
if [ "$acked" = 0 ]; then
	echo w >/proc/sysrq-trigger
	hc_fail "boot $HC_BOOT: no write acknowledged (blocked tasks are in the kernel log)"
fi
[ $((HC_BOOT % 2)) = 0 ] && how=idle || how=busy
touch "$HC_RESULTS/boot-$HC_BOOT.ok"
sync "$HC_RESULTS/boot-$HC_BOOT.ok"
mapfile -t dbg <"$sys/writeback_rate_debug"
rate=
for l in "${dbg[@]}"; do
	case $l in rate:* | idle:*) rate+=", $l" ;; esac
done
hc_log "boot $HC_BOOT: resetting, writer $how, writeback_percent $pct: at least $acked writes acknowledged ($intended intended) this boot, $total in all; dirty_data $(cat "$sys/dirty_data"), writeback_sectors_written $(cat "$sys/writeback_sectors_written")$rate"
# Builtins only from here: writeback at full speed writes megabytes in a
# fraction of a second under TCG.
if [ "$how" = idle ]; then
	# No foreground I/O: after a second writeback runs at full speed, in
	# batches of up to 8 MiB (read them all, write them all, flush, mark
	# them clean). Reset once the backing device has received 20 to 80%
	# of the dirty data (or after 6 s): in the middle of a batch.
	kill -STOP $wpid
	read -r dirty <"$sys/dirty_data"
	read -r -a st <"/sys/class/block/$IO_BNAME/stat"
	goal=$((st[6] + dirty * (20 + RANDOM % 61) / 100 / 512))
	end=$((SECONDS + 6))
	while [ "${st[6]}" -lt $goal ] && [ $SECONDS -lt $end ]; do
		read -r -a st <"/sys/class/block/$IO_BNAME/stat"
	done
fi
read -r dirty <"$sys/dirty_data"
read -r wrote <"$sys/writeback_sectors_written"
# Writeback's reads and writes in flight on the backing device.
read -r inr inw <"/sys/class/block/$IO_BNAME/inflight"
echo "kill $HC_BOOT $how $acked $dirty $wrote $pct $inr,$inw" >>"$stats"
echo b >/proc/sysrq-trigger
sleep 30
hc_fail "still running after sysrq-b"
