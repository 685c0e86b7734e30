# Write-zeroes on /dev/hcache0 in every cache mode, over data the cache
# holds clean and data it holds dirty, on a backing device that takes
# REQ_OP_WRITE_ZEROES itself, and across a power cut.
#
# null_blk takes no write-zeroes (the block layer writes zero pages
# instead, and hcache never sees the operation), so the backing device is
# a loop device over a virtio disk: loop passes write-zeroes on to the
# disk as a zeroing fallocate. The cache device is a virtio disk. Both
# keep what the guest wrote across a reset (# boots: 2). The loop
# device's and hcache0's write_zeroes_max_bytes must be above 0.
#
# A case is 1 MiB of hcache0: random data on the backing device (written
# in mode none), of which the first 768 KiB is then either cached clean
# (read in writethrough with admission_policy first_access; read again,
# nothing comes from the backing device) or made dirty (new random data
# written in writeback with writeback_running 0; the backing device must
# still hold the old data). A phase is 8 cases: each mode (writethrough,
# writeback, writearound, none) with a clean case and a dirty case. In the
# case's mode, two ranges are zeroed: 193.5 KiB (not 4 KiB aligned) inside
# the cached part with BLKZEROOUT (blkdiscard -z: write-zeroes that may
# not unmap; the kernel may fall back to writing zero pages), and
# 256.5 KiB across the end of the cached part with a punch-hole fallocate
# (write-zeroes that may unmap, no fallback: an error if hcache0 does not
# take it; called from python, as fallocate(1) fsyncs after it). For
# each, the block layer's block_bio_queue trace must show write-zeroes
# bios (rwbs N) queued on hcache0 and on the loop device, and no write
# with data and no flush on hcache0. Then hcache0, still in that mode,
# must read the zeros and, around them, the data the case left; and
# dirty_data must have dropped by exactly the dirty bytes zeroed.
#
# Checking the cases so far: hcache0 reads each case's zeros and data,
# twice (the first read may promote), and the raw backing device (the
# loop device at its data offset) reads zeros in every zeroed range.
#
# Boot 1, phase A (cases 0-7): checked; writeback runs until dirty_data
# is 0; the raw backing device must hold exactly what hcache0 reads;
# checked again. Phase B (cases 8-15), with journal_delay_ms 10000 and its
# dirty data left dirty; then at once an fsync of /dev/hcache0 and a reset
# (sysrq-b). Neither zeroing call flushes, and write-zeroes has no FUA:
# what makes a zeroing durable is a flush after it, to the backing device
# (its zeros) and, through a journal write, to the cache device (the
# invalidation of what the cache held). So the fsync must send a flush to
# the loop device, and between the start of the last write-zeroes and the
# end of the fsync a journal entry must be written and the cache device
# flushed. After the cut, every byte the fsync covered must read as
# before it. (Without the fsync, the last cases read stale data after the
# cut: the test sees the lost invalidations.)
#
# Boot 2 sets up the loop device again, registers the set, pauses
# writeback, checks all 16 cases and dirty_data (phase B's exactly), then
# in writeback writes everything back: the raw backing device must equal
# hcache0 in all 16 cases, checked once more, and after a detach (hcache0
# is then the backing device alone) checked again. The output counts the
# ranges zeroed and the cases checked at each step. A failure names the
# step, the case (mode, clean or dirty) and the differing 4 KiB blocks.
# timeout: 200
# drives: cache:128M backing:128M
# boots: 2

# shellcheck disable=SC2034 # io-lib.sh's helpers read the IO_* variables
. "$HC_ROOT/tests/vm/io-lib.sh"

modprobe loop || hc_fail "modprobe loop failed"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
KiB=1024
MiB=$((1 << 20))
base=$((4 * MiB))	# case K is [base + K MiB, +1 MiB) of hcache0
cached=$((768 * KiB))	# the part a case caches, clean or dirty
z1_off=$((64 * KiB + 512)) z1_len=$((193 * KiB + 512))	# BLKZEROOUT
z2_off=$((640 * KiB + 3584)) z2_len=$((256 * KiB + 512))	# punch-hole
modes=(writethrough writeback writearound none)
# What a phase leaves dirty: in each of its 4 dirty cases, the cached part
# but for the first range and the part of the second inside it.
phase_dirty=$((4 * (cached - z1_len - (cached - z2_off))))
# Scratch files in a directory of the test's own: the guest's /tmp shows
# the host's, where a same-named directory once failed the test.
W=$(mktemp -d /tmp/io-write-zeroes.XXXXXX)
expect=$W/wz.expect		# what hcache0 must read at base, all cases
keep=$HC_RESULTS/wz.expect	# its copy across the cut

# What io_setup would set (io-lib.sh's helpers read them).
cdev=$(hc_drive cache)
vdisk=$(hc_drive backing)
loop=$(losetup -f --show "$vdisk") || hc_fail "losetup over $vdisk failed"
io_devices "$cdev" "$loop"
wz=$(cat "/sys/block/$IO_BNAME/queue/write_zeroes_max_bytes")
[ "$wz" -gt 0 ] ||
	hc_fail "the loop device $IO_BDEV over $vdisk takes no write-zeroes (write_zeroes_max_bytes $wz)"
if [ "$HC_BOOT" = 1 ]; then
	"$(hc_tool make-hcache)" -C "$IO_CDEV" -B "$IO_BDEV" --block 512 --bucket 128k >/dev/null ||
		hc_fail "make-hcache -C $IO_CDEV -B $IO_BDEV failed"
fi
IO_UUID=$("$(hc_tool hcache-super-show)" "$IO_CDEV" | awk '$1 == "cset.uuid" { print $2 }')
IO_OFFSET=$("$(hc_tool hcache-super-show)" "$IO_BDEV" | awk '$1 == "backing.data_offset" { print $2 }')
if [ -z "$IO_UUID" ] || [ -z "$IO_OFFSET" ]; then
	hc_fail "hcache-super-show: no set uuid or data offset"
fi
IO_SET=/sys/fs/hcache/$IO_UUID
IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
io_register
dev=hcache0
sys=$(io_sysdir $dev)
hc_write "$sys/writeback_running" 0
hwz=$(cat /sys/block/$dev/queue/write_zeroes_max_bytes)
[ "$hwz" -gt 0 ] || hc_fail "$dev takes no write-zeroes (write_zeroes_max_bytes $hwz; the loop device's is $wz)"
hc_log "boot $HC_BOOT: cache $IO_CDEV, backing $IO_BDEV (loop over $vdisk, data at sector $IO_OFFSET) as $dev; write_zeroes_max_bytes: loop $wz, $dev $hwz"
io_cutoff $dev 0
hc_write "$sys/admission_policy" first_access

# ---- The block layer's trace: which bios reach hcache0 and the loop device
trace=/sys/kernel/tracing
mountpoint -q $trace || mount -t tracefs nodev $trace || hc_fail "cannot mount tracefs"
# devt NAME: the kernel's dev_t of block device NAME (major << 20 | minor).
devt() {
	local mm
	mm=$(cat "/sys/class/block/$1/dev")
	echo $(( (${mm%%:*} << 20) | ${mm##*:} ))
}
hdev=$(cat /sys/block/$dev/dev)
ldev=$(cat "/sys/class/block/$IO_BNAME/dev")
echo 0 >$trace/tracing_on
echo "dev == $(devt $dev) || dev == $(devt "$IO_BNAME")" >$trace/events/block/block_bio_queue/filter
echo 1 >$trace/events/block/block_bio_queue/enable

# trace_counts: "HN HW HF LN LW", the write-zeroes (rwbs N...), the
# writes with data and the empty flushes queued on hcache0, then the
# write-zeroes and writes with data on the loop device, traced. A line
# reads
#   fallocate-304 [001] ..... 39.17: block_bio_queue: 253,0 NS 9479 + 513 [fallocate]
trace_counts() {
	awk -v h="${hdev/:/,}" -v l="${ldev/:/,}" '
		/block_bio_queue:/ {
			for (i = 1; i <= NF; i++) if ($i == "block_bio_queue:") break
			d = $(i + 1); op = $(i + 2); n = $(i + 5)
			if (n == 0) { if (op ~ /^F/) f[d]++; next }
			if (op ~ /^NF?S?M?$/) z[d]++
			else if (op ~ /^F?WF?S?M?$/) w[d]++
		}
		END { print z[h] + 0, w[h] + 0, f[h] + 0, z[l] + 0, w[l] + 0 }' $trace/trace
}

# punch DEV OFF LEN: fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
# on DEV, and no fsync (fallocate(1) does one after it).
punch() {
	python3 - "$@" <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
fd = os.open(sys.argv[1], os.O_WRONLY)
if libc.fallocate(fd, 0x02 | 0x01, int(sys.argv[2]), int(sys.argv[3])):
    sys.exit("fallocate: " + os.strerror(ctypes.get_errno()))
os.close(fd)
EOF
}

zeroed=0
# zero HOW OFF LEN: zero [OFF, +LEN) of hcache0, HOW blkzeroout (the
# BLKZEROOUT ioctl) or punch (a punch-hole fallocate). Neither flushes:
# what makes the zeros durable is a flush after them. Write-zeroes bios
# must reach hcache0 and the loop device, and no write or flush hcache0.
# Zeros the range in the expected image too.
zero() {
	local hn hw hf ln lw out
	: >$trace/trace
	echo 1 >$trace/tracing_on
	# blkdiscard's --force: no signature check (it says so on stderr).
	case $1 in
	blkzeroout) out=$(blkdiscard -f -z -o "$2" -l "$3" /dev/$dev 2>&1) ||
		hc_fail "blkdiscard -z -o $2 -l $3 /dev/$dev failed: $out" ;;
	punch) out=$(punch /dev/$dev "$2" "$3" 2>&1) ||
		hc_fail "punch-hole fallocate of [$2, +$3) of /dev/$dev failed: $out" ;;
	esac
	echo 0 >$trace/tracing_on
	read -r hn hw hf ln lw <<<"$(trace_counts)"
	if [ "$hn" = 0 ] || [ "$hw" != 0 ] || [ "$hf" != 0 ]; then
		grep block_bio_queue $trace/trace | head -20
		hc_fail "$1 [$2, +$3): $hn write-zeroes, $hw write and $hf flush bios queued on $dev ($hdev), expected write-zeroes only"
	fi
	[ "$ln" -gt 0 ] ||
		hc_fail "$1 [$2, +$3): no write-zeroes bio reached the loop device ($lw writes)"
	zero_expect "$2" "$3"
	zeroed=$((zeroed + 1))
}

# zero_expect OFF LEN: zeros at [OFF, +LEN) of hcache0 in the expected
# image.
zero_expect() {
	dd if=/dev/zero of=$expect bs=512 seek=$((($1 - base) / 512)) count=$(($2 / 512)) \
		conv=notrunc status=none || hc_fail "zeroing the expected image failed"
}

# name K: case K's mode and state.
name() {
	echo "case $1 (${modes[$1 % 8 / 2]}, $( (($1 % 2)) && echo dirty || echo clean))"
}

# same WHAT FILE FIRST N: FILE holds cases FIRST.. FIRST+N-1 as expected,
# or the test fails naming the cases and blocks that differ.
same() {
	local k
	dd if=$expect of=$W/exp bs=1M skip="$3" count="$4" status=none || hc_fail "dd $expect"
	cmp -s "$2" $W/exp && return 0
	for k in $(seq "$3" $(($3 + $4 - 1))); do
		cmp -s -i $(((k - $3) * MiB)):$(((k - $3) * MiB)) -n $MiB "$2" $W/exp ||
			hc_log "$1: $(name "$k") differs"
	done
	hc_fail "$1: $(wb_diff "$2" $W/exp $((base + $3 * MiB))) (offsets in $dev)"
}

# raw_zeros WHEN N: on the raw backing device, every zeroed range of
# cases 0.. N-1 reads zeros.
raw_zeros() {
	local bad
	io_get_raw $base $(($2 * MiB)) $W/raw
	bad=$(python3 - $W/raw "$2" $z1_off $z1_len $z2_off $z2_len <<'EOF'
import sys
data = open(sys.argv[1], "rb").read()
n, z = int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
for k in range(n):
    for off, length in ((z[0], z[1]), (z[2], z[3])):
        s = k * (1 << 20) + off
        if data[s:s + length].count(0) != length:
            print(k, off)
EOF
) || hc_fail "the zero check failed"
	[ -z "$bad" ] ||
		hc_fail "$1: ranges zeroed that the raw backing device does not read as zeros (case, offset in it): $(echo "$bad" | tr '\n' ' '); first: $(name "${bad%% *}")"
}

# check WHEN N: cases 0.. N-1 read as expected through hcache0, twice,
# and their zeroed ranges read zeros on the raw backing device.
check() {
	local i
	for i in 1 2; do
		io_get /dev/$dev $base $(($2 * MiB)) $W/got
		same "$1, read $i through $dev" $W/got 0 "$2"
	done
	raw_zeros "$1" "$2"
	hc_log "$1: $2 cases read their zeros and data through $dev; their $(($2 * 2)) zeroed ranges read zeros on the raw backing device"
}

# raw_all WHEN N: the raw backing device holds cases 0.. N-1 exactly.
raw_all() {
	io_get_raw $base $(($2 * MiB)) $W/raw
	same "$1, raw backing device" $W/raw 0 "$2"
	hc_log "$1: the raw backing device holds all $2 cases, byte for byte"
}

# phase FIRST [HOOK]: lay down cases FIRST.. FIRST+7 and zero them, each
# in its mode; HOOK runs just before the last case's zeroing.
phase() {
	local first=$1 k off r0 r1 d0
	off=$((base + first * MiB))
	io_pattern $W/old 8
	dd if=$W/old of=$expect bs=1M seek="$first" conv=notrunc status=none
	io_mode $dev none
	io_put $W/old /dev/$dev $off
	io_mode $dev writethrough
	for k in $(seq "$first" 2 $((first + 7))); do
		io_get /dev/$dev $((base + k * MiB)) $cached $W/got
	done
	io_mode $dev writeback
	d0=$(wb_dirty $dev)
	for k in $(seq $((first + 1)) 2 $((first + 7))); do
		head -c $cached /dev/urandom >$W/new
		io_put $W/new /dev/$dev $((base + k * MiB))
		dd if=$W/new of=$expect bs=1M seek="$k" conv=notrunc status=none
	done
	io_settle
	[ "$(wb_dirty $dev)" = $((d0 + 4 * cached)) ] ||
		hc_fail "cases $first-$((first + 7)): dirty_data rose from $d0 to $(wb_dirty $dev), not by $((4 * cached))"
	r0=$(io_bstat "$IO_BDEV" 3)
	for k in $(seq "$first" $((first + 7))); do
		io_get /dev/$dev $((base + k * MiB)) $cached $W/got
	done
	r1=$(io_bstat "$IO_BDEV" 3)
	[ "$r1" = "$r0" ] ||
		hc_fail "cases $first-$((first + 7)): reading the cached parts read $((r1 - r0)) sectors from the backing device: not all cached"
	io_get_raw $off $((8 * MiB)) $W/raw
	cmp -s $W/raw $W/old ||
		hc_fail "cases $first-$((first + 7)): the backing device does not hold the old data under the clean and dirty data: $(wb_diff $W/raw $W/old $off)"
	io_get /dev/$dev $off $((8 * MiB)) $W/got
	same "cases $first-$((first + 7)) before zeroing" $W/got "$first" 8
	for k in $(seq "$first" $((first + 7))); do
		io_mode $dev "${modes[k % 8 / 2]}"
		[ "$k" != $((first + 7)) ] || [ -z "${2:-}" ] || "$2"
		zero blkzeroout $((base + k * MiB + z1_off)) $z1_len
		zero punch $((base + k * MiB + z2_off)) $z2_len
		io_get /dev/$dev $((base + k * MiB)) $MiB $W/got
		same "$(name "$k") just after zeroing, in its mode" $W/got "$k" 1
	done
	[ "$(wb_dirty $dev)" = $((d0 + phase_dirty)) ] ||
		hc_fail "cases $first-$((first + 7)): dirty_data $(wb_dirty $dev) after zeroing, expected $((d0 + phase_dirty))"
	hc_log "cases $first-$((first + 7)): zeroed, each in its mode; $zeroed ranges zeroed so far"
}

# write_back WHEN: in writeback, writeback runs until dirty_data is 0,
# then pauses, its target back at the default. writeback_percent is kept
# in the superblock: left at 0 over the power cut, writeback would start
# as soon as boot 2 registers, before the test reads what the cut left
# (at the default target, phase B's dirty data waits out writeback_delay).
write_back() {
	io_mode $dev writeback
	hc_write "$sys/writeback_percent" 0
	hc_write "$sys/writeback_running" 1
	wb_wait_clean $dev 120 "$1"
	hc_write "$sys/writeback_running" 0
	hc_write "$sys/writeback_percent" 10
	hc_log "$1: written back in $WB_SECS s"
}

# before_last: just before the last zeroing of phase B, keep the expected
# image as it stands then (boot 2 zeros the last case's ranges in it), and
# note the cache device's flush count and the journal entries written.
before_last() {
	cp $expect "$keep" || hc_fail "saving the expected image failed"
	sync "$keep"
	cf0=$(flushes "$IO_CNAME")
	jw0=$(cat "$IO_SET/internal/journal_entries_written")
}

# flushes NAME: flush requests completed by block device NAME.
flushes() {
	awk '{ print $16 }' "/sys/class/block/$1/stat"
}

if [ "$HC_BOOT" = 1 ]; then
	: >$expect
	hc_log "phase A: cases 0-7, zeroed, then written back"
	phase 0
	check "phase A" 8
	write_back "phase A"
	raw_all "phase A, after writeback" 8
	check "phase A, after writeback" 8

	hc_log "phase B: cases 8-15, zeroed, then an fsync and a power cut"
	# The journal waits up to 10 s for more keys: the fsync writes it.
	hc_write "$IO_SET/journal_delay_ms" 10000
	phase 8 before_last
	lf0=$(flushes "$IO_BNAME")
	sync /dev/$dev || hc_fail "fsync of /dev/$dev failed"
	lf1=$(flushes "$IO_BNAME")
	cf1=$(flushes "$IO_CNAME")
	jw1=$(cat "$IO_SET/internal/journal_entries_written")
	hc_log "fsync of /dev/$dev: flushes on the loop device $lf0 -> $lf1 (from the end of the last write-zeroes); from its start, flushes on the cache device $cf0 -> $cf1, journal entries written $jw0 -> $jw1"
	[ "$lf1" -gt "$lf0" ] || hc_fail "the fsync sent no flush to the backing device"
	if [ "$cf1" -le "$cf0" ] || [ "$jw1" -le "$jw0" ]; then
		hc_fail "no journal write and flush on the cache device after the last write-zeroes began: its invalidation is not durable"
	fi
	# At once: the journal's timer must not write what the fsync did not.
	dirty=$(wb_dirty $dev)
	touch "$HC_RESULTS/boot-1.ok"
	sync "$HC_RESULTS/boot-1.ok"
	hc_log "resetting (sysrq-b) with dirty_data $dirty, mode $(cat "$sys/cache_mode"); $zeroed ranges zeroed in 16 cases"
	echo b >/proc/sysrq-trigger
	sleep 30
	hc_fail "still running after sysrq-b"
fi

cp "$keep" $expect || hc_fail "no expected image from boot 1"
zero_expect $((base + 15 * MiB + z1_off)) $z1_len
zero_expect $((base + 15 * MiB + z2_off)) $z2_len
dirty=$(wb_dirty $dev)
hc_log "boot 2: registered after the cut; dirty_data $dirty, state $(cat "$sys/state"), mode $(cat "$sys/cache_mode")"
[ "$dirty" = $phase_dirty ] ||
	hc_fail "dirty_data $dirty after the cut; phase B left $phase_dirty, acknowledged and flushed"
check "after the cut" 16
io_check
write_back "after the cut"
raw_all "after the cut and writeback" 16
check "after the cut and writeback" 16
hc_write "$sys/detach" 1
hc_wait wb_detached $dev
check "after detach" 16
hc_log "checked: 32 zeroed ranges in 16 cases (4 modes x clean and dirty, in 2 phases), through $dev and on the raw backing device, before and after the power cut"
hc_write "$sys/stop" 1
hc_wait test ! -e /dev/$dev
hc_write "$IO_SET/stop" 1
hc_wait test ! -e "$IO_SET"
hc_unload
losetup -d "$IO_BDEV"
