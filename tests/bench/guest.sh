# make bench, the guest half (run by tests/bench/run.sh through
# tests/vm/run-test.sh): in one boot, the same fio jobs on six systems built
# from identical null_blk disks, raw results into $HC_RESULTS for
# tests/bench/report.py. Nothing here judges; the report does.
#
# Disks (memory-backed null_blk, irqmode=2): every backing disk is
# BENCH_BACK_MIB at BENCH_BACK_NSEC a request, every cache disk
# BENCH_CACHE_MIB at BENCH_CACHE_NSEC; backing disks take requests of up to
# 1 MiB (max_sectors 2048) where null_blk allows it. Systems:
#   rawb     a backing disk alone (the floor)
#   rawc     a cache-speed disk as big as a backing disk (the ceiling)
#   hcache   hcache, buckets BENCH_BUCKET, 512-byte blocks, writeback,
#            admission_policy BENCH_ADMIT
#   bcache   stock bcache, the same bucket and block size, writeback; its
#            congestion bypass off (under TCG the "fast" disk's latency is
#            CPU time, which bcache would take for congestion)
#   dmcache  dm-cache, smq, writeback, 64 KiB blocks; the cache disk split
#            into 8 MiB of metadata and the rest for data (dm-linear)
#   dmwc     dm-writecache (ssd mode, 4 KiB blocks), write workloads only
# Everything else is left at its default, except where a workload says.
#
# Workloads (fio, libaio, direct, 4 KiB, pinned seeds; a repeated workload
# runs once on every system before the next repetition, the order rotated):
#   a  zipf:1.1 random reads over BENCH_ZIPF_MIB, three runs in a row
#      (IOPS logged every second: the warm-up curve)
#   g  then the same over another BENCH_ZIPF_MIB: three runs after the switch
#   b  uniform random reads, each block once (fio's random map), each run
#      over a region no earlier run touched: every read a miss
#   f  writeback of 32 MiB written with writeback paused (hcache, bcache;
#      dm-writecache writes back below its watermark only when told; dm-cache
#      cannot be paused): "dense" 4 KiB random writes covering the range,
#      "seq" 64 KiB sequential writes; backing write requests and sectors
#      from its stat, the time from resuming writeback until clean
#   c  4 KiB random writes over 64 MiB
#   d  random reads of what c wrote
#   e  mkfs.ext4 -F -q -E nodiscard on the whole device, five times, timed
#   h  4 KiB random writes over another 64 MiB, iodepth 1, an fsync after
#      each (a database's commits)
#
# Output in $HC_RESULTS: systems.tsv (what was set up, or why not), runs.tsv
# (one line per measurement), fio/*.json, fio/*_iops.*.log, env.txt,
# counters.txt (hcache's and bcache's counters after each workload).
# The limit is on the guest's clock, which on the instruction clock counts
# the waits for a quiet guest in full (skipped on the host): the 6.1 run of
# 2026-12-02 10:12 took 30 minutes on the host and hit 2700 s in e.
# timeout: 4500
# memory: 3G
# smp: 1

. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/bench/guest-lib.sh"

BENCH_BACK_MIB=$(bench_arg back_mib 8192)
BENCH_CACHE_MIB=$(bench_arg cache_mib 128)
BENCH_BUCKET=$(bench_arg bucket 64k)
BENCH_RUNTIME=$(bench_arg runtime 10)
BENCH_IODEPTH=$(bench_arg iodepth 32)
BENCH_ZIPF_MIB=$(bench_arg zipf_mib 512)
BENCH_ADMIT=$(bench_arg admit second_access)
R=$HC_RESULTS
mkdir -p "$R/fio"
: >"$R/systems.tsv"
: >"$R/runs.tsv"
: >"$R/counters.txt"

# ---- disks and systems ---------------------------------------------------
bench_disks

declare -A DEV BACK CDEV
SYSTEMS=()

# have SYSTEM DEV BACKING CACHE WHAT: SYSTEM is up as DEV.
have() {
	DEV[$1]=$2
	BACK[$1]=$3
	CDEV[$1]=$4
	SYSTEMS+=("$1")
	printf '%s\tok\t%s\t%s\n' "$1" "$2" "$5" >>"$R/systems.tsv"
	hc_log "system $1: $2 ($5)"
}

# lack SYSTEM REASON: SYSTEM could not be set up.
lack() {
	printf '%s\tmissing\t-\t%s\n' "$1" "$2" >>"$R/systems.tsv"
	hc_log "system $1 NOT SET UP: $2"
}

# nullb NAME back|cache: a backing or cache null_blk disk; prints its node.
nullb() {
	# shellcheck disable=SC2086 # lists of attributes
	if [ "$2" = back ]; then
		hc_nullb "$1" "$BENCH_BACK_MIB" $BENCH_BACK_ATTRS
	else
		hc_nullb "$1" "$BENCH_CACHE_MIB" $BENCH_CACHE_ATTRS
	fi
}

node=$(nullb rawb back)
have rawb "$node" "$node" - "backing null_blk alone"
# shellcheck disable=SC2086 # a list of attributes
node=$(hc_nullb rawc "$BENCH_BACK_MIB" $BENCH_CACHE_ATTRS)
have rawc "$node" "$node" - "cache-speed null_blk of the backing size"

# hcache: io_setup's null_blk disks "cache" and "back", as hcache0.
# shellcheck disable=SC2086
IO_CACHE_ATTRS=$BENCH_CACHE_ATTRS IO_BACK_ATTRS=$BENCH_BACK_ATTRS \
	io_setup "$BENCH_CACHE_MIB" "$BENCH_BACK_MIB" --bucket "$BENCH_BUCKET"
io_mode hcache0 writeback
HC_SYS=$(io_sysdir hcache0)
hc_write "$HC_SYS/admission_policy" "$BENCH_ADMIT"
have hcache /dev/hcache0 "$IO_BDEV" "$IO_CDEV" "hcache, bucket $(cat "$IO_SET/bucket_size"), $(cat "$IO_SET/nbuckets") buckets, writeback, admission $BENCH_ADMIT"

bc_setup() {
	local bc='' bb bcc s
	command -v make-bcache >/dev/null || { lack bcache "make-bcache not found (Debian package bcache-tools)"; return; }
	modprobe bcache || { lack bcache "modprobe bcache failed"; return; }
	bcc=$(nullb bccache cache)
	bb=$(nullb bcback back)
	make-bcache -C "$bcc" -B "$bb" --bucket "$BENCH_BUCKET" --block 512 >/tmp/make-bcache.out 2>&1 ||
		{ lack bcache "make-bcache failed: $(tail -1 /tmp/make-bcache.out)"; return; }
	echo "$bcc" >/sys/fs/bcache/register 2>/dev/null || true
	echo "$bb" >/sys/fs/bcache/register 2>/dev/null || true
	for _ in $(seq 300); do
		for s in /sys/block/bcache*/bcache/state; do
			[ -e "$s" ] || continue
			case $(cat "$s") in clean | dirty) bc=${s%/bcache/state}; bc=${bc##*/} ;; esac
		done
		[ -n "$bc" ] && break
		sleep 0.2
	done
	[ -n "$bc" ] || { lack bcache "no bcache device attached after registering"; return; }
	BC_SYS=/sys/block/$bc/bcache
	BC_SET=$(readlink -f "$BC_SYS/cache")
	echo writeback >"$BC_SYS/cache_mode"
	echo 0 >"$BC_SET/congested_read_threshold_us"
	echo 0 >"$BC_SET/congested_write_threshold_us"
	have bcache "/dev/$bc" "$bb" "$bcc" "bcache, bucket $(cat "$BC_SET/bucket_size"), writeback, congestion bypass off"
}
bc_setup

# dm_node NAME: /dev/mapper/NAME, made without udev.
dm_node() {
	dmsetup mknodes "$1" >/dev/null 2>&1 || true
	[ -b "/dev/mapper/$1" ]
}

dmc_setup() {
	local cb cc csz bsz
	if ! { modprobe dm-cache && modprobe dm-cache-smq; } 2>/dev/null; then
		lack dmcache "modprobe dm-cache / dm-cache-smq failed"
		return
	fi
	cc=$(nullb dmccache cache)
	cb=$(nullb dmcback back)
	csz=$(hc_size "$cc")
	bsz=$(hc_size "$cb")
	if ! { dmsetup create dmc-meta --table "0 16384 linear $cc 0" &&
		dmsetup create dmc-data --table "0 $((csz - 16384)) linear $cc 16384" &&
		dm_node dmc-meta && dm_node dmc-data &&
		dmsetup create dmc --table "0 $bsz cache /dev/mapper/dmc-meta /dev/mapper/dmc-data $cb 128 1 writeback smq 0" &&
		dm_node dmc; }; then
		lack dmcache "dmsetup create failed (see test.log)"
		return
	fi
	have dmcache /dev/mapper/dmc "$cb" "$cc" "dm-cache smq writeback, 64 KiB blocks, 8 MiB metadata on the cache disk"
}
dmc_setup

dmwc_setup() {
	local wb wc bsz
	modprobe dm-writecache 2>/dev/null || { lack dmwc "modprobe dm-writecache failed"; return; }
	wc=$(nullb wccache cache)
	wb=$(nullb wcback back)
	bsz=$(hc_size "$wb")
	if ! { dmsetup create dmwc --table "0 $bsz writecache s $wb $wc 4096 0" && dm_node dmwc; }; then
		lack dmwc "dmsetup create failed (see test.log)"
		return
	fi
	have dmwc /dev/mapper/dmwc "$wb" "$wc" "dm-writecache ssd mode, 4 KiB blocks, default watermarks"
}
dmwc_setup

{
	echo "kernel $HC_KVER"
	echo "date $(date -u +%FT%TZ)"
	echo "cpus $(nproc)"
	echo "cpu_model $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	# The crc32c driver hcache's checksums run on: of those registered,
	# the one of highest priority that a user holds (refcnt above 1).
	echo "crc32c $(awk -F' *: ' '$1 == "name" { n = $2 } $1 == "driver" { d = $2 }
		$1 == "priority" { p = $2 }
		$1 == "refcnt" && n == "crc32c" && $2 > 1 { print p, d }' /proc/crypto |
		sort -n | tail -1 | cut -d' ' -f2)"
	echo "memory_kib $(awk '/MemTotal/ { print $2 }' /proc/meminfo)"
	echo "back_mib $BENCH_BACK_MIB"
	echo "back_nsec $BENCH_BACK_NSEC"
	echo "cache_mib $BENCH_CACHE_MIB"
	echo "cache_nsec $BENCH_CACHE_NSEC"
	echo "bucket $BENCH_BUCKET"
	echo "runtime $BENCH_RUNTIME"
	echo "iodepth $BENCH_IODEPTH"
	echo "zipf_mib $BENCH_ZIPF_MIB"
	echo "back_attrs $BENCH_BACK_ATTRS"
	echo "clock $(bench_arg clock host)"
	echo "fio $(fio --version)"
	echo "mkfs $(mkfs.ext4 -V 2>&1 | head -1)"
} >"$R/env.txt"

# ---- helpers -------------------------------------------------------------
# is_up SYSTEM: it was set up.
is_up() {
	[ -n "${DEV[$1]:-}" ]
}

# order N SYSTEM...: the systems that are up, rotated by N, one a line.
order() {
	local n=$1 s up=()
	shift
	for s in "$@"; do
		is_up "$s" && up+=("$s")
	done
	[ ${#up[@]} -gt 0 ] || return 0
	for s in $(seq 0 $((${#up[@]} - 1))); do
		echo "${up[$(((s + n) % ${#up[@]}))]}"
	done
}

# idle: wait until, for a whole second, no disk of any system did
# I/O and the guest CPU was at least 80% idle, or 60 seconds passed: what
# one system's job left running (promotions, dm-cache's migrations,
# writeback, GC) would otherwise take CPU time from the next system's
# measurement (one guest CPU). A wait that runs out is logged with what was
# still busy in its last second: the disks whose stat moved and the CPU's
# idle share. A wait still busy after 5 s logs what was busy then and the
# tasks that had the CPU (once), and how long it took. All the waits
# together get IDLE_BUDGET seconds; once spent, each waits 3 s at most, so
# that make bench keeps its time limit whatever keeps busy.
# On the instruction clock (tests/bench/host-lib.sh) an idle guest's time
# is skipped, so waiting costs the host next to nothing; the waits there
# took longer (38 of 6 s or more in one 6.1 run, 3 on the host's clock),
# and 600 s ran out during e, whose second hcache mkfs then took 2.29 s
# against the first's 1.24.
IDLE_BUDGET=$(bench_arg idle_budget 1800)
# The waits fork nothing: under TCG a fork and exec costs the guest CPU
# tens of milliseconds, and cat, awk and sleep each second (as they were)
# kept the 6.1 guest 20 to 30% busy, so waits ran to their end with no
# disk moving and nothing else on the CPU, and spent the budget. Bash reads
# the files itself and sleeps in read -t on a pipe nothing writes to.
exec {IDLE_FD}<> <(:)
# idle_sample: one sample of what idle() watches, into its now (the stat
# lines of its files, in order) and c1 ("IDLE TOTAL": the guest CPU's idle,
# with iowait, and total jiffies, from /proc/stat).
idle_sample() {
	local f line _cpu user nice sys idle iowait irq softirq
	now=
	for f in "${files[@]}"; do
		read -r line <"$f"
		now+=$line$'\n'
	done
	read -r _cpu user nice sys idle iowait irq softirq _ </proc/stat
	c1="$((idle + iowait)) $((user + nice + sys + idle + iowait + irq + softirq))"
}
idle() {
	local files=() prev='' now d c0 c1 max=60 t0=$SECONDS i
	[ "$max" -le "$IDLE_BUDGET" ] || max=$IDLE_BUDGET
	[ "$max" -ge 3 ] || max=3
	for d in "${BACK[@]}" "${CDEV[@]}"; do
		[ "$d" = - ] && continue
		files+=("/sys/class/block/$(basename "$(readlink -f "$d")")/stat")
	done
	idle_sample
	c0=$c1
	for ((i = 1; i <= max; i++)); do
		idle_sample
		if [ "$now" = "$prev" ] && [ "${c1#* }" -gt "${c0#* }" ] &&
		   [ $((10 * (${c1% *} - ${c0% *}))) -ge $((8 * (${c1#* } - ${c0#* }))) ]; then
			IDLE_BUDGET=$((IDLE_BUDGET - (SECONDS - t0)))
			[ $((SECONDS - t0)) -lt 6 ] ||
				hc_log "idle after $((SECONDS - t0)) s (idle budget left: $IDLE_BUDGET s)"
			return 0
		fi
		# Still busy after 5 s: say once what was, then sample again
		# so that top's second is not counted.
		if [ "$i" = 6 ]; then
			hc_log "busy after 5 s: $(idle_busy "$prev" "$now" "$c0" "$c1")"
			idle_top "after 5 s"
			idle_sample
		fi
		prev=$now
		c0=$c1
		read -rt 1 -u "$IDLE_FD" _ || true
	done
	IDLE_BUDGET=$((IDLE_BUDGET - (SECONDS - t0)))
	idle_sample
	hc_log "still busy after $max s (last second: $(idle_busy "$prev" "$now" "$c0" "$c1")); measuring anyway (idle budget left: $IDLE_BUDGET s)"
	[ "$max" -ge 6 ] || idle_top "at the end"
}

# idle_busy WAS IS C0 C1: what was busy between two of idle_sample()'s
# samples (its now and c1, twice): the disks that moved, and how idle the
# CPU was.
idle_busy() {
	local was is i busy=
	mapfile -t was <<<"$1"
	mapfile -t is <<<"$2"
	for i in "${!files[@]}"; do
		[ "${was[$i]:-}" = "${is[$i]:-}" ] ||
			busy+="$(basename "$(dirname "${files[$i]}")") "
	done
	busy+=$(awk -v a="$3" -v b="$4" 'BEGIN { split(a, x, " "); split(b, y, " ")
		if (y[2] > x[2]) printf "CPU %d%% idle", 100 * (y[1] - x[1]) / (y[2] - x[2]) }')
	echo "${busy:-?}"
}

# idle_top WHEN: log the tasks that had more than 1% of the CPU over one
# second (one process, top; its second sample is the one over the second).
idle_top() {
	local line
	top -b -n 2 -d 1 -w 120 2>/dev/null |
		awk '/^top -/ { n++ } n == 2 && /^ *[0-9]/ && $9 > 1' | head -n 8 |
		while read -r line; do hc_log "  busy $1: $line"; done
}

# job WL SYSTEM RUN FIO-ARGS...: one fio job on SYSTEM's device; its JSON in
# fio/WL-SYSTEM-RUN.json and a line in runs.tsv.
job() {
	local wl=$1 sys=$2 run=$3 base st=ok
	shift 3
	base=$R/fio/$wl-$sys-$run
	idle
	fio --name="$wl" --filename="${DEV[$sys]}" --ioengine=libaio --direct=1 \
		--bs=4k --iodepth="$BENCH_IODEPTH" --output-format=json \
		--output="$base.json" "$@" >"$base.err" 2>&1 || st=failed
	printf 'fio\t%s\t%s\t%s\t%s\t-\n' "$wl" "$sys" "$run" "$st" >>"$R/runs.tsv"
	hc_log "$wl $sys #$run: $st $(grep -o '"iops" : [0-9.]*' "$base.json" 2>/dev/null | awk '$3 > 0 { print $3 " IOPS"; exit }')"
}

# zipf WL SYSTEM RUN OFFSET_MIB: zipf:1.1 reads over BENCH_ZIPF_MIB, IOPS
# logged every second.
zipf() {
	job "$1" "$2" "$3" --rw=randread --random_distribution=zipf:1.1 \
		--norandommap --offset="$4m" --size="${BENCH_ZIPF_MIB}m" \
		--time_based --runtime="$BENCH_RUNTIME" --randseed=$((1000 + $3)) \
		--write_iops_log="$R/fio/$1-$2-$3" --log_avg_msec=1000
}

# counters WL: hcache's and bcache's counters after workload WL, for the
# report (what was hit, missed, bypassed; how full and dirty the cache is).
counters() {
	local f line
	line="hcache:"
	for f in $IO_COUNTERS; do
		line+=" $f=$(cat "$HC_SYS/stats_total/$f" 2>/dev/null)"
	done
	line+=" dirty_data=$(wb_dirty hcache0) cache_available_percent=$(cat "$IO_SET/cache_available_percent" 2>/dev/null)"
	for f in gc_runs gc_move_runs gc_buckets_moved gc_last_duration_ms; do
		line+=" $f=$(cat "$IO_SET/internal/$f" 2>/dev/null)"
	done
	printf '%s\t%s\n' "$1" "$line" >>"$R/counters.txt"
	is_up bcache || return 0
	line="bcache:"
	for f in cache_hits cache_misses cache_bypass_hits cache_bypass_misses cache_miss_collisions bypassed; do
		line+=" $f=$(cat "$BC_SYS/stats_total/$f")"
	done
	line+=" dirty_data=$(cat "$BC_SYS/dirty_data") cache_available_percent=$(cat "$BC_SET/cache_available_percent")"
	printf '%s\t%s\n' "$1" "$line" >>"$R/counters.txt"
}

READS=(rawb rawc hcache bcache dmcache)
WRITES=(rawb rawc hcache bcache dmcache dmwc)

# ---- a: warm-up, g: data-set switch --------------------------------------
hc_log "== a: zipf reads over ${BENCH_ZIPF_MIB} MiB, three runs"
for run in 1 2 3; do
	for s in $(order $run "${READS[@]}"); do
		zipf a "$s" $run 0
	done
done
counters a
hc_log "== g: switch to another ${BENCH_ZIPF_MIB} MiB"
for run in 1 2 3; do
	for s in $(order $run "${READS[@]}"); do
		zipf g "$s" $run 1024
	done
done
counters g

# ---- b: cold uniform reads -----------------------------------------------
hc_log "== b: cold uniform random reads"
for run in 1 2 3; do
	for s in $(order $run "${READS[@]}"); do
		job b "$s" $run --rw=randread --offset=$((run * 2))g --size=1800m \
			--time_based --runtime="$BENCH_RUNTIME" --randseed=$((2000 + run))
	done
done
counters b

# ---- f: writeback of dense and sequential dirty data ---------------------
# dirty SYSTEM: its dirty data, bytes (blocks for dm-cache).
dirty() {
	case $1 in
	hcache) wb_dirty hcache0 ;;
	bcache) io_knum "$(cat "$BC_SYS/dirty_data")" ;;
	dmcache) dmsetup status dmc | awk '{ print $14 }' ;;
	# dm-writecache: blocks under writeback (its flush message returns
	# when it has written everything back); used blocks before.
	dmwc) dmsetup status dmwc | awk '{ print $7 }' ;;
	dmwc-used) dmsetup status dmwc | awk '{ print $5 - $6 }' ;;
	esac
}

# quiet DEV: DEV has nothing in flight and its stat did not change for 0.5 s.
quiet() {
	local f a b
	f=/sys/class/block/$(basename "$(readlink -f "$1")")
	b=$(cat "$f/stat")
	while :; do
		sleep 0.5
		a=$b
		b=$(cat "$f/stat")
		[ "$a" = "$b" ] && [ "$(wb_inflight "$1")" = "0 0" ] && return 0
	done
}

# pause SYSTEM / resume SYSTEM: hold writeback, or let it run at full speed.
pause() {
	case $1 in
	hcache) wb_set hcache0 writeback_running 0; wb_set hcache0 writeback_delay 0; io_cutoff hcache0 0 ;;
	bcache)
		echo 0 >"$BC_SYS/writeback_running"
		echo 40 >"$BC_SYS/writeback_percent"
		echo 0 >"$BC_SYS/writeback_delay"
		echo 0 >"$BC_SYS/sequential_cutoff"
		;;
	esac
}
resume() {
	case $1 in
	hcache) wb_set hcache0 writeback_running 1 ;;
	bcache) echo 0 >"$BC_SYS/writeback_percent"; echo 1 >"$BC_SYS/writeback_running" ;;
	dmwc) dmsetup message dmwc 0 flush ;;
	esac
}
# defaults SYSTEM: the settings pause changed, back to their defaults.
defaults() {
	case $1 in
	hcache)
		wb_set hcache0 writeback_delay "$HC_DELAY0"
		io_cutoff hcache0 "$HC_CUTOFF0"
		;;
	bcache)
		echo "$BC_PERCENT0" >"$BC_SYS/writeback_percent"
		echo "$BC_DELAY0" >"$BC_SYS/writeback_delay"
		echo "$BC_CUTOFF0" >"$BC_SYS/sequential_cutoff"
		;;
	esac
}

# flushcase SYSTEM CASE: write the case's 32 MiB, let writeback run, wait
# until clean; a line in runs.tsv with the backing writes and sectors
# (while writing and while flushing) and the seconds to clean.
flushcase() {
	local sys=$1 case=$2 bd=${BACK[$1]} w0 s0 w1 s1 w2 s2 t0 secs d st=ok
	idle
	pause "$sys"
	quiet "$bd"
	w0=$(io_bstat "$bd" 5)
	s0=$(io_bstat "$bd" 7)
	case $case in
	dense) set -- --rw=randwrite --offset=0 --randseed=7 --bs=4k ;;
	seq) set -- --rw=write --offset=32m --bs=64k ;;
	esac
	fio --name="f-$case" --filename="${DEV[$sys]}" --ioengine=libaio --direct=1 \
		--iodepth=8 --size=32m "$@" --output-format=json \
		--output="$R/fio/f-$case-$sys-1.json" >/dev/null 2>&1 || st=failed
	w1=$(io_bstat "$bd" 5)
	s1=$(io_bstat "$bd" 7)
	if [ "$sys" = dmwc ]; then d=$(dirty dmwc-used); else d=$(dirty "$sys"); fi
	t0=$(io_now)
	resume "$sys" || st=failed
	while [ "$(dirty "$sys")" != 0 ]; do
		secs=$(io_elapsed "$t0")
		if [ "${secs%.*}" -ge 180 ]; then
			st="not-clean-after-180s"
			break
		fi
		sleep 0.1
	done
	secs=$(io_elapsed "$t0")
	quiet "$bd"
	w2=$(io_bstat "$bd" 5)
	s2=$(io_bstat "$bd" 7)
	pause "$sys"
	printf 'wb\tf-%s\t%s\t1\t%s\twrite_reqs=%s write_sectors=%s flush_reqs=%s flush_sectors=%s secs=%s dirty_before=%s\n' \
		"$case" "$sys" "$st" $((w1 - w0)) $((s1 - s0)) $((w2 - w1)) $((s2 - s1)) "$secs" "$d" >>"$R/runs.tsv"
	hc_log "f $case $sys: $st; backing while writing $((w1 - w0)) requests/$((s1 - s0)) sectors, flushing $((w2 - w1))/$((s2 - s1)) in $secs s (dirty $d)"
}

hc_log "== f: writeback of dense and sequential dirty data"
HC_DELAY0=$(wb_get hcache0 writeback_delay)
HC_CUTOFF0=$(wb_get hcache0 sequential_cutoff)
if is_up bcache; then
	BC_PERCENT0=$(cat "$BC_SYS/writeback_percent")
	BC_DELAY0=$(cat "$BC_SYS/writeback_delay")
	BC_CUTOFF0=$(io_knum "$(cat "$BC_SYS/sequential_cutoff")")
fi
for case in dense seq; do
	for s in $(order 0 hcache bcache dmcache dmwc); do
		flushcase "$s" $case
	done
done
for s in hcache bcache; do
	is_up $s && { resume $s; defaults $s; }
done
counters f

# ---- c: random writes, d: reading them back, h: commits ------------------
# write_runs WL SEED FIO_ARG...: WL three times on every write system, the
# order rotated each run, fio's seed SEED + run; then its counters.
write_runs() {
	local wl=$1 seed=$2 run s
	shift 2
	for run in 1 2 3; do
		for s in $(order $run "${WRITES[@]}"); do
			job "$wl" "$s" $run "$@" --time_based \
				--runtime="$BENCH_RUNTIME" --randseed=$((seed + run))
		done
	done
	counters "$wl"
}
hc_log "== c: 4k random writes over 64 MiB"
write_runs c 3000 "${BENCH_JOB_C[@]}"
hc_log "== d: reading back what c wrote"
write_runs d 4000 "${BENCH_JOB_D[@]}"
hc_log "== h: 4k random writes, iodepth 1, fsync after each"
write_runs h 5000 "${BENCH_JOB_H[@]}"

# ---- e: mkfs.ext4 five times ---------------------------------------------
hc_log "== e: mkfs.ext4 -E nodiscard, five times"
bench_mkfs_local
for run in 1 2 3 4 5; do
	for s in $(order $run "${WRITES[@]}"); do
		idle
		st=ok
		t0=$(io_now)
		mkfs.ext4 -q -F -E nodiscard "${DEV[$s]}" >/tmp/mkfs.out 2>&1 || st=failed
		t=$(io_elapsed "$t0")
		printf 'mkfs\te\t%s\t%s\t%s\tsecs=%s\n' "$s" "$run" "$st" "$t" >>"$R/runs.tsv"
		hc_log "e $s #$run: $st $t s"
	done
done
counters e

# ---- the end -------------------------------------------------------------
e=$(cat "$IO_SET/errors")
c=$(head -n 1 "$IO_DBG/check" 2>&1)
printf 'hcache\terrors=%s\tcheck=%s\n' "$e" "$c" >"$R/hcache-health.txt"
hc_log "hcache: errors $e, consistency check: $c; $(io_stats_line hcache0)"
echo complete >"$R/complete"
