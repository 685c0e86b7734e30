#!/bin/bash
# Other signatures libblkid knows are refused by name (xfs, swap, a dos
# partition table) and erased by --force.
set -eu
. tests/tools/lib/common.bash

image x.img 300M
mkfs.xfs -q -f x.img
image sw.img 64M
mkswap -q sw.img
image pt.img 64M
python3 - <<'EOT'
import struct
with open("pt.img", "r+b") as f:
    f.seek(446)
    f.write(struct.pack("<B3sB3sII", 0, b"\0\2\0", 0x83, b"\0\0\0", 2048, 4096))
    f.seek(510)
    f.write(b"\x55\xaa")
EOT
[ "$(blkid -p -o value -s PTTYPE pt.img)" = dos ] || fail "dos table not made"

check() {
	local img=$1 what=$2
	run 3 "$MAKE_HCACHE" -B "$img"
	err_has "$img: contains an existing $what; use --force"
	run 3 "$MAKE_HCACHE" -B "$img" --wipe-hcache
	run 0 "$MAKE_HCACHE" -B "$img" --force
	expect_field "$img" valid true
	[ -z "$(blkid -p -o value -s TYPE "$img"; blkid -p -o value -s PTTYPE "$img")" ] ||
		fail "$img: a signature survived --force"
}
check x.img "xfs filesystem"
check sw.img "swap signature"
check pt.img "dos partition table"
echo PASS
