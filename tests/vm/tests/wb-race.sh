# The ordering rule of writeback: a write that reaches the backing device
# (writearound, none, writethrough, a sequential bypass, a discard, a
# write-zeroes) must never be overtaken by older data that writeback has
# read from the cache and is about to write, or is writing, over the same
# range. The backing device is slow (null_blk, 10 ms a request) and the
# cache a little slow (0.5 ms).
#
# Each iteration, over a 16 MiB area of hcache0, in writeback with
# writeback_running 0 and writeback_percent 0: version 1 (random data) is
# written to a random range R of 256 KiB to 2 MiB, as 4 to 32 KiB writes
# in random order (dirty: all the dirty data there is). The newer version
# 2 will go to a random range overlapping R, one kind per iteration in
# turn; cache_mode is set for it first:
#   writearound, none, writethrough  4-64 KiB writes in random order,
#                the first of them one that overlaps R
#   sequential   writethrough with sequential_cutoff 512k: one write of
#                1-2 MiB, a sequential bypass
#   discard      BLKDISCARD, as blkdiscard does, in writeback (version 2
#                is zeros: null_blk drops the data)
#   zeroout      BLKZEROOUT, as blkdiscard -z does: a write-zeroes if
#                hcache0 takes them, which it does only when the backing
#                device does; null_blk does not, so here the kernel writes
#                zero pages (in writeback: a cached overwrite of data
#                being written back). A write-zeroes would take
#                hc_write()'s branch for discards.
# The window. The debug build's delay point wb_checked is armed for 1 hit
# of 1 s: writeback's batch holds R (nothing else is dirty), reads all of
# it from the cache, and the thread is held after checking its first run
# (writeback.c, hc_wb_write()), before any of the batch is written. One
# python process starts writeback (writeback_running 1), watches the
# point's hits, and issues version 2's first request overlapping R at
# once. An iteration hits its window when, at that request, writeback had
# read R and not finished writing it, measured as: the cache device's
# sectors read since writeback started cover R (all of the cache's reads
# meanwhile are writeback's), writeback_backing_writes has not moved (it
# counts a batch's runs once all are written), and the thread is still
# held: the request went out less than 1 s after the last look at the
# point's hits that still showed it not reached (the hold begins after
# that look and lasts at least 1 s). Every iteration of every kind must
# hit its window; a miss is reported with the three numbers.
# Then, writeback done (dirty_data 0), both the raw backing device (at its
# data offset) and hcache0 must hold version 2 wherever it was written and
# version 1 elsewhere in R; a mismatch names the iteration, its kind and
# ranges and whether the backing device holds version 1 there (overtaken).
# The end compares the whole area again. 3 iterations of each kind (10 of
# each under make check-long); per kind are printed the windows hit and
# how many of the newer writes' first requests waited for the held run
# (took at least what was left of the hold: a write to the backing device
# over the run checked must wait for it; one over runs not yet checked, or
# a cached one, need not). The seed is printed;
# HC_APPEND=wb.seed=SEED tests/run --filter vm/wb-race repeats a run.
# timeout: 900
# one-kernel: writeback racing writes, in the module's own locking; race-wb-checked and wb-basic run those paths on both kernels; 1.2 min

. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
W=$(mktemp -d /tmp/wb-race.XXXXXX)
IO_CACHE_ATTRS="irqmode=2 completion_nsec=500000" \
IO_BACK_ATTRS="discard=1 irqmode=2 completion_nsec=10000000" io_setup 128 256
dev=hcache0
sys=$(io_sysdir $dev)
area=$((16 * MiB))
truncate -s $area "$W/expect"
# HC_APPEND=wb.seed=N (a kernel argument, which the guest sees) repeats a run.
seed=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^wb\.seed=//p')
seed=${seed:-$(date +%s)}
RANDOM=$seed
[ "${HC_LONG:-}" = 1 ] && rounds=10 || rounds=3
kinds=(writearound none writethrough sequential discard zeroout)
hc_log "seed $seed (HC_APPEND=wb.seed=$seed repeats this run); $rounds iterations of each of: ${kinds[*]}"
hc_log "hcache0: discard_max_bytes $(cat /sys/block/$dev/queue/discard_max_bytes), write_zeroes_max_bytes $(cat /sys/block/$dev/queue/write_zeroes_max_bytes)"

io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0
wb_set $dev writeback_percent 0
wb_set $dev writeback_delay 1
# Full speed whether or not foreground I/O is going on.
printf '1G\n' 2>/dev/null >"$sys/writeback_rate_minimum" ||
	hc_log "writeback_rate_minimum does not take 1G: $(cat "$sys/writeback_rate_minimum")"

hold_ms=$((1000 * ${HC_TIME_SCALE:-1})) # a slow (debug) kernel needs longer to fill the window
point=$(io_point delay wb_checked)

# newer_write KIND OFF2 OFF1 LEN1 SEED CR0 BW0 HITS0: start writeback,
# wait until the thread is held at wb_checked, and write version 2
# ($W/v2) at OFF2 as KIND does, the first request one overlapping R
# ([OFF1, +LEN1)). Prints, for that request, "HELD_MS READ BW WAIT_MS":
# how long after the last look at the point's hits that still read HITS0
# it was issued (an upper bound on how long the thread had been held;
# -1: the point was not reached within 30 s), the bytes the cache device
# had read since CR0 (its sectors read before writeback started), how far
# writeback_backing_writes had moved from BW0, and how long the request
# took.
newer_write() {
	python3 - "$1" "/dev/$dev" "$W/v2" "$2" "$3" "$4" "$5" "$6" "$7" "$8" \
		"$point/hits" "$sys/writeback_running" \
		"/sys/class/block/$IO_CNAME/stat" "$sys/writeback_backing_writes" <<'EOF' || hc_fail "writing version 2 ($1) failed"
import fcntl, mmap, os, random, struct, sys, time

(kind, dev, src, off2, off1, len1, seed, cr0, bw0, hits0,
 hits_f, running_f, cstat_f, bw_f) = sys.argv[1:]
off2, off1, len1, cr0, bw0, hits0 = map(int, (off2, off1, len1, cr0, bw0, hits0))
BLKDISCARD, BLKZEROOUT = 0x1277, 0x127f
rng = random.Random(seed)
size = os.path.getsize(src)
buf = mmap.mmap(-1, size)	# page-aligned, as O_DIRECT wants
with open(src, "rb") as f:
    if f.readinto(buf) != size:
        sys.exit("short read of " + src)
view = memoryview(buf)
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)

def overlaps(p, n):
    return off2 + p < off1 + len1 and off1 < off2 + p + n

# The requests: (position in v2, length).
if kind in ("writearound", "none", "writethrough"):
    reqs, pos = [], 0
    while pos < size:
        n = min(rng.randrange(4096, 65536 + 1, 4096), size - pos)
        reqs.append((pos, n))
        pos += n
    rng.shuffle(reqs)
    first = rng.choice([r for r in reqs if overlaps(*r)])
    reqs.remove(first)
    reqs.insert(0, first)
else:
    reqs = [(0, size)]

def issue(p, n):
    if kind == "discard":
        fcntl.ioctl(fd, BLKDISCARD, struct.pack("QQ", off2 + p, n))
    elif kind == "zeroout":
        fcntl.ioctl(fd, BLKZEROOUT, struct.pack("QQ", off2 + p, n))
    elif os.pwrite(fd, view[p:p + n], off2 + p) != n:
        sys.exit("short write at %d" % (off2 + p))

def read_int(path, field=0):
    with open(path) as f:
        return int(f.read().split()[field])

# The last look at the hits that read hits0, timed before it: the hold
# begins after it.
before = time.monotonic()
if read_int(hits_f) != hits0:
    sys.exit("wb_checked was hit before writeback started")
with open(running_f, "w") as f:
    f.write("1\n")
held = -1
end = before + 30
while time.monotonic() < end:
    t = time.monotonic()
    if read_int(hits_f) == hits0:
        before = t
        continue
    cr = read_int(cstat_f, 2)
    bw = read_int(bw_f)
    t0 = time.monotonic()
    issue(*reqs[0])
    t1 = time.monotonic()
    held = int((t0 - before) * 1000) + 1
    break
else:
    cr, bw, t0 = read_int(cstat_f, 2), read_int(bw_f), time.monotonic()
    issue(*reqs[0])
    t1 = time.monotonic()
for r in reqs[1:]:
    issue(*r)
os.close(fd)
print(held, (cr - cr0) * 512, bw - bw0, int((t1 - t0) * 1000))
EOF
}

# rand_blocks MIN MAX: a random number of 4 KiB blocks in [MIN, MAX].
rand_blocks() {
	echo $(($1 + (RANDOM * 32768 + RANDOM) % ($2 - $1 + 1)))
}

expect_put() { # FILE OFFSET
	dd if="$1" of="$W/expect" bs=4k seek=$(($2 / 4096)) conv=notrunc status=none
}

# verify WHAT OFFSET LEN: hcache0 and the raw backing device hold the
# expected image over the range; on a mismatch say whether the backing
# device holds version 1 (from $W/v1 at $off1) where it differs.
verify() {
	local what=$1 o=$2 n=$3 at
	dd if="$W/expect" of="$W/want" bs=4k skip=$((o / 4096)) count=$((n / 4096)) status=none
	io_get_raw "$o" "$n" "$W/raw"
	if ! cmp -s "$W/raw" "$W/want"; then
		at=$(cmp "$W/raw" "$W/want" | awk '{ print $5 + 0 }')
		at=$(((o + at - 1) / 4096 * 4096))
		if [ "$at" -ge "$off1" ] && [ "$at" -lt $((off1 + len1)) ] &&
		   cmp -s <(dd if="$W/raw" bs=4k skip=$(((at - o) / 4096)) count=1 status=none) \
			  <(dd if="$W/v1" bs=4k skip=$(((at - off1) / 4096)) count=1 status=none); then
			at="the block at $at holds version 1: older writeback data overtook the newer write"
		else
			at="the block at $at holds neither version"
		fi
		hc_fail "$what: the raw backing device: $(wb_diff "$W/raw" "$W/want" "$o"); $at"
	fi
	io_get /dev/$dev "$o" "$n" "$W/got"
	wb_same "$what: hcache0" "$W/got" "$W/want" "$o"
}

declare -A runs hit waited
misses=()
k0=$(wb_get $dev writeback_keys_written)
seqb0=$(io_stat $dev bypass_sequential)
for ((i = 0; i < rounds * ${#kinds[@]}; i++)); do
	kind=${kinds[i % ${#kinds[@]}]}
	# R: version 1; R2: version 2, overlapping R.
	len1=$(($(rand_blocks 64 512) * 4096))
	off1=$(($(rand_blocks 0 $(((area - len1) / 4096))) * 4096))
	if [ "$kind" = sequential ]; then
		len2=$(($(rand_blocks 256 512) * 4096))
	else
		len2=$(($(rand_blocks 16 512) * 4096))
	fi
	# Starts anywhere from len2 - 4 KiB before R to 4 KiB before its end.
	lo=$((off1 - len2 + 4096))
	[ $lo -ge 0 ] || lo=0
	hi=$((off1 + len1 - 4096))
	[ $((hi + len2)) -le $area ] || hi=$((area - len2))
	off2=$((lo + $(rand_blocks 0 $(((hi - lo) / 4096))) * 4096))
	head -c $len1 /dev/urandom >"$W/v1"
	head -c $len2 /dev/urandom >"$W/v2"
	case $kind in
	discard | zeroout) head -c $len2 /dev/zero >"$W/v2" ;;
	esac

	wb_scatter "$W/v1" /dev/$dev $off1 4096 32768 "$RANDOM"
	expect_put "$W/v1" $off1
	d1=$(wb_dirty $dev)
	[ "$d1" = $len1 ] || hc_fail "iteration $i: dirty_data $d1 after writing $len1 bytes in writeback over clean data"

	case $kind in
	writearound | none | writethrough) io_mode $dev "$kind" ;;
	sequential)
		io_mode $dev writethrough
		io_cutoff $dev 512k ;;
	esac
	kw0=$(wb_get $dev writeback_keys_written)
	read -r _ _ cr0 _ <"/sys/class/block/$IO_CNAME/stat"
	bw0=$(wb_get $dev writeback_backing_writes)
	hits0=$(io_delay_arm wb_checked $hold_ms)
	out=$(newer_write "$kind" $off2 $off1 $len1 "$RANDOM" "$cr0" "$bw0" "$hits0")
	read -r held rd bw wait_ms <<<"$out"
	expect_put "$W/v2" $off2
	[ "$(io_point_hits delay wb_checked)" = $((hits0 + 1)) ] ||
		hc_fail "iteration $i ($kind): wb_checked held $(($(io_point_hits delay wb_checked) - hits0)) times, not once"
	runs[$kind]=$((${runs[$kind]:-0} + 1))
	if [ "$held" -ge 0 ] && [ "$held" -lt $hold_ms ] && [ "$rd" -ge "$d1" ] && [ "$bw" = 0 ]; then
		hit[$kind]=$((${hit[$kind]:-0} + 1))
		win="in the window (held for at most $held ms)"
		# What was left of the hold, and more: it waited for the run.
		if [ "$wait_ms" -ge $((hold_ms - held)) ]; then
			waited[$kind]=$((${waited[$kind]:-0} + 1))
			win+=", waited for the held run"
		fi
	else
		misses+=("#$i $kind")
		win="MISSED the window: held for at most $held ms (-1: never), $rd of $d1 bytes read, writeback_backing_writes +$bw"
	fi
	wb_wait_clean $dev 60 "iteration $i ($kind)"
	kw=$(($(wb_get $dev writeback_keys_written) - kw0))
	hc_log "#$i $kind: v1 [$off1, +$len1) v2 [$off2, +$len2); first overlapping request $win, took $wait_ms ms; $kw keys written back; clean after $WB_SECS s"
	wb_set $dev writeback_running 0
	io_mode $dev writeback
	io_cutoff $dev 0
	lo=$((off1 < off2 ? off1 : off2))
	hi=$((off1 + len1 > off2 + len2 ? off1 + len1 : off2 + len2))
	verify "iteration $i ($kind, v1 [$off1, +$len1), v2 [$off2, +$len2))" $lo $((hi - lo))
done

off1=-1
len1=0
verify "the whole area at the end" 0 $area
io_check
kw=$(($(wb_get $dev writeback_keys_written) - k0))
seqb=$(($(io_stat $dev bypass_sequential) - seqb0))
line="windows hit:"
for kind in "${kinds[@]}"; do
	line+=" $kind ${hit[$kind]:-0}/${runs[$kind]} (${waited[$kind]:-0} waited)"
done
hc_log "$line; $kw keys written back; bypass_sequential +$seqb"
[ ${#misses[@]} = 0 ] ||
	hc_fail "${#misses[@]} of $i iterations missed their window: ${misses[*]}"
io_teardown
rm -rf "$W"
