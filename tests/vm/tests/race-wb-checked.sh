# Writeback against a newer write, in the window between writeback
# finding a run still current in the tree and the run becoming visible to
# later writes (data-safety path 1). The debug build's delay point
# wb_checked holds the writeback thread right there, for 3 s, so every
# iteration is in the window, not one in a thousand.
#
# Each iteration, over its own 1 MiB of hcache0 in writeback (writeback
# not running): version 1 (256 KiB of random data, one dirty key, one
# writeback run) is written; writeback starts and is held at the point;
# then version 2 goes over the middle 128 KiB, one kind per iteration:
#   writearound, none, writethrough  cache_mode switched, one 128 KiB write
#   sequential   writethrough, sequential_cutoff 64k: a sequential bypass
#   discard      blkdiscard (null_blk's discard zeroes: version 2 is zeros)
#   in-place     writeback, 32 writes of 4 KiB, each inside one of
#                version 1's dirty keys (64 KiB buckets cut version 1 into
#                several), which would go over it in place
#                (writes_in_place) had writeback not pinned the buckets:
#                then writeback would write version 1 and mark the keys
#                clean over version 2
# and its completion is timed. Once writeback is done, the raw backing
# device (at its data offset) and hcache0 must hold version 2 over the
# middle and version 1 around it. Before the fix, the newer write ended
# while writeback was held, then writeback wrote version 1 over it:
# the backing device held version 1 where version 2 belonged.
#
# Every kind is tried before the test fails, naming each that lost. The
# test checks it was in the window: the writeback thread reached the
# point before the newer write was issued, and was still held there when
# that write started (the hold is logged with how long the write took: a
# write that waits for the run ends after the hold).
# timeout: 300

. "$HC_ROOT/tests/vm/io-lib.sh"

KiB=1024
MiB=$((1024 * KiB))
hold_ms=$((3000 * ${HC_TIME_SCALE:-1})) # a slow (debug) kernel needs longer to fill the window
W=$(mktemp -d /tmp/race-wb.XXXXXX)
IO_BACK_ATTRS="discard=1 irqmode=2 completion_nsec=2000000" io_setup 64 128 --bucket 64k
dev=hcache0
sys=$(io_sysdir $dev)
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0
wb_set $dev writeback_percent 0
wb_set $dev writeback_delay 1
printf '1G\n' >"$sys/writeback_rate_minimum" 2>/dev/null || true

kinds=(writearound none writethrough sequential discard in-place)
bad=()
i=0
for kind in "${kinds[@]}"; do
	base=$((i * MiB))
	head -c $((256 * KiB)) /dev/urandom >"$W/v1"
	if [ "$kind" = discard ]; then
		head -c $((128 * KiB)) /dev/zero >"$W/v2"
	else
		head -c $((128 * KiB)) /dev/urandom >"$W/v2"
	fi
	io_mode $dev writeback
	io_put "$W/v1" /dev/$dev $base
	[ "$(wb_dirty $dev)" -gt 0 ] || hc_fail "$kind: version 1 is not dirty"

	hits=$(io_delay_arm wb_checked $hold_ms)
	wb_set $dev writeback_running 1
	io_delay_wait wb_checked "$hits"
	held_at=$(io_now)
	case $kind in
	writearound | none | writethrough) io_mode $dev "$kind" ;;
	sequential)
		io_mode $dev writethrough
		io_cutoff $dev 64k
		;;
	in-place) in_place0=$(io_stat $dev writes_in_place) ;;
	esac
	wstart=$(io_now)
	if [ "$kind" = discard ]; then
		blkdiscard -o $((base + 64 * KiB)) -l $((128 * KiB)) /dev/$dev ||
			hc_fail "$kind: blkdiscard failed"
	elif [ "$kind" = in-place ]; then
		for blk in $(seq 0 31); do
			dd if="$W/v2" of=/dev/$dev bs=4096 count=1 skip="$blk" \
				seek=$(((base + 64 * KiB) / 4096 + blk)) \
				oflag=direct conv=notrunc status=none ||
				hc_fail "$kind: writing block $blk failed"
		done
	else
		io_put "$W/v2" /dev/$dev $((base + 64 * KiB))
	fi
	wend=$(io_now)
	if [ "$kind" = in-place ] && [ "$(io_stat $dev writes_in_place)" != "$in_place0" ]; then
		bad+=("$kind: the write went in place while writeback held the key's data")
	fi
	sync /dev/$dev
	io_cutoff $dev 0
	hc_log "$kind: held at the point since $(io_elapsed_at "$held_at" "$wstart") s when the newer write started; it took $(io_elapsed_at "$wstart" "$wend") s (the hold: $((hold_ms / 1000)) s)"
	awk -v a="$held_at" -v b="$wstart" -v ms=$hold_ms 'BEGIN { exit !((b - a) * 1000 < ms) }' ||
		hc_fail "$kind: the newer write started after the hold ended: not in the window"

	io_mode $dev writeback
	wb_wait_clean $dev 60 "$kind"
	wb_set $dev writeback_running 0
	cp "$W/v1" "$W/want"
	dd if="$W/v2" of="$W/want" bs=64k seek=1 conv=notrunc status=none
	io_get_raw $base $((256 * KiB)) "$W/raw"
	io_get /dev/$dev $base $((256 * KiB)) "$W/got"
	if ! cmp -s "$W/raw" "$W/want"; then
		if cmp -s <(dd if="$W/raw" bs=64k skip=1 count=2 status=none) \
			  <(dd if="$W/v1" bs=64k skip=1 count=2 status=none); then
			bad+=("$kind: the backing device holds version 1 where version 2 was written: writeback overtook the newer write ($(wb_diff "$W/raw" "$W/want" $base))")
		else
			bad+=("$kind: the backing device: $(wb_diff "$W/raw" "$W/want" $base)")
		fi
	elif ! cmp -s "$W/got" "$W/want"; then
		bad+=("$kind: hcache0: $(wb_diff "$W/got" "$W/want" $base)")
	else
		hc_log "$kind: version 2 held on the backing device and through hcache0"
	fi
	i=$((i + 1))
done
hc_log "$i iterations, each held in the window ($(io_point_hits delay wb_checked) holds)"
[ ${#bad[@]} = 0 ] || hc_fail "$(printf '%s; ' "${bad[@]}")"
io_teardown
