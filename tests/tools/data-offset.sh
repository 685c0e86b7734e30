#!/bin/bash
# --data-offset: below 16 sectors refused, 16 accepted, default 1 MiB;
# one past the device's end refused, however large.
set -eu
. tests/tools/lib/common.bash

image b.img 64M
for bad in 15 0 -1 12x; do
	run 1 "$MAKE_HCACHE" -B b.img --data-offset "$bad"
	err_has "bad data offset '$bad'"
done
run 1 "$MAKE_HCACHE" -B b.img --data-offset 15
err_has "must be at least 16 sectors"

# Past the end of the device, also where the offset in bytes would wrap
# around 2^64 (2^55 sectors wrapped to 0, and make-hcache exited 0).
run 5 "$MAKE_HCACHE" -B b.img -o 131072
err_has "b.img: too small for a backing device: 67108864 bytes; the minimum is 67109376 bytes"
for huge in 18446744073709551615 36028797018963968 36028797018963976; do
	run 5 "$MAKE_HCACHE" -B b.img -o "$huge"
	err_has "b.img: data offset $huge sectors lies past the end of any device"
done
run 0 "$PROBE" b.img
[ -s "$tmp/out" ] && fail "a refused format left a superblock on b.img"

run 0 "$MAKE_HCACHE" -B b.img
expect_field b.img data_offset 2048
run 0 "$MAKE_HCACHE" -B b.img --wipe-hcache --data-offset 16
expect_field b.img data_offset 16
run 0 "$MAKE_HCACHE" -B b.img --wipe-hcache -o 4096
expect_field b.img data_offset 4096
echo PASS
