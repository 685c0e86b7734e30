# The cost of a miss: with the default admission policy (second_access),
# cold reads of a full cache must not be slowed down. The backing device
# is slow (null_blk, 5 ms a request, 8 GiB of which only the superblock is
# ever written) and the cache fast. First the cache is filled in
# writethrough, by random reads, until the policy refuses misses (20% of
# its buckets free or fewer). Then fio reads 4 KiB at uniformly random
# places over all 8 GiB (randrepeat=0, norandommap), iodepth 32, for 20 s,
# so that nearly every read misses: in mode none (bypassed, nothing
# promoted) and in writethrough, alternating none, writethrough, none,
# writethrough, in the same guest. In writethrough at least 90% of the
# reads must be refused (bypass_policy) and the means are compared:
# writethrough must reach 0.97x the IOPS of none. The figures are logged
# on a line starting "RESULT miss-cost:". Not 1.0x: the blocks fio
# happens to read twice within a run (about 1,200 in 124,000 reads) are
# promoted, as they should be, and their CPU time shows (0.993x to 0.995x
# on 6.1 and 6.12, 2026-12-02).
#
# The clock: the guest runs on the instruction clock (run-test.sh), so
# the figures depend on what the guest executes and on the backing
# device's latency, not on how fast the host ran the guest just then. On
# the host's clock two runs of mode none in one guest were 8% apart
# (4275 and 4646 IOPS, CI, 2026-12-02), more than the margin the check
# then had (0.93x; that run gave 0.903x); on this one they agree to 0.5%
# (6206 and 6211 IOPS).
# The latency allows 32 / 5 ms = 6400 IOPS. A kernel whose mode none
# stays under half of that (the debug kernel: KASAN keeps the CPU busy
# without hcache's work) is bound by its CPU, not by the backing device,
# so there the ratio is logged, not checked.
#
# first_access promotes every miss: a page copy, a cache write and an
# insert each. On this clock that gives 0.79x none (6.12, 2026-12-02):
# the cost this test would show if refused misses grew that costly, and
# why first_access is not the default. The test does not measure it.
#
# One guest CPU: under TCG all guest CPUs share one host thread, switched
# round-robin, so with two a promotion running on one delays the I/O
# completions of the other whatever its priority (0.86x measured that
# way). With one, the guest's scheduler decides, as it would on a real
# machine with cores to spare, and promotions run at nice 19
# (hc_promote_thread()) in the time reads leave idle.
#
# The limit is in the guest's instruction clock, which jumps ahead while
# the guest waits for the host (its 9p root): on a loaded host the same
# run took 557 s of it on 6.1 (make check-long, 2026-12-04) against about
# 200 s idle. The IOPS ratios are what it checks.
# timeout: 900
# one-kernel: a 2 min timing comparison; mode none and writethrough run on both kernels in io-fio-modes
# long-only: a timing comparison, unsteady while other guests run; io-fio-modes covers modes none and writethrough on both kernels
# clock: instructions
# smp: 1

. "$HC_ROOT/tests/vm/io-lib.sh"

IO_BACK_ATTRS="irqmode=2 completion_nsec=5000000" io_setup 128 8192
dev=hcache0
grep -qx 'first_access \[second_access\]' "$(io_sysdir $dev)/admission_policy" ||
	hc_fail "admission_policy: $(cat "$(io_sysdir $dev)/admission_policy"), second_access wanted"

# run MODE: one measurement; prints its read IOPS.
run() {
	fio --name="cold-$1" --filename=/dev/$dev --rw=randread --bs=4k \
		--iodepth=32 --ioengine=libaio --direct=1 --time_based --runtime=20 \
		--randrepeat=0 --norandommap --output-format=terse --terse-version=3 \
		--output="/tmp/fio.$1" >/dev/null || hc_fail "fio in mode $1 failed: $(cat "/tmp/fio.$1")"
	awk -F';' '{ print $8 }' "/tmp/fio.$1"
}

# hits, reads: the reads counted, bypassed or not; the hits among them.
hits() {
	echo $(( $(io_stat $dev cache_hits) + $(io_stat $dev cache_bypass_hits) ))
}
reads() {
	echo $(( $(hits) + $(io_stat $dev cache_misses) + $(io_stat $dev cache_bypass_misses) ))
}
# refused: the misses the admission policy refused.
refused() {
	io_stat $dev bypass_policy
}
reads_ge() {
	[ "$(reads)" -ge "$1" ]
}
# Fill the cache: random reads promoted until the policy starts refusing.
io_mode $dev writethrough
for i in $(seq 12); do
	[ "$(refused)" -gt 1000 ] && break
	run fill >/dev/null
done
io_settle
n=$(refused)
hc_log "filled: $(io_stats_line $dev) bypass_policy=$n"
[ "$n" -gt 1000 ] || hc_fail "the cache never filled: second_access refused $n misses"

none=()
wt=()
for i in 1 2; do
	for mode in none writethrough; do
		io_mode $dev $mode
		io_settle
		h0=$(hits)
		t0=$(reads)
		w0=$(io_bstat "$IO_CDEV" 7)
		p0=$(refused)
		iops=$(run $mode)
		io_settle
		# The accounting may lag: wait until it shows this run's reads.
		io_wait 30 reads_ge $((t0 + iops * 10))
		h=$(( $(hits) - h0 ))
		t=$(( $(reads) - t0 ))
		w=$(( ($(io_bstat "$IO_CDEV" 7) - w0) / 2048 ))
		p=$(( $(refused) - p0 ))
		hc_log "$mode #$i: $iops IOPS; $h hits of $t reads; $p refused; $w MiB written to the cache; $(io_stats_line $dev)"
		[ $((h * 20)) -le "$t" ] ||
			hc_fail "$mode #$i: $h hits of $t reads: this does not measure misses"
		if [ $mode = none ]; then
			none+=("$iops")
		else
			[ $((p * 10)) -ge $((t * 9)) ] ||
				hc_fail "writethrough #$i: only $p of $t cold misses refused"
			wt+=("$iops")
		fi
	done
done
io_check
line=$(awk -v n1="${none[0]}" -v n2="${none[1]}" -v w1="${wt[0]}" -v w2="${wt[1]}" -v k="$HC_KVER" 'BEGIN {
	n = (n1 + n2) / 2; w = (w1 + w2) / 2
	printf "RESULT miss-cost: kernel %s, 4k random cold reads, backing 5 ms, iodepth 32: none %.0f IOPS (%s, %s), writethrough %.0f IOPS (%s, %s), ratio %.3f\n", k, n, n1, n2, w, w1, w2, w / n
}')
echo "$line"
echo "$line" >>"$HC_RESULTS/result"
ratio=${line##* }
none_mean=$(( (none[0] + none[1]) / 2 ))
if [ "$none_mean" -lt 3200 ]; then
	hc_log "mode none reached $none_mean IOPS, under half of the 6400 the backing device's latency allows: bound by the CPU, not by the backing device, so the ratio $ratio measures nothing here; not checked"
else
	awk -v r="$ratio" 'BEGIN { exit !(r >= 0.97) }' ||
		hc_fail "writethrough reaches only ${ratio}x the IOPS of none (at least 0.97 wanted)"
fi
io_teardown
