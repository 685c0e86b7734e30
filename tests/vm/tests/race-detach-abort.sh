# A detach (or unregister) that gives up after it stopped caching
# (data-safety path 5). To detach, a backing device first stops taking
# cached I/O and drains what is in flight, so that no write makes it
# dirty once it is found clean; then it checks its state and writes its
# superblock. If that fails (dirty data found, or the superblock write
# fails), the cache is used again. Bios that came meanwhile must not have
# gone around the cache: had they, the cache would come back with clean
# keys now stale and dirty keys hiding the newer data. The debug build's
# delay point detach_drained holds the detach right after the drain for
# 3 s, so every round is in that window.
#
#   detach      writethrough, version 1 cached (clean); the detach's
#               superblock write fails (the debug build's fault point
#               detach_sb), so the detach gives up; version 2 is written
#               over the range during the hold. Afterwards the device is
#               still attached and hcache0 must read version 2 (a stale
#               clean key reads version 1).
#   unregister  writeback, version 1 dirty; the set is unregistered, and
#               the device, whose dirty data keeps it from detaching, stops
#               with the set; version 2 is written during the hold. Once
#               the cache device and the backing device are registered
#               again, hcache0 must read version 2 and, written back, so
#               must the backing device (a dirty key hiding version 2 reads
#               version 1, and writeback then writes it over version 2).
#
# The newer write must start during the hold (checked). Its completion
# may wait for the detach to decide (the fix holds such bios until then).
# timeout: 300
# expect-log: cannot detach

. "$HC_ROOT/tests/vm/io-lib.sh"

KiB=1024
MiB=$((1024 * KiB))
hold_ms=$((3000 * ${HC_TIME_SCALE:-1})) # a slow (debug) kernel needs longer to fill the window
W=$(mktemp -d /tmp/race-detach.XXXXXX)
IO_BACK_ATTRS="irqmode=2 completion_nsec=1000000" io_setup 64 128 --bucket 64k
dev=hcache0
sys=$(io_sysdir $dev)
io_cutoff $dev 0
bad=()

# newer_write WHAT FILE OFFSET: during the hold, write FILE over OFFSET in
# the background; sets writer to its pid and checks it started in time.
newer_write() {
	local held_at=$EPOCHREALTIME
	io_put "$2" /dev/$dev "$3" &
	writer=$!
	awk -v a="$held_at" -v b="$EPOCHREALTIME" -v ms=$hold_ms 'BEGIN { exit !((b - a) * 1000 < ms) }' ||
		hc_fail "$1: the newer write started after the hold ended: not in the window"
}

# --- detach, its superblock write failing ---------------------------------
head -c $((128 * KiB)) /dev/urandom >"$W/v1"
head -c $((128 * KiB)) /dev/urandom >"$W/v2"
io_put "$W/v1" /dev/$dev 0
io_get /dev/$dev 0 $((128 * KiB)) "$W/got"
wb_same "detach: version 1" "$W/got" "$W/v1"
io_fault_arm detach_sb >/dev/null
hits=$(io_delay_arm detach_drained $hold_ms)
( printf '1\n' >"$sys/detach" ) 2>"$W/detach.err" &
detacher=$!
io_delay_wait detach_drained "$hits"
newer_write detach "$W/v2" 0
wait $detacher && hc_fail "detach: the detach succeeded although its superblock write failed"
wait $writer || hc_fail "detach: the newer write failed"
hc_log "detach: gave up as it should ($(tr -d '\n' <"$W/detach.err")); fault hits $(io_point_hits fail detach_sb)"
io_attached $dev || hc_fail "detach: the device is no longer attached after the detach gave up"
io_get /dev/$dev 0 $((128 * KiB)) "$W/got"
if cmp -s "$W/got" "$W/v1"; then
	bad+=("detach: hcache0 reads version 1 after version 2 was written: the cache came back with a stale clean key")
elif ! cmp -s "$W/got" "$W/v2"; then
	bad+=("detach: hcache0: $(wb_diff "$W/got" "$W/v2")")
else
	hc_log "detach: version 2 reads back"
fi
io_get_raw 0 $((128 * KiB)) "$W/raw"
cmp -s "$W/raw" "$W/v2" || bad+=("detach: the backing device (writethrough): $(wb_diff "$W/raw" "$W/v2")")

# --- unregister, the device dirty ------------------------------------------
base=$MiB
head -c $((128 * KiB)) /dev/urandom >"$W/v1"
head -c $((128 * KiB)) /dev/urandom >"$W/v2"
io_mode $dev writeback
wb_set $dev writeback_running 0
io_put "$W/v1" /dev/$dev $base
[ "$(wb_dirty $dev)" -gt 0 ] || hc_fail "unregister: version 1 is not dirty"
hits=$(io_delay_arm detach_drained $hold_ms)
hc_write "$IO_SET/unregister" 1
io_delay_wait detach_drained "$hits"
newer_write unregister "$W/v2" $base
wait $writer || hc_log "unregister: the newer write failed (the device stopped under it)"
hc_wait test ! -e "$IO_SET"
hc_wait io_no_hcache
hc_log "unregister: the set is gone, the dirty device stopped with it"
hc_write /sys/fs/hcache/register "$IO_CDEV"
hc_wait test -d "$IO_SET"
[ "$(io_register_backing "$IO_BDEV")" = $dev ] || hc_fail "unregister: the backing device came back as another device"
io_get /dev/$dev $base $((128 * KiB)) "$W/got"
if cmp -s "$W/got" "$W/v1"; then
	bad+=("unregister: hcache0 reads version 1 after version 2 was written: a dirty key hides the newer write")
elif ! cmp -s "$W/got" "$W/v2"; then
	bad+=("unregister: hcache0: $(wb_diff "$W/got" "$W/v2" $base)")
else
	hc_log "unregister: version 2 reads back"
fi
wb_set $dev writeback_percent 0
wb_set $dev writeback_running 1
wb_wait_clean $dev 60 unregister
io_get_raw $base $((128 * KiB)) "$W/raw"
if ! cmp -s "$W/raw" "$W/v2"; then
	bad+=("unregister: the backing device after writeback: $(wb_diff "$W/raw" "$W/v2" $base)")
fi
hc_log "2 rounds, each held in the window ($(io_point_hits delay detach_drained) holds)"
[ ${#bad[@]} = 0 ] || hc_fail "$(printf '%s; ' "${bad[@]}")"
io_teardown
