#!/bin/bash
# hcache-super-show --json is valid JSON for cache, backing and (with -f)
# invalid superblocks, and its exit codes say which case it is.
set -eu
. tests/tools/lib/common.bash

image c.img 100M
image b.img 100M
run 0 "$MAKE_HCACHE" -C c.img -B b.img --label 'q"uote\'
for img in c.img b.img; do
	run 0 "$SUPER_SHOW" --json $img
	python3 -m json.tool "$tmp/out" >/dev/null || fail "$img: bad JSON"
done
expect_field c.img label 'q"uote\'

# No superblock: exit 3; with -f the JSON still parses.
image zero.img 1M
run 3 "$SUPER_SHOW" --json zero.img
err_has "zero.img: no hcache superblock"
[ ! -s "$tmp/out" ] || fail "printed without -f"
run 3 "$SUPER_SHOW" -f --json zero.img
python3 -m json.tool "$tmp/out" >/dev/null || fail "zero.img: bad JSON"
expect_field zero.img magic_ok false

# Corrupt checksum: exit 4, the error and the expected checksum shown.
cp c.img bad.img
printf 'X' | dd of=bad.img bs=1 seek=6000 conv=notrunc status=none
run 4 "$SUPER_SHOW" bad.img
err_has "bad.img: invalid hcache superblock: checksum mismatch"
run 4 "$SUPER_SHOW" -f bad.img
grep -q '^sb.csum.*\[BAD\]$' "$tmp/out" || fail "checksum not shown BAD"
out_has "sb.csum_expected"
run 4 "$SUPER_SHOW" -f --json bad.img
python3 -m json.tool "$tmp/out" >/dev/null || fail "bad.img: bad JSON"
expect_field bad.img csum_ok false
expect_field bad.img error "checksum mismatch"
expect_field bad.img valid false

image tiny.img 100
run 3 "$SUPER_SHOW" tiny.img
err_has "tiny.img: no hcache superblock (smaller than 8192 bytes)"
run 2 "$SUPER_SHOW" missing.img
run 1 "$SUPER_SHOW" c.img b.img
echo PASS
