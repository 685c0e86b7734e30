# A write that goes to the backing device alone over dirty data must not
# lose the dirty data if the machine dies before the new data is there.
#
# Boot 1 formats a cache device and a backing device (virtio disks, which
# keep what the guest wrote across the kill) and puts the backing device
# under dm-delay, writes delayed 4 s, so that a write to it sits in the
# guest, not on the disk, for that long. In writeback (writeback paused),
# 1 MiB of pattern D goes to hcache0 with O_DSYNC: acknowledged, dirty,
# and the raw backing device still holds zeros. Then cache_mode
# writearound and 1 MiB of pattern N with O_DSYNC over the same range, in
# the background: the write invalidates the cache's copy and goes to the
# backing device, where dm-delay holds it. One second later the guest is
# reset (sysrq-b). N was never acknowledged; D was.
#
# Boot 2 registers both devices (no dm-delay) and reads the range through
# hcache0: it must be D, or N had the write landed, never the zeros under
# D. (Before the fix, the write's FUA journalled the invalidation before
# the backing write was issued, and boot 2 read zeros.) Then writeback
# runs to clean and the raw backing device must hold what hcache0 says.
# timeout: 240
# drives: cache:64M backing:128M
# boots: 2

. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
W=/tmp/wb-bypass-crash
mkdir -p $W
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
IO_CDEV=$(hc_drive cache)
disk=$(hc_drive backing)
IO_CNAME=$(basename "$IO_CDEV")
# The same patterns on both boots: D and N from fixed seeds.
head -c $MiB <(openssl enc -aes-128-ctr -pass pass:dirty -nosalt -pbkdf2 </dev/zero 2>/dev/null) >$W/D
head -c $MiB <(openssl enc -aes-128-ctr -pass pass:newer -nosalt -pbkdf2 </dev/zero 2>/dev/null) >$W/N
[ "$(stat -c %s $W/D)" = $MiB ] && [ "$(stat -c %s $W/N)" = $MiB ] ||
	hc_fail "could not make the patterns (openssl)"

if [ "$HC_BOOT" = 1 ]; then
	"$(hc_tool make-hcache)" -C "$IO_CDEV" -B "$disk" --block 512 --bucket 128k >/dev/null ||
		hc_fail "make-hcache -C $IO_CDEV -B $disk failed"
	modprobe dm-delay || hc_fail "no dm-delay"
	dmsetup create --noudevsync hcdelay --table "0 $(hc_size "$disk") delay $disk 0 0 $disk 0 4000" ||
		hc_fail "dmsetup create hcdelay failed"
	# Its dm-N node (devtmpfs), the name hcache's sysfs files use.
	IO_BDEV=/dev/$(basename "$(readlink -f /sys/block/dm-*)")
	[ -b "$IO_BDEV" ] || hc_fail "no node for the dm-delay device"
else
	IO_BDEV=$disk
fi
IO_BDEVS=("$IO_BDEV")
IO_BNAME=$(basename "$(readlink -f "$IO_BDEV")")
IO_UUID=$("$(hc_tool hcache-super-show)" "$IO_CDEV" | awk '$1 == "cset.uuid" { print $2 }')
IO_OFFSET=$("$(hc_tool hcache-super-show)" "$IO_BDEV" | awk '$1 == "backing.data_offset" { print $2 }')
[ -n "$IO_UUID" ] && [ -n "$IO_OFFSET" ] || hc_fail "hcache-super-show: no set uuid or data offset"
IO_SET=/sys/fs/hcache/$IO_UUID
IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
io_register
dev=hcache0
sys=$(io_sysdir $dev)
base=$((4 * MiB))

if [ "$HC_BOOT" = 1 ]; then
	io_cutoff $dev 0
	wb_set $dev writeback_running 0
	io_mode $dev writeback
	dd if=$W/D of=/dev/$dev bs=64k seek=$((base / 65536)) oflag=direct,dsync status=none ||
		hc_fail "writing D failed"
	d=$(wb_dirty $dev)
	[ "$d" = $MiB ] || hc_fail "dirty_data $d after 1 MiB of writeback writes"
	io_get_raw $base $MiB $W/raw
	cmp -s $W/raw <(head -c $MiB /dev/zero) || hc_fail "the backing device changed with writeback paused"
	hc_log "D is dirty in the cache (dirty_data $d), zeros on the backing device"
	io_mode $dev writearound
	dd if=$W/N of=/dev/$dev bs=1M seek=$((base / MiB)) oflag=direct,dsync status=none &
	sleep 1
	hc_log "N is on its way to the backing device (held by dm-delay); resetting"
	touch "$HC_RESULTS/boot-$HC_BOOT.ok"
	sync "$HC_RESULTS/boot-$HC_BOOT.ok"
	echo b >/proc/sysrq-trigger
	sleep 30
	hc_fail "the reset did not happen"
fi

io_get /dev/$dev $base $MiB $W/got
if cmp -s $W/got $W/D; then
	hc_log "boot 2: hcache0 returns D, the acknowledged dirty data"
elif cmp -s $W/got $W/N; then
	hc_log "boot 2: hcache0 returns N, the write that was in flight"
elif cmp -s $W/got <(head -c $MiB /dev/zero); then
	hc_fail "boot 2: hcache0 returns the zeros under D: acknowledged dirty data was lost"
else
	hc_fail "boot 2: hcache0 returns neither D nor N: $(cmp $W/got $W/D | head -1)"
fi
io_check
io_mode $dev writeback
wb_set $dev writeback_percent 0
wb_set $dev writeback_running 1
wb_wait_clean $dev 60
io_get_raw $base $MiB $W/raw
cmp -s $W/raw $W/got || hc_fail "after writeback the raw backing device differs from what hcache0 returned"
hc_log "after writeback the raw backing device holds the same"
