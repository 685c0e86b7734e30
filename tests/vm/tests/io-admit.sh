# admission_policy: the file shows [second_access] by default, takes
# first_access and second_access, refuses junk. With second_access on a
# 32 MiB cache: while more than 20% of its buckets are free every miss is
# promoted (a 12 MiB region read once counts no bypass_policy and reads
# back all hits). Once a 32 MiB region has filled it, a fresh 1 MiB
# region read once is refused (bypass_policy rises by its 256 reads) and
# stays out (read again, it reads the backing device); that second read
# promotes it (at most 1/16 refused again: ghost slot collisions with the
# fill's misses), and a third read hits but for those. (A refused miss
# counts in bypass_policy, not in cache_misses.) Back on first_access, a
# fresh region is promoted on its first read. Data read back is always
# the data written.
# timeout: 300
# one-kernel: the admission policy's bookkeeping; io-fio-modes promotes misses on both kernels

. "$HC_ROOT/tests/vm/io-lib.sh"

io_setup 32 256 --bucket 64k
dev=hcache0
sys=$(io_sysdir $dev)
io_cutoff $dev 0

# The file.
grep -qx 'first_access \[second_access\]' "$sys/admission_policy" ||
	hc_fail "admission_policy by default: $(cat "$sys/admission_policy")"
for bad in junk second '' first_access2; do
	hc_write_fails "Invalid argument" "$sys/admission_policy" "$bad"
done
hc_write "$sys/admission_policy" first_access
grep -qx '\[first_access\] second_access' "$sys/admission_policy" ||
	hc_fail "admission_policy after writing first_access: $(cat "$sys/admission_policy")"
hc_write "$sys/admission_policy" second_access
grep -qx 'first_access \[second_access\]' "$sys/admission_policy" ||
	hc_fail "admission_policy after writing second_access: $(cat "$sys/admission_policy")"

# Known data everywhere the test reads, written around the cache.
io_pattern /tmp/data 64
hc_write "$sys/cache_mode" none
io_put /tmp/data /dev/$dev 0
hc_write "$sys/cache_mode" writethrough
io_settle

# pass NAME OFFSET SIZE: read [OFFSET, OFFSET + SIZE) at random, 4 KiB
# each, once; then wait for the promotions. Sets REFUSED, MISSED and
# BACKREAD (sectors read from the backing device) for the pass.
pass() {
	local p0 m0 r0
	p0=$(io_stat $dev bypass_policy)
	m0=$(io_stat $dev cache_misses)
	r0=$(io_bstat "$IO_BDEV" 3)
	fio --name="$1" --filename=/dev/$dev --rw=randread --bs=4k --iodepth=16 \
		--ioengine=libaio --direct=1 --offset="$2" --size="$3" \
		--randseed=$RANDOM --output="/tmp/fio.$1" ||
		hc_fail "fio $1 failed: $(tail -5 "/tmp/fio.$1")"
	io_fio_ok "/tmp/fio.$1" || hc_fail "fio $1: $(grep -i -E 'err|bad' "/tmp/fio.$1" | head -5)"
	io_settle
	REFUSED=$(( $(io_stat $dev bypass_policy) - p0 ))
	MISSED=$(( $(io_stat $dev cache_misses) - m0 ))
	BACKREAD=$(( $(io_bstat "$IO_BDEV" 3) - r0 ))
	hc_log "$1: $MISSED misses, $REFUSED refused, $BACKREAD sectors read from the backing device"
}

mib=$((1 << 20))
# Warming up: free space is filled on first access.
pass warm 0 $((12 * mib))
[ "$REFUSED" = 0 ] || hc_fail "warm-up: $REFUSED misses refused with the cache mostly free"
pass warm-again 0 $((12 * mib))
[ "$MISSED" = 0 ] && [ "$BACKREAD" = 0 ] ||
	hc_fail "warm-up data read again: $MISSED misses, $BACKREAD sectors from the backing device"

# Full: most of a 32 MiB region is refused once the cache has filled.
pass fill $((16 * mib)) $((32 * mib))
[ "$REFUSED" -gt 0 ] || hc_fail "filling the cache refused nothing"

# A fresh region: refused on its first miss, promoted on its second.
n=256
pass once $((48 * mib)) $((n * 4096))
[ "$REFUSED" = $n ] || hc_fail "first read of a fresh 1 MiB with the cache full: $REFUSED of $n refused"
pass twice $((48 * mib)) $((n * 4096))
[ "$BACKREAD" -ge $((n * 8)) ] ||
	hc_fail "second read of a refused region: only $BACKREAD sectors from the backing device (was it cached?)"
[ $((MISSED + REFUSED)) = $n ] || hc_fail "second read: $MISSED promoted and $REFUSED refused of $n"
[ "$REFUSED" -le $((n / 16)) ] || hc_fail "second read: $REFUSED of $n misses refused again"
refused2=$REFUSED
pass thrice $((48 * mib)) $((n * 4096))
[ $((MISSED + REFUSED)) -le "$refused2" ] && [ "$BACKREAD" -le $((refused2 * 8)) ] ||
	hc_fail "third read: $MISSED misses, $REFUSED refused, $BACKREAD sectors from the backing device; the second refused $refused2"

# first_access again: promoted on the first miss.
hc_write "$sys/admission_policy" first_access
pass first $((52 * mib)) $((n * 4096))
[ "$REFUSED" = 0 ] || hc_fail "first_access refused $REFUSED misses"
pass first-again $((52 * mib)) $((n * 4096))
[ "$MISSED" = 0 ] && [ "$BACKREAD" = 0 ] ||
	hc_fail "first_access: $MISSED of $n misses, $BACKREAD sectors from the backing device on the second read"

io_get /dev/$dev 0 $((64 << 20)) /tmp/back
cmp -s /tmp/data /tmp/back || hc_fail "data read back differs from the data written"
io_check
io_teardown
