# Every kind of bad device is refused with its own errno and a log line
# naming the device and the reason, and nothing is oopsed or registered.
# timeout: 180
# expect-log: hcache: .*cannot register: .*
# expect-log: hcache: .*device too small
# expect-log: hcache: .*zoned devices cannot be
# expect-log: hcache: .*read-only features

sbedit="python3 $HC_ROOT/tests/vm/sbedit.py"
mk="$(hc_tool make-hcache)"
hc_load
reg=/sys/fs/hcache/register

hc_write_fails "No such file or directory" $reg /dev/does-not-exist

plain=$(hc_nullb plain 16)
hc_write_fails "Invalid argument" $reg "$plain"
hc_kmsg_has "cannot register: bad magic (not an hcache device)"
rc=0
"$(hc_tool hcache-register)" "$plain" 2>/tmp/reg.err || rc=$?
[ $rc = 3 ] || hc_fail "hcache-register on a plain device exited $rc: $(cat /tmp/reg.err)"

# A device that ends inside the superblock.
modprobe loop
truncate -s 6144 /tmp/truncated.img
loop=$(losetup -f --show /tmp/truncated.img)
hc_write_fails "No space left on device" $reg "$loop"
hc_kmsg_has "device too small to hold a superblock"
losetup -d "$loop"

dev=$(hc_nullb back 32)
$mk -B "$dev" >/dev/null
cp_sb() { dd if="$dev" of=/tmp/sb.saved bs=4096 skip=1 count=1 status=none; }
restore_sb() { dd if=/tmp/sb.saved of="$dev" bs=4096 seek=1 count=1 conv=fsync status=none; }
cp_sb

$sbedit "$dev" csum=bad
hc_write_fails "Bad message" $reg "$dev"
restore_sb
$sbedit "$dev" version=99
hc_write_fails "Operation not supported" $reg "$dev"
restore_sb
$sbedit "$dev" incompat=0x80
hc_write_fails "Operation not supported" $reg "$dev"
restore_sb
$sbedit "$dev" ro_compat=0x80
hc_write_fails "Operation not supported" $reg "$dev"
restore_sb
$sbedit "$dev" block_size=3000
hc_write_fails "Structure needs cleaning" $reg "$dev"
restore_sb
$sbedit "$dev" data_offset=$((64 * 2048))
hc_write_fails "No space left on device" $reg "$dev"
restore_sb

# A zoned device: make-hcache refuses it (exit 6), and the kernel refuses
# a valid superblock copied onto it.
zoned=$(hc_nullb zoned 64 zoned=1 zone_size=4)
rc=0
$mk -B "$zoned" 2>/tmp/mk.err || rc=$?
[ $rc = 6 ] || hc_fail "make-hcache on a zoned device exited $rc: $(cat /tmp/mk.err)"
grep -q -i zoned /tmp/mk.err || hc_fail "make-hcache did not say zoned: $(cat /tmp/mk.err)"
dd if="$dev" of="$zoned" bs=4096 count=2 oflag=direct status=none
hc_write_fails "Wrong medium type" $reg "$zoned"

# After all that, the good superblock still registers.
hc_write $reg "$dev"
hc_wait test -b /dev/hcache0
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0
hc_unload
