#!/bin/bash
# --data-offset: below 16 sectors refused, 16 accepted, default 1 MiB.
set -eu
. tests/tools/lib/common.bash

image b.img 64M
for bad in 15 0 -1 12x; do
	run 1 "$MAKE_HCACHE" -B b.img --data-offset "$bad"
	err_has "bad data offset '$bad'"
done
run 1 "$MAKE_HCACHE" -B b.img --data-offset 15
err_has "must be at least 16 sectors"

run 0 "$MAKE_HCACHE" -B b.img
expect_field b.img data_offset 2048
run 0 "$MAKE_HCACHE" -B b.img --wipe-hcache --data-offset 16
expect_field b.img data_offset 16
run 0 "$MAKE_HCACHE" -B b.img --wipe-hcache -o 4096
expect_field b.img data_offset 4096
echo PASS
