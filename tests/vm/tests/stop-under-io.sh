# Stopping a device with I/O in flight on a slow backing device tears it
# down cleanly: the stop waits for the bios in flight, fio sees errors for
# what came after, nothing hangs or warns, and the device registers again.
# timeout: 180

dev=$(hc_nullb back 128 irqmode=2 completion_nsec=2000000)
"$(hc_tool make-hcache)" -B "$dev" >/dev/null
hc_load
for round in 1 2 3; do
	hc_write /sys/fs/hcache/register "$dev"
	hc_wait test -b /dev/hcache0
	fio --name=load --filename=/dev/hcache0 --rw=randrw --bs=4k \
		--iodepth=32 --ioengine=libaio --direct=1 --time_based \
		--runtime=30 --numjobs=2 >/tmp/fio.$round 2>&1 &
	fio=$!
	sleep 2
	hc_write /sys/block/hcache0/hcache/stop 1
	hc_wait test ! -e /dev/hcache0
	wait $fio || true
	hc_log "round $round: stopped under load; fio said: $(grep -o -m1 'err=[ 0-9]*[^,]*' /tmp/fio.$round || echo nothing)"
done
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
dd if=/dev/hcache0 of=/dev/null bs=1M count=8 iflag=direct status=none
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0
hc_unload
