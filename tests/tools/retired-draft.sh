#!/bin/bash
# A cache formatted by a development version of hcache (incompat bit 0, the
# retired draft cache-set format) is refused with a message that says to
# reformat it; hcache-super-show names the bit; probe-hcache does not claim
# the device; make-hcache reformats it with --wipe-hcache.
set -eu
. tests/tools/lib/common.bash

msg="formatted by a development version of hcache (draft cache-set format); reformat it with make-hcache"

image c.img 100M
run 0 "$MAKE_HCACHE" -C c.img
expect_field c.img incompat 0x0000000000000000

# Set incompat bit 0 (byte 4096 + 32) as the draft tools did, then store
# the checksum hcache-super-show expects, so only the bit is wrong.
printf '\x01' | dd of=c.img bs=1 seek=$((4096 + 32)) conv=notrunc status=none
csum=$(field c.img csum_expected)
python3 - c.img "$csum" <<'EOT'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(4096 + 8)
    f.write(struct.pack("<I", int(sys.argv[2], 16)))
EOT
expect_field c.img csum_ok true
expect_field c.img incompat 0x0000000000000001
expect_field c.img valid false
expect_field c.img error "$msg"

run 4 "$SUPER_SHOW" c.img
err_has "c.img: invalid hcache superblock: $msg"
run 4 "$SUPER_SHOW" -f c.img
out_has "sb.incompat		0x0000000000000001 [retired-draft]"
out_has "valid			$msg"

# Not a usable hcache device: probe-hcache prints nothing.
run 0 "$PROBE" -o udev c.img
[ ! -s "$tmp/out" ] || fail "probe-hcache claimed a draft-format cache"

# Still an hcache superblock: refused without --wipe-hcache.
run 3 "$MAKE_HCACHE" -C c.img
err_has "c.img: already holds an hcache superblock"
run 0 "$MAKE_HCACHE" -C c.img --wipe-hcache
expect_field c.img valid true
expect_field c.img incompat 0x0000000000000000
echo PASS
