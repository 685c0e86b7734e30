# The guest half of `make demo`: a slow disk and a fast one made into one
# cached device, /dev/hcache0, in writeback mode, with the hcache command
# showing what it does: reads of a hot set before and after the cache
# has warmed, beside both raw disks, random writes against the slow disk
# alone, the dirty data they leave, written back on demand, and the
# statistics.
# timeout: 420

slow=$(hc_nullb slow 512 irqmode=2 completion_nsec=2000000)
fast=$(hc_nullb fast 256 irqmode=2 completion_nsec=20000)
hc_log "slow disk $slow (2 ms per request), fast disk $fast (20 us per request)"
hcache=$(hc_tool hcache)

# fio_line DEV RW: 5 s of 4 KiB random I/O over a 64 MiB hot set.
fio_line() {
	fio --name=demo --filename="$1" --rw="$2" --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=4 --runtime=5 --time_based \
		--size=64m --randseed=7 --output-format=terse --terse-version=3 |
		awk -F';' -v rw="$2" '{
			if (rw == "randread") printf "%s IOPS, mean latency %.0f us\n", $8, $40
			else printf "%s IOPS, mean latency %.0f us\n", $49, $81 }'
}

hc_log "the raw disks first, 4 KiB random I/O over 64 MiB, 5 s each:"
hc_log "  reads,  the slow disk:    $(fio_line "$slow" randread)"
hc_log "  reads,  the fast disk:    $(fio_line "$fast" randread)"
hc_log "  writes, the slow disk:    $(fio_line "$slow" randwrite)"

hc_load
hc_log "hcache $(cat /sys/module/hcache/version) loaded on $(uname -r)"

hc_log "make-hcache -C $fast -B $slow --writeback --label demo"
"$(hc_tool make-hcache)" -C "$fast" -B "$slow" --writeback --label demo |
	sed 's/^/  /'
hc_log "hcache register $fast $slow"
"$hcache" register "$fast" "$slow" || hc_fail "hcache register failed"
attached() { [ "$(cat /sys/block/hcache0/hcache/cache_set_id 2>/dev/null)" -gt 0 ]; }
hc_wait attached
"$hcache" set /dev/hcache0 sequential_cutoff=0 || hc_fail "hcache set failed"
hc_log "hcache show"
"$hcache" show | sed 's/^/  /'

hc_log "the same on /dev/hcache0: reads cold, then warming as misses are cached:"
for pass in 1 2 3; do
	hc_log "  reads,  pass $pass:           $(fio_line /dev/hcache0 randread)"
done
hc_log "  writes, writeback mode:   $(fio_line /dev/hcache0 randwrite)"
hc_log "hcache show"
"$hcache" show | sed 's/^/  /'
hc_log "hcache flush /dev/hcache0 --wait: write back the dirty data now"
"$hcache" flush /dev/hcache0 --wait || hc_fail "hcache flush failed"
hc_log "hcache stats /dev/hcache0"
"$hcache" stats /dev/hcache0 | sed 's/^/  /'
hc_log "hcache show -o NAME,DEV,STATE,DATA,DIRTY,USED,HIT%"
"$hcache" show -o NAME,DEV,STATE,DATA,DIRTY,USED,HIT% | sed 's/^/  /'

hc_log "hcache stop $fast: the set, and /dev/hcache0 with it"
"$hcache" stop "$fast" || hc_fail "hcache stop failed"
no_set() { ! ls -d /sys/fs/hcache/*-*-*-*-* >/dev/null 2>&1; }
hc_wait test ! -e /dev/hcache0
hc_wait no_set
hc_unload
hc_log "stopped and unloaded cleanly"
