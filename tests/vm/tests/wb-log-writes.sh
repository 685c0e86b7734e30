# Flush semantics of writeback, checked at every point a power cut could
# leave the cache device in. The cache device is a dm-log-writes target
# over a disk: the log device receives each write to the cache device in
# the order it became stable (a plain write when a later flush completes,
# a FUA write when it completes), with marks we add
# (Documentation/admin-guide/device-mapper/log-writes.rst). Applying the
# log's first N entries to a zeroed device gives a state the cache device
# could be in after a power cut (tests/vm/log-replay.py parses the log).
#
# The cache is formatted through the dm device (so the format is in the
# log) together with a backing device in writeback mode, whose data area
# holds version 0 of wb-writer.py's pattern; both are registered, with
# writeback_running 0 and sequential_cutoff 0. Then rounds of random
# writes through /dev/hcache0 (O_DSYNC writes, plain writes, each round
# ending with a plain write and an fdatasync); after each round's
# fdatasync returns, `dmsetup message ... mark rN`, and the write log
# (HC_RESULTS/wb-log-writes.log) records which writes were acknowledged
# before that mark. The set is stopped (keeping its dirty data) and the
# dm device removed.
#
# Why the backing device does not need replaying: with writeback not
# running and nothing bypassed, the only write it gets after the attach
# is its superblock going from clean to dirty, which happens before the
# first dirty write completes. So its final state (dirty, same set, data
# area all version 0; checked) is what it would hold after a power cut
# at any point from the attach on: a cache device replayed to such a
# point must register with it. Points before the attach are not replayed:
# there the set has never heard of a backing device whose superblock says
# it holds dirty data for it, which no crash can produce.
#
# Replay points (log-replay.py points): the mark after the attach and
# each round's mark, where exactly the writes acknowledged before the
# mark must read back (every block its last acknowledged version, the
# others version 0); points between two marks (after the first FLUSH
# entry, in the middle of a run of plain writes), where every write
# acknowledged before the earlier mark must read back and any block may
# hold a write intended before the later one; with the same rule, points
# just after a metadata write with FUA and no flush (up to 8); and the end
# of the log (after the clean stop). At each point a fresh copy of the replayed
# cache device and of the final backing device (loop devices) are
# registered; the set must come up with no error and pass its
# consistency check, and the region is read through /dev/hcache0.
#
# How a lost flushed write shows: if hcache acknowledged an fdatasync or
# an O_DSYNC write before the data or the key (the journal entry) was
# stable on the cache device, that data or key is logged after the mark,
# the replay to the mark lacks it, and the block reads back older data
# (the pattern names the version it holds). check-stable finds the data
# part of that directly in the log. The negative control proves the
# checker sees such a loss: replayed to just before the first entry that
# carries the last round's last plain write, the rule of that round's
# mark must FAIL (and the rule of the mark before it pass).
# Before each fdatasync the writer has the btree written out (debugfs
# flush "btree": every dirty node, then a journal entry), as journal
# reclaim, splits and full nodes do in a longer run: those node writes
# carry keys of plain writes whose data the cache device has not made
# stable yet (only the fdatasync does). The points just after such a node
# write (FUA, without a flush) check the rule for metadata: a key durable
# before the data it points to would read zeros there.
# one-kernel: the flush-ordering rules it replays are the module's own; powercut-volatile and wb-crash cut power on both kernels; 1.7 min
# timeout: 420
# drives: cache:32M log:256M backing:8M

# shellcheck disable=SC2034 # io-lib.sh's helpers read the IO_* variables
. "$HC_ROOT/tests/vm/io-lib.sh"

writer=$HC_ROOT/tests/vm/wb-writer.py
replay=$HC_ROOT/tests/vm/log-replay.py
wlog=$HC_RESULTS/wb-log-writes.log
blocks=1024 # the region: the first 4 MiB of hcache0
rounds=6
[ "${HC_LONG:-}" = 1 ] && rounds=12
dm=hcwblog
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
modprobe dm-log-writes || hc_fail "no dm-log-writes"
modprobe loop || true

cdisk=$(hc_drive cache)
ldisk=$(hc_drive log)
IO_BDEV=$(hc_drive backing)
dmsetup create --noudevsync "$dm" --table "0 $(hc_size "$cdisk") log-writes $cdisk $ldisk" ||
	hc_fail "dmsetup create $dm failed"
dmsetup mknodes "$dm"
IO_CDEV=/dev/mapper/$dm
IO_CNAME=$(basename "$(readlink -f "$IO_CDEV")")
IO_BDEVS=("$IO_BDEV")
[ -b "$IO_CDEV" ] || hc_fail "no $IO_CDEV"

"$(hc_tool make-hcache)" -C "$IO_CDEV" -B "$IO_BDEV" --block 512 --bucket 64k --writeback >/dev/null ||
	hc_fail "make-hcache -C $IO_CDEV -B $IO_BDEV failed"
IO_UUID=$("$(hc_tool hcache-super-show)" "$IO_CDEV" | awk '$1 == "cset.uuid" { print $2 }')
IO_OFFSET=$("$(hc_tool hcache-super-show)" "$IO_BDEV" | awk '$1 == "backing.data_offset" { print $2 }')
if [ -z "$IO_UUID" ] || [ -z "$IO_OFFSET" ]; then
	hc_fail "hcache-super-show: no set uuid or data offset"
fi
IO_SET=/sys/fs/hcache/$IO_UUID
IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
python3 "$writer" fill "$IO_BDEV" "$wlog" --blocks $blocks --offset $((IO_OFFSET * 512)) ||
	hc_fail "filling the backing device failed"

# mark NAME: a mark in the dm log, after everything acknowledged so far.
mark() {
	dmsetup message "$dm" 0 mark "$1" || hc_fail "dmsetup message $dm 0 mark $1 failed"
	echo "M $1" >>"$wlog"
}

sync "$IO_CDEV"
mark format
io_register
sys=$(io_sysdir hcache0)
io_mode_is hcache0 writeback || hc_fail "cache_mode: $(cat "$sys/cache_mode")"
hc_write "$sys/writeback_running" 0
io_cutoff hcache0 0
sync /dev/hcache0
mark attached
hc_log "set $IO_UUID: cache $IO_CDEV (dm-log-writes over $cdisk, log on $ldisk), backing $IO_BDEV (data at sector $IO_OFFSET) as hcache0"

start=$(io_now)
out=$(python3 "$writer" write /dev/hcache0 "$wlog" --first-version 1 --rounds $rounds \
	--mark-dm "$dm" --hot 128 --max-blocks 8 --btree-flush "$IO_DBG/flush" \
	--note workload 2>&1) || hc_fail "the writer failed: $out"
nodes=$(cat "$IO_SET/internal/btree_node_writes")
hc_log "$rounds rounds in $(io_elapsed "$start") s: $out; btree nodes written $nodes"
[ "$nodes" -ge $((rounds / 2)) ] || hc_fail "only $nodes btree node writes during $rounds rounds: the points after node writes test nothing"
dirty=$(io_read_num "$sys/dirty_data")
[ "$dirty" -gt 0 ] || hc_fail "no dirty data after the writes"
[ "$(cat "$sys/state")" = dirty ] || hc_fail "state with dirty data: $(cat "$sys/state")"
for f in bypassed cache_bypass_hits cache_bypass_misses; do
	[ "$(io_stat hcache0 $f)" = 0 ] || hc_fail "$f is $(io_stat hcache0 $f): some write went to the backing device"
done
[ "$(io_read_num "$sys/writeback_sectors_written")" = 0 ] ||
	hc_fail "writeback wrote $(cat "$sys/writeback_sectors_written") sectors while not running"
io_check
status=$(dmsetup status "$dm")
case $status in
*logging_disabled*) hc_fail "dm-log-writes stopped logging: $status" ;;
esac
hc_log "dirty_data $dirty; dm-log-writes: $status"
io_stop
# The target may still be held for a moment after the set is gone.
dm_remove() {
	dmsetup remove --noudevsync "$dm" 2>/dev/null
}
hc_wait dm_remove
# The backing device's data area was never written: all version 0.
out=$(python3 "$writer" verify "$IO_BDEV" "$wlog" --offset $((IO_OFFSET * 512)) \
	--acked-until format 2>&1) || hc_fail "the backing device's data area was written: $out"

python3 "$replay" list --versions "$ldisk" >"$HC_RESULTS/log-entries" ||
	hc_fail "log-replay.py cannot read the log"
nentries=$(grep -vc '^#' "$HC_RESULTS/log-entries")
tail -n 1 "$HC_RESULTS/log-entries" | grep -q ' mark dm-log-writes-end$' ||
	hc_fail "the log does not end with the target's end mark: $(tail -n 1 "$HC_RESULTS/log-entries")"
out=$(python3 "$replay" check-stable "$ldisk" "$wlog" 2>&1) ||
	hc_fail "acknowledged data was not stable on the cache device at its mark: $out"
hc_log "log of $nentries entries; check-stable $out"
python3 "$replay" points --from-mark attached "$ldisk" "$wlog" >"$HC_RESULTS/replay-points" ||
	hc_fail "log-replay.py points failed"

# Each replay starts from fresh copies: registering writes to both.
csize=$(($(hc_size "$cdisk") * 512))
dd if="$IO_BDEV" of=/tmp/lw-backing.img bs=1M status=none || hc_fail "copying the backing device failed"
rm -f /tmp/lw-base.img
truncate -s $csize /tmp/lw-base.img

applied=0
npoints=0
nchecks=0
start=$(io_now)
while read -r n label checks; do
	python3 "$replay" apply "$ldisk" /tmp/lw-base.img "$applied" "$n" ||
		hc_fail "replaying entries $applied..$n failed"
	applied=$n
	rm -f /tmp/lw-c.img /tmp/lw-b.img
	cp --sparse=always /tmp/lw-base.img /tmp/lw-c.img
	cp --sparse=always /tmp/lw-backing.img /tmp/lw-b.img
	IO_CDEV=$(losetup -f --show /tmp/lw-c.img) || hc_fail "losetup failed"
	IO_BDEV=$(losetup -f --show /tmp/lw-b.img) || hc_fail "losetup failed"
	IO_BDEVS=("$IO_BDEV")
	IO_CNAME=$(basename "$IO_CDEV")
	printf '%s\n' "$IO_CDEV" >/sys/fs/hcache/register ||
		hc_fail "replay point $label ($n of $nentries entries): the cache set does not register"
	hc_wait test -d "$IO_SET"
	dev=$(io_register_backing "$IO_BDEV")
	[ "$dev" = hcache0 ] || hc_fail "replay point $label: the backing device runs as $dev"
	for c in $checks; do
		IFS=, read -r want acked intended <<<"$c"
		rc=0
		out=$(python3 "$writer" verify /dev/hcache0 "$wlog" --acked-until "$acked" \
			--intended-until "$intended" 2>&1) || rc=$?
		case $want/$rc in
		pass/0 | fail/1) ;;
		pass/*) hc_fail "replay point $label ($n of $nentries entries): $out" ;;
		fail/0) hc_fail "negative control $label ($n entries): the rule of mark $acked passed where the data of a write before it cannot be on the device; the checker cannot see a lost write: $out" ;;
		*) hc_fail "replay point $label: wb-writer.py verify failed: $out" ;;
		esac
		nchecks=$((nchecks + 1))
		hc_log "replay point $label ($n entries), expected to $want: ${out%%$'\n'*}"
	done
	io_check
	npoints=$((npoints + 1))
	io_stop
	losetup -d "$IO_CDEV" "$IO_BDEV"
done <"$HC_RESULTS/replay-points"
[ $npoints -ge $((rounds + 3)) ] || hc_fail "only $npoints replay points"
hc_log "$npoints replay points ($nchecks checks, one negative control) of a $nentries-entry log in $(io_elapsed "$start") s"
hc_unload
