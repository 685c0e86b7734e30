#!/bin/bash
# make-hcache --checksum crc32c (HC_FEAT_INCOMPAT_DATA_CSUM): the
# superblock names a checksum table of the size the device needs, right
# after the journal, and the table on the image holds a valid seq 0 copy
# of every block in slot 0, zeroes in slot 1 and after the last block.
# Without the option, or with --checksum none, there is no table and no
# feature bit; a bad value and a backing-only --checksum are refused
# before anything is written; the minimum cache size counts the table.
set -eu
. tests/tools/lib/common.bash

KiB=1024
MiB=$((1024 * KiB))

# expect_fields DEV KEY=VALUE...: expect_field for several fields of DEV,
# from one 'hcache-super-show --json' and one python3 (whose start-up is
# most of expect_field's time).
expect_fields() {
	local img=$1 got
	shift
	got=$("$SUPER_SHOW" -f --json "$img" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for kv in sys.argv[1:]:
    k, want = kv.split("=", 1)
    v = d.get(k)
    v = "null" if v is None else str(v).lower() if isinstance(v, bool) else str(v)
    if v != want:
        print("%s is \x27%s\x27, want \x27%s\x27" % (k, v, want))
' "$@")
	[ -z "$got" ] || fail "$img: $got"
	echo "ok: $img $*"
}

# check_table IMG: read the superblock and the checksum table of IMG with
# an implementation of its own (not the tools' code) and check every
# block: slot 0 valid (magic, checksum, nr, seq 0, its number, all
# checksums 0), slot 1 zero, nothing but zeroes after the last block up
# to the end of the table's last bucket. Prints "blocks N".
check_table() {
	python3 - "$1" <<'EOT'
import struct, sys

def crc32c_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82f63b78 if c & 1 else c >> 1
        t.append(c)
    return t
T = crc32c_table()

def crc32c(b):
    c = 0xffffffff
    for x in b:
        c = T[(c ^ x) & 0xff] ^ (c >> 8)
    return c ^ 0xffffffff

def die(msg):
    print("check_table: " + msg, file=sys.stderr)
    sys.exit(1)

if crc32c(b"123456789") != 0xe3069283:
    die("crc32c self-test")
HC_CSUM_MAGIC = 0x5d8e1f7a3b9c2606
CHUNK, PER_BLOCK, SLOT = 4096, 1016, 4096
with open(sys.argv[1], "rb") as f:
    f.seek(4096)
    sb = f.read(4096)
    incompat, = struct.unpack_from("<Q", sb, 32)
    lo, hi = struct.unpack_from("<QQ", sb, 56)
    nbuckets, = struct.unpack_from("<Q", sb, 136)
    bucket_size, = struct.unpack_from("<I", sb, 160)
    csum_buckets, csum_start, csum_type = struct.unpack_from("<IQI", sb, 196)
    if not incompat & (1 << 2):
        die("incompat bit 2 (DATA_CSUM) not set")
    if csum_type != 1:
        die("csum_type %d, want 1 (crc32c)" % csum_type)
    magic = lo ^ hi ^ HC_CSUM_MAGIC
    chunks = nbuckets * bucket_size // CHUNK
    blocks = (chunks + PER_BLOCK - 1) // PER_BLOCK
    f.seek(csum_start * bucket_size)
    table = f.read(csum_buckets * bucket_size)
if len(table) != csum_buckets * bucket_size:
    die("table runs past the end of the image")
if 2 * blocks * SLOT > len(table):
    die("%d blocks do not fit in %d buckets" % (blocks, csum_buckets))
zero = bytes(SLOT)
for b in range(blocks):
    s0 = table[2 * b * SLOT:(2 * b + 1) * SLOT]
    s1 = table[(2 * b + 1) * SLOT:(2 * b + 2) * SLOT]
    m, csum, nr, seq, blk = struct.unpack_from("<QIIQQ", s0, 0)
    if m != magic:
        die("block %d slot 0: magic %#x, want %#x" % (b, m, magic))
    if crc32c(s0[:8] + bytes(4) + s0[12:]) != csum:
        die("block %d slot 0: checksum mismatch" % b)
    if (nr, seq, blk) != (PER_BLOCK, 0, b):
        die("block %d slot 0: nr %d seq %d block %d" % (b, nr, seq, blk))
    if s0[32:] != bytes(SLOT - 32):
        die("block %d slot 0: a chunk's checksum is not 0" % b)
    if s1 != zero:
        die("block %d slot 1 not zero" % b)
if table[2 * blocks * SLOT:] != bytes(len(table) - 2 * blocks * SLOT):
    die("bytes after block %d not zero" % (blocks - 1))
print("blocks %d" % blocks)
EOT
}

# --- crc32c: 1 GiB of 512 KiB buckets -------------------------------------
# 2048 buckets, a journal of 2048 / 128 = 16 from bucket 1, so the table
# starts at bucket 17. 2048 * 128 = 262144 chunks of 4 KiB, in
# ceil(262144 / 1016) = 259 blocks of two 4 KiB slots: 2121728 bytes,
# 5 buckets (4.05 rounded up).
image c.img 1G
# Old data where the table goes (buckets 17-21) and in the bucket after
# it: the table's must not survive, the data bucket's is not the table's.
dd if=/dev/urandom of=c.img bs=$MiB seek=8 count=4 conv=notrunc status=none
dd if=c.img of=after.bin bs=$((512 * KiB)) skip=22 count=1 status=none
uuid=3c1d57e0-7a52-4a3e-9f6b-2d54b8a1c0f9
run 0 "$MAKE_HCACHE" -C c.img --checksum crc32c --cset-uuid $uuid
out_has "checksum:        crc32c, 5-bucket table at bucket 17"
expect_fields c.img valid=true incompat=0x0000000000000004 nbuckets=2048 \
	journal_start=1 journal_buckets=16 csum_type=crc32c csum_start=17 \
	csum_buckets=5
[ "$(check_table c.img)" = "blocks 259" ] || fail "c.img: table not as expected"
echo "ok: c.img table: 259 valid blocks"
dd if=c.img of=after2.bin bs=$((512 * KiB)) skip=22 count=1 status=none
cmp -s after.bin after2.bin || fail "bucket 22, after the table, was written"
run 0 "$SUPER_SHOW" c.img
out_has "sb.incompat		0x0000000000000004 [data-csum]"
out_has "cache.csum_type		crc32c"
out_has "cache.csum_start	17"
out_has "cache.csum_buckets	5"

# 8 KiB buckets: 12800 of them, a journal of 100, the table from bucket
# 101; 25600 chunks, 26 blocks, 212992 bytes: 26 buckets.
image s.img 100M
run 0 "$MAKE_HCACHE" -C s.img --checksum crc32c --bucket 8k
expect_fields s.img valid=true csum_start=101 csum_buckets=26
[ "$(check_table s.img)" = "blocks 26" ] || fail "s.img: table not as expected"
echo "ok: s.img table: 26 valid blocks"

# --- no table: the default, and --checksum none -----------------------------
# (The default is HC_CSUM_DEFAULT in make-hcache.c: change this part when
# it becomes crc32c.)
for opt in "" "--checksum none"; do
	image n.img 100M
	# Where a table would go: bucket 9, after the journal's 8.
	dd if=/dev/urandom of=n.img bs=$MiB seek=4 count=4 conv=notrunc status=none
	cp n.img n0.img
	# shellcheck disable=SC2086 # "" is no argument
	run 0 "$MAKE_HCACHE" -C n.img $opt
	out_has "checksum:        none"
	expect_fields n.img valid=true incompat=0x0000000000000000 \
		csum_type=none csum_start=0 csum_buckets=0
	# Nothing written past the journal (buckets 1-8).
	cmp -s -i $((9 * 512 * KiB)) n.img n0.img ||
		fail "'$opt': written past the journal"
	run 0 "$SUPER_SHOW" n.img
	grep -q 'data-csum' "$tmp/out" && fail "'$opt': [data-csum] shown"
	out_has "cache.csum_type		none"
done
run 0 "$MAKE_HCACHE" --help
out_has "(default none)"

# --- refused, nothing written -----------------------------------------------
image r.img 100M
dd if=/dev/urandom of=r.img bs=$MiB count=8 conv=notrunc status=none
cp r.img r0.img
run 1 "$MAKE_HCACHE" -C r.img --checksum bogus
err_has "bad checksum 'bogus': expected crc32c or none"
run 1 "$MAKE_HCACHE" -C r.img --checksum CRC32C
err_has "bad checksum 'CRC32C'"
run 1 "$MAKE_HCACHE" -B r.img --checksum crc32c
err_has "--checksum applies to a cache device (-C); backing devices have no checksum table"
run 1 "$MAKE_HCACHE" --checksum none -B r.img
err_has "--checksum applies to a cache device"
cmp -s r.img r0.img || fail "a refused make-hcache wrote to r.img"
echo "ok: refused runs left r.img as it was"

# With a cache device, backing devices formatted alongside get no table.
image c2.img 100M
image b.img 100M
run 0 "$MAKE_HCACHE" -C c2.img -B b.img --checksum crc32c
expect_fields c2.img incompat=0x0000000000000004 csum_buckets=1
expect_fields b.img incompat=0x0000000000000000 csum_type=null valid=true

# --- the minimum size counts the table --------------------------------------
# 512 KiB buckets: 137 buckets (1 + 8 + 128) hold 17536 chunks, 18 blocks,
# one bucket of table, which leaves 127 for data; 138 buckets are the
# minimum: 72351744 bytes.
image min.img 72351744
run 0 "$MAKE_HCACHE" -C min.img --checksum crc32c
expect_fields min.img nbuckets=138 csum_buckets=1 valid=true
image min1.img $((72351744 - 512 * KiB))
run 5 "$MAKE_HCACHE" -C min1.img --checksum crc32c
err_has "min1.img: too small for a cache device"
err_has "minimum size with 512.0 KiB buckets is 72351744 bytes (69.0 MiB): 138 buckets, 1 for the superblock, 8 for the journal, 1 for the checksum table and 128 for data"
[ "$(head -c $((2 * MiB)) min1.img | tr -d '\0' | wc -c)" -eq 0 ] ||
	fail "refused device was written"
# The same size is enough without a table.
run 0 "$MAKE_HCACHE" -C min1.img
image min2.img $((72351744 - 512))
run 5 "$MAKE_HCACHE" -C min2.img --checksum crc32c
# 8 KiB buckets: the same 138 buckets, 1130496 bytes.
image tiny.img 1130496
run 0 "$MAKE_HCACHE" -C tiny.img --checksum crc32c --bucket 8k
expect_field tiny.img valid true
[ "$(check_table tiny.img)" = "blocks 1" ] || fail "tiny.img: table not as expected"
image tiny1.img $((1130496 - 8 * KiB))
run 5 "$MAKE_HCACHE" -C tiny1.img --checksum crc32c --bucket 8k
err_has "1130496 bytes"
err_has "1 for the checksum table"
echo PASS
