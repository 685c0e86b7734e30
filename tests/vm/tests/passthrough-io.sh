# With no cache set, /dev/hcache0 is the backing device shifted by its data
# offset: fio with verification passes, the data lands at the data offset,
# ext4 survives a remount, partitions work, discard and write-zeroes pass
# down, and I/O shows in /sys/block/hcache0/stat.
# timeout: 600

# cache_size: the backing device has a volatile cache, so flushes reach it.
dev=$(hc_nullb back 256 discard=1 cache_size=16)
"$(hc_tool make-hcache)" -B "$dev" >/dev/null
offset=$("$(hc_tool hcache-super-show)" "$dev" | awk '$1 == "backing.data_offset" { print $2 }')
hc_load
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0

[ "$(cat /sys/block/hcache0/queue/write_cache)" = "write back" ] ||
	hc_fail "no volatile write cache advertised: $(cat /sys/block/hcache0/queue/write_cache)"
[ "$(cat /sys/block/hcache0/queue/fua)" = 1 ] || hc_fail "FUA not advertised"
[ "$(cat /sys/block/hcache0/queue/logical_block_size)" = \
  "$(cat /sys/block/"$(basename "$dev")"/queue/logical_block_size)" ] ||
	hc_fail "logical block size not stacked"
[ "$(cat /sys/block/hcache0/queue/discard_max_bytes)" != 0 ] ||
	hc_fail "discard not stacked"

hc_log "fio randwrite + verify, 4k-1M, iodepth 16"
fio --name=verify --filename=/dev/hcache0 --rw=randwrite --bsrange=4k-1M \
	--iodepth=16 --ioengine=libaio --direct=1 --size=128m --verify=crc32c \
	--verify_fatal=1 --randseed=42 --output-format=terse >/tmp/fio.out ||
	hc_fail "fio verification failed: $(cat /tmp/fio.out)"
reads=$(awk '{ print $1 }' /sys/block/hcache0/stat)
writes=$(awk '{ print $5 }' /sys/block/hcache0/stat)
[ "$reads" -gt 0 ] && [ "$writes" -gt 0 ] ||
	hc_fail "I/O not accounted in /sys/block/hcache0/stat: $(cat /sys/block/hcache0/stat)"
hc_log "accounted: $reads reads, $writes writes"

hc_log "the data is at the data offset of the backing device"
printf 'hcache-marker-%s' "$(date +%s%N)" >/tmp/marker
dd if=/tmp/marker of=/dev/hcache0 bs=4096 seek=10 conv=sync,fsync oflag=direct status=none
cmp -n "$(stat -c %s /tmp/marker)" /tmp/marker \
	<(dd if="$dev" bs=512 skip=$((offset + 80)) count=8 iflag=direct status=none) ||
	hc_fail "block 10 of hcache0 is not at sector $offset + 80 of $dev"

hc_log "flushes pass down"
stat=/sys/block/$(basename "$dev")/stat
before=$(awk '{ print $16 }' "$stat")
dd if=/dev/zero of=/dev/hcache0 bs=4k count=1 oflag=direct conv=fsync status=none
after=$(awk '{ print $16 }' "$stat")
[ "$after" -gt "$before" ] || hc_fail "an fsync on hcache0 sent no flush to $dev"

hc_log "write-zeroes and discard pass down"
blkdiscard -z -o $((10 * 4096)) -l 4096 /dev/hcache0
[ "$(dd if="$dev" bs=512 skip=$((offset + 80)) count=8 iflag=direct status=none | tr -d '\0' | wc -c)" = 0 ] ||
	hc_fail "write-zeroes did not zero the backing device"
before=$(awk '{ print $12 }' "$stat")
blkdiscard -o 0 -l $((16 << 20)) /dev/hcache0
after=$(awk '{ print $12 }' "$stat")
[ "$after" -gt "$before" ] || hc_fail "discard did not reach the backing device"

hc_log "partitions"
printf 'label: gpt\n,64M\n,\n' | sfdisk -q /dev/hcache0
hc_wait test -b /dev/hcache0p2
mkfs.ext4 -q -F /dev/hcache0p1
mkdir -p /mnt/p1
mount /dev/hcache0p1 /mnt/p1
head -c 20M /dev/urandom >/mnt/p1/data
sum=$(md5sum </mnt/p1/data)
sync -f /mnt/p1/data
umount /mnt/p1
echo 3 >/proc/sys/vm/drop_caches
mount /dev/hcache0p1 /mnt/p1
[ "$(md5sum </mnt/p1/data)" = "$sum" ] || hc_fail "ext4 data changed across remount"
umount /mnt/p1

hc_log "ext4 on the whole disk"
wipefs -q -a /dev/hcache0
mkfs.ext4 -q -F /dev/hcache0
mount /dev/hcache0 /mnt/p1
head -c 30M /dev/urandom >/mnt/p1/data
sum=$(md5sum </mnt/p1/data)
sync -f /mnt/p1/data
umount /mnt/p1
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
mount /dev/hcache0 /mnt/p1
[ "$(md5sum </mnt/p1/data)" = "$sum" ] || hc_fail "ext4 data changed across stop and register"
umount /mnt/p1
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0
hc_unload
