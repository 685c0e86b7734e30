#!/bin/bash
# A backing device whose superblock says dirty (its cache holds data newer
# than the device) is refused by --wipe-hcache and by --force, naming the
# set and the state, unless --discard-dirty-data is given too; a clean
# one is overwritten as before.
set -eu
. tests/tools/lib/common.bash

set_uuid=0f0e0d0c-0b0a-4908-8706-050403020100
image b.img 80M
run 0 "$MAKE_HCACHE" -B b.img -u $set_uuid
old=$(field b.img dev_uuid)
# Backing flags: mode in bits 0-3, state in bits 4-5 (2: dirty).
python3 "$top/tests/vm/sbedit.py" b.img flags=$((2 << 4)) >/dev/null

for opt in --wipe-hcache --force; do
	run 3 "$MAKE_HCACHE" -B b.img $opt
	err_has "b.img: its superblock says dirty: cache set $set_uuid holds data newer than the device"
	err_has "--discard-dirty-data"
	run 3 "$MAKE_HCACHE" -C b.img $opt
	[ "$(field b.img dev_uuid)" = "$old" ] || fail "a refused $opt changed the superblock"
done
run 1 "$MAKE_HCACHE" -B b.img --discard-dirty-data --no-such-option
run 3 "$MAKE_HCACHE" -B b.img --discard-dirty-data
err_has "already holds an hcache superblock"
run 0 "$MAKE_HCACHE" -B b.img --wipe-hcache --discard-dirty-data
err_has "b.img: discarding the dirty data cache set $set_uuid holds for it"
[ "$(field b.img dev_uuid)" != "$old" ] || fail "--discard-dirty-data did not format"

# Clean: overwritten with --wipe-hcache alone, as before.
python3 "$top/tests/vm/sbedit.py" b.img flags=$((1 << 4)) >/dev/null
run 0 "$MAKE_HCACHE" -B b.img --wipe-hcache
echo PASS
