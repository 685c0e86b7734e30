#!/bin/bash
# make-hcache options land in the superblock; bad values are refused.
set -eu
. tests/tools/lib/common.bash

image c.img 100M
image b1.img 50M
image b2.img 50M
uuid=6f1f8a52-93b1-4c4e-8d43-8e2cd5f0a7c1
run 0 "$MAKE_HCACHE" -C c.img -B b1.img b2.img --writeback --discard \
	--cache-replacement-policy fifo --label lbl --cset-uuid $uuid
for img in c.img b1.img b2.img; do
	expect_field $img cset_uuid $uuid
	expect_field $img label lbl
done
expect_field c.img replacement fifo
expect_field c.img discard true
expect_field b1.img cache_mode writeback
expect_field b2.img kind backing

# Backing devices formatted alone are detached; --cset-uuid joins a set.
image b3.img 50M
run 0 "$MAKE_HCACHE" -B b3.img
expect_field b3.img cset_uuid 00000000-0000-0000-0000-000000000000
expect_field b3.img cache_mode writethrough
run 0 "$MAKE_HCACHE" -B b3.img --wipe-hcache -u $uuid
expect_field b3.img cset_uuid $uuid

run 1 "$MAKE_HCACHE" -C c.img --cache-replacement-policy clock
err_has "bad replacement policy 'clock'"
run 1 "$MAKE_HCACHE" -C c.img --label 0123456789abcdef0123456789abcdef
err_has "longer than 31 bytes"
# The kernel's label file refuses these too (hc_label_check(), both
# places): a newline or another control character, and a '/', which
# would nest udev's /dev/hcache/by-label/ link.
run 1 "$MAKE_HCACHE" -C c.img --label "$(printf 'two\nlines')"
err_has "label holds a control character"
run 1 "$MAKE_HCACHE" -C c.img --label "$(printf 'tab\there')"
err_has "label holds a control character"
run 1 "$MAKE_HCACHE" -C c.img --label a/b
err_has "bad label 'a/b': label holds a '/'"
# UTF-8 is a label's to hold.
image u.img 50M
run 0 "$MAKE_HCACHE" -B u.img --label "données"
expect_field u.img label "données"
run 1 "$MAKE_HCACHE" -C c.img --cset-uuid nope
run 1 "$MAKE_HCACHE" -C c.img -C b1.img
err_has "only one cache device per cache set"
run 1 "$MAKE_HCACHE" -C c.img b1.img
err_has "only one cache device per cache set"
run 1 "$MAKE_HCACHE" stray.img
run 1 "$MAKE_HCACHE"
err_has "no device given"
run 2 "$MAKE_HCACHE" -B missing.img
err_has "missing.img: cannot open"
# The same file twice is busy (each device is locked exclusively).
image d.img 50M
run 4 "$MAKE_HCACHE" -B d.img d.img
err_has "busy"
run 6 "$MAKE_HCACHE" -B /dev/null
err_has "not a block device or regular file"
# A directory is unsupported too, not a device that failed to open.
mkdir dir
run 6 "$MAKE_HCACHE" -B dir
err_has "dir: not a block device or regular file (a directory)"
echo PASS
