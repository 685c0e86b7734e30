# The guest half of `make demo`: make a slow disk and a fast one, load
# hcache, and show what it offers so far. Grows with each issue that lands:
# formatting, registering and caching come with the on-disk format,
# registration and cache set work.
# timeout: 300

slow=$(hc_nullb slow 512 irqmode=2 completion_nsec=2000000)
fast=$(hc_nullb fast 256 irqmode=2 completion_nsec=20000)
hc_log "slow disk $slow (2 ms per request), fast disk $fast (20 us per request)"

hc_load
hc_log "hcache $(cat /sys/module/hcache/version) loaded on $(uname -r): /sys/fs/hcache holds: $(ls /sys/fs/hcache | tr '\n' ' ')"

for dev in "$slow" "$fast"; do
	hc_log "fio 4k random reads, 5 s, on $dev:"
	fio --name=demo --filename="$dev" --rw=randread --bs=4k --direct=1 \
		--ioengine=psync --runtime=5 --time_based --size=64m \
		--output-format=terse --terse-version=3 |
		awk -F';' '{ printf "  %s IOPS, mean latency %.0f us\n", $8, $40 }'
done

hc_unload
hc_log "hcache unloaded cleanly"
