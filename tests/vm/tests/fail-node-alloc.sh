# Memory pressure must not fail the set (data-safety path 8): btree nodes
# that cannot be allocated when an insert re-reads an evicted leaf or
# splits one, when a lookup reads one, in an optional merge or for a
# promotion, are taken from the set's reserve of nodes (topped up from
# clean cached leaves), the insert is tried again, and the optional work
# is left out. The debug build's fault point node_alloc fails node
# allocations on the I/O path as a short memory would (drop_caches, which
# runs the set's shrinker, keeps evicting leaves meanwhile, so that
# lookups and inserts keep reading them back).
#
# In writeback, with admission_policy first_access, while bursts of 40
# failures are armed every 0.1 s: fio writes 48 MiB at random in 4 KiB
# blocks (tens of thousands of keys: the leaves split) and then verifies
# all of it. The fault point must have failed at least 100 allocations by
# then: how many it fails in a given time depends on how fast the host runs
# the guest (a fast one fails fewer: CI's once failed only 86), so until
# it has, up to 4 times, fio writes and verifies 24 MiB more at random in
# 4 KiB blocks, in space not written yet (new keys split leaves, and each
# such round failed 80-130 more; rewriting the same 48 MiB failed none
# after the first round, as its leaves, never written since, stay cached).
# Then 16 MiB written to the backing device itself is read through hcache0
# twice (promoted, then hit) and compared; and 16 MiB more is written in
# 4 KiB blocks in random order (4096 keys), and all but every 16th 64 KiB
# of it discarded: its leaves fall below an eighth full and must merge (at
# least one merge), and it must read back so.
# Afterwards the set must still be up, with no error counted, its
# consistency check ok; after a restart (no failures then: a load that
# cannot allocate fails with ENOMEM, which is no data loss) fio verifies
# its 48 MiB again. Before the fix the first failed allocation failed the
# set.
# timeout: 420

. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
W=$(mktemp -d /tmp/fail-node.XXXXXX)
IO_BACK_ATTRS="discard=1 irqmode=2 completion_nsec=100000" io_setup 256 512 --bucket 64k
dev=hcache0
sys=$(io_sysdir $dev)
io_mode $dev writeback
io_cutoff $dev 0
hc_write "$sys/admission_policy" first_access
wb_set $dev writeback_running 0
io_point fail node_alloc >/dev/null

# pressure: bursts of failures and evictions until the file $W/stop.
pressure() {
	while [ ! -e "$W/stop" ]; do
		echo 40 >/sys/kernel/debug/hcache/fail/node_alloc/armed
		echo 3 >/proc/sys/vm/drop_caches
		sleep 0.1
	done
	echo 0 >/sys/kernel/debug/hcache/fail/node_alloc/armed
}
pressure &
presser=$!

fio --name=keys --filename=/dev/$dev --direct=1 --ioengine=psync --rw=randwrite \
	--bs=4k --size=48M --verify=crc32c --do_verify=1 --output="$W/fio.out" >/dev/null 2>&1 &
fio_pid=$!
io_watch $fio_pid 120 && fio_rc=0 || fio_rc=$?
[ $fio_rc = 0 ] && io_fio_ok "$W/fio.out" ||
	hc_fail "fio under node allocation failures (status $fio_rc): $(grep -i -E 'err|verify' "$W/fio.out" | head -5)"
hc_log "fio wrote and verified 48 MiB; node allocations failed so far: $(io_point_hits fail node_alloc); leaves split: $(cat "$IO_SET/internal/btree_node_splits")"
rounds=0
while [ "$(io_point_hits fail node_alloc)" -lt 100 ]; do
	[ $rounds -lt 4 ] || hc_fail "only $(io_point_hits fail node_alloc) node allocations failed after $rounds more rounds: the test did not press"
	fio --name=more --filename=/dev/$dev --direct=1 --ioengine=psync --rw=randwrite \
		--bs=4k --offset=$(((256 + 24 * rounds) * MiB)) --size=24M --verify=crc32c \
		--do_verify=1 --output="$W/fio.out" >/dev/null 2>&1 ||
		hc_fail "fio's round $rounds under node allocation failures: $(grep -i -E 'err|verify' "$W/fio.out" | head -5)"
	io_fio_ok "$W/fio.out" || hc_fail "round $rounds: $(grep -i -E 'err|verify' "$W/fio.out" | head -5)"
	rounds=$((rounds + 1))
	hc_log "round $rounds wrote and verified 24 MiB more; node allocations failed so far: $(io_point_hits fail node_alloc); leaves split: $(cat "$IO_SET/internal/btree_node_splits")"
done

head -c $((16 * MiB)) /dev/urandom >"$W/raw"
io_put "$W/raw" "$IO_BDEV" $((IO_OFFSET * 512 + 128 * MiB))
for pass in promoted hit; do
	io_get /dev/$dev $((128 * MiB)) $((16 * MiB)) "$W/got"
	wb_same "the backing device's data read through hcache0 ($pass)" "$W/got" "$W/raw" $((128 * MiB))
done
hc_log "16 MiB read back right, promoted then hit: $(io_stats_line $dev)"

# 16 MiB more, dirty, in 4 KiB blocks in random order, then all but every
# 16th 64 KiB of it discarded.
head -c $((16 * MiB)) /dev/urandom >"$W/d"
python3 - /dev/$dev $((160 * MiB)) "$W/d" <<'EOF' || hc_fail "writing 4 KiB blocks, then discarding, failed"
import fcntl, mmap, os, random, struct, sys
BLKDISCARD = 0x1277
dev, base, copy = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = open(copy, "rb").read()
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
order = list(range(len(data) // 4096))
random.shuffle(order)
for i in order:
    buf[:] = data[i * 4096:(i + 1) * 4096]
    os.pwrite(fd, buf, base + i * 4096)
with open(copy, "r+b") as f:
    for i in range(len(data) // 65536):
        if i % 16 == 0:
            continue
        fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", base + i * 65536, 65536))
        f.seek(i * 65536)
        f.write(bytes(65536))
os.close(fd)
EOF
io_get /dev/$dev $((160 * MiB)) $((16 * MiB)) "$W/got"
wb_same "16 MiB, all but every 16th 64 KiB discarded" "$W/got" "$W/d" $((160 * MiB))
touch "$W/stop"
wait $presser
hits=$(io_point_hits fail node_alloc)
hc_log "discards done; node allocations failed: $hits; merges: $(cat "$IO_SET/internal/btree_node_merges"); set errors: $(cat "$IO_SET/errors")"
[ -d "$IO_SET" ] || hc_fail "the set is gone: node allocation failures failed it"
[ "$(cat "$IO_SET/internal/btree_node_merges")" -gt 0 ] ||
	hc_fail "no leaf merged: the discards did not empty the leaves"
io_check
io_restart
fio --name=keys --filename=/dev/$dev --direct=1 --ioengine=psync --rw=randwrite \
	--bs=4k --size=48M --verify=crc32c --verify_only --output="$W/fio2.out" >/dev/null 2>&1 ||
	hc_fail "after a restart, fio's verify failed: $(grep -i -E 'err|verify' "$W/fio2.out" | head -5)"
io_fio_ok "$W/fio2.out" || hc_fail "after a restart: $(grep -i -E 'err|verify' "$W/fio2.out" | head -5)"
hc_log "after a restart: fio verify clean"
io_teardown
