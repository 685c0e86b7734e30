#!/bin/bash
# hcache wipe removes hcache's superblock from an image; it refuses,
# leaving the superblock as it was, a backing device whose superblock says
# dirty, a cache device (which may hold the only copy of dirty data) and
# an invalid superblock, unless --discard-dirty-data is given; a clean
# backing device goes with no flag; something that is not hcache's exits 2.
set -eu
. tests/tools/lib/common.bash

set_uuid=0f0e0d0c-0b0a-4908-8706-050403020100
image b.img 80M
run 0 "$MAKE_HCACHE" -B b.img -u $set_uuid
python3 "$top/tests/vm/sbedit.py" b.img flags=$((2 << 4)) >/dev/null
run 4 "$HCACHE" wipe b.img
err_has "b.img: its superblock says dirty: cache set $set_uuid holds data newer than the device"
err_has "--discard-dirty-data"
expect_field b.img valid true
run 0 "$HCACHE" wipe b.img --discard-dirty-data
err_has "discarding any dirty data of cache set $set_uuid"
run 3 "$SUPER_SHOW" b.img
run 2 "$HCACHE" wipe b.img
err_has "b.img: holds no hcache superblock"

run 0 "$MAKE_HCACHE" -B b.img -u $set_uuid
python3 "$top/tests/vm/sbedit.py" b.img flags=$((1 << 4)) >/dev/null
run 0 "$HCACHE" wipe b.img
run 3 "$SUPER_SHOW" b.img

image c.img 80M
run 0 "$MAKE_HCACHE" -C c.img
run 4 "$HCACHE" wipe c.img
err_has "may hold its backing devices' only copy of dirty data"
expect_field c.img kind cache
run 0 "$HCACHE" wipe --discard-dirty-data c.img

run 0 "$MAKE_HCACHE" -B b.img
python3 "$top/tests/vm/sbedit.py" b.img csum=bad kind=2 >/dev/null
run 4 "$HCACHE" wipe b.img
err_has "its hcache superblock is invalid"
run 0 "$HCACHE" wipe b.img --discard-dirty-data
run 2 "$HCACHE" wipe no-such.img
run 1 "$HCACHE" wipe
echo PASS
