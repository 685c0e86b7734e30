#!/bin/bash
# Too small cache and backing devices are refused with exit 5 and a
# message that states the minimum size; exactly the minimum works.
set -eu
. tests/tools/lib/common.bash

# Default 512 KiB buckets: 137 buckets = 71827456 bytes (68.5 MiB).
image small.img 60M
run 5 "$MAKE_HCACHE" -C small.img
err_has "small.img: too small for a cache device"
err_has "minimum size with 512.0 KiB buckets is 71827456 bytes (68.5 MiB)"
[ "$(head -c 16384 small.img | tr -d '\0' | wc -c)" -eq 0 ] ||
	fail "refused device was written"

image min.img 71827456
run 0 "$MAKE_HCACHE" -C min.img
expect_field min.img nbuckets 137
expect_field min.img valid true
image min1.img $((71827456 - 512))
run 5 "$MAKE_HCACHE" -C min1.img

# 8 KiB buckets: 137 * 8 KiB = 1122304 bytes.
image tiny.img 1M
run 5 "$MAKE_HCACHE" -C tiny.img --bucket 8k
err_has "1122304 bytes"
image tiny2.img 1122304
run 0 "$MAKE_HCACHE" -C tiny2.img --bucket 8k
expect_field tiny2.img bucket_size 8192

# Backing: the data offset plus one block.
image b.img 1M
run 5 "$MAKE_HCACHE" -B b.img
err_has "b.img: too small for a backing device"
err_has "minimum is 1049088 bytes"
run 0 "$MAKE_HCACHE" -B b.img --data-offset 16
echo PASS
