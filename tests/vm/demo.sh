# The guest half of `make demo`: make a slow disk and a fast one, format
# the slow one as an hcache backing device, register it and run fio on
# /dev/hcache0 beside the raw disks. Grows with each issue that lands: the
# cache set (the fast disk as cache) and statistics come next.
# timeout: 300

slow=$(hc_nullb slow 512 irqmode=2 completion_nsec=2000000)
fast=$(hc_nullb fast 256 irqmode=2 completion_nsec=20000)
hc_log "slow disk $slow (2 ms per request), fast disk $fast (20 us per request)"

hc_load
hc_log "hcache $(cat /sys/module/hcache/version) loaded on $(uname -r)"

"$(hc_tool make-hcache)" -B "$slow" --label demo
hc_write /sys/fs/hcache/register "$slow"
hc_wait test -b /dev/hcache0
sys=/sys/block/hcache0/hcache
hc_log "/dev/hcache0: label '$(cat $sys/label)', state $(cat $sys/state), backing $(cat $sys/backing_dev_name), cache mode $(cat $sys/cache_mode)"

for dev in "$slow" "$fast" /dev/hcache0; do
	hc_log "fio 4k random reads, 5 s, on $dev:"
	fio --name=demo --filename="$dev" --rw=randread --bs=4k --direct=1 \
		--ioengine=psync --runtime=5 --time_based --size=64m \
		--output-format=terse --terse-version=3 |
		awk -F';' '{ printf "  %s IOPS, mean latency %.0f us\n", $8, $40 }'
done
hc_log "no cache set yet: /dev/hcache0 passes I/O through to $slow"
hc_log "/sys/block/hcache0/stat: $(cat /sys/block/hcache0/stat | tr -s ' ')"

hc_write $sys/stop 1
hc_wait test ! -e /dev/hcache0
hc_unload
hc_log "stopped and unloaded cleanly"
