# The cache set: registering a cache device creates /sys/fs/hcache/<uuid>/
# with its files; backing devices attach whichever registers first, by
# sysfs attach/detach (a new id after a detach), or by themselves when
# formatted to join it. 100,000 keys put in through the debug insert path
# and more over them (leaves split and merged, id 2's data evicted, its
# stale keys then dropped by trigger_gc) give byte for byte the same dump
# after the shrinker evicted
# leaves and after stop and register, and the consistency check passes. A
# copy of a registered set, and a used cache without its journal, are
# refused.
# timeout: 600
# memory: 2G
# expect-log: hcache: .*cannot attach: no cache set
# expect-log: hcache: .*cannot register: cache set .* is already registered
# expect-log: hcache: .*cannot register: no valid journal entry
# expect-log: hcache: .*cannot register cache set .*: error -117

mk=$(hc_tool make-hcache)
show=$(hc_tool hcache-super-show)
dbg=/sys/kernel/debug/hcache
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

cdev=$(hc_nullb cache 256 discard=1)
bdev=$(hc_nullb back 64)
"$mk" -C "$cdev" >/dev/null
"$mk" -B "$bdev" >/dev/null
set_uuid=$("$show" "$cdev" | awk '$1 == "cset.uuid" { print $2 }')
[ -n "$set_uuid" ] || hc_fail "no set uuid in hcache-super-show output"
hc_load

# Cache first: the set appears with its files.
hc_write /sys/fs/hcache/register "$cdev"
set=/sys/fs/hcache/$set_uuid
hc_wait test -d "$set"
for f in bucket_size block_size nbuckets cache_available_percent tree_depth \
	 btree_cache_size average_key_size journal_delay_ms errors \
	 internal/journal_seq internal/btree_leaf_keys; do
	[ -r "$set/$f" ] || hc_fail "$set/$f missing"
	hc_log "$f: $(cat "$set/$f")"
done
[ "$(cat "$set/errors")" = 0 ] || hc_fail "errors: $(cat "$set/errors")"
[ "$(cat "$set/cache_available_percent")" -ge 90 ] ||
	hc_fail "a new cache is only $(cat "$set/cache_available_percent")% available"
cname=$(basename "$(readlink -f "$cdev")")
csys=/sys/class/block/$cname/hcache
grep -q '^\[lru\] fifo random$' "$csys/cache_replacement_policy" ||
	hc_fail "policy: $(cat "$csys/cache_replacement_policy")"
hc_write "$csys/cache_replacement_policy" fifo
hc_write "$csys/discard" 1
discards=$(awk '{ print $12 }' "/sys/class/block/$cname/stat")
hc_write_fails "Invalid argument" "$csys/cache_replacement_policy" oldest
hc_write_fails "Numerical result out of range" "$set/journal_delay_ms" 0
[ "$(cat $dbg/$set_uuid/check)" = ok ] || hc_fail "check: $(cat $dbg/$set_uuid/check)"

# A detached backing device runs in passthrough; attach, detach, attach.
hc_write /sys/fs/hcache/register "$bdev"
hc_wait test -b /dev/hcache0
bsys=/sys/block/hcache0/hcache
[ "$(cat $bsys/cache_set_id)" = 0 ] || hc_fail "attached before attach"
hc_write_fails "No such file or directory" $bsys/attach 01234567-89ab-cdef-0123-456789abcdef
hc_write_fails "Invalid argument" $bsys/attach not-a-uuid
hc_write $bsys/attach "$set_uuid"
[ "$(cat $bsys/cache_set_uuid)" = "$set_uuid" ] || hc_fail "cache_set_uuid: $(cat $bsys/cache_set_uuid)"
[ "$(cat $bsys/cache_set_id)" = 1 ] || hc_fail "first id: $(cat $bsys/cache_set_id)"
[ "$(cat $bsys/state)" = clean ] || hc_fail "state after attach: $(cat $bsys/state)"
[ -L "$set/bdev1" ] || hc_fail "no $set/bdev1 link"
"$show" "$bdev" | grep -q -i "$set_uuid" || hc_fail "the backing superblock does not name the set"
hc_write $bsys/detach 1
[ "$(cat $bsys/cache_set_id)" = 0 ] || hc_fail "still attached after detach"
[ "$(cat $bsys/state)" = none ] || hc_fail "state after detach: $(cat $bsys/state)"
hc_write_fails "No such file or directory" $bsys/detach 1
hc_write $bsys/attach "$set_uuid"
[ "$(cat $bsys/cache_set_id)" = 2 ] || hc_fail "ids are reused: $(cat $bsys/cache_set_id)"
test -b /dev/hcache0 || hc_fail "/dev/hcache0 went away"

# A second backing device formatted to join the set attaches by itself.
bdev2=$(hc_nullb back2 64)
"$mk" -B "$bdev2" --cset-uuid "$set_uuid" >/dev/null
hc_write /sys/fs/hcache/register "$bdev2"
hc_wait test -b /dev/hcache1
[ "$(cat /sys/block/hcache1/hcache/cache_set_id)" = 3 ] ||
	hc_fail "second device's id: $(cat /sys/block/hcache1/hcache/cache_set_id)"

# 100,000 extents through the debug insert path, then overwrite some.
n=100000
[ "${HC_LONG:-0}" = 1 ] && n=300000
start=$(date +%s)
hc_write "$dbg/$set_uuid/fill" "2 0 $n 8"
hc_log "filled $n keys in $(( $(date +%s) - start )) s; depth $(cat $set/tree_depth), splits $(cat $set/internal/btree_node_splits)"
now=$(awk '{ print $12 }' "/sys/class/block/$cname/stat")
[ "$now" -gt "$discards" ] || hc_fail "discard on, yet no bucket was discarded"
hc_log "$((now - discards)) buckets discarded before reuse"
# Overlaps on another id: cut fronts and backs, split middles, drop keys.
hc_write "$dbg/$set_uuid/fill" "3 0 2000 8"
hc_write "$dbg/$set_uuid/fill" "3 4 1000 8 16"
hc_write "$dbg/$set_uuid/fill" "3 100 10 600"
# 50,000 small keys overwritten by a few big ones: the leaves merge.
hc_write "$dbg/$set_uuid/fill" "4 0 50000 8"
hc_write "$dbg/$set_uuid/fill" "4 0 667 600"
[ "$(cat $set/internal/btree_node_merges)" -gt 0 ] || hc_fail "no leaf merged"
hc_log "merges: $(cat $set/internal/btree_node_merges); $(cat $set/internal/btree_nodes_cached) nodes"
# The later fills evicted id 2's data; garbage collection drops its stale
# keys (and the tree holds still from here on, for the comparisons below).
hc_write "$set/internal/trigger_gc" 1
[ "$(cat $set/internal/gc_keys_dropped)" -gt 0 ] || hc_fail "garbage collection dropped no stale key"
# Live keys enough for several leaves (less than an eighth of the cache, so
# that no GC run starts by itself before the dumps below).
hc_write "$dbg/$set_uuid/fill" "5 0 6000 8"
hc_write "$dbg/$set_uuid/flush" journal
[ "$(cat $dbg/$set_uuid/check)" = ok ] || hc_fail "check: $(cat $dbg/$set_uuid/check)"
cat "$dbg/$set_uuid/keys" >/tmp/keys.before
keys=$(wc -l </tmp/keys.before)
hc_log "$keys keys; $(cat $set/average_key_size) bytes each on average; $(cat $set/cache_available_percent)% available; GC dropped $(cat $set/internal/gc_keys_dropped) stale keys in $(cat $set/internal/gc_runs) runs"
[ "$(grep -c '^2:' /tmp/keys.before)" -lt "$n" ] ||
	hc_fail "$(grep -c '^2:' /tmp/keys.before) keys of id 2 left of $n, all evicted since"
[ "$(cat $set/internal/btree_leaf_keys)" = "$keys" ] ||
	hc_fail "btree_leaf_keys $(cat $set/internal/btree_leaf_keys), dump has $keys"
[ "$(cat $set/internal/btree_node_splits)" -gt 0 ] || hc_fail "$n keys and no split"

# Under memory pressure the shrinker evicts clean leaves; they read back.
hc_write "$dbg/$set_uuid/flush" btree
reads=$(cat $set/internal/btree_node_reads)
echo 2 >/proc/sys/vm/drop_caches
cat "$dbg/$set_uuid/keys" | cmp -s - /tmp/keys.before || hc_fail "keys differ after the shrinker ran"
[ "$(cat $set/internal/btree_node_reads)" -gt "$reads" ] ||
	hc_fail "no node was evicted and read back ($(cat $set/internal/btree_nodes_cached) cached)"
hc_log "shrinker: $(( $(cat $set/internal/btree_node_reads) - reads )) leaves read back"

# Stop the set (it stops its backing device), reload, register both ways.
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_wait test ! -e /dev/hcache0
hc_unload
hc_load
hc_write /sys/fs/hcache/register "$bdev"
sleep 1
[ ! -e /dev/hcache0 ] || hc_fail "an attached clean device ran before its cache set came"
hc_kmsg_has "waiting for cache set"
hc_write /sys/fs/hcache/register "$cdev"
hc_wait test -b /dev/hcache0
[ "$(cat $bsys/cache_set_id)" = 2 ] || hc_fail "id after re-registration: $(cat $bsys/cache_set_id)"
hc_write /sys/fs/hcache/register "$bdev2"
hc_wait test -b /dev/hcache1
[ "$(cat /sys/block/hcache1/hcache/cache_set_id)" = 3 ] ||
	hc_fail "second device's id after re-registration"
grep -q '^lru \[fifo\] random$' "$csys/cache_replacement_policy" ||
	hc_fail "policy not persisted: $(cat "$csys/cache_replacement_policy")"
[ "$(cat "$csys/discard")" = 1 ] || hc_fail "discard not persisted"
cat "$dbg/$set_uuid/keys" >/tmp/keys.after
cmp -s /tmp/keys.before /tmp/keys.after ||
	hc_fail "keys differ after stop and register: $(diff /tmp/keys.before /tmp/keys.after | head -5)"
[ "$(cat $dbg/$set_uuid/check)" = ok ] || hc_fail "check after register: $(cat $dbg/$set_uuid/check)"
hc_log "all $keys keys found after stop and register"

# Unregister detaches: the backing device forgets the set, keeps running.
hc_write "$set/unregister" 1
hc_wait test ! -e "$set"
[ "$(cat $bsys/cache_set_id)" = 0 ] || hc_fail "still attached after unregister"
[ "$(cat $bsys/state)" = none ] || hc_fail "state after unregister: $(cat $bsys/state)"
hc_write $bsys/stop 1
hc_write /sys/block/hcache1/hcache/stop 1
hc_wait test ! -e /dev/hcache0
hc_wait test ! -e /dev/hcache1

# Refusals: a copy of a registered set; a used cache without its journal.
copy=$(hc_nullb copy 256)
dd if="$cdev" of="$copy" bs=1M count=8 status=none
hc_write /sys/fs/hcache/register "$cdev"
hc_wait test -d "$set"
hc_write_fails "File exists" /sys/fs/hcache/register "$copy"
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
dd if=/dev/zero of="$copy" bs=512K seek=1 count=8 status=none
hc_write_fails "Structure needs cleaning" /sys/fs/hcache/register "$copy"
hc_kmsg_has "no valid journal entry on a cache set that has been used"
hc_unload
