# A cache device's metadata loads in the background: on a slow cache device
# (null_blk, 40 ms per I/O) register_async returns in a fraction of the load
# time; /sys/fs/hcache/loading shows the steps and the nodes walked;
# registering the device again meanwhile is quiet for register_async and
# EBUSY for register; a backing device registered meanwhile waits and
# attaches when the set appears; the module cannot be unloaded meanwhile;
# "register" waits for the load and returns with the set up. A load whose
# reads start failing half way fails alone: no set, the reason in the
# kernel log, nothing lost, and the next registration loads the same keys.
# Under systemd-udevd, an add event on the slow cache device is handled
# (udevadm settle returns) while the load still runs.
# timeout: 420
# one-kernel: the background metadata load; register and cache-set load metadata, and udev-register runs udev, on both kernels
# expect-log: hcache: .*cannot register: already registered
# expect-log: hcache: .*: cache set .*: metadata read at sector [0-9]* failed: error -5
# expect-log: hcache: .*: cache set .*: cannot check the metadata \(error -5\)
# expect-log: hcache: .*: cannot register cache set .*: error -5

. "$HC_ROOT/tests/vm/udev.sh"

cdev=$(hc_nullb cache 64)
bdev=$(hc_nullb back 64)
cfs=/sys/kernel/config/nullb/cache
dbg=/sys/kernel/debug/hcache
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
"$(hc_tool make-hcache)" -C "$cdev" --bucket 16k -B "$bdev" >/dev/null
uuid=$("$(hc_tool hcache-super-show)" "$cdev" | awk '$1 == "cset.uuid" { print $2 }')
set=/sys/fs/hcache/$uuid
bsys=/sys/block/${bdev#/dev/}/hcache
hc_load

# A tree of about a hundred nodes and an attached backing device (state
# clean, so it waits for its set), then a clean stop.
hc_write /sys/fs/hcache/register "$cdev"
[ -d "$set" ] || hc_fail "register returned before $set appeared"
hc_write /sys/fs/hcache/register "$bdev"
hc_wait test -b /dev/hcache0
[ "$(cat "$bsys/state")" = clean ] || hc_fail "backing state $(cat "$bsys/state"), not clean"
hc_write "$dbg/$uuid/fill" "1000 0 30000 8 16"
nodes=$(cat "$set/internal/btree_nodes_cached")
cat "$dbg/$uuid/keys" >/tmp/keys
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_wait test ! -e "$bsys"
hc_log "$(wc -l </tmp/keys) keys in $nodes nodes"
# The clean stop may have marked its empty buckets (incompat bit 1,
# EMPTY_MARKS), and then the mark pass would run behind I/O after the
# set appears, or before it, by how many buckets were left empty. Without
# the bit the load counts before the set appears, as after a crash: the
# steps this test watches (here and in the failing load below).
python3 "$HC_ROOT/tests/vm/sbedit.py" "$cdev" incompat=0 >/dev/null ||
	hc_fail "sbedit.py $cdev incompat=0 failed"

# slow_cache MS: every I/O to the cache device now takes MS ms.
slow_cache() {
	echo 0 >"$cfs/power"
	echo 2 >"$cfs/irqmode"
	echo "$1"000000 >"$cfs/completion_nsec"
	echo 1 >"$cfs/power"
	udevadm settle 2>/dev/null || true
	[ -b "$cdev" ] || hc_fail "$cdev did not come back after power on"
}
slow_cache 40

now_ms() {
	echo $(($(date +%s%N) / 1000000))
}

# The load's duration, from its "registered in N ms" line (the newest).
load_ms() {
	dmesg | sed -n "s/.*cache set $uuid registered in \([0-9]*\) ms.*/\1/p" | tail -1
}

t0=$(now_ms)
hc_write /sys/fs/hcache/register_async "$cdev"
async_ms=$(($(now_ms) - t0))
grep -q " $uuid " /sys/fs/hcache/loading ||
	hc_fail "loading does not show the set: '$(cat /sys/fs/hcache/loading)'"
[ ! -d "$set" ] || hc_fail "$set appeared before the load"
hc_write /sys/fs/hcache/register_async "$cdev"
hc_write_fails "Device or resource busy" /sys/fs/hcache/register "$cdev"
hc_write /sys/fs/hcache/register "$bdev"
[ "$(cat "$bsys/running")" = 0 ] ||
	hc_fail "the backing device runs before its set is loaded"
rmmod hcache 2>/dev/null && hc_fail "the module unloaded during a load"

: >/tmp/seen
for _ in $(seq 600); do
	[ -d "$set" ] && break
	cat /sys/fs/hcache/loading >>/tmp/seen
	sleep 0.2
done
[ -d "$set" ] || hc_fail "the set did not appear in 120 s; last: $(tail -1 /tmp/seen)"
ms=$(load_ms)
hc_log "register_async returned in $async_ms ms; the load took $ms ms; steps seen: $(awk '{ print $3 }' /tmp/seen | uniq | tr '\n' ' ')"
grep -q " mark [1-9]" /tmp/seen || hc_fail "no mark step with nodes walked seen: $(sort -u /tmp/seen)"
[ "$ms" -ge 2000 ] || hc_fail "the load took only $ms ms: not slow enough to tell"
[ $((async_ms * 4)) -lt "$ms" ] ||
	hc_fail "register_async took $async_ms ms of a $ms ms load"
hc_wait test -b /dev/hcache0
[ "$(cat "$bsys/running")" = 1 ] || hc_fail "the backing device did not start"
[ -z "$(cat /sys/fs/hcache/loading)" ] || hc_fail "loading not empty: $(cat /sys/fs/hcache/loading)"
cmp -s /tmp/keys <(cat "$dbg/$uuid/keys") || hc_fail "keys changed across the load"
[ "$(cat "$dbg/$uuid/check")" = ok ] || hc_fail "check: $(cat "$dbg/$uuid/check")"

# Reads fail half way through a load: it fails alone and loses nothing.
# The cache device is reached through dm-linear here, whose table becomes
# dm-error once the load is walking the tree (null_blk's badblocks do not
# fail reads on 6.1).
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_wait test ! -e "$bsys"
python3 "$HC_ROOT/tests/vm/sbedit.py" "$cdev" incompat=0 >/dev/null ||
	hc_fail "sbedit.py $cdev incompat=0 failed"
sectors=$(hc_size "$cdev")
dm=$(hc_dm_create hc_cache "0 $sectors linear $cdev 0")
hc_write /sys/fs/hcache/register_async "$dm"
hc_wait grep -q " mark [1-9]" /sys/fs/hcache/loading
hc_dm_reload hc_cache "0 $sectors error"
for _ in $(seq 300); do
	[ -z "$(cat /sys/fs/hcache/loading)" ] && break
	sleep 0.2
done
[ -z "$(cat /sys/fs/hcache/loading)" ] || hc_fail "the failing load did not end"
[ ! -d "$set" ] || hc_fail "the set appeared despite failing reads"
hc_kmsg_has "cannot register cache set $uuid"
hc_log "a load whose reads failed: $(dmesg | grep "cannot register cache set $uuid" | tail -1)"
dmsetup remove --noudevsync hc_cache || hc_fail "hc_cache still held after the failed load"

# register waits for the load, and returns with the set up.
t0=$(now_ms)
hc_write /sys/fs/hcache/register "$cdev"
sync_ms=$(($(now_ms) - t0))
[ -d "$set" ] || hc_fail "register returned before $set appeared"
cmp -s /tmp/keys <(cat "$dbg/$uuid/keys") || hc_fail "keys changed after the failed load"
[ "$(cat "$dbg/$uuid/check")" = ok ] || hc_fail "check: $(cat "$dbg/$uuid/check")"
hc_log "register returned in $sync_ms ms, with the set up (load $(load_ms) ms)"
hc_write "$set/stop" 1
hc_wait test ! -e "$set"

# udev: the add event's worker does not wait for the load, made three
# times longer here, as udev's own work for the event (blkid, probe-hcache)
# takes seconds on a debug kernel.
slow_cache 120
hc_udev_install_rules
hc_udev_start
t0=$(now_ms)
hc_udev_trigger add "$cdev"
udev_ms=$(($(now_ms) - t0))
grep -q " $uuid " /sys/fs/hcache/loading ||
	hc_fail "udev settled $udev_ms ms after the add event, and no load is running (set there: $(test -d "$set" && echo yes || echo no))"
for _ in $(seq 600); do
	[ -d "$set" ] && break
	sleep 0.2
done
[ -d "$set" ] || hc_fail "udev registered the cache device, but the set did not appear"
hc_log "udev settled in $udev_ms ms; the load took $(load_ms) ms"
hc_udev_no_failures
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_udev_stop
hc_unload
