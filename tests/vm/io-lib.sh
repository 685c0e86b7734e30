# io-lib.sh: helpers for the I/O-path tests (tests/vm/tests/io-*.sh), on
# top of lib.sh. A test sources it first thing:
#     . "$HC_ROOT/tests/vm/io-lib.sh"
#
# Devices are memory-backed null_blk disks. io_setup makes a cache set with
# one backing device attached as /dev/hcache0 and sets:
#   IO_CDEV, IO_CNAME   the cache device (/dev node, kernel name)
#   IO_BDEV, IO_BNAME   the first backing device
#   IO_BDEVS            every backing device of the set (io_add_backing adds)
#   IO_UUID, IO_SET     the set's uuid and /sys/fs/hcache/UUID
#   IO_DBG              its debugfs directory
#   IO_OFFSET           the backing data offset in sectors (all backing
#                       devices are formatted alike)
#
# The statistics may be folded into stats_total a little after the I/O
# (bcache does so every 13 s or so): checks that a counter rose poll for up
# to IO_STAT_WAIT seconds; checks that nothing was read from the backing
# device use the block layer's own counters, which are exact.

# shellcheck shell=bash disable=SC2034 # variables for the tests

IO_STAT_WAIT=${IO_STAT_WAIT:-30}
# Every counter of a stats_* directory that adds up over backing devices.
IO_COUNTERS="cache_hits cache_misses cache_bypass_hits cache_bypass_misses bypassed cache_miss_collisions bypass_sequential bypass_full bypass_mode bypass_policy writes_in_place"
IO_WINDOWS="stats_total stats_five_minute stats_hour stats_day"
IO_BDEVS=()

# io_knum VALUE: a sysfs number, plain or with a k/M/G/T suffix (powers of
# 1024, decimals allowed: "4.0M"), as an integer.
io_knum() {
	awk -v v="$1" 'BEGIN {
		if (v !~ /^-?[0-9]+(\.[0-9]+)?[kKmMgGtT]?i?[bB]?$/) { print "NaN"; exit 1 }
		n = v + 0; m = 1
		if (v ~ /[kK]/) m = 1024
		else if (v ~ /[mM]/) m = 1024 * 1024
		else if (v ~ /[gG]/) m = 1024 * 1024 * 1024
		else if (v ~ /[tT]/) m = 1024 * 1024 * 1024 * 1024
		printf "%.0f\n", n * m
	}'
}

# io_read_num FILE: the number FILE holds (see io_knum); fails the test if
# FILE is missing or holds something else.
io_read_num() {
	local v
	[ -r "$1" ] || hc_fail "$1 is missing"
	v=$(<"$1")
	case $v in
	'' | *[!0-9]*) io_knum "$v" || hc_fail "$1 holds '$v', not a number" ;;
	*) echo "$v" ;;
	esac
}

# io_sysdir DEV: the hcache sysfs directory of DEV (hcacheN).
io_sysdir() {
	echo "/sys/block/$1/hcache"
}

# io_stat_file DEV NAME [WINDOW]: the file of a statistics counter of DEV
# (hcacheN), or of the cache set when DEV is "set". WINDOW defaults to
# stats_total.
io_stat_file() {
	if [ "$1" = set ]; then
		echo "$IO_SET/${3:-stats_total}/$2"
	else
		echo "$(io_sysdir "$1")/${3:-stats_total}/$2"
	fi
}

# io_stat DEV NAME [WINDOW]: that counter's value.
io_stat() {
	io_read_num "$(io_stat_file "$@")"
}

# io_stat_ge DEV NAME MIN [WINDOW]: the counter is at least MIN (a missing
# or malformed file fails the test at once).
io_stat_ge() {
	local v
	v=$(io_read_num "$(io_stat_file "$1" "$2" "${4:-}")") || exit 1
	[ "$v" -ge "$3" ]
}

# io_stat_is DEV NAME VALUE: the counter is VALUE.
io_stat_is() {
	[ "$(io_stat "$1" "$2")" = "$3" ]
}

# io_wait_stat DEV NAME MIN [WINDOW]: wait until the counter reaches MIN.
io_wait_stat() {
	local end=$((SECONDS + IO_STAT_WAIT))
	until io_stat_ge "$@"; do
		[ $SECONDS -lt $end ] ||
			hc_fail "$1 ${4:-stats_total}/$2 is $(cat "$(io_stat_file "$1" "$2" "${4:-}")") after ${IO_STAT_WAIT}s; expected at least $3"
		sleep 0.2
	done
}

# io_wait SECONDS COMMAND...: retry COMMAND until it succeeds.
io_wait() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || hc_fail "timed out waiting for: $*"
		sleep 0.2
	done
}

# io_bstat DEV FIELD: field FIELD (1-based) of the block layer's stat file of
# DEV (a /dev node or kernel name): 3 sectors read, 7 sectors written, 12
# discards, 14 sectors discarded.
io_bstat() {
	local name
	name=$(basename "$(readlink -f "$1")")
	awk -v f="$2" '{ print $f }' "/sys/class/block/$name/stat"
}

# io_settle: wait until neither the cache device nor any backing device has
# done any I/O for a second (promotions written, inserts done).
io_settle() {
	local files=() prev='' now i d
	for d in "$IO_CDEV" "${IO_BDEVS[@]}"; do
		files+=("/sys/class/block/$(basename "$(readlink -f "$d")")/stat")
	done
	for i in $(seq 60); do
		now=$(cat "${files[@]}")
		[ "$now" = "$prev" ] && return 0
		prev=$now
		sleep 1
	done
	hc_fail "the devices are still busy after 60 s"
}

# io_hcache_of BDEV: the hcacheN that BDEV (a backing /dev node) runs as.
io_hcache_of() {
	local name f v
	name=$(readlink -f "$1")
	name=${name##*/}
	for f in /sys/block/hcache*/hcache/backing_dev_name; do
		# read, not cat: no process per device (tests run 64 of them).
		[ -e "$f" ] && read -r v <"$f" || continue
		if [ "$v" = "$name" ]; then
			f=${f%/hcache/backing_dev_name}
			echo "${f##*/}"
			return 0
		fi
	done
	return 1
}

# io_attached DEV: DEV (hcacheN) runs attached to the test's cache set.
io_attached() {
	local sys
	sys=$(io_sysdir "$1")
	[ -b "/dev/$1" ] && [ "$(cat "$sys/cache_set_id" 2>/dev/null)" != 0 ] &&
		[ "$(cat "$sys/cache_set_uuid" 2>/dev/null)" = "$IO_UUID" ]
}

# io_register_backing BDEV: register BDEV and wait until it runs attached.
# Prints its hcacheN.
io_register_backing() {
	local dev
	hc_write /sys/fs/hcache/register "$1"
	hc_wait io_hcache_of "$1" >/dev/null
	dev=$(io_hcache_of "$1")
	hc_wait io_attached "$dev"
	echo "$dev"
}

# io_devices CACHE BACKING: the variables the helpers below read about the
# cache device and the (first) backing device: IO_CDEV, IO_BDEV, IO_BDEVS,
# IO_CNAME, IO_BNAME (kernel names). io_setup sets them for its null_blk
# disks; a test with its own (virtio disks, a loop device) calls this.
io_devices() {
	IO_CDEV=$1
	IO_BDEV=$2
	IO_BDEVS=("$IO_BDEV")
	IO_CNAME=$(basename "$(readlink -f "$IO_CDEV")")
	IO_BNAME=$(basename "$(readlink -f "$IO_BDEV")")
}

# io_setup CACHE_MIB BACK_MIB [MAKE_HCACHE_OPTION...]: a cache device and a
# backing device formatted together (block size 512, so any 512-byte I/O
# works; the options, e.g. --bucket 128k, are make-hcache's), the module
# loaded, both registered: the backing device runs as /dev/hcache0,
# attached, in writethrough. IO_CACHE_ATTRS and IO_BACK_ATTRS hold extra
# null_blk attributes (e.g. IO_BACK_ATTRS="irqmode=2 completion_nsec=5000000");
# IO_PREFILL=1 writes both disks whole first (see there).
io_setup() {
	local cmib=$1 bmib=$2 cdev bdev
	shift 2
	# Assigned first: a failure inside $(...) ends the test under set -e
	# only in an assignment, not in a function's arguments.
	# shellcheck disable=SC2086 # lists of attributes
	cdev=$(hc_nullb cache "$cmib" ${IO_CACHE_ATTRS:-})
	# shellcheck disable=SC2086
	bdev=$(hc_nullb back "$bmib" ${IO_BACK_ATTRS:-})
	# IO_PREFILL=1: every page of both disks written once first, so that
	# null_blk allocates none later (for tests that fail allocations).
	if [ "${IO_PREFILL:-}" = 1 ]; then
		dd if=/dev/zero of="$cdev" bs=1M count="$cmib" oflag=direct status=none
		dd if=/dev/zero of="$bdev" bs=1M count="$bmib" oflag=direct status=none
	fi
	io_setup_on "$cdev" "$bdev" "$@"
	hc_log "set $IO_UUID: cache $IO_CDEV ($cmib MiB, $(cat "$IO_SET/nbuckets") buckets of $(cat "$IO_SET/bucket_size")), backing $IO_BDEV ($bmib MiB, data at sector $IO_OFFSET) as hcache0"
}

# io_setup_on CDEV BDEV [MAKE_HCACHE_OPTION...]: io_setup on two given
# devices (drives, say): formatted together at block size 512, the module
# loaded, both registered, the backing device running as /dev/hcache0 in
# writethrough. Sets IO_MKFS_SECS and IO_REG_SECS to the seconds
# make-hcache and the cache device's registration took.
io_setup_on() {
	local cdev=$1 bdev=$2 t0
	shift 2
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	io_devices "$cdev" "$bdev"
	t0=$(io_now)
	"$(hc_tool make-hcache)" -C "$IO_CDEV" -B "$IO_BDEV" --block 512 "$@" >/dev/null ||
		hc_fail "make-hcache -C $IO_CDEV -B $IO_BDEV --block 512 $* failed"
	IO_MKFS_SECS=$(io_elapsed "$t0")
	IO_UUID=$("$(hc_tool hcache-super-show)" "$IO_CDEV" | awk '$1 == "cset.uuid" { print $2 }')
	IO_OFFSET=$("$(hc_tool hcache-super-show)" "$IO_BDEV" | awk '$1 == "backing.data_offset" { print $2 }')
	[ -n "$IO_UUID" ] && [ -n "$IO_OFFSET" ] || hc_fail "hcache-super-show: no set uuid or data offset"
	IO_SET=/sys/fs/hcache/$IO_UUID
	IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
	io_register
	io_mode_is hcache0 writethrough || hc_fail "cache_mode of a new device: $(cat "$(io_sysdir hcache0)/cache_mode")"
}

# io_register: load the module, register IO_CDEV and IO_BDEV (formatted
# as one set), and check the backing device runs as hcache0. Sets
# IO_REG_SECS to the seconds the cache device's registration took.
io_register() {
	local dev t0
	hc_load
	t0=$(io_now)
	hc_write /sys/fs/hcache/register "$IO_CDEV"
	hc_wait test -d "$IO_SET"
	IO_REG_SECS=$(io_elapsed "$t0")
	dev=$(io_register_backing "$IO_BDEV")
	[ "$dev" = hcache0 ] || hc_fail "the backing device runs as $dev, not hcache0"
}

# io_add_backing NAME MIB [ATTR=VALUE...]: one more backing device (null_blk
# NAME) formatted to join the set, registered, attached. Sets IO_NEW to its
# hcacheN and IO_NEW_BDEV to its /dev node.
io_add_backing() {
	local name=$1 mib=$2
	shift 2
	IO_NEW_BDEV=$(hc_nullb "$name" "$mib" "$@")
	"$(hc_tool make-hcache)" -B "$IO_NEW_BDEV" --block 512 --cset-uuid "$IO_UUID" >/dev/null ||
		hc_fail "make-hcache -B $IO_NEW_BDEV failed"
	IO_BDEVS+=("$IO_NEW_BDEV")
	IO_NEW=$(io_register_backing "$IO_NEW_BDEV")
	hc_log "backing $IO_NEW_BDEV ($mib MiB) as $IO_NEW"
}

# io_mode_is DEV MODE: cache_mode of DEV (hcacheN) shows MODE selected.
io_mode_is() {
	grep -q "\[$2\]" "$(io_sysdir "$1")/cache_mode"
}

# io_mode DEV MODE: set cache_mode and check it took.
io_mode() {
	hc_write "$(io_sysdir "$1")/cache_mode" "$2"
	io_mode_is "$1" "$2" || hc_fail "$1: cache_mode is '$(cat "$(io_sysdir "$1")/cache_mode")' after writing $2"
}

# io_cutoff DEV VALUE: set sequential_cutoff.
io_cutoff() {
	hc_write "$(io_sysdir "$1")/sequential_cutoff" "$2"
}

# io_check: the set counted no error and its consistency check passes.
io_check() {
	local e c
	e=$(cat "$IO_SET/errors")
	[ "$e" = 0 ] || hc_fail "the cache set counted $e errors"
	c=$(cat "$IO_DBG/check")
	[ "$c" = ok ] || hc_fail "consistency check: $c"
}

# io_stop: stop the set (its backing devices stop with it) and wait until
# all of it is gone.
io_stop() {
	hc_write "$IO_SET/stop" 1
	hc_wait test ! -e "$IO_SET"
	hc_wait io_no_hcache
}

io_no_hcache() {
	! ls -d /sys/block/hcache* >/dev/null 2>&1
}

# io_restart: stop the set and register the cache and every backing device
# again (a warm restart); they run attached, under the same hcacheN names
# as long as they register in the same order.
io_restart() {
	local b
	io_stop
	hc_write /sys/fs/hcache/register "$IO_CDEV"
	hc_wait test -d "$IO_SET"
	for b in "${IO_BDEVS[@]}"; do
		io_register_backing "$b" >/dev/null
	done
	[ "$(io_hcache_of "$IO_BDEV")" = hcache0 ] || hc_fail "after the restart $IO_BDEV runs as $(io_hcache_of "$IO_BDEV")"
}

# io_power_cut: the power of the cache disk (null_blk "cache", as io_setup
# makes it) cut while the set runs, as vm/fail-cache-unplug cuts it: from
# then on nothing reaches the disk, so the set, stopped, writes neither
# its nodes nor a clean superblock (it logs that the device was removed
# and that a metadata write failed: expect-log both); then the disk is
# powered on again with what it held (memory-backed), IO_CDEV and
# IO_CNAME naming it.
io_power_cut() {
	local cfg=/sys/kernel/config/nullb/cache
	echo 0 >"$cfg/power"
	hc_write "$IO_SET/stop" 1
	hc_wait test ! -e "$IO_SET"
	hc_wait io_no_hcache
	echo 1 >"$cfg/power"
	udevadm settle 2>/dev/null || :
	if [ -b /dev/cache ]; then
		IO_CDEV=/dev/cache
	else
		IO_CDEV=/dev/nullb$(cat "$cfg/index")
	fi
	IO_CNAME=${IO_CDEV#/dev/}
	hc_wait test -b "$IO_CDEV"
}

# io_teardown: the final checks, then stop everything and unload.
io_teardown() {
	io_check
	io_stop
	hc_unload
}

# io_stats_files: every statistics file exists in every window, for each
# backing device and for the set, and reads as a number.
io_stats_files() {
	local w f d files=()
	for d in "$IO_SET" "$IO_SET"/bdev*; do
		[ -e "$d/clear_stats" ] || hc_fail "$d/clear_stats is missing"
		for w in $IO_WINDOWS; do
			for f in $IO_COUNTERS cache_hit_ratio; do
				[ -r "$d/$w/$f" ] || hc_fail "$d/$w/$f is missing"
				files+=("$d/$w/$f")
			done
		done
	done
	awk '$0 !~ /^[0-9]+(\.[0-9]+)?[kKMGT]?$/ { print FILENAME ": " $0; bad = 1 }
	     END { exit bad }' "${files[@]}" >/tmp/io-lib.bad ||
		hc_fail "statistics that are not numbers: $(head -3 /tmp/io-lib.bad)"
}

# io_sums_equal: for every counter, the set's stats_total equals the sum
# over its backing devices (within rounding when a value is printed with a
# unit suffix). Prints the differences.
io_sums_equal() {
	local f files=()
	for f in $IO_COUNTERS; do
		files+=("$IO_SET/stats_total/$f" "$IO_SET"/bdev*/stats_total/"$f")
	done
	awk -v set="$IO_SET/stats_total/" '
	function knum(v,  m) {
		m = 1
		if (v ~ /[kK]/) m = 1024
		else if (v ~ /[mM]/) m = 1024 * 1024
		else if (v ~ /[gG]/) m = 1024 * 1024 * 1024
		else if (v ~ /[tT]/) m = 1024 * 1024 * 1024 * 1024
		return (v + 0) * m
	}
	{
		n = split(FILENAME, p, "/")
		f = p[n]
		if ($0 ~ /[^0-9]/) fuzzy[f] = 1
		if (index(FILENAME, set) == 1) got[f] = knum($0)
		else sum[f] += knum($0)
	}
	END {
		bad = 0
		for (f in got) {
			d = got[f] - sum[f]
			if (d < 0) d = -d
			# "1.5M" and "2.3M" add up to "3.8M" only within rounding.
			lim = fuzzy[f] ? 0.02 * (got[f] > sum[f] ? got[f] : sum[f]) + 1024 : 0
			if (d > lim) {
				printf "%s: set %.0f, sum %.0f; ", f, got[f], sum[f]
				bad = 1
			}
		}
		exit bad
	}' "${files[@]}"
}

# io_check_sums: the set-level counters equal the sums over its backing
# devices; retried while the statistics may still be folding in.
io_check_sums() {
	local end=$((SECONDS + IO_STAT_WAIT)) diff
	until diff=$(io_sums_equal); do
		[ $SECONDS -lt $end ] || hc_fail "set-level statistics are not the sums over the backing devices: $diff"
		sleep 1
	done
	local b=("$IO_SET"/bdev*)
	hc_log "set-level statistics equal the sums over ${#b[@]} backing devices"
}

# io_stats_line DEV: the main counters of DEV (hcacheN or set), for logs.
io_stats_line() {
	local d f files=()
	if [ "$1" = set ]; then
		d=$IO_SET/stats_total
	else
		d=$(io_sysdir "$1")/stats_total
	fi
	for f in cache_hits cache_misses cache_bypass_hits cache_bypass_misses bypassed bypass_sequential cache_miss_collisions cache_hit_ratio; do
		files+=("$d/$f")
	done
	awk '{ n = split(FILENAME, p, "/"); printf "%s%s=%s", sep, p[n], $0; sep = " " }
	     END { print "" }' "${files[@]}" 2>/dev/null || true
}

# io_pattern FILE MIB: MIB MiB of random data in FILE.
io_pattern() {
	head -c "$(($2 << 20))" /dev/urandom >"$1"
}

# io_put FILE DEV BYTE_OFFSET [LENGTH]: write FILE (or its first LENGTH
# bytes) to DEV at BYTE_OFFSET, direct, in one write call.
io_put() {
	local len=${4:-$(stat -c %s "$1")}
	dd if="$1" of="$2" bs="$len" count=1 seek="$3" oflag=direct,seek_bytes \
		conv=notrunc status=none || hc_fail "writing $1 to $2 at $3 failed"
}

# io_get DEV BYTE_OFFSET LENGTH FILE: read LENGTH bytes of DEV at
# BYTE_OFFSET, direct, into FILE (1 MiB reads).
io_get() {
	dd if="$1" of="$4" bs=1M iflag=direct,skip_bytes,count_bytes skip="$2" \
		count="$3" status=none || hc_fail "reading $1 at $2 failed"
}

# io_get_raw BYTE_OFFSET LENGTH FILE: the same from the first backing
# device itself, at its data offset: what it holds under hcache0's BYTE_OFFSET.
io_get_raw() {
	io_get "$IO_BDEV" $((IO_OFFSET * 512 + $1)) "$2" "$3"
}

# io_fio_ok OUT: fio's output file shows no error and no verify failure.
io_fio_ok() {
	! grep -q -i -E 'error|verify failed|bad magic|bad header|mismatch|err= *[1-9]' "$1"
}

# io_watch PID [STALL_SECONDS]: wait for PID (an I/O load) to end; if no
# I/O completes on any hcache device for STALL_SECONDS (default 60; times
# HC_TIME_SCALE, as on the debug kernel), log what is in flight, dump the
# blocked tasks to the kernel log (sysrq-w), kill PID and fail: a bio was
# lost or something waits forever. Returns PID's exit status.
io_watch() {
	local pid=$1 stall=$((${2:-60} * ${HC_TIME_SCALE:-1})) prev now last=$SECONDS d
	prev=$(cat /sys/block/hcache*/stat 2>/dev/null)
	while kill -0 "$pid" 2>/dev/null; do
		sleep 1
		now=$(cat /sys/block/hcache*/stat 2>/dev/null)
		if [ "$now" != "$prev" ]; then
			prev=$now
			last=$SECONDS
		elif [ $((SECONDS - last)) -ge "$stall" ]; then
			for d in /sys/block/hcache* "/sys/class/block/$IO_CNAME"; do
				hc_log "in flight on ${d##*/}: $(tr -s ' ' <"$d/inflight")"
			done
			for d in "${IO_BDEVS[@]}"; do
				hc_log "in flight on $d: $(tr -s ' ' <"/sys/class/block/$(basename "$(readlink -f "$d")")/inflight")"
			done
			hc_log "cache_available_percent $(cat "$IO_SET/cache_available_percent" 2>/dev/null)"
			echo w >/proc/sysrq-trigger
			kill -9 "$pid" 2>/dev/null
			hc_fail "no I/O completed for ${stall}s while the load ran (blocked tasks are in the kernel log)"
		fi
	done
	wait "$pid"
}

# io_meminfo: the kernel's vmalloc and slab use, in KiB, on one line:
# "VMALLOC SLAB" (from /proc/meminfo).
io_meminfo() {
	awk '$1 == "VmallocUsed:" { v = $2 } $1 == "Slab:" { s = $2 }
	     END { print v, s }' /proc/meminfo
}

# io_mem_pages: KiB of memory in use that /proc/meminfo puts in none of
# its named kinds (page cache, buffers, slab, vmalloc, anonymous, page
# tables, kernel stacks, per-CPU): pages a driver took from the page
# allocator itself. Its change across a registration is what the set
# holds in whole pages.
io_mem_pages() {
	awk '{ m[$1] = $2 }
	     END {
		v = m["MemTotal:"] - m["MemFree:"] - m["Buffers:"] - m["Cached:"]
		v -= m["SwapCached:"] + m["Slab:"] + m["VmallocUsed:"] + m["AnonPages:"]
		v -= m["PageTables:"] + m["KernelStack:"] + m["Percpu:"]
		print v
	     }' /proc/meminfo
}

# io_now: seconds since the epoch, with microseconds.
io_now() {
	echo "$EPOCHREALTIME"
}

# io_elapsed START: seconds since START (from io_now), 2 decimals.
io_elapsed() {
	io_elapsed_at "$1" "$EPOCHREALTIME"
}

# io_elapsed_at START END: seconds from START to END (both from io_now).
io_elapsed_at() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f\n", b - a }'
}

# ---- Writeback (tests/vm/tests/wb-*.sh) ----------------------------------
# The files of /sys/block/hcacheN/hcache/ that writeback adds: dirty_data,
# writeback_*, detaching (Documentation/ABI/testing/sysfs-block-hcache).

# wb_get DEV NAME: the number in DEV's (hcacheN) file NAME, as an integer.
wb_get() {
	io_read_num "$(io_sysdir "$1")/$2"
}

# wb_set DEV NAME VALUE: write VALUE to DEV's file NAME; fails on error.
wb_set() {
	hc_write "$(io_sysdir "$1")/$2" "$3"
}

# wb_dirty DEV: DEV's dirty_data in bytes.
wb_dirty() {
	wb_get "$1" dirty_data
}

# wb_detached DEV: DEV (hcacheN) runs with no cache set: cache_set_id 0 and
# cache_set_uuid empty (or the nil uuid).
wb_detached() {
	local s
	s=$(io_sysdir "$1")
	[ "$(cat "$s/cache_set_id")" = 0 ] || return 1
	case $(cat "$s/cache_set_uuid") in
	'' | 00000000-0000-0000-0000-000000000000) return 0 ;;
	esac
	return 1
}

# wb_rate_debug DEV: DEV's writeback_rate_debug on one line, as integers
# (unit suffixes such as k or M/sec expanded, signs kept), in the order
#     rate dirty target proportional integral derivative idle in_band
# with "?" for a line the file lacks.
wb_rate_debug() {
	awk -F: '
	function num(v,  s, m) {
		gsub(/[ \t]/, "", v)
		sub(/\/s(ec)?$/, "", v)
		sub(/[bB]$/, "", v)
		sub(/i$/, "", v)
		m = 1
		if (v ~ /[kK]$/) m = 1024
		else if (v ~ /M$/) m = 1024 * 1024
		else if (v ~ /G$/) m = 1024 * 1024 * 1024
		else if (v ~ /T$/) m = 1024 * 1024 * 1024 * 1024
		if (v !~ /^[-+]?[0-9]+(\.[0-9]+)?[kKMGT]?$/) return "?"
		return sprintf("%.0f", (v + 0) * m)
	}
	{ name = $1; sub(/^[ \t]+/, "", name); val[name] = num(substr($0, index($0, ":") + 1)) }
	END {
		n = split("rate dirty target proportional integral derivative idle in_band", f, " ")
		for (i = 1; i <= n; i++)
			printf "%s%s", (f[i] in val ? val[f[i]] : "?"), (i < n ? " " : "\n")
	}' "$(io_sysdir "$1")/writeback_rate_debug"
}

# wb_wait_clean DEV SECONDS [WHAT]: wait until DEV's dirty_data is 0,
# logging it every 2 s; fails (with writeback_rate_debug) after SECONDS.
# Sets WB_SECS to the seconds it took (2 decimals).
wb_wait_clean() {
	local t0 end=$((SECONDS + $2)) next=$((SECONDS + 2)) d
	t0=$(io_now)
	while :; do
		d=$(wb_dirty "$1") || exit 1
		[ "$d" = 0 ] && break
		if [ $SECONDS -ge "$end" ]; then
			hc_log "writeback_rate_debug: $(tr '\n' ' ' <"$(io_sysdir "$1")/writeback_rate_debug" 2>/dev/null)"
			hc_fail "${3:-$1}: dirty_data still $d after $2 s"
		fi
		if [ $SECONDS -ge "$next" ]; then
			hc_log "${3:-$1}: dirty_data $d"
			next=$((SECONDS + 2))
		fi
		sleep 0.1
	done
	WB_SECS=$(io_elapsed "$t0")
}

# wb_scatter SRC DEV BYTE_OFFSET MIN MAX [SEED]: write all of file SRC to
# DEV at BYTE_OFFSET in pieces of MIN to MAX bytes (multiples of 4 KiB; the
# last piece may be shorter), one direct write each, in a random order
# (SEED makes it repeatable), from one process: random writes whose data
# the test knows (SRC). SRC's size must be a multiple of 512.
wb_scatter() {
	python3 - "$@" <<'EOF' || hc_fail "wb_scatter $* failed"
import mmap, os, random, sys
src, dev = sys.argv[1], sys.argv[2]
off, lo, hi = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(sys.argv[6] if len(sys.argv) > 6 else None)
size = os.path.getsize(src)
buf = mmap.mmap(-1, size)	# page-aligned, as O_DIRECT wants
with open(src, "rb") as f:
    if f.readinto(buf) != size:
        sys.exit("short read of " + src)
pieces, pos = [], 0
while pos < size:
    n = min(rng.randrange(lo, hi + 1, 4096), size - pos)
    pieces.append((pos, n))
    pos += n
rng.shuffle(pieces)
view = memoryview(buf)
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
for p, n in pieces:
    if os.pwrite(fd, view[p:p + n], off + p) != n:
        sys.exit("short write at %d" % (off + p))
os.close(fd)
EOF
}

# wb_diff FILE_A FILE_B [BASE]: where two files of the same size differ, in
# 4 KiB blocks: the number of such blocks and their first 8 runs as byte
# ranges [start, end) plus BASE.
wb_diff() {
	python3 - "$@" <<'EOF'
import sys
a, b = open(sys.argv[1], "rb"), open(sys.argv[2], "rb")
base = int(sys.argv[3]) if len(sys.argv) > 3 else 0
runs, n, i = [], 0, 0
while True:
    x, y = a.read(4096), b.read(4096)
    if not x and not y:
        break
    if x != y:
        n += 1
        if runs and runs[-1][1] == i:
            runs[-1][1] = i + 1
        else:
            runs.append([i, i + 1])
    i += 1
print("%d differing 4 KiB blocks: %s" % (n, " ".join(
    "[%d, %d)" % (base + s * 4096, base + e * 4096) for s, e in runs[:8])))
EOF
}

# wb_same WHAT GOT EXPECT [BASE]: files GOT and EXPECT are equal, or the
# test fails saying where they differ (offsets plus BASE).
wb_same() {
	cmp -s "$2" "$3" || hc_fail "$1: $(wb_diff "$2" "$3" "${4:-0}")"
}

# wb_inflight DEV: "READS WRITES" in flight on DEV (a /dev node).
wb_inflight() {
	tr -s ' ' <"/sys/class/block/$(basename "$(readlink -f "$1")")/inflight" | sed 's/^ //'
}

# ---- Delay and fault points of the debug build (drivers/md/hcache/debug.h)

# io_point KIND POINT: the debugfs directory of a delay point (KIND delay)
# or a fault point (KIND fail); fails the test if the module has none (a
# release build).
io_point() {
	local d=/sys/kernel/debug/hcache/$1/$2
	[ -d "$d" ] || hc_fail "no $1 point $2 in $d: the debug build (HC_MODULE=debug) is not loaded"
	echo "$d"
}

# io_delay_arm POINT MS [N]: the next N (default 1) threads to reach delay
# point POINT sleep there MS ms. Prints the point's hits so far, for
# io_delay_wait.
io_delay_arm() {
	local d
	d=$(io_point delay "$1") || exit 1
	echo "$2" >"$d/ms"
	cat "$d/hits"
	echo "${3:-1}" >"$d/armed"
}

# io_delay_held POINT HITS: a thread reached POINT since it had HITS hits.
io_delay_held() {
	[ "$(cat "/sys/kernel/debug/hcache/delay/$1/hits")" -gt "$2" ]
}

# io_delay_wait POINT HITS [SECONDS]: wait (default 30 s) until a thread
# reached POINT since it had HITS hits.
io_delay_wait() {
	io_wait "${3:-30}" io_delay_held "$1" "$2"
}

# io_fault_arm POINT [N]: the next N (default 1) passes through fault point
# POINT fail. Prints its hits so far.
io_fault_arm() {
	local d
	d=$(io_point fail "$1") || exit 1
	cat "$d/hits"
	echo "${2:-1}" >"$d/armed"
}

# io_point_hits KIND POINT: hits of a delay or fault point so far.
io_point_hits() {
	cat "/sys/kernel/debug/hcache/$1/$2/hits"
}
