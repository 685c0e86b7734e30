# A promotion's collided flag against a newer writeback-mode write
# (data-safety path 6), at the two places where a read miss and its
# promotion join the tree of I/O in flight (track.c):
#  - read_track: a read joins at its first miss that may be promoted,
#    after a lookup made outside the tree (a hit never joins), and looks
#    the range up again once in. Without that second lookup, a write that
#    starts and ends between the first lookup and the join is missed;
#  - promote_track: the promotion takes the request's collided flag when
#    it is tracked itself. Read apart from the promotion's own tracking,
#    a write that starts and ends in between is missed.
# Either way the promotion, older data read from the backing device, is
# then inserted clean over the write's dirty key, and the acknowledged
# write is lost. The debug build's delay point holds the read right there
# for 3 s (times HC_TIME_SCALE), so every iteration is in the window.
#
# Each iteration, over its own 1 MiB of hcache0 in writeback (writeback
# not running, admission_policy first_access, so every miss is promoted):
# version 0 is written to the backing device itself; a 128 KiB direct read
# of it through hcache0 misses and is held at the point; version 1 is
# written over the same range through hcache0 and completes; the read
# goes on. Then hcache0 must read version 1 and the cache must still hold
# it dirty. The held read may see either version, block by block (the two
# overlap); the write must end while the read is held, which is checked,
# so an iteration that is not in the window fails rather than passes.
# timeout: 240

. "$HC_ROOT/tests/vm/io-lib.sh"

KiB=1024
MiB=$((1024 * KiB))
hold_ms=$((3000 * ${HC_TIME_SCALE:-1})) # a slow (debug) kernel needs longer to fill the window
W=$(mktemp -d /tmp/race-promote.XXXXXX)
IO_BACK_ATTRS="irqmode=2 completion_nsec=2000000" io_setup 64 128 --bucket 64k
dev=hcache0
sys=$(io_sysdir $dev)
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0
hc_write "$sys/admission_policy" first_access

bad=()
i=0
for run in read_track:1 read_track:2 promote_track:1 promote_track:2; do
	point=${run%:*} r=${run#*:}
	base=$((i * MiB))
	i=$((i + 1))
	head -c $((128 * KiB)) /dev/urandom >"$W/v0"
	head -c $((128 * KiB)) /dev/urandom >"$W/v1"
	io_put "$W/v0" "$IO_BDEV" $((IO_OFFSET * 512 + base))
	dirty0=$(wb_dirty $dev)

	hits=$(io_delay_arm "$point" $hold_ms)
	t0=$(io_now)
	dd if=/dev/$dev of="$W/read" bs=128k count=1 skip=$((base / (128 * KiB))) \
		iflag=direct status=none &
	reader=$!
	io_delay_wait "$point" "$hits"
	io_put "$W/v1" /dev/$dev $base
	wend=$(io_now)
	kill -0 $reader 2>/dev/null ||
		hc_fail "$point round $r: the read ended before the write did: not in the window"
	wait $reader || hc_fail "$point round $r: the held read failed"
	hc_log "$point round $r: the write ended $(io_elapsed_at "$t0" "$wend") s into the read's $((hold_ms / 1000)) s hold; the read took $(io_elapsed "$t0") s"
	# A read overlapping a write may see either version, block by block.
	python3 - "$W/read" "$W/v0" "$W/v1" <<'EOF' ||
import sys
r, a, b = (open(f, "rb").read() for f in sys.argv[1:])
sys.exit(any(r[o:o + 4096] not in (a[o:o + 4096], b[o:o + 4096])
             for o in range(0, len(r), 4096)))
EOF
		hc_fail "$point round $r: the held read returned a block of neither version"
	io_settle

	io_get /dev/$dev $base $((128 * KiB)) "$W/got"
	dirty=$(wb_dirty $dev)
	if cmp -s "$W/got" "$W/v0"; then
		bad+=("$point round $r: hcache0 reads version 0 after version 1 was written and acknowledged: the promotion went in over the write (dirty_data $dirty0 before, $dirty after)")
	elif ! cmp -s "$W/got" "$W/v1"; then
		if cmp -s <(head -c $((64 * KiB)) "$W/got") <(head -c $((64 * KiB)) "$W/v0"); then
			bad+=("$point round $r: hcache0 reads version 0 in the held fragment after version 1 was acknowledged: the promotion went in over the write")
		else
			bad+=("$point round $r: hcache0: $(wb_diff "$W/got" "$W/v1" $base)")
		fi
	elif [ "$dirty" -lt $((dirty0 + 128 * KiB)) ]; then
		bad+=("$point round $r: dirty_data $dirty0 before, $dirty after a 128 KiB writeback write")
	else
		hc_log "$point round $r: version 1 held, dirty ($dirty bytes dirty)"
	fi
done
hc_log "two rounds at each point, each held in the window ($(io_point_hits delay read_track) and $(io_point_hits delay promote_track) holds); miss collisions: $(io_stat $dev cache_miss_collisions)"
[ ${#bad[@]} = 0 ] || hc_fail "$(printf '%s; ' "${bad[@]}")"
# Version 1 reaches the backing device too.
wb_set $dev writeback_running 1
wb_set $dev writeback_percent 0
wb_wait_clean $dev 60
io_teardown
