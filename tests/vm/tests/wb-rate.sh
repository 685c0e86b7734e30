# The writeback rate: its files, and the controller holding dirty data in
# its band while foreground I/O goes on.
#
# 1. The tunables: each file reads as a plain number (writeback_rate_debug
#    as "name: value" lines), valid values are taken and read back
#    (writeback_rate with k/M suffixes, with writeback_rate_update_seconds
#    60 so that no update overwrites it meanwhile), invalid ones refused
#    with the value unchanged (writeback_percent 200, 51, -1, abc;
#    writeback_rate_update_seconds 0 and 61; writeback_running 2; text in
#    the rate files; a write to the read-only dirty_data).
# 2. The controller rules: a 128 MiB cache, a slow backing device (null_blk,
#    3 ms a request), writeback, writeback_percent 10,
#    writeback_rate_update_seconds 1. Dirty data is first brought to the
#    target with writeback paused; then fio writes 4 KiB at random places
#    at 40 KiB/s (--rate) for 150 s while writeback_rate_debug is sampled
#    every second, from the load's first write on (fio can take seconds to
#    start on a debug kernel); the trace (time, rate, dirty, target, P, I,
#    D, idle, in_band) is printed. The load is small enough for the default
#    controller (P 1/40 s, I 1/6400 s^2: a time constant of about 80 s) to
#    keep dirty data within the band of a 12.8 MiB target (+-1/8 of it) as
#    it raises the rate from the minimum to the load's. It passes when:
#      - idle is 0 in every sample from the 5th second of the load on (the
#        controller, not the full-speed idle path, sets the rate);
#      - in_band is 1 in each of the load's last 30 samples;
#      - the rate is steady over those 30 samples: the largest at most
#        twice the smallest, and their median within 1/4 to 4 times the
#        load's 40 KiB/s (writeback keeps pace with the inflow).
#    A controller that never raised the rate would let dirty data climb
#    out of the band; pacing that did not hold writeback to the rate would
#    empty it below the band.
# 3. When the load stops, idle turns 1 within 5 s and dirty_data reaches 0
#    within 30 s (full speed; the drain rate is printed).
# timeout: 300
# one-kernel: a 3.5 min timing test of the rate controller's math, which is the same on both kernels
# long-only: a 3.5 min timing test against wall-clock time, run alone; the controller's math has unit tests (tests/unit)
# alone: the rate controller is watched against wall-clock time

. "$HC_ROOT/tests/vm/io-lib.sh"

KiB=1024
MiB=$((1 << 20))
load_rate=$((40 * KiB))
load_secs=150
window=30
W=$(mktemp -d /tmp/wb-rate.XXXXXX)
IO_BACK_ATTRS="irqmode=2 completion_nsec=3000000" io_setup 128 1024
dev=hcache0
sys=$(io_sysdir $dev)
io_mode $dev writeback
io_cutoff $dev 0

hc_log "part 1: the files"
files="dirty_data writeback_running writeback_percent writeback_delay writeback_rate
	writeback_rate_update_seconds writeback_rate_p_term_inverse
	writeback_rate_i_term_inverse writeback_rate_d_term writeback_rate_minimum
	writeback_keys_written writeback_sectors_written writeback_backing_writes detaching"
line=
for f in $files; do
	v=$(wb_get $dev "$f") || exit 1
	line+=" $f=$v"
done
hc_log "defaults:$line"
[ "$(cat "$sys/writeback_running")" = 1 ] || hc_fail "writeback_running defaults to $(cat "$sys/writeback_running")"
[ "$(cat "$sys/writeback_percent")" = 10 ] || hc_fail "writeback_percent defaults to $(cat "$sys/writeback_percent")"
dbg=$(wb_rate_debug $dev)
case " $dbg " in
*" ? "*) hc_fail "writeback_rate_debug lacks a line: $(tr '\n' ';' <"$sys/writeback_rate_debug")" ;;
esac
hc_log "writeback_rate_debug: $(tr '\n' ';' <"$sys/writeback_rate_debug")"

# takes FILE VALUE [READ_BACK]: the write is taken and FILE reads
# READ_BACK (default VALUE).
takes() {
	wb_set $dev "$1" "$2"
	[ "$(cat "$sys/$1")" = "${3:-$2}" ] ||
		hc_fail "$1 reads '$(cat "$sys/$1")' after writing '$2' (expected ${3:-$2})"
}
# refused FILE VALUE: the write fails and FILE keeps its value.
refused() {
	local before err
	before=$(cat "$sys/$1")
	if err=$( { printf '%s\n' "$2" >"$sys/$1"; } 2>&1 ); then
		hc_fail "writing '$2' to $1 succeeded"
	fi
	[ "$(cat "$sys/$1")" = "$before" ] ||
		hc_fail "$1 changed from '$before' to '$(cat "$sys/$1")' on a refused write of '$2'"
	hc_log "refused: '$2' > $1 (${err##*: })"
}
takes writeback_percent 0
takes writeback_percent 50
refused writeback_percent 200
refused writeback_percent 51
refused writeback_percent -1
refused writeback_percent abc
takes writeback_percent 10
takes writeback_delay 5
takes writeback_delay 30
takes writeback_rate_update_seconds 60
refused writeback_rate_update_seconds 0
refused writeback_rate_update_seconds 61
takes writeback_rate 10M $((10 * MiB))
takes writeback_rate 8k 8192
takes writeback_rate 1048576
refused writeback_rate abc
refused writeback_running 2
refused writeback_running abc
takes writeback_running 0
takes writeback_running 1
for f in writeback_rate_p_term_inverse writeback_rate_i_term_inverse writeback_rate_d_term writeback_rate_minimum; do
	v=$(cat "$sys/$f")
	takes $f $((v * 2))
	refused $f abc
	refused $f -1
	takes $f "$v"
done
# 0 turns the integral off.
v=$(cat "$sys/writeback_rate_i_term_inverse")
takes writeback_rate_i_term_inverse 0
takes writeback_rate_i_term_inverse "$v"
refused dirty_data 0
refused writeback_keys_written 0
takes writeback_rate_update_seconds 1

hc_log "part 2: the controller under a steady load"
wb_set $dev writeback_running 0
sleep 2
read -r _ _ target _ <<<"$(wb_rate_debug $dev)"
hc_log "target $target bytes; bringing dirty data to it with writeback paused"
[ "$target" -gt $((4 * MiB)) ] || hc_fail "target $target is not about 10% of a 128 MiB cache"
region=$((768 * MiB))
fio --name=prefill --filename=/dev/$dev --rw=randwrite --bs=4k --size=$region \
	--io_size=$((target / 4096 * 4096)) --iodepth=16 --ioengine=libaio --direct=1 \
	--randrepeat=0 --randseed=1 --output="$W/prefill.fio" >/dev/null 2>&1 ||
	hc_fail "fio prefill failed: $(tail -5 "$W/prefill.fio")"
hc_log "dirty_data $(wb_dirty $dev) for target $target"
wb_set $dev writeback_running 1
writes0=$(io_bstat /dev/$dev 5)
fio --name=load --filename=/dev/$dev --rw=randwrite --bs=4k --size=$region \
	--rate=$load_rate --iodepth=1 --ioengine=libaio --direct=1 --time_based \
	--runtime=$load_secs --randrepeat=0 --randseed=2 --output="$W/load.fio" >/dev/null 2>&1 &
pid=$!
trace=$W/trace
: >"$trace"
load_started() { [ "$(io_bstat /dev/$dev 5)" -gt "$writes0" ]; }
hc_wait load_started
t0=$(io_now)
# The trace: writeback_rate_debug, then dirty_data itself and the keys
# written back so far.
printf '%6s %10s %10s %10s %9s %9s %9s %4s %7s %10s %7s\n' t rate dirty target P I D idle in_band dirty_data keys
while :; do
	sleep 1
	t=$(io_elapsed "$t0")
	read -r rate dirty target p i d idle inb <<<"$(wb_rate_debug $dev)"
	live=$(wb_dirty $dev)
	keys=$(wb_get $dev writeback_keys_written)
	# A sample counts only if the load ran all along.
	kill -0 $pid 2>/dev/null || break
	printf '%6s %10s %10s %10s %9s %9s %9s %4s %7s %10s %7s\n' "$t" "$rate" "$dirty" "$target" "$p" "$i" "$d" "$idle" "$inb" "$live" "$keys"
	echo "$t $rate $dirty $target $p $i $d $idle $inb $live $keys" >>"$trace"
done
wait $pid || hc_fail "fio load failed: $(tail -5 "$W/load.fio")"
tend=$(io_now)
hc_log "load: $(grep -E '^ *WRITE:' "$W/load.fio" | tr -s ' ')"
hc_log "hcache0: $(io_stats_line $dev); bypass_full $(io_stat $dev bypass_full), bypass_mode $(io_stat $dev bypass_mode); cache_available_percent $(cat "$IO_SET/cache_available_percent")"
n=$(wc -l <"$trace")
[ "$n" -ge $((window + 10)) ] || hc_fail "only $n samples during the load"
verdict=$(awk -v w=$window -v n="$n" -v load=$load_rate '
	$1 >= 5 && $8 != 0 { busy_idle++ }
	NR > n - w {
		if ($9 != 1) out++
		r[++k] = $2; dsum += $3 - $4
		if (min == "" || $2 < min) min = $2
		if ($2 > max) max = $2
	}
	END {
		# median of the window
		for (a = 1; a <= k; a++) for (b = a + 1; b <= k; b++) if (r[b] < r[a]) { x = r[a]; r[a] = r[b]; r[b] = x }
		med = (k % 2) ? r[(k + 1) / 2] : (r[k / 2] + r[k / 2 + 1]) / 2
		printf "last %d samples: rate min %d, median %d, max %d (load %d); mean dirty - target %d; out of band %d; idle=1 samples after 5 s %d\n", k, min, med, max, load, dsum / k, out, busy_idle
		bad = ""
		if (busy_idle) bad = bad "idle was 1 under load; "
		if (out) bad = bad "out of the band in the last " w " samples; "
		if (max > 2 * min) bad = bad "the rate varies more than 2x; "
		if (med * 4 < load || med > 4 * load) bad = bad "the median rate is not within 1/4..4x the load; "
		if (bad != "") print "BAD: " bad
	}' "$trace")
hc_log "$verdict"
# Part 3 runs either way: its findings help explain a failure here.
failed=
case $verdict in
*BAD:*) failed="the controller did not settle: ${verdict#*BAD: }" ;;
esac

hc_log "part 3: idle, full speed"
# Dirty data when the load ended: the last sample's dirty_data.
d0=$(tail -n 1 "$trace" | awk '{ print $10 }')
went_idle=
while :; do
	el=$(io_elapsed "$tend")
	read -r rate _ _ _ _ _ idle _ <<<"$(wb_rate_debug $dev)"
	dirty=$(wb_dirty $dev)
	hc_log "t=+$el s after the load: idle $idle rate $rate dirty_data $dirty"
	[ -z "$went_idle" ] && [ "$idle" = 1 ] && went_idle=$el
	if [ -z "$went_idle" ] && [ "${el%.*}" -ge 5 ]; then
		failed+="${failed:+; }idle is still 0 5 s after the load stopped"
		break
	fi
	[ "$dirty" = 0 ] && break
	if [ "${el%.*}" -ge 30 ]; then
		failed+="${failed:+; }dirty_data still $dirty 30 s after the load stopped"
		break
	fi
	sleep 0.5
done
hc_log "idle after ${went_idle:-(never)} s; $((d0 - $(wb_dirty $dev))) of $d0 bytes drained in $el s after the load: $(awk -v b="$((d0 - $(wb_dirty $dev)))" -v s="$el" 'BEGIN { printf "%.0f", b / s }') bytes/s"
[ -z "$failed" ] || hc_fail "$failed"
io_teardown
rm -rf "$W"
