# The ordering rule of writeback: a write that reaches the backing device
# (writearound, none, writethrough, a sequential bypass, a discard, a
# write-zeroes) must never be overtaken by older data that writeback has
# read from the cache and is about to write, or is writing, over the same
# range. The backing device is slow (null_blk, 10 ms a request) and the
# cache a little slow (0.5 ms), so that writeback spends long between
# reading dirty data and having written it.
#
# Each iteration, over a 16 MiB area of hcache0, in writeback with
# writeback_running 0 and writeback_percent 0: version 1 (random data) is
# written to a random range R of 256 KiB to 2 MiB, as 4 to 32 KiB writes
# in random order (dirty); writeback_running 1; as soon as writeback has
# I/O in flight (reads on the cache or writes on the backing device) the
# newer version 2 goes to a random range overlapping R, one kind per
# iteration in turn:
#   writearound, none, writethrough  cache_mode switched, 4-64 KiB writes
#   sequential   writethrough with sequential_cutoff 512k: one write of
#                1-2 MiB, a sequential bypass
#   discard      blkdiscard (version 2 is zeros: null_blk drops the data)
#   zeroout      blkdiscard -z: a write-zeroes if hcache0 takes them, which
#                it does only when the backing device does; null_blk does
#                not, so here the kernel writes zero pages (in writeback: a
#                cached overwrite of data being written back). A
#                write-zeroes would take hc_write()'s branch for discards.
# Then, writeback done (dirty_data 0), both the raw backing device (at its
# data offset) and hcache0 must hold version 2 wherever it was written and
# version 1 elsewhere in R; a mismatch names the iteration, its kind and
# ranges and whether the backing device holds version 1 there (overtaken).
# The end compares the whole area again. An iteration counts as a race
# run when writeback had I/O in flight and dirty data left just before
# the version 2 write; at least a third of them must be, and the counts
# per kind and writeback_keys_written are printed. 5 iterations of each
# kind (25 of each under make check-long). The seed is printed;
# HC_APPEND=wb.seed=SEED tests/run --filter vm/wb-race repeats a run.
# timeout: 300
# one-kernel: the ordering of writeback against writes around the cache, decided by hcache's tree of I/O in flight; wb-basic and wb-acked-order write back on both kernels

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
[ "${HC_LONG:-}" = 1 ] && rounds=25 || rounds=5
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

binfl=/sys/class/block/$IO_BNAME/inflight
cinfl=/sys/class/block/$IO_CNAME/inflight
# busy: writeback has I/O in flight (nothing else does I/O meanwhile);
# sets how, and d2 to dirty_data read right then. Shell builtins only: on
# a debug kernel a fork (d2=$(wb_dirty ...)) took longer than writeback
# takes to finish a batch, and almost no iteration raced.
busy() {
	local r w
	read -r r w <"$binfl"
	if [ "$w" -gt 0 ]; then
		how="backing writes $w"
		read -r d2 <"$sys/dirty_data"
		return 0
	fi
	read -r r w <"$cinfl"
	if [ "$r" -gt 0 ]; then
		how="cache reads $r"
		read -r d2 <"$sys/dirty_data"
		return 0
	fi
	return 1
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

declare -A runs races
total_races=0
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

	wb_scatter "$W/v1" /dev/$dev $off1 4096 32768 $RANDOM
	expect_put "$W/v1" $off1
	d1=$(wb_dirty $dev)
	[ "$d1" -ge $len1 ] || hc_fail "iteration $i: dirty_data $d1 after writing $len1 bytes in writeback"

	kw0=$(wb_get $dev writeback_keys_written)
	wb_set $dev writeback_running 1
	how=
	d2=0
	end=$((SECONDS + 5))
	until busy; do
		if [ $SECONDS -ge $end ]; then
			how=
			d2=$(wb_dirty $dev)
			break
		fi
	done
	# Sometimes a little later, into the backing writes.
	if [ $((RANDOM % 3)) = 0 ]; then
		sleep 0.0$((RANDOM % 5 + 1))
		read -r d2 <"$sys/dirty_data"
	fi
	case $kind in
	writearound | none | writethrough)
		io_mode $dev "$kind"
		wb_scatter "$W/v2" /dev/$dev $off2 4096 65536 $RANDOM ;;
	sequential)
		io_mode $dev writethrough
		io_cutoff $dev 512k
		io_put "$W/v2" /dev/$dev $off2 ;;
	discard)
		blkdiscard -o $off2 -l $len2 /dev/$dev || hc_fail "blkdiscard -o $off2 -l $len2 failed" ;;
	zeroout)
		blkdiscard -z -o $off2 -l $len2 /dev/$dev || hc_fail "blkdiscard -z -o $off2 -l $len2 failed" ;;
	esac
	expect_put "$W/v2" $off2
	raced=0
	if [ -n "$how" ] && [ "$d2" -gt 0 ]; then
		raced=1
		total_races=$((total_races + 1))
	fi
	runs[$kind]=$((${runs[$kind]:-0} + 1))
	races[$kind]=$((${races[$kind]:-0} + raced))
	wb_wait_clean $dev 60 "iteration $i ($kind)"
	kw=$(($(wb_get $dev writeback_keys_written) - kw0))
	hc_log "#$i $kind: v1 [$off1, +$len1) v2 [$off2, +$len2); in flight at v2: ${how:-nothing}, dirty_data $d2 of $d1; $kw keys written back; clean after $WB_SECS s"
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
line="races:"
for kind in "${kinds[@]}"; do
	line+=" $kind ${races[$kind]}/${runs[$kind]}"
done
hc_log "$line; total $total_races of $i iterations; $kw keys written back; bypass_sequential +$seqb"
[ $((total_races * 3)) -ge "$i" ] ||
	hc_fail "writeback was in flight at the newer write in only $total_races of $i iterations: the race was hardly run"
io_teardown
rm -rf "$W"
