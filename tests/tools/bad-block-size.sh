#!/bin/bash
# Block and bucket sizes outside the format's rules are refused (exit 1)
# with a message saying which rule; valid ones land in the superblock.
set -eu
. tests/tools/lib/common.bash

image c.img 200M
image b.img 100M
for bad in 8192 1000 256 0 abc 4k2; do
	run 1 "$MAKE_HCACHE" -C c.img --block "$bad"
	err_has "bad block size '$bad'"
done
run 1 "$MAKE_HCACHE" -B b.img --block 8k
err_has "must be between 512 and 4096 bytes"
run 1 "$MAKE_HCACHE" -B b.img --block 1536
err_has "not a power of two"

for bad in 4k 256M 100k x; do
	run 1 "$MAKE_HCACHE" -C c.img --bucket "$bad"
	err_has "bad bucket size '$bad'"
done

# Nothing was written by any of those.
for img in c.img b.img; do
	[ "$(head -c 8192 $img | tr -d '\0' | wc -c)" -eq 0 ] ||
		fail "a refused run wrote to $img"
done

run 0 "$MAKE_HCACHE" -C c.img -B b.img --block 4k --bucket 1M
expect_field c.img block_size 4096
expect_field b.img block_size 4096
expect_field c.img bucket_size 1048576
expect_field c.img nbuckets 200

# The data offset must be whole blocks.
run 1 "$MAKE_HCACHE" -B b.img --wipe-hcache --block 4096 --data-offset 20
err_has "not a multiple of the block size"
echo PASS
