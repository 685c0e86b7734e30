#!/bin/bash
# Format a cache and a backing image in one call, then show both: same set
# uuid, the right kinds, checksums that match, no incompat feature on
# either (the retired draft bit is not set any more).
set -eu
. tests/tools/lib/common.bash

image a.img 100M
image b.img 200M
# Old data in the journal area must not survive the format.
dd if=/dev/urandom of=a.img bs=1M count=6 conv=notrunc status=none
run 0 "$MAKE_HCACHE" -C a.img -B b.img --label demo
cmp -s -n $((8 * 512 * 1024)) -i $((512 * 1024)) a.img /dev/zero ||
	fail "journal buckets 1-8 not zeroed"
cmp -s -n 4096 a.img /dev/zero || fail "first 4 KiB not zeroed"
out_has "a.img: cache device"
out_has "b.img: backing device"

set_a=$(field a.img cset_uuid)
set_b=$(field b.img cset_uuid)
[ "$set_a" = "$set_b" ] || fail "set uuids differ: $set_a vs $set_b"
[ "$set_a" != 00000000-0000-0000-0000-000000000000 ] || fail "nil set uuid"
grep -qF "cache set uuid:  $set_a" "$tmp/out" || fail "make-hcache printed another set uuid"
[ "$(field a.img dev_uuid)" != "$(field b.img dev_uuid)" ] ||
	fail "both devices have the same device uuid"

expect_field a.img kind cache
expect_field b.img kind backing
for img in a.img b.img; do
	expect_field $img csum_ok true
	expect_field $img valid true
	expect_field $img magic_ok true
	expect_field $img version 1
	expect_field $img label demo
	expect_field $img block_size 512
	expect_field $img sb_sector 8
done
expect_field a.img incompat 0x0000000000000000
expect_field b.img incompat 0x0000000000000000
# 100 MiB of 512 KiB buckets; the superblock takes bucket 0.
expect_field a.img bucket_size 524288
expect_field a.img nbuckets 200
expect_field a.img first_bucket 1
expect_field a.img journal_start 1
expect_field a.img journal_buckets 8
expect_field a.img replacement lru
expect_field a.img clean true
expect_field b.img data_offset 2048
expect_field b.img cache_mode writethrough
expect_field b.img state none

# The text form agrees, and says the checksum matches.
run 0 "$SUPER_SHOW" a.img
out_has "cset.uuid		$set_a"
grep -q '^sb.csum.*\[match\]$' "$tmp/out" || fail "text checksum not [match]"
out_has "sb.kind			1 [cache]"
out_has "sb.incompat		0x0000000000000000"
grep -q 'retired-draft' "$tmp/out" && fail "retired draft bit shown on a fresh cache"
run 0 "$SUPER_SHOW" b.img
out_has "sb.kind			2 [backing]"
out_has "valid			yes"

# The superblock is where the format says: magic "hcache-S" at byte 4096.
[ "$(dd if=a.img bs=1 skip=4096 count=8 status=none)" = hcache-S ] ||
	fail "magic not at byte 4096"
echo PASS
