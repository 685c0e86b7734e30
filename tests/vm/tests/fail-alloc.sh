# Memory pressure for real (data-safety path 8): the debug kernel's
# failslab and fail_page_alloc fail 5% of the allocations made with
# hcache's own code on the stack (require-start/require-end: the module's
# text, from /proc/kallsyms; ignore-gfp-wait off, so that GFP_NOIO ones
# fail too), while fio writes and verifies through hcache0 in writeback
# and reads promote misses (admission_policy first_access), with the
# shrinker evicting leaves (drop_caches) all the while. Both disks are
# written whole first, so that null_blk, called from hcache's submissions,
# allocates no page (it would fail them too, as a failing disk). The set
# must stay up with no error counted, fio's verify must be clean, the
# consistency check must pass, and the injection must have failed at
# least 100 allocations (counted down from "times"). The same after a
# restart with the injection off.
# debug-kernel-only: failslab and fail_page_alloc are in the debug kernel's config, not Debian's
# timeout: 400

. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
W=$(mktemp -d /tmp/fail-alloc.XXXXXX)
for f in failslab fail_page_alloc; do
	[ -d /sys/kernel/debug/$f ] || hc_fail "no /sys/kernel/debug/$f: not the debug kernel"
	[ -e /sys/kernel/debug/$f/require-start ] ||
		hc_fail "no $f/require-start: the kernel lacks CONFIG_FAULT_INJECTION_STACKTRACE_FILTER"
done
IO_PREFILL=1 IO_BACK_ATTRS="discard=1 irqmode=2 completion_nsec=100000" io_setup 128 512 --bucket 64k
dev=hcache0
sys=$(io_sysdir $dev)
io_mode $dev writeback
io_cutoff $dev 0
hc_write "$sys/admission_policy" first_access

addrs=$(awk '$4 == "[hcache]" && ($2 == "t" || $2 == "T") { print $1 }' /proc/kallsyms | sort)
start=${addrs%%$'\n'*}
end=${addrs##*$'\n'}
if [ -z "$start" ] || [ -z "$end" ] || [ "$start" = 0000000000000000 ]; then
	hc_fail "no text addresses of hcache in /proc/kallsyms"
fi
# The last function's body runs past its symbol: a page more covers it
# (nothing else is loaded as a module in the debug kernel).
end=$(printf '%x' $((0x$end + 65536)))
hc_log "hcache's text: 0x$start to 0x$end"

# Injected failures count down "times" from this (the log lines of verbose
# mode are rate-limited, so they cannot count them).
budget=1000000

inject() { # inject PROBABILITY
	local f d
	for f in failslab fail_page_alloc; do
		d=/sys/kernel/debug/$f
		echo 0 >"$d/probability"
		echo "0x$start" >"$d/require-start"
		echo "0x$end" >"$d/require-end"
		echo 32 >"$d/stacktrace-depth"
		echo N >"$d/ignore-gfp-wait"
		echo 1 >"$d/interval"
		echo $budget >"$d/times"
		echo 1 >"$d/verbose"
		echo "$1" >"$d/probability"
	done
	[ -e /sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem ] &&
		echo N >/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem
	return 0
}

head -c $((16 * MiB)) /dev/urandom >"$W/raw"
io_put "$W/raw" "$IO_BDEV" $((IO_OFFSET * 512 + 256 * MiB))
inject 5
( while [ ! -e "$W/stop" ]; do echo 3 >/proc/sys/vm/drop_caches; sleep 0.5; done ) &
evicter=$!
fio --name=alloc --filename=/dev/$dev --direct=1 --ioengine=psync --rw=randwrite \
	--bs=4k --size=48M --verify=crc32c --do_verify=1 --output="$W/fio.out" >/dev/null 2>&1 &
fio_pid=$!
io_watch $fio_pid 180 && rc=0 || rc=$?
[ $rc = 0 ] && io_fio_ok "$W/fio.out" ||
	hc_fail "fio with allocations failing (status $rc): $(grep -i -E 'err|verify' "$W/fio.out" | head -5)"
for pass in promoted hit; do
	io_get /dev/$dev $((256 * MiB)) $((16 * MiB)) "$W/got"
	wb_same "16 MiB of the backing device through hcache0 ($pass)" "$W/got" "$W/raw" $((256 * MiB))
done
failed=$((2 * budget - $(cat /sys/kernel/debug/failslab/times) - $(cat /sys/kernel/debug/fail_page_alloc/times)))
inject 0
touch "$W/stop"
wait $evicter
hc_log "allocations failed by the injection: $failed; $(io_stats_line $dev); set errors $(cat "$IO_SET/errors")"
[ -d "$IO_SET" ] || hc_fail "the set is gone: allocation failures failed it"
[ "$failed" -ge 100 ] || hc_fail "only $failed allocations failed: the injection did not reach hcache"
io_check
io_restart
fio --name=alloc --filename=/dev/$dev --direct=1 --ioengine=psync --rw=randwrite \
	--bs=4k --size=48M --verify=crc32c --verify_only --output="$W/fio2.out" >/dev/null 2>&1 &&
	io_fio_ok "$W/fio2.out" || hc_fail "after a restart: $(grep -i -E 'err|verify' "$W/fio2.out" | head -5)"
hc_log "after a restart: fio verify clean"
io_teardown
