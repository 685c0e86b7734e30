#!/bin/bash
# On real block devices (loop, 4096-byte sectors): the default block size
# follows the logical block size, a smaller --block is refused, and a
# mounted device is busy (exit 4) even with --force. Skips (exit 0) where
# loop devices or mounting are not available.
set -eu
. tests/tools/lib/common.bash

loop=
mnt=$tmp/mnt
cleanup() {
	mountpoint -q "$mnt" 2>/dev/null && umount "$mnt"
	[ -n "$loop" ] && losetup -d "$loop"
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$(id -u)" -ne 0 ] || ! command -v losetup >/dev/null; then
	echo "skip: needs root and losetup"
	exit 0
fi
image l.img 100M
if ! loop=$(losetup -f --show --sector-size 4096 l.img 2>/dev/null); then
	loop=
	echo "skip: cannot set up a loop device"
	exit 0
fi
[ "$(blockdev --getss "$loop")" = 4096 ] || fail "loop sector size"

run 1 "$MAKE_HCACHE" -C "$loop" --block 512
err_has "below the device's logical block size 4096"
run 0 "$MAKE_HCACHE" -C "$loop"
expect_field "$loop" block_size 4096
expect_field "$loop" kind cache
run 0 "$PROBE" -o udev "$loop"
out_has "ID_FS_TYPE=hcache"

mkfs.ext4 -q -F "$loop"
mkdir "$mnt"
if ! mount "$loop" "$mnt" 2>/dev/null; then
	echo "skip: cannot mount here; the rest needs a mount"
	echo PASS
	exit 0
fi
run 4 "$MAKE_HCACHE" -B "$loop" --force
err_has "$loop: device is busy"
umount "$mnt"
run 0 "$MAKE_HCACHE" -B "$loop" --force
expect_field "$loop" kind backing
expect_field "$loop" block_size 4096
echo PASS
