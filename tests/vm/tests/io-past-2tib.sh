# Sectors past 32 bits, on both devices: a 4 TiB cache device in front of
# a 64 TiB backing device (qcow2 images: only what is written takes host
# space), formatted at the default bucket size. 2 TiB is 2^32 sectors of
# 512 bytes, so any sector, bucket or size that passes through 32 bits
# anywhere (the keys, the pointers, the bucket arithmetic, the backing
# device's offset, bio sectors) wraps and lands the data on the wrong
# place, which the comparisons below see.
#
# In writeback, with writeback paused and the debug build's alloc_cursor
# sending new data to buckets past 2 TiB of the cache device:
#  1. three files of random bytes are written through hcache0 in pieces of
#     4 to 64 KiB in random order, at 17 TiB, 41 TiB and the last 8 MiB of
#     the 64 TiB device; a fourth is written to the backing device itself
#     at 50 TiB and read through hcache0 twice (promoted, then hit);
#  2. every key must point past 2 TiB of the cache device, and all four
#     read back right through hcache0, from the cache (no miss counted);
#  3. after a clean stop and a new registration they read back right again
#     (the keys' sectors and pointers persisted whole);
#  4. writeback then empties the cache of dirty data, and the backing
#     device itself must hold the three files at their offsets (its data
#     offset added).
# Logs make-hcache's and registration's time and the set's memory
# (vmalloc, slab and whole pages) for a cache of this size, which must
# be at most 0.01% of the cache's size (the scale issue's bar).
# drives: cache:4T:qcow2 back:64T:qcow2
# timeout: 420

. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
TiB=$((1 << 40))
W=$(mktemp -d /tmp/past-2tib.XXXXXX)

read -r vm0 slab0 < <(io_meminfo)
pages0=$(io_mem_pages)
io_setup_on "$(hc_drive cache)" "$(hc_drive back)"
read -r vm1 slab1 < <(io_meminfo)
pages1=$(io_mem_pages)
hc_log "set $IO_UUID: $(cat "$IO_SET/nbuckets") buckets of $(cat "$IO_SET/bucket_size") on $IO_CDEV ($(($(hc_size "$IO_CDEV") / 2048 / 1024 / 1024)) TiB), backing $IO_BDEV ($(($(hc_size "$IO_BDEV") / 2048 / 1024 / 1024)) TiB, data at sector $IO_OFFSET); make-hcache ${IO_MKFS_SECS} s, registration ${IO_REG_SECS} s; vmalloc +$(((vm1 - vm0) / 1024)) MiB, slab +$(((slab1 - slab0) / 1024)) MiB, other pages +$(((pages1 - pages0) / 1024)) MiB (both devices registered)"
# The scale issue's bar: a registered set holds at most 0.01% of its
# cache's size, the node cache aside (few nodes are read here).
held=$((vm1 - vm0 + slab1 - slab0 + pages1 - pages0))
bar=$(($(hc_size "$IO_CDEV") / 2 / 10000))
[ "$held" -le "$bar" ] ||
	hc_fail "the set holds $((held / 1024)) MiB of vmalloc, slab and pages, over 0.01% of its cache ($((bar / 1024)) MiB)"

dev=hcache0
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev admission_policy first_access
wb_set $dev writeback_running 0

# The first bucket whose first sector is past 2^32.
bsize=$(io_read_num "$IO_SET/bucket_size")
past=$(((TiB * 2 + bsize - 1) / bsize + 1))
hc_write "$IO_DBG/alloc_cursor" "$past"

size=$(($(hc_size /dev/$dev) * 512))
offsets=($((17 * TiB)) $((41 * TiB)) $((size - 8 * MiB)))
names=(at-17t at-41t at-end)
for i in 0 1 2; do
	head -c $((8 * MiB)) /dev/urandom >"$W/${names[$i]}"
	wb_scatter "$W/${names[$i]}" /dev/$dev "${offsets[$i]}" 4096 65536 "$i"
done
head -c $((8 * MiB)) /dev/urandom >"$W/at-50t"
io_put "$W/at-50t" "$IO_BDEV" $((IO_OFFSET * 512 + 50 * TiB))
io_get /dev/$dev $((50 * TiB)) $((8 * MiB)) "$W/got"
wb_same "8 MiB at 50 TiB, written to the backing device, read through hcache0 (promoted)" \
	"$W/got" "$W/at-50t" $((50 * TiB))
hc_log "written: 3 x 8 MiB through hcache0 at 17 TiB, 41 TiB and the end; 8 MiB promoted from 50 TiB; dirty $(wb_dirty $dev) bytes"

# Every key is past 2 TiB on both devices.
cat "$IO_DBG/keys" >"$W/keys"
awk -v low=$((1 << 32)) '
	{ split($1, r, "[:-]"); sub("@", "", $2) }
	r[2] < low || $2 < low { bad++; if (bad <= 3) print "  " $0 }
	{ n++ }
	END { printf "%d keys, %d below sector 2^32\n", n, bad; exit bad > 0 || n == 0 }
' "$W/keys" >"$W/keys.sum" || hc_fail "keys not past 2 TiB on both devices: $(cat "$W/keys.sum")"
hc_log "keys: $(tail -1 "$W/keys.sum"), e.g. $(head -1 "$W/keys")"

# read_all WHEN: the four files read back through hcache0, from the cache.
read_all() {
	local i hits0 misses0
	hits0=$(io_stat $dev cache_hits)
	misses0=$(io_stat $dev cache_misses)
	for i in 0 1 2; do
		io_get /dev/$dev "${offsets[$i]}" $((8 * MiB)) "$W/got"
		wb_same "${names[$i]} through hcache0 ($1)" "$W/got" "$W/${names[$i]}" "${offsets[$i]}"
	done
	io_get /dev/$dev $((50 * TiB)) $((8 * MiB)) "$W/got"
	wb_same "at-50t through hcache0 ($1)" "$W/got" "$W/at-50t" $((50 * TiB))
	io_stat_is $dev cache_misses "$misses0" && io_stat_ge $dev cache_hits $((hits0 + 32)) ||
		hc_fail "$1: the reads were not all hits: $(io_stats_line $dev)"
}
read_all "from the cache"
hc_log "all four read back right from the cache: $(io_stats_line $dev)"

io_restart
hc_log "registered again after a clean stop in ${IO_REG_SECS} s"
io_mode_is $dev writeback || hc_fail "cache_mode after the restart: $(cat "$(io_sysdir $dev)/cache_mode")"
read_all "after a clean stop and a new registration"
hc_log "all four read back right after the restart"

wb_set $dev writeback_percent 0
wb_set $dev writeback_running 1
wb_wait_clean $dev 180
for i in 0 1 2; do
	io_get "$IO_BDEV" $((IO_OFFSET * 512 + offsets[i])) $((8 * MiB)) "$W/got"
	wb_same "${names[$i]} on the backing device after writeback" "$W/got" "$W/${names[$i]}" "${offsets[$i]}"
done
hc_log "writeback took ${WB_SECS} s; the backing device holds all three at their offsets"
io_teardown
