#!/bin/bash
# make-hcache refuses a file holding ext4, names ext4, leaves it intact;
# --force formats it and the ext4 signature is gone.
set -eu
. tests/tools/lib/common.bash

image fs.img 64M
mkfs.ext4 -q -F fs.img
sum_before=$(head -c 8M fs.img | sha256sum)

for opt in -B -C; do
	run 3 "$MAKE_HCACHE" $opt fs.img
	err_has "fs.img"
	err_has "ext4"
	err_has "--force"
done
# Refused along with a good device: the good one is not touched either.
image ok.img 100M
run 3 "$MAKE_HCACHE" -C ok.img -B fs.img
[ "$(head -c 8192 ok.img | tr -d '\0' | wc -c)" -eq 0 ] ||
	fail "ok.img was written although fs.img was refused"

[ "$(head -c 8M fs.img | sha256sum)" = "$sum_before" ] ||
	fail "ext4 image changed"
dumpe2fs -h fs.img >/dev/null 2>&1 || fail "ext4 superblock damaged"
[ "$(blkid -p -o value -s TYPE fs.img)" = ext4 ] || fail "blkid lost ext4"
echo "ok: ext4 intact"

run 0 "$MAKE_HCACHE" -B fs.img --force
expect_field fs.img kind backing
expect_field fs.img valid true
if blkid -p -o value -s TYPE fs.img | grep -q ext4; then
	fail "ext4 signature still there after --force"
fi
if dumpe2fs -h fs.img >/dev/null 2>&1; then
	fail "dumpe2fs still finds ext4 after --force"
fi
echo PASS
