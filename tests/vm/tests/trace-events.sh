# hcache's trace events fire, with what they say (trace.h, man/hcache.7):
# with every event of the hcache system enabled, a sequential run past
# sequential_cutoff is traced as bypass_sequential, random reads as miss,
# their promotions as inserted and the second pass as hit, writeback-mode
# writes as cached, on /dev/hcache0's major,minor; enough writes to run
# the free lists down trace a refill, fsync a journal commit, writeback
# batches that wrote keys, trigger_gc a full GC run, and powering the
# cache device off (then reading through it) a set failure, "removed".
# timeout: 240
# one-kernel: the events' fields and call sites are the same code on both kernels; both build trace.h (static/build-w1)
# expect-log: hcache: .*: cache set .* failed: the cache device was removed
# expect-log: hcache: .*: cache set .*: (read|write|metadata|lookup|promotion|writeback).* failed
# expect-log: hcache: .*: cache set .*: .*(error -5|error -6|update failed half way)

. "$HC_ROOT/tests/vm/io-lib.sh"

tr=/sys/kernel/tracing
mountpoint -q $tr || mount -t tracefs nodev $tr
io_setup 64 256 --bucket 64k
dev=$(tr : , </sys/block/hcache0/dev)
for e in request promote writeback gc journal_commit refill set_fail; do
	[ -d "$tr/events/hcache/hcache_$e" ] || hc_fail "no trace event hcache_$e: $(ls $tr/events/hcache 2>&1)"
done
echo 8192 >$tr/buffer_size_kb
echo >$tr/trace
echo 1 >$tr/events/hcache/enable
echo 1 >$tr/tracing_on

# has PATTERN WHAT: the trace holds a line matching PATTERN (grep -E).
has() {
	grep -qE "$1" $tr/trace || hc_fail "no $2 in the trace (/$1/): $(grep -c hcache_ $tr/trace) hcache events, the last: $(grep hcache_ $tr/trace | tail -n 5)"
}

io_cutoff hcache0 1M
dd if=/dev/hcache0 of=/dev/null bs=64k count=64 iflag=direct status=none
has "hcache_request: $dev R [0-9]+ \+ [0-9]+ bypass_sequential" "sequential bypass"
io_cutoff hcache0 0
hc_write "$(io_sysdir hcache0)/admission_policy" first_access
for pass in 1 2; do
	fio --name=r$pass --filename=/dev/hcache0 --rw=randread --bs=4k --direct=1 \
		--ioengine=psync --offset=64m --size=1m --randseed=3 --output=/tmp/fio.r$pass ||
		hc_fail "fio pass $pass failed: $(tail -5 /tmp/fio.r$pass)"
	io_settle
done
has "hcache_request: $dev R [0-9]+ \+ 8 miss" "read miss"
has "hcache_promote: $dev [0-9]+ \+ 8 inserted" "promotion inserted"
has "hcache_request: $dev R [0-9]+ \+ 8 hit" "read hit"

io_mode hcache0 writeback
wb_set hcache0 writeback_running 0
fio --name=w --filename=/dev/hcache0 --rw=randwrite --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=8 --offset=128m --size=8m --fsync=256 \
	--output=/tmp/fio.w || hc_fail "fio writes failed: $(tail -5 /tmp/fio.w)"
has "hcache_request: $dev W [0-9]+ \+ 8 cached" "cached write"
has "hcache_refill: [0-9]+,[0-9]+ wanted [1-9][0-9]* invalidated [1-9][0-9]* ret 0" "refill"
has "hcache_journal_commit: [0-9]+,[0-9]+ seq [0-9]+ keys [1-9][0-9]* bytes [1-9][0-9]* ret 0" "journal commit with keys"
wb_set hcache0 writeback_percent 0
wb_set hcache0 writeback_running 1
wb_wait_clean hcache0 120 "writeback"
has "hcache_writeback: [0-9]+,[0-9]+ keys [1-9][0-9]* sectors [1-9][0-9]* ret 0" "writeback batch"
hc_write "$IO_SET/internal/trigger_gc" 1
hc_wait grep -qE "hcache_gc: [0-9]+,[0-9]+ full [0-9]+ ms buckets_moved [0-9]+ ret 0" $tr/trace
hc_log "$(grep -c hcache_request $tr/trace) request events; refills $(grep -c hcache_refill $tr/trace), commits $(grep -c hcache_journal_commit $tr/trace), writeback batches $(grep -c hcache_writeback $tr/trace)"

echo 0 >/sys/kernel/config/nullb/cache/power
# The set fails at the first error once the device is gone: a read of
# the cached hot set meets it (and is served from the backing device).
dd if=/dev/hcache0 of=/dev/null bs=4k skip=$((64 << 8)) count=256 iflag=direct status=none ||
	hc_fail "a read of clean data failed when the cache device went"
hc_wait test ! -e "$IO_SET"
has "hcache_set_fail: [0-9]+,[0-9]+ removed" "set failure"
echo 0 >$tr/events/hcache/enable
hc_log "every event fired"
hc_write "$(io_sysdir hcache0)/stop" 1
hc_wait io_no_hcache
hc_unload
