#!/bin/bash
# An existing hcache superblock is refused without --wipe-hcache; with it
# (or --force) the device is formatted afresh.
set -eu
. tests/tools/lib/common.bash

image c.img 80M
run 0 "$MAKE_HCACHE" -C c.img
old=$(field c.img dev_uuid)

run 3 "$MAKE_HCACHE" -C c.img
err_has "c.img: already holds an hcache superblock"
err_has "--wipe-hcache"
run 3 "$MAKE_HCACHE" -B c.img
[ "$(field c.img dev_uuid)" = "$old" ] || fail "refused format changed it"
expect_field c.img kind cache

run 0 "$MAKE_HCACHE" -B c.img --wipe-hcache
new=$(field c.img dev_uuid)
[ "$new" != "$old" ] || fail "--wipe-hcache kept the old device uuid"
expect_field c.img kind backing
expect_field c.img valid true

run 0 "$MAKE_HCACHE" -C c.img --force
expect_field c.img kind cache

# A bcache superblock counts too: its magic at byte 4096 + 24 and its
# own sector (8) at 4096 + 8. The crc64 is left wrong: a damaged signature
# is still refused.
image bc.img 80M
printf '\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81' |
	dd of=bc.img bs=1 seek=$((4096 + 24)) conv=notrunc status=none
printf '\x08' | dd of=bc.img bs=1 seek=$((4096 + 8)) conv=notrunc status=none
run 3 "$MAKE_HCACHE" -C bc.img
err_has "bc.img: already holds a bcache superblock"
err_has "--wipe-hcache"
run 0 "$MAKE_HCACHE" -C bc.img --wipe-hcache
[ "$(od -An -tx1 -j $((4096 + 24)) -N 2 bc.img | tr -d ' ')" != c685 ] ||
	fail "bcache magic survived --wipe-hcache"
expect_field bc.img kind cache
echo PASS
