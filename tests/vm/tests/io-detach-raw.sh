# What hcache0 says it wrote in writethrough (and writearound, none) is on
# the backing device itself, at its data offset, before and after a
# detach. Writes of many sizes and 512-byte offsets (single sectors,
# 37-sector pieces, pieces across 1 MiB, 3 MiB in one write), some over
# cached data, some overlapping earlier ones, are mirrored in an image
# file; the first 40 MiB of hcache0 and of the raw backing device (read
# at the data offset from hcache-super-show) must equal that image, byte
# for byte, through the cache, before the detach and after it.
# timeout: 180

. "$HC_ROOT/tests/vm/io-lib.sh"

io_setup 128 256
dev=hcache0
sys=$(io_sysdir $dev)
region=$((40 << 20))
io_pattern /tmp/pat 8
truncate -s $region /tmp/expect
hc_log "data offset $IO_OFFSET sectors"

# put SECTOR COUNT SRC_SECTOR: write COUNT sectors of the pattern, from
# SRC_SECTOR on, to hcache0 at SECTOR, in one direct write; mirror it.
put() {
	dd if=/tmp/pat bs=512 skip="$3" count="$2" status=none >/tmp/piece
	io_put /tmp/piece /dev/$dev $(($1 * 512))
	dd if=/tmp/piece of=/tmp/expect bs=512 seek="$1" conv=notrunc status=none
}

# same WHEN: hcache0 and the raw backing device both hold the image.
same() {
	io_get /dev/$dev 0 $region /tmp/got
	cmp /tmp/got /tmp/expect || hc_fail "$1: hcache0 differs from what was written: $(cmp /tmp/got /tmp/expect 2>&1 | head -1)"
	io_get_raw 0 $region /tmp/raw
	cmp /tmp/raw /tmp/expect || hc_fail "$1: the backing device at sector $IO_OFFSET differs from what was written: $(cmp /tmp/raw /tmp/expect 2>&1 | head -1)"
	hc_log "$1: hcache0 and the backing device hold what was written"
}

hc_log "writethrough, cold"
put 0 8 0
put 7 37 100
put 1000 1 200
put 2040 20 300
put 4096 6144 1000
put 30001 255 7001
same "after cold writes"
# Everything is now cached (read twice); overwrite inside cached extents.
io_get /dev/$dev 0 $region /tmp/got
put 4500 100 9000
put 5000 2048 9200
put 2047 2 12000
put 0 1 12100
put 78000 2048 13000
same "after overwriting cached data"

hc_log "writearound and none write the backing device too"
io_mode $dev writearound
put 4200 33 14000
put 10000 3 14100
io_mode $dev none
put 4800 600 14200
put 6 1 15000
io_mode $dev writethrough
same "after writearound and none"
io_check

hc_log "detach"
detached() {
	[ "$(cat "$sys/cache_set_id")" = 0 ]
}
hc_write "$sys/detach" 1
hc_wait detached
[ "$(cat "$sys/state")" = none ] || hc_fail "state after detach: $(cat "$sys/state")"
io_get_raw 0 $region /tmp/raw
cmp /tmp/raw /tmp/expect || hc_fail "after detach, the backing device differs from what was written: $(cmp /tmp/raw /tmp/expect 2>&1 | head -1)"
io_get /dev/$dev 0 $region /tmp/got
cmp /tmp/got /tmp/expect || hc_fail "after detach, hcache0 (passthrough) differs from what was written"
hc_log "after detach: the backing device holds exactly what was written"
io_check
hc_write "$sys/stop" 1
hc_wait test ! -e /dev/$dev
hc_write "$IO_SET/stop" 1
hc_wait test ! -e "$IO_SET"
hc_unload
