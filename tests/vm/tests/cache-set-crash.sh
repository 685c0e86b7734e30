# Hard kills of the VM while keys are being inserted. Every boot registers
# the cache set (replaying its journal), runs the consistency check, and
# finds every key made durable before the earlier kills (a journal flush
# returned; its range and dirty flag, as moving GC may move its data);
# then it makes more keys durable, starts inserting in the
# background (random overlapping extents: splits, node rewrites, journal
# wrap-around and bucket reuse all happen) and resets the VM with sysrq-b
# at a random moment. The last boot checks once more across a clean stop.
# timeout: 240
# drives: cache:192M
# boots: 4
# boots-long: 21

cdev=$(hc_drive cache)
dbg=/sys/kernel/debug/hcache
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
durable=$HC_RESULTS/durable.keys

if [ "$HC_BOOT" = 1 ]; then
	# Small buckets: more nodes, splits and rewrites per key.
	"$(hc_tool make-hcache)" -C "$cdev" --bucket 64k >/dev/null
	: >"$durable"
fi
uuid=$("$(hc_tool hcache-super-show)" "$cdev" | awk '$1 == "cset.uuid" { print $2 }')
hc_load
hc_write /sys/fs/hcache/register "$cdev"
set=/sys/fs/hcache/$uuid
hc_wait test -d "$set"
check=$(cat "$dbg/$uuid/check")
[ "$check" = ok ] || hc_fail "boot $HC_BOOT: consistency check: $check"
# Ranges and flags only: moving GC may have moved dirty keys' data.
sed 's/ @[0-9]* gen [0-9]*//' "$dbg/$uuid/keys" >/tmp/keys
missing=$(sort "$durable" | comm -23 - <(sort /tmp/keys) | wc -l)
[ "$missing" = 0 ] ||
	hc_fail "boot $HC_BOOT: $missing of $(wc -l <"$durable") durable keys lost: $(sort "$durable" | comm -23 - <(sort /tmp/keys) | head -3)"
hc_log "boot $HC_BOOT: registered, check ok, all $(wc -l <"$durable") durable keys found among $(wc -l </tmp/keys); depth $(cat $set/tree_depth), journal seq $(cat $set/internal/journal_seq)"

if [ "$HC_BOOT" = "$HC_BOOTS" ]; then
	# Garbage collection first, so that no run drops keys between the two
	# dumps; moving GC may still move dirty data (ranges and flags kept).
	hc_write "$set/internal/trigger_gc" 1
	sed 's/ @[0-9]* gen [0-9]*//' "$dbg/$uuid/keys" >/tmp/keys.gc
	hc_write "$set/stop" 1
	hc_wait test ! -e "$set"
	hc_write /sys/fs/hcache/register "$cdev"
	hc_wait test -d "$set"
	[ "$(cat "$dbg/$uuid/check")" = ok ] || hc_fail "check after a clean stop: $(cat "$dbg/$uuid/check")"
	sed 's/ @[0-9]* gen [0-9]*//' "$dbg/$uuid/keys" >/tmp/keys.after
	cmp -s /tmp/keys.after /tmp/keys.gc ||
		hc_fail "keys changed across a clean stop: $(diff /tmp/keys.gc /tmp/keys.after | head -5)"
	hc_write "$set/stop" 1
	hc_wait test ! -e "$set"
	hc_unload
	exit 0
fi

# Durable keys of this boot: their own id, never overwritten later, and
# dirty, so never evicted (clean ones may be: the background inserts
# fill the cache many times over).
id=$((1000 + HC_BOOT))
hc_write "$dbg/$uuid/fill" "$id $((RANDOM * 8)) 500 8 8 dirty"
hc_write "$dbg/$uuid/flush" journal
grep "^$id:" "$dbg/$uuid/keys" | sed 's/ @[0-9]* gen [0-9]*//' >>"$durable"
sync

# Insert in the background, then reset at a random moment. Always id 1,
# as one backing device written over and over: evicted keys get
# overwritten, so their buckets' gens stay usable without garbage
# collection (which the GC issue adds).
(
	while :; do
		echo "1 $((RANDOM * 16)) 500 $((RANDOM % 64 + 1)) $((RANDOM % 96 + 1))" \
			>"$dbg/$uuid/fill" || exit 1
	done
) &
sleep $((RANDOM % 4 + 1))
kill -0 $! 2>/dev/null || hc_fail "the background inserts stopped: $(wait $!; echo $?)"
hc_log "boot $HC_BOOT: resetting; journal seq $(cat $set/internal/journal_seq), $(cat $set/internal/btree_leaf_keys) keys"
touch "$HC_RESULTS/boot-$HC_BOOT.ok"
sync
echo b >/proc/sysrq-trigger
sleep 30
hc_fail "still running after sysrq-b"
