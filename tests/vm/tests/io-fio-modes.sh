# Data integrity in every cache mode: fio randrw with crc32c verification
# (verify_backlog 64, verify_fatal), 512 B to 256 KiB blocks at 512-byte
# offsets (the set has 512-byte blocks and 128 KiB buckets, so most I/Os
# are unaligned to a bucket and many span two or more), iodepth 32, two
# jobs each on its own 24 MiB region (offset_increment, so each verifies
# only what it wrote), direct libaio, 10 passes over the regions (about
# 10 s under TCG; 20 under make check-long). Once in each of
# writethrough, writeback, writearound and none; then twice as many
# passes while a background loop switches cache_mode through all four,
# twice a second (at once a second, a 12 s run on 6.12 once switched only
# 11 times, under the 12 required). Then random writes in writeback, with
# writeback paused, leave the region dirty (the backing device holds
# other data): fio's verify_only finds it intact in every mode (dirty
# data wins; a sequential read past the cutoff returns it too) and after
# a stop and register of the set. Any fio error or verify failure fails,
# and so does a stall (no I/O completing for 60 s: the blocked tasks go
# to the kernel log); errors stays 0 and the consistency check says ok
# after every run.
# timeout: 480

. "$HC_ROOT/tests/vm/io-lib.sh"

io_setup 128 256 --bucket 128k
dev=hcache0
sys=$(io_sysdir $dev)
jobsize=24m
# About 10 s a mode under TCG, 20 s for the switching run (twice that
# under make check-long).
loops=10
[ "${HC_LONG:-}" = 1 ] && loops=20
region=$((2 * 24 << 20))	# both jobs, from 1 MiB on

# run NAME SEED [LOOPS]: the verifying fio job; fails the test on any error.
run() {
	local t0 rc
	t0=$(io_now)
	fio --name="$1" --filename=/dev/$dev --rw=randrw --bsrange=512-256k \
		--iodepth=32 --numjobs=2 --offset=1m --size=$jobsize \
		--offset_increment=$jobsize --ioengine=libaio --direct=1 \
		--verify=crc32c --verify_backlog=64 --verify_fatal=1 \
		--randseed="$2" --loops="${3:-$loops}" --group_reporting \
		--output="/tmp/fio.$1" &
	io_watch $! && rc=0 || rc=$?
	[ $rc = 0 ] || hc_fail "fio $1 exited with $rc: $(grep -i -E 'error|verify|bad' "/tmp/fio.$1" | head -10)"
	io_fio_ok "/tmp/fio.$1" || hc_fail "fio $1: $(grep -i -E 'error|verify|bad|err=' "/tmp/fio.$1" | head -10)"
	hc_log "$1: $(io_elapsed "$t0") s; $(grep -E '^ *(READ|WRITE):' "/tmp/fio.$1" | sed 's/,.*io=/ io=/; s/,.*//' | tr -s ' ' | tr '\n' ';')"
}

seed=10
for mode in writethrough writeback writearound none; do
	io_mode $dev $mode
	run "$mode" $seed
	seed=$((seed + 1))
	io_check
	hc_log "$mode: $(io_stats_line $dev)"
done

hc_log "again, switching cache_mode twice a second"
rm -f /tmp/switch.stop
trap 'touch /tmp/switch.stop' EXIT
(
	modes=(writethrough writeback writearound none)
	i=0
	while [ ! -e /tmp/switch.stop ]; do
		printf '%s\n' "${modes[i % 4]}" >"$sys/cache_mode" ||
			{ echo "switching to ${modes[i % 4]} failed" >&2; exit 1; }
		i=$((i + 1))
		sleep 0.5
	done
	echo $i >/tmp/switches
) &
switcher=$!
run switching $seed $((2 * loops))
touch /tmp/switch.stop
wait $switcher || hc_fail "the mode switcher failed"
n=$(cat /tmp/switches)
hc_log "switched cache_mode $n times; now $(cat "$sys/cache_mode")"
[ "$n" -ge 12 ] || hc_fail "only $n mode switches during the run"
io_check

# Dirty data wins whatever the mode: one more pass of random writes, in
# writeback, then fio's verify_only (the same job, reading back and
# checking what it wrote) in every mode and after a restart.
hc_log "dirty data reads back in every mode and after a restart"
# dirty NAME [FIO_OPTION...]: the writing job, or with --verify_only=1 its
# check.
dirty() {
	local name=$1 rc
	shift
	fio --name="$name" --filename=/dev/$dev --rw=randwrite --bsrange=512-256k \
		--iodepth=32 --numjobs=2 --offset=1m --size=$jobsize \
		--offset_increment=$jobsize --ioengine=libaio --direct=1 \
		--verify=crc32c --verify_fatal=1 --randseed=99 --group_reporting \
		--output="/tmp/fio.$name" "$@" &
	io_watch $! && rc=0 || rc=$?
	[ $rc = 0 ] && io_fio_ok "/tmp/fio.$name" ||
		hc_fail "fio $name exited with $rc: $(grep -i -E 'error|verify|bad' "/tmp/fio.$name" | head -10)"
}
io_mode $dev writeback
# Paused, or an idle device's writeback may clean it all before the count.
wb_set $dev writeback_running 0
dirty dirty
ndirty=$(grep -c ' d$' "$IO_DBG/keys" || true)
[ "$ndirty" -gt 0 ] || hc_fail "no dirty key after random writes in writeback"
io_get /dev/$dev $((1 << 20)) $region /tmp/seq
io_get_raw $((1 << 20)) $region /tmp/raw
! cmp -s /tmp/seq /tmp/raw || hc_fail "hcache0 reads what the backing device holds: the dirty data is lost"
io_cutoff $dev 0
io_get /dev/$dev $((1 << 20)) $region /tmp/cached
io_cutoff $dev 4M
cmp -s /tmp/seq /tmp/cached ||
	hc_fail "a sequential read past the cutoff returns other data than a cached read: $(cmp /tmp/seq /tmp/cached 2>&1 | head -1)"
hc_log "$ndirty dirty keys; the backing device holds other data"
for mode in writethrough writearound none writeback; do
	io_mode $dev $mode
	dirty "verify-$mode" --verify_only=1
done
io_restart
io_check
io_mode_is $dev writeback || hc_fail "cache_mode after restart: $(cat "$sys/cache_mode")"
for mode in none writethrough; do
	io_mode $dev $mode
	dirty "verify-restart-$mode" --verify_only=1
done
hc_log "the dirty data read back right in every mode, and after a restart"
hc_log "final: $(io_stats_line $dev); $(cat "$IO_SET/cache_available_percent")% available"
io_teardown
