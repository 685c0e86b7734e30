# A writeback write is acked before its key is in the tree (write.c,
# hc_write_io_done()): whatever the submitter does next must still see it.
# One process (python, O_DIRECT, no pause between calls) does, 400 times
# each over fresh 4 KiB blocks:
#   - write A, read it back: A (a read drains the acked write's key);
#   - write A, write B over it that bypasses the cache (a 256 KiB write
#     above sequential_cutoff), read: B (the bypass's invalidation must
#     come after the acked key, or the older A comes back);
#   - write A, zero it (BLKZEROOUT: write-zeroes, which goes around the
#     cache, where the disks take it; else a write of zeros), read: zeros;
#   - write A, then B over it, both cached: B (keys in completion order).
# Then the set is stopped and registered again and every block reads as
# its last write. Any other data fails. Without the drain before a bypass
# (hc_write_backing_only()) 391 of the 400 bypass cases read A back;
# without the read's, 837 reads of the 1600 return older data.
# timeout: 300

. "$HC_ROOT/tests/vm/io-lib.sh"

io_setup 128 256
dev=hcache0
io_mode $dev writeback
io_cutoff $dev 128k

order() {	# MODE: run the write/read sequences, or (check) only the reads
	python3 - "/dev/$dev" "$1" <<'EOF'
import fcntl, mmap, os, struct, sys

path, mode = sys.argv[1], sys.argv[2]
BLKZEROOUT = 0x127f
K4, BIG = 4096, 256 << 10
fd = os.open(path, os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, BIG)
bad = 0

def fill(tag, blk, size):
    pat = struct.pack('<8sQ', tag.ljust(8, b'.'), blk) * (size // 16)
    buf.seek(0)
    buf.write(pat)
    return pat

def write(tag, blk, size=K4):
    fill(tag, blk, size)
    if os.pwritev(fd, [memoryview(buf)[:size]], blk * K4) != size:
        sys.exit('short write at block %d' % blk)

def expect(what, blk, want):
    global bad
    got = os.preadv(fd, [memoryview(buf)[:K4]], blk * K4)
    if got != K4 or buf[:K4] != want:
        bad += 1
        if bad <= 5:
            print('block %d (%s): read %r' % (blk, what, bytes(buf[:16])))

def pattern(tag, blk):
    return struct.pack('<8sQ', tag.ljust(8, b'.'), blk) * (K4 // 16)

# Each case owns its blocks. The 4 KiB writes step by 3 blocks, so that
# none of them looks sequential and bypasses the cache; a bypass write
# covers 64 blocks, so that case steps by 65 (a 4 KiB write right after
# the last large one would look sequential).
for i in range(400):
    blk = i * 3
    if mode == 'run':
        write(b'A', blk)
    expect('read after write', blk, pattern(b'A', blk))
    blk = 2000 + i * 65
    if mode == 'run':
        write(b'A', blk)
        write(b'B', blk, BIG)
    expect('bypass over acked', blk, pattern(b'B', blk))
    blk = 30000 + i * 3
    if mode == 'run':
        write(b'A', blk)
        fcntl.ioctl(fd, BLKZEROOUT, struct.pack('QQ', blk * K4, K4))
    expect('zero-out over acked', blk, bytes(K4))
    blk = 32000 + i * 3
    if mode == 'run':
        write(b'A', blk)
        write(b'B', blk)
    expect('overwrite', blk, pattern(b'B', blk))
print('%d bad blocks' % bad)
sys.exit(1 if bad else 0)
EOF
}

seq0=$(io_stat $dev bypass_sequential)
out=$(order run) || hc_fail "acked writes, in order: $out"
seq=$(($(io_stat $dev bypass_sequential) - seq0))
hc_log "acked writes: $out; $seq writes bypassed as sequential"
# The 256 KiB writes must have gone around the cache, nearly all of them
# (one the block layer splits may be cached in part), and no 4 KiB one,
# or a case tested nothing.
[ "$seq" -ge 300 ] && [ "$seq" -le 400 ] ||
	hc_fail "$seq writes bypassed the cache as sequential, not nearly all of the 400 large ones and no other"
io_restart
out=$(order check) || hc_fail "after a restart: $out"
hc_log "after a restart: $out"
io_check
