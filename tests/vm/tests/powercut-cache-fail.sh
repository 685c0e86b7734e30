# Dirty data is dropped only once its replacement is durable on the
# backing device (data-safety path 2), checked with power cuts. Both
# devices are memory-backed null_blk disks with a volatile write cache
# (cache_size: writes stay in RAM until a flush or FUA, and are dropped
# when the disk is powered off), each under a dm-linear device that
# hcache uses. A power cut: both dm devices are suspended (nothing more
# reaches either disk), both disks are powered off, the dm devices get an
# error table so that hcache lets go, and the module is unloaded; then the
# disks are powered on again, the dm devices point at them again, and the
# set is registered as at boot.
#
# null_blk keeps in its volatile cache only writes to pages it never
# stored (an overwrite of a stored page goes to storage at once), so each
# case uses 64 KiB of the backing device never written before: version 0
# is what that reads, zeros. Version 1 is written through hcache0 in
# writeback and made durable (fsync): dirty in the cache, acknowledged.
# Then version 2 goes over the same 64 KiB:
#   wb-fua    writeback, an O_DSYNC write whose cache write fails (the
#             debug build's fault point cache_write: the device returns an
#             error for it), held (delay point write_fallback, 3 s) before
#             it goes to the backing device instead; power is cut there
#   wb-plain  the same with a plain write (its key's journal entry is
#             written by the timer meanwhile)
#   wt-fail   writethrough, a plain write whose cache write fails and whose
#             backing write works; it completes; power is cut 0.5 s later
#   wt-dirty  writethrough, a plain write that works, over the dirty data;
#             it completes; power is cut 0.5 s later
#   wb-flakey writeback, the cache device itself failing every write
#             (dm-flakey error_writes under it, metadata included), an
#             O_DSYNC write; the set fails; power is cut 0.5 s later
#   wt-stop   writethrough, a plain write over space nothing was cached
#             for, then hcache0 and the set stopped, then the cut: the
#             set's last journal write must not make the clean key durable
#             without the backing device flushed as it left the set;
#             hcache0 must read what the backing device holds
#   wt-clean  writethrough, a plain write over space nothing was cached
#             for (no version 1), not made durable; power is cut 0.5 s
#             later; hcache0 must read the same before and after a detach
#             (which drops the set's keys): a clean key must not be durable
#             before the backing device has its data
# After the cut: hcache0 must read version 1 or 2 (version 2 was never
# made durable, so either), and once written back, so must the backing
# device. Version 0 means acknowledged data was lost: the older dirty key
# was dropped (a whiteout, or a clean key over it) durably before version
# 2 was durable on the backing device, and the power cut lost version 2.
# Every case runs before the test fails, naming each that lost.
# timeout: 420
# expect-log: hcache: .*: cache set .*: (metadata )?write at (cache )?sector [0-9]+ failed: error -5
# expect-log: hcache: .*: cache set .*: update failed half way; metadata writes stop until re-registration
# expect-log: hcache: .*: cache set .* failed: its metadata can no longer be written
# expect-log: hcache: .*:   (dirty sectors|[0-9]+ dirty ranges)
# expect-log: hcache: .*: stopping: its failed cache set

# shellcheck disable=SC2034 # io-lib.sh's helpers read the IO_* variables
. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/vm/powercut-lib.sh"

KiB=1024
W=$(mktemp -d /tmp/pc-fail.XXXXXX)
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

# The disks, once: a cache and a slower backing disk, each with an 8 MiB
# volatile write cache.
pc_cache_mib=64 pc_cache_args="cache_size=8"
pc_backing_mib=128 pc_backing_args="cache_size=8 irqmode=2 completion_nsec=500000"
pc_disks
pc_format --block 512 --bucket 64k --writeback
pc_up
hc_log "set $IO_UUID on dm over null_blk with volatile caches: cache $IO_CDEV, backing $IO_BDEV as hcache0"

bad=()
i=0
for kind in wb-fua wb-plain wt-fail wt-dirty wb-flakey; do
	base=$((i * 1024 * KiB))
	head -c $((64 * KiB)) /dev/zero >"$W/v0"
	for v in 1 2; do
		head -c $((64 * KiB)) /dev/urandom >"$W/v$v"
	done
	io_mode hcache0 writeback
	io_cutoff hcache0 0
	wb_set hcache0 writeback_running 0
	dd if="$W/v1" of=/dev/hcache0 bs=64k seek=$((base / (64 * KiB))) oflag=direct \
		conv=fsync,notrunc status=none || hc_fail "$kind: writing version 1 failed"
	[ "$(wb_dirty hcache0)" -gt 0 ] || hc_fail "$kind: version 1 is not dirty"

	case $kind in
	wb-fua | wb-plain)
		flags=direct
		[ $kind = wb-fua ] && flags=direct,dsync
		io_fault_arm cache_write >/dev/null
		hits=$(io_delay_arm write_fallback $((3000 * ${HC_TIME_SCALE:-1})))
		dd if="$W/v2" of=/dev/hcache0 bs=64k seek=$((base / (64 * KiB))) \
			oflag=$flags conv=notrunc status=none 2>/dev/null &
		writer=$!
		io_delay_wait write_fallback "$hits"
		hc_log "$kind: the failed write is held before the backing device; cutting power"
		pc_cut
		wait $writer && hc_log "$kind: the write of version 2 succeeded" ||
			hc_log "$kind: the write of version 2 failed at the cut (allowed: never acknowledged)"
		;;
	wb-flakey)
		hc_dm_reload pc_c "0 $pc_c_sectors flakey $c_raw 0 0 3600 1 error_writes"
		dd if="$W/v2" of=/dev/hcache0 bs=64k seek=$((base / (64 * KiB))) \
			oflag=direct,dsync conv=notrunc status=none 2>/dev/null &&
			hc_log "$kind: the write of version 2 succeeded" ||
			hc_log "$kind: the write of version 2 failed (allowed: the cache device fails)"
		sleep 0.5
		hc_log "$kind: cutting power"
		pc_cut
		;;
	wt-fail | wt-dirty)
		io_mode hcache0 writethrough
		[ $kind = wt-fail ] && io_fault_arm cache_write >/dev/null
		io_put "$W/v2" /dev/hcache0 $base
		sleep 0.5
		hc_log "$kind: version 2 written (not made durable); cutting power"
		pc_cut
		;;
	esac
	pc_up
	io_get /dev/hcache0 $base $((64 * KiB)) "$W/got"
	if cmp -s "$W/got" "$W/v0"; then
		bad+=("$kind: hcache0 reads version 0 (zeros) after the cut: version 1, acknowledged and flushed, is lost")
	elif ! cmp -s "$W/got" "$W/v1" && ! cmp -s "$W/got" "$W/v2"; then
		bad+=("$kind: hcache0 reads neither version 1 nor 2: $(wb_diff "$W/got" "$W/v1" $base)")
	else
		cmp -s "$W/got" "$W/v1" && got=1 || got=2
		wb_set hcache0 writeback_percent 0
		wb_set hcache0 writeback_running 1
		wb_wait_clean hcache0 60 "$kind"
		io_get_raw $base $((64 * KiB)) "$W/raw"
		if cmp -s "$W/raw" "$W/v$got"; then
			hc_log "$kind: version $got after the cut, on hcache0 and, written back, on the backing device"
		elif cmp -s "$W/raw" "$W/v0"; then
			bad+=("$kind: hcache0 reads version $got, but once written back the backing device holds version 0 (zeros): the key over it was clean")
		else
			bad+=("$kind: hcache0 reads version $got, the backing device after writeback: $(wb_diff "$W/raw" "$W/v$got" $base)")
		fi
	fi
	i=$((i + 1))
done
# wt-stop: the same kind of write, then hcache0 stopped and the set
# stopped (which writes the journal, and the clean key with it) before
# the timer could (journal_delay_ms 10 s), then the cut. The backing
# device must have been flushed as it left the set: it must hold what
# hcache0 reads.
kind=wt-stop
base=$((i * 1024 * KiB))
head -c $((64 * KiB)) /dev/urandom >"$W/v2"
io_mode hcache0 writethrough
hc_write "$IO_SET/journal_delay_ms" 10000
io_put "$W/v2" /dev/hcache0 $base
hc_write "$sys/stop" 1
hc_wait test ! -e /dev/hcache0
io_stop
hc_log "$kind: version 2 written over nothing cached, hcache0 and the set stopped; cutting power"
pc_cut
pc_up
io_get /dev/hcache0 $base $((64 * KiB)) "$W/cached"
io_get_raw $base $((64 * KiB)) "$W/raw"
if ! cmp -s "$W/cached" "$W/raw"; then
	bad+=("$kind: hcache0 reads $(cmp -s "$W/cached" "$W/v2" && echo "version 2" || echo "other data") after the cut, the backing device $(cmp -s "$W/raw" "$W/v0" && echo "version 0 (zeros)" || echo "other data"): a clean key was durable before the backing device had its data")
else
	hc_log "$kind: the same through the cache and on the backing device ($(cmp -s "$W/cached" "$W/v2" && echo "version 2" || echo "version 0"))"
fi
i=$((i + 1))
# wt-clean: a writethrough write over space the cache held nothing of,
# not made durable, its clean key journalled by the timer; then the cut.
# Whichever version hcache0 reads after it, the backing device must hold
# the same, or the block reverts once the cache lets the key go: here, by
# detaching (its keys are dropped, and reads go to the backing device).
kind=wt-clean
base=$((i * 1024 * KiB))
head -c $((64 * KiB)) /dev/urandom >"$W/v2"
io_mode hcache0 writethrough
io_put "$W/v2" /dev/hcache0 $base
sleep 0.5
hc_log "$kind: version 2 written over nothing cached (not made durable); cutting power"
pc_cut
pc_up
io_get /dev/hcache0 $base $((64 * KiB)) "$W/cached"
hc_write "$sys/detach" 1
hc_wait wb_detached hcache0
io_get /dev/hcache0 $base $((64 * KiB)) "$W/uncached"
if cmp -s "$W/cached" "$W/v2" && ! cmp -s "$W/uncached" "$W/v2"; then
	bad+=("$kind: hcache0 read version 2 from the cache after the cut, and $(cmp -s "$W/uncached" "$W/v0" && echo "version 0 (zeros)" || echo "other data") once detached: a clean key was durable before the backing device had its data")
elif ! cmp -s "$W/cached" "$W/uncached"; then
	bad+=("$kind: hcache0 read one thing from the cache and another once detached")
else
	hc_log "$kind: the same through the cache and from the backing device alone ($(cmp -s "$W/cached" "$W/v2" && echo "version 2" || echo "version 0"))"
fi
i=$((i + 1))
[ ${#bad[@]} = 0 ] || hc_fail "$(printf '%s; ' "${bad[@]}")"
hc_log "$i cases, each cut: nothing acknowledged lost"
hc_write "$sys/stop" 1
io_stop
hc_unload
pc_remove
