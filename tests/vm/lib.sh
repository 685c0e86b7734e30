# lib.sh: helpers for VM tests, sourced by guest-run.sh before each test.
# A test is a bash script run with `set -eu`; it fails by exiting non-zero
# (hc_fail) and passes by reaching its end. Variables from guest-run.sh:
# HC_ROOT (the source tree), HC_KO (this kernel's freshly built hcache.ko),
# HC_SELFTEST_KO, HC_KVER, HC_RESULTS (a writable host folder), HC_LONG (1
# under make check-long).

hc_log() {
	echo "[$(date +%T)] $*"
}

hc_fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# hc_load [PARAM=VALUE...]: insert the freshly built module by path, so an
# installed copy can never shadow it. With HC_WB_IDLE_SECONDS set (the
# tests', guest-run.sh), the module parameter writeback_idle_seconds too.
hc_load() {
	[ -f "$HC_KO" ] || hc_fail "$HC_KO is not built"
	modprobe -q crc32c 2>/dev/null || true
	modprobe -q libcrc32c 2>/dev/null || true
	insmod "$HC_KO" ${HC_WB_IDLE_SECONDS:+writeback_idle_seconds=$HC_WB_IDLE_SECONDS} "$@" ||
		hc_fail "insmod $HC_KO failed"
	[ -d /sys/fs/hcache ] || hc_fail "/sys/fs/hcache missing after insmod"
}

# A stop asked for through sysfs runs in a work item that drops its module
# reference last, just after the device's directory goes: retry a little.
hc_unload() {
	local i
	for i in $(seq 50); do
		rmmod hcache 2>/dev/null && break
		sleep 0.1
	done
	[ ! -e /sys/module/hcache ] || rmmod hcache || hc_fail "rmmod hcache failed"
	[ ! -e /sys/fs/hcache ] || hc_fail "/sys/fs/hcache still there after rmmod"
}

# hc_drive NAME: the /dev node of the virtio disk the test declared with
# "# drives: NAME:SIZE" (matched by its serial).
hc_drive() {
	local s
	modprobe -q virtio_blk 2>/dev/null || true
	for s in /sys/block/vd*/serial; do
		[ -e "$s" ] || continue
		if [ "$(cat "$s")" = "$1" ]; then
			s=${s%/serial}
			echo "/dev/${s##*/}"
			return 0
		fi
	done
	hc_fail "no virtio disk with serial $1"
}

# hc_nullb NAME SIZE_MIB [ATTR=VALUE...]: a memory-backed null_blk disk made
# through configfs, e.g. irqmode=2 completion_nsec=2000000 for a slow disk.
# Prints its /dev path (on 6.1 the disk is named after the directory).
hc_nullb() {
	local name=$1 size=$2 dir kv
	shift 2
	modprobe -q configfs
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	modprobe -q null_blk nr_devices=0
	dir=/sys/kernel/config/nullb/$name
	mkdir "$dir"
	echo 1 >"$dir/memory_backed"
	echo "$size" >"$dir/size"
	for kv in "$@"; do
		echo "${kv#*=}" >"$dir/${kv%%=*}"
	done
	echo 1 >"$dir/power"
	udevadm settle 2>/dev/null || true
	if [ -b "/dev/$name" ]; then
		echo "/dev/$name"
	else
		echo "/dev/nullb$(cat "$dir/index")"
	fi
}

# hc_tool NAME: path of a userspace tool built from this tree.
hc_tool() {
	[ -x "$HC_ROOT/tools/$1" ] || hc_fail "tool $1 is not built (make -C tools)"
	echo "$HC_ROOT/tools/$1"
}

# hc_helper NAME: path of a test helper built from tests/vm/helpers/NAME.c
# (on the host, by tests/run's vm build step).
hc_helper() {
	[ -x "$HC_ROOT/tests/vm/helpers/build/$1" ] ||
		hc_fail "helper $1 is not built (make -C tests/vm/helpers)"
	echo "$HC_ROOT/tests/vm/helpers/build/$1"
}

# hc_write FILE VALUE: write VALUE to a sysfs FILE; fails the test on error.
hc_write() {
	printf '%s\n' "$2" >"$1" || hc_fail "writing '$2' to $1 failed"
}

# hc_write_fails ERRNO_TEXT FILE VALUE: the write must fail with that error
# (the strerror text, e.g. "Device or resource busy").
hc_write_fails() {
	local err
	if err=$( { printf '%s\n' "$3" >"$2"; } 2>&1 ); then
		hc_fail "writing '$3' to $2 succeeded; expected: $1"
	fi
	case $err in
	*"$1"*) hc_log "as expected, '$3' > $2: $1" ;;
	*) hc_fail "writing '$3' to $2: got '$err', expected '$1'" ;;
	esac
}

# hc_wait COND_COMMAND... : retry for up to 10 s (times HC_TIME_SCALE)
# until the command succeeds.
hc_wait() {
	local i
	for i in $(seq $((100 * ${HC_TIME_SCALE:-1}))); do
		"$@" && return 0
		sleep 0.1
	done
	hc_fail "timed out waiting for: $*"
}

# hc_size DEV: size of a block device in 512-byte sectors.
hc_size() {
	blockdev --getsz "$1"
}

# hc_kmsg_has TEXT: the kernel log holds TEXT.
hc_kmsg_has() {
	dmesg | grep -q -F -- "$1" || hc_fail "kernel log lacks: $1"
}

# hc_dm_create NAME TABLE: a device-mapper device of one table line (no
# udevd needed); prints its /dev/dm-N node.
hc_dm_create() {
	local dev
	dmsetup create --noudevsync "$1" --table "$2" || hc_fail "dmsetup create $1 failed"
	dev=/dev/$(dmsetup info -c --noheadings -o blkdevname "$1")
	hc_wait test -b "$dev"
	echo "$dev"
}

# hc_dm_reload NAME TABLE: swap the table of device NAME, as a device that
# starts or stops failing.
hc_dm_reload() {
	dmsetup suspend --noudevsync "$1" &&
		dmsetup load "$1" --table "$2" &&
		dmsetup resume --noudevsync "$1" || hc_fail "dmsetup: cannot load '$2' into $1"
}
