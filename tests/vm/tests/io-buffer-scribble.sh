# A reader that changes its own O_DIRECT buffer while its read misses are
# in flight must not change what the cache holds. A miss is read into the
# caller's pages; if the promotion copies its data from those pages when
# the read completes, whatever the caller wrote there meanwhile goes into
# the cache as if it were the disk's, and every later reader of the block
# gets it (from another process, or another guest, too).
#
# The backing device is slow (null_blk, 5 ms a request; null_blk copies
# the data into the pages when it takes the request and completes it
# 5 ms later, so nearly all of that is the window) and holds 48 MiB of
# random data, written in mode none (not cached). With admission_policy
# first_access (every miss promoted) and sequential_cutoff 0,
# tests/vm/helpers/dio-scribble.c reads each 64 KiB block of the region
# once, in a random order, from 4 reader threads, each into its own
# page-aligned buffer, while 4 scribbler threads fill those buffers with
# 0xA5 without pause. It counts the reads during which some scribbler
# filled the whole buffer, start to end: at least half of the reads must
# be so, or the test could not tell (it fails saying so). Every read must
# have missed (cache_misses). Once the promotions are written, the region
# is read through hcache0, and every byte must come from the cache (the
# backing device's read counter stays flat, cache_hits rises) and equal
# the raw backing device at its data offset, which must still hold the
# data written. Then the same after a stop and register of the set (what
# the cache device keeps).
#
# A failure prints the bytes served from the cache that are not the
# backing device's, how many of them are the scribblers' 0xA5, and the
# 64 KiB blocks affected; on the code that promotes from the caller's
# pages (6.12; 767 of the 768 reads were overwritten in flight):
#   FAIL: after the scribbled reads: 50004389 of 50331648 bytes served from
#   the cache differ from the backing device (50004389 of them 0xA5, the
#   scribblers' byte), in 766 of 768 64 KiB blocks; first at byte 0 of
#   the region
# timeout: 180

. "$HC_ROOT/tests/vm/io-lib.sh"

scribble=$(hc_helper dio-scribble)
IO_BACK_ATTRS="irqmode=2 completion_nsec=5000000" io_setup 128 128
dev=hcache0
sys=$(io_sysdir $dev)
io_cutoff $dev 0
hc_write "$sys/admission_policy" first_access
grep -qx '\[first_access\] second_access' "$sys/admission_policy" ||
	hc_fail "admission_policy: $(cat "$sys/admission_policy")"

MiB=$((1 << 20))
base=$((16 * MiB))
len=$((48 * MiB))
bs=65536
blocks=$((len / bs))

hc_log "48 MiB of random data on the backing device only (mode none)"
io_pattern /tmp/data 48
io_mode $dev none
io_put /tmp/data /dev/$dev $base
io_mode $dev writethrough
io_settle

m0=$(io_stat $dev cache_misses)
hc_log "reading the region once, 4 readers, 4 scribblers writing 0xA5 into their buffers"
out=$("$scribble" read /dev/$dev $base $len --bs $bs --readers 4 --scribblers 4 \
	--seed $((RANDOM + 1))) || hc_fail "dio-scribble read failed: $out"
hc_log "dio-scribble: $out"
read -r _ reads _ _ _ _ _ _ _ _ _ secs _ overwritten _ fills <<<"$out"
[ "$reads" = $blocks ] || hc_fail "dio-scribble did $reads reads, not $blocks"
[ $((overwritten * 2)) -ge "$reads" ] ||
	hc_fail "only $overwritten of $reads reads had their buffer overwritten while in flight ($fills fills in $secs s): this test cannot tell"
io_settle
io_wait_stat $dev cache_misses $((m0 + blocks))
hc_log "$(io_stats_line $dev)"

io_get_raw $base $len /tmp/raw
cmp -s /tmp/raw /tmp/data || hc_fail "the raw backing device no longer holds the data written (reads changed it?)"

# served WHEN: read the region through hcache0, all of it from the cache,
# and compare it with the backing device.
served() {
	local h0 r0 r1 m1 cmpout rc
	h0=$(io_stat $dev cache_hits)
	m1=$(io_stat $dev cache_misses)
	r0=$(io_bstat "$IO_BDEV" 3)
	io_get /dev/$dev $base $len /tmp/cached
	r1=$(io_bstat "$IO_BDEV" 3)
	[ "$r1" = "$r0" ] ||
		hc_fail "$1: reading the region read $((r1 - r0)) sectors from the backing device: not all of it was cached"
	io_wait_stat $dev cache_hits $((h0 + len / MiB))
	[ "$(io_stat $dev cache_misses)" = "$m1" ] || hc_fail "$1: reading the region missed"
	rc=0
	cmpout=$("$scribble" compare /tmp/cached /tmp/raw --bs $bs) || rc=$?
	if [ $rc = 0 ]; then
		hc_log "$1: all $len bytes served from the cache equal the backing device ($cmpout)"
		return 0
	fi
	[ $rc = 1 ] || hc_fail "dio-scribble compare failed (status $rc): $cmpout"
	hc_log "$1: dio-scribble compare: $cmpout"
	read -r _ bytes _ differ _ pattern _ nblocks _ bad _ first <<<"$cmpout"
	hc_fail "$1: $differ of $bytes bytes served from the cache differ from the backing device ($pattern of them 0xA5, the scribblers' byte), in $bad of $nblocks 64 KiB blocks; first at byte $first of the region"
}

served "after the scribbled reads"
io_restart
# A restart resets sequential_cutoff: the region's reads would bypass as
# sequential (hits still, but not counted in cache_hits).
io_cutoff $dev 0
served "after a stop and register"
io_teardown
