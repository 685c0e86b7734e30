# Overwriting the cache many times: rounds of random overlapping inserts
# (splits, merges, rewrites, evictions, refills, journal wrap-around), the
# consistency check every 50 inserts, a stop and register after each
# round, and a check after each registration. 2 rounds in make check, 8
# under make check-long (each round reuses every bucket about 7 times).
# timeout: 600
# one-kernel: a soak of the btree and the allocator; cache-set inserts and registers again on both kernels

cdev=$(hc_nullb cache 192)
dbg=/sys/kernel/debug/hcache
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
"$(hc_tool make-hcache)" -C "$cdev" --bucket 64k >/dev/null
uuid=$("$(hc_tool hcache-super-show)" "$cdev" | awk '$1 == "cset.uuid" { print $2 }')
set=/sys/fs/hcache/$uuid
rounds=2
[ "${HC_LONG:-0}" = 1 ] && rounds=8
hc_load
hc_write /sys/fs/hcache/register "$cdev"
hc_wait test -d "$set"
for round in $(seq "$rounds"); do
	hc_write "$dbg/$uuid/fill" "$((1000 + round)) $((RANDOM * 8)) 500 8 8 dirty"
	for i in $(seq 150); do
		echo "1 $((RANDOM * 16)) 500 $((RANDOM % 64 + 1)) $((RANDOM % 96 + 1))" \
			>"$dbg/$uuid/fill" || hc_fail "round $round, insert $i failed"
		if [ $((i % 50)) = 0 ]; then
			c=$(cat "$dbg/$uuid/check")
			[ "$c" = ok ] || hc_fail "round $round, insert $i: $c"
		fi
	done
	hc_log "round $round: $(cat $set/internal/btree_leaf_keys) keys, $(cat $set/internal/buckets_invalidated) buckets reused, $(cat $set/internal/btree_node_merges) merges, $(cat $set/internal/journal_reclaims) journal reclaims"
	[ "$(cat $set/errors)" = 0 ] || hc_fail "errors: $(cat $set/errors)"
	cat "$dbg/$uuid/keys" >/tmp/keys
	hc_write "$set/stop" 1
	hc_wait test ! -e "$set"
	hc_write /sys/fs/hcache/register "$cdev"
	hc_wait test -d "$set"
	c=$(cat "$dbg/$uuid/check")
	[ "$c" = ok ] || hc_fail "after registering, round $round: $c"
	cat "$dbg/$uuid/keys" | cmp -s - /tmp/keys || hc_fail "keys changed across stop and register, round $round"
done
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_unload
