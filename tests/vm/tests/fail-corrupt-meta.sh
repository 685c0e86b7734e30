# Corrupt metadata on a stopped cache device, one structure at a time,
# with a writeback device's dirty data in the cache:
# - a btree node (a byte of its first sorted set, which the journal no
#   longer covers): registration fails with EUCLEAN and names the bucket;
# - the gen/prio chain (a byte of its first bucket) or the backing-device
#   table: registration fails and names the bucket;
# - the newest journal entry, torn (a byte of it): registration recovers
#   from the entry before it and the consistency check passes.
# A failed registration writes nothing: with the byte restored the set
# registers, and the dirty data comes back right every time.
# timeout: 300
# expect-log: hcache: .*: cache set .*: the metadata is inconsistent
# expect-log: hcache: .*:   .*
# expect-log: hcache: .*: cache set .*: .*(checksum|magic|bad|invalid|cannot)
# expect-log: hcache: .*: cannot register cache set .*: error -(74|117|5)

. "$HC_ROOT/tests/vm/io-lib.sh"

edit="python3 $HC_ROOT/tests/vm/metaedit.py"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
cache=$(hc_nullb cache 64)
wb=$(hc_nullb wb 64)
"$(hc_tool make-hcache)" -C "$cache" -B "$wb" --block 512 --bucket 64k >/dev/null
IO_UUID=$("$(hc_tool hcache-super-show)" "$cache" | awk '$1 == "cset.uuid" { print $2 }')
set=/sys/fs/hcache/$IO_UUID
dbg=/sys/kernel/debug/hcache/$IO_UUID
bucket=65536
hc_load
hc_write /sys/fs/hcache/register "$cache"
h=$(io_register_backing "$wb")
s=$(io_sysdir "$h")
hc_write "$s/cache_mode" writeback
hc_write "$s/writeback_running" 0
head -c 2M /dev/urandom >/tmp/data
dd if=/tmp/data of=/dev/$h bs=64k oflag=direct conv=fsync status=none
hc_write "$dbg/fill" "1000 0 3000 8 16"

jstart=$("$(hc_tool hcache-super-show)" "$cache" | awk '$1 == "cache.journal_start" { print $2 }')
jbuckets=$("$(hc_tool hcache-super-show)" "$cache" | awk '$1 == "cache.journal_buckets" { print $2 }')

# newest_jset: the newest journal entry on disk: its offset, seq and the
# head of the gen/prio chain it names.
newest_jset() {
	$edit newest-jset "$cache" $((jstart * bucket)) $((jbuckets * bucket)) 512
}

# stop_all: stop the set (and wb with it); print the root's bucket (a
# stop appends to the nodes in place), the gen/prio chain's head (a stop
# writes a new chain) and the table's bucket, as its last entry names them.
stop_all() {
	local root joff jseq prio table
	root=$(cat "$set/internal/root_bucket")
	hc_write "$set/stop" 1
	hc_wait test ! -e "$set"
	blockdev --flushbufs "$cache"
	read -r joff jseq prio table <<<"$(newest_jset)"
	echo "$root $prio $table"
}

# comes_back: register the set and wb; the dirty data reads right.
comes_back() {
	hc_write /sys/fs/hcache/register "$cache"
	[ -d "$set" ] || hc_fail "$1: the set did not register"
	h=$(io_register_backing "$wb")
	cmp -s /tmp/data <(dd if=/dev/$h bs=64k count=32 iflag=direct status=none) ||
		hc_fail "$1: the dirty data reads wrong"
	[ "$(cat "$dbg/check")" = ok ] || hc_fail "$1: check: $(cat "$dbg/check")"
}

# refused WHAT OFFSET TEXT: with the byte at OFFSET flipped, registering
# fails, saying TEXT; with it restored, everything comes back.
refused() {
	local what=$1 off=$2 text=$3 err
	$edit flip "$cache" "$off" >/dev/null
	err=$( { printf '%s\n' "$cache" >/sys/fs/hcache/register; } 2>&1 ) &&
		hc_fail "$what: registered despite the damage"
	[ ! -d "$set" ] || hc_fail "$what: the set appeared"
	[ -z "$(cat /sys/fs/hcache/loading)" ] || hc_fail "$what: still loading"
	dmesg | tail -20 | grep -q -E "$text" ||
		hc_fail "$what: the log does not say '$text': $(dmesg | tail -8)"
	hc_log "$what: refused (${err##*: }): $(dmesg | grep -E "$text" | tail -1 | cut -c16-)"
	blockdev --flushbufs "$cache"
	$edit flip "$cache" "$off" >/dev/null
	comes_back "$what restored"
}

read -r root prio table <<<"$(stop_all)"
# The node header fills the first block (512 bytes); the first sorted
# set's keys start after its header (32 bytes).
refused "btree node in bucket $root" $((root * bucket + 512 + 32 + 8)) "bucket $root"

read -r root prio table <<<"$(stop_all)"
refused "gen/prio bucket $prio" $((prio * bucket + 48 + 4)) "bucket $prio"

read -r root prio table <<<"$(stop_all)"
refused "backing-device table in bucket $table" $((table * bucket + 52)) "table in bucket $table"

# A torn newest journal entry: the one before it is used.
read -r root prio table <<<"$(stop_all)"
read -r joff jseq prio table <<<"$(newest_jset)"
$edit flip "$cache" $((joff + 40)) >/dev/null
comes_back "torn journal entry $jseq"
dmesg | grep -q "journal replayed: entries [0-9]* to $((jseq - 1))," ||
	hc_fail "not replayed up to entry $((jseq - 1)): $(dmesg | grep 'journal replayed' | tail -1)"
hc_log "torn journal entry $jseq: recovered from entry $((jseq - 1)): $(dmesg | grep 'journal replayed' | tail -1 | cut -c16-)"

hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_unload
