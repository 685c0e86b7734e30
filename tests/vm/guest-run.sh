#!/bin/bash
# guest-run.sh: runs inside the guest, in the host's root (read-only, with a
# tmpfs overlay). Reads the test to run from the kernel command line, runs
# it with the VM library sourced, and leaves in /hc-results: test.log (its
# output), rc (its exit status) and dmesg.raw (the kernel log with levels,
# for the host's log scanner). A test booted several times (run-test.sh's
# "boots" header) learns which boot this is from HC_BOOT and HC_BOOTS.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
# We run in a chroot; udevadm and udevd refuse to work there without this.
export SYSTEMD_IGNORE_CHROOT=1

# The kernel command line, read once: under TCG every program started
# from the 9p root costs tens of milliseconds, so no tr or sed per argument.
read -r -a cmdline_args </proc/cmdline
cmdline_arg() {
	local a
	for a in "${cmdline_args[@]}"; do
		[ "${a%%=*}" = "$1" ] && echo "${a#*=}"
	done
	return 0
}

HC_ROOT=$(cmdline_arg hc.root)
HC_TEST=$(cmdline_arg hc.test)
read -r HC_KVER </proc/sys/kernel/osrelease
HC_TIMEOUT=$(cmdline_arg hc.timeout)
HC_TIME_SCALE=$(cmdline_arg hc.timescale)
HC_TIME_SCALE=${HC_TIME_SCALE:-1}
HC_LONG=$(cmdline_arg hc.long)
HC_BOOT=$(cmdline_arg hc.boot)
HC_BOOTS=$(cmdline_arg hc.boots)
HC_BOOT=${HC_BOOT:-1}
HC_BOOTS=${HC_BOOTS:-1}
HC_RESULTS=/hc-results
export HC_ROOT HC_TEST HC_KVER HC_RESULTS HC_LONG HC_BOOT HC_BOOTS HC_TIME_SCALE
# The tests (tests/vm/tests/) load the module with writeback_idle_seconds
# 1 (hc_load): they wait for writeback to empty the cache once they stop
# writing, as they did before the default became 30 s. vm/wb-idle tests
# the default; the bench and the demo keep it.
case $HC_TEST in
*/tests/vm/tests/*) export HC_WB_IDLE_SECONDS=${HC_WB_IDLE_SECONDS:-1} ;;
esac
# hc.module=debug: the debug build (make check's), else the release one.
export HC_KO_RELEASE=$HC_ROOT/build/$HC_KVER/hcache/hcache.ko
if [ "$(cmdline_arg hc.module)" = debug ]; then
	export HC_KO=$HC_ROOT/build/$HC_KVER/hcache-debug/hcache.ko
else
	export HC_KO=$HC_KO_RELEASE
fi
export HC_SELFTEST_KO=$HC_ROOT/build/$HC_KVER/selftest/hc_selftest.ko

# What a distribution's init would have made: /dev/fd for bash's process
# substitution, /dev/shm for programs that share memory.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
mkdir -p /dev/shm /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t devpts devpts /dev/pts

# A kernel that is not installed (make check-debug's) has its modules
# directory elsewhere; link it where modprobe looks, in the guest's overlay,
# so that `modprobe null_blk` knows the driver is built in and succeeds.
modroot=$(cmdline_arg hc.modroot)
if [ -n "$modroot" ] && [ ! -e "/lib/modules/$HC_KVER" ]; then
	ln -s "$modroot/lib/modules/$HC_KVER" "/lib/modules/$HC_KVER"
fi

# A kmemleak kernel: scan only here, not on its timer. What boot leaked is
# reported and cleared now, so the scan after the test shows the test's.
kmemleak=/sys/kernel/debug/kmemleak
if [ -d /sys/module/kmemleak ]; then
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	echo scan=off >$kmemleak
	echo scan >$kmemleak
	cat $kmemleak >"$HC_RESULTS/kmemleak-boot"
	echo clear >$kmemleak
fi

# Seed the kernel's random number generator before the test. A TCG guest
# has no hardware source, and on its own the CRNG was ready only about 40 s
# after boot, when at all within a test; until then mkfs.ext4 took 4.2 to
# 4.7 s instead of 0.4 to 0.9 (its UUIDs: programs that ask getrandom()
# not to block wait and retry before they fall back), so tests that time
# mkfs measured that wait. QEMU's virtio-rng device (run-test.sh) seeds it
# during boot, so this read returns at once; on a kernel without the
# driver (make check-debug's) a blocking read makes the kernel gather
# jitter entropy at once: about a second under TCG.
t0=$EPOCHREALTIME
head -c 1 /dev/random >/dev/null
echo "hcache-vm: random number generator ready after $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }') s" >/dev/kmsg

# Surface hung tasks well inside a test's time limit.
echo 20 >/proc/sys/kernel/hung_task_timeout_secs 2>/dev/null
echo 1 >/proc/sys/kernel/sysrq
cd /tmp || exit 1

echo "hcache-vm: running $(basename "$HC_TEST") on $HC_KVER (boot $HC_BOOT of $HC_BOOTS)" >/dev/kmsg
[ "$HC_BOOTS" = 1 ] || echo "== boot $HC_BOOT of $HC_BOOTS" >>"$HC_RESULTS/test.log"
timeout -k 5 "${HC_TIMEOUT:-120}" \
	bash -c 'set -eu; . "$HC_ROOT/tests/vm/lib.sh"; . "$HC_TEST"' \
	>>"$HC_RESULTS/test.log" 2>&1
rc=$?
echo "hcache-vm: test exited with status $rc" >/dev/kmsg
if [ -w $kmemleak ]; then
	# An object is reported once it is 5 s old and unchanged between two
	# scans. The report goes to the kernel log, for the log scanner.
	sleep 5
	echo scan >$kmemleak
	echo scan >$kmemleak
	cat $kmemleak >"$HC_RESULTS/kmemleak"
	while IFS= read -r line; do
		echo "kmemleak: $line" >/dev/kmsg
	done <"$HC_RESULTS/kmemleak"
	echo "hcache-vm: kmemleak scan done" >/dev/kmsg
fi
dmesg -r >"$HC_RESULTS/dmesg.raw" 2>/dev/null
echo "$rc" >"$HC_RESULTS/rc"
sync
