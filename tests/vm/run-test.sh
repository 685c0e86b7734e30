#!/bin/bash
# run-test.sh KVER TEST_FILE WORK_DIR: boot kernel KVER in QEMU (TCG), run
# one VM test in it, scan the kernel log, and exit 0 if the test passed.
#
# A test file's header may hold, one per line:
#   # timeout: SECONDS     the test's own limit (default 120), boot excluded
#   # timeout-long: SECONDS  the same, under make check-long (default: timeout)
#   # drives: NAME:SIZE[:qcow2]... sparse files attached as virtio disks
#                          (serial NAME); qcow2 images for sizes past the
#                          host file system's file size limit (ext4: 16 TiB)
#   # memory: SIZE         guest memory (default 2G)
#   # smp: N               guest CPUs (default 2)
#   # clock: instructions  the guest's clock counts its instructions (QEMU
#                          -icount shift=3,sleep=off): 8 ns for each one
#                          run, skipping ahead to the next timer when the
#                          guest idles. A test that compares timings then
#                          measures what the guest executes and the device
#                          models' latencies, not how fast the host ran the
#                          guest just then, which swings 2-3x within
#                          minutes on a shared host. The default, host,
#                          is QEMU's usual clock: the host's.
#   # append: ARGS         extra kernel command line arguments
#   # expect-log: REGEX    a kernel log line the test provokes on purpose
#   # expect-flagged: REGEX  harness self-test: pass only if the log scanner
#                          flags a line matching REGEX (and nothing else)
#   # expect-console: REGEX  the console log must show REGEX by the time the
#                          guest is off (for what happens after the test,
#                          such as the reboot notifier at power-off)
#   # reboot-with: ARGS    after the test passed, boot a second VM from the
#                          initramfs the test left in /hc-results/initrd.img,
#                          with the same drives and kernel arguments ARGS;
#                          its console goes to WORK_DIR/console2.log
#   # expect-console2: REGEX  the second VM's console must show REGEX
#   # boots: N             run the test in N VMs one after the other, with
#                          the same drives (hc.boot=1..N on the command
#                          line, HC_BOOT in the test): every boot but the
#                          last must leave out/boot-I.ok and then end itself
#                          with a hard reset (sysrq-b), as a crash would;
#                          the last one ends as a single-boot test does.
#                          Each boot's console goes to console.log (the
#                          last) or console-bootI.log (the others)
#   # boots-long: N        the same, under make check-long
# The guest's serial console goes to WORK_DIR/console.log; what the test
# printed to WORK_DIR/out/test.log.
#
# Environment, for a kernel that is not installed (make check-debug):
#   HC_KERNEL_IMAGE=FILE   boot FILE, not /boot/vmlinuz-KVER
#   HC_MODULES_ROOT=DIR    KVER's modules are in DIR/lib/modules/KVER, not
#                          /lib/modules/KVER (for the initramfs, and linked
#                          there in the guest, so modprobe knows built-ins)
#   HC_APPEND=ARGS         kernel arguments for every test, before the test's
#                          own (module parameters of built-in drivers)
#   HC_MONITOR=PATH        the QEMU monitor on a unix socket at PATH (for
#                          tests/bench/rip-sample.py), not none
#   HC_CLOCK=instructions|host  the guest's clock, over the test's header
#                          (make bench: instructions)
#   HC_QEMU_ARGS=ARGS      more QEMU options
#   HC_CPU=MODEL           the guest's CPU model (default qemu64, without
#                          SSE4.2; Westmere has it: see below)
#   HC_BOOT_SECONDS=N      time allowed beyond the test's timeout to boot and
#                          power off (default 60; a KASAN kernel needs more)
#   HC_TIME_SCALE=N        multiply every test's timeout, and the limits
#                          in the guest (hc_wait(), io_watch()'s stall, a
#                          test's own waits), by N (default 1; for a slow
#                          debug kernel)
#   HC_MODULE=debug|release  which hcache.ko the guest loads as HC_KO: the
#                          debug build (build/KVER/hcache-debug/, with the
#                          delay and fault points; tests/run's) or the
#                          release build (build/KVER/hcache/, the default:
#                          make demo and make bench)
set -uo pipefail

kver=$1
test=$(realpath "$2")
work=$3
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

header() {
	sed -n "s/^# $1: //p" "$test"
}

timeout=$(header timeout | tail -n 1)
if [ -n "${HC_LONG:-}" ] && [ -n "$(header timeout-long)" ]; then
	timeout=$(header timeout-long | tail -n 1)
fi
timeout=$((${timeout:-120} * ${HC_TIME_SCALE:-1}))
memory=$(header memory | tail -n 1)
smp=$(header smp | tail -n 1)
clock=${HC_CLOCK:-$(header clock | tail -n 1)}
case ${clock:-host} in
instructions) clock_args=(-icount "shift=3,sleep=off") ;;
host) clock_args=() ;;
*) echo "run-test.sh: clock '$clock': instructions or host" >&2; exit 2 ;;
esac
append=$(header append | tr '\n' ' ')
mapfile -t allowed < <(header expect-log)
flagged_re=$(header expect-flagged | tail -n 1)
mapfile -t console_wanted < <(header expect-console)
reboot_args=$(header reboot-with | tail -n 1)
boots=$(header boots | tail -n 1)
mapfile -t console2_wanted < <(header expect-console2)
[ -n "${HC_LONG:-}" ] && long=1 || long=0
if [ $long = 1 ] && [ -n "$(header boots-long)" ]; then
	boots=$(header boots-long | tail -n 1)
fi
boots=${boots:-1}

rm -rf "$work"
mkdir -p "$work/out"
console=$work/console.log

kernel=${HC_KERNEL_IMAGE:-/boot/vmlinuz-$kver}
[ -f "$kernel" ] || { echo "no kernel image $kernel" >"$console"; exit 1; }
# An installed kernel boots unpacked, through its PVH entry point: 2-4 s
# less per boot under TCG (extract-kernel.sh). Unpacked once per kernel;
# if that fails, the bzImage boots as it is.
if [ -z "${HC_KERNEL_IMAGE:-}" ]; then
	vmlinux=$top/build/$kver/vmlinux
	if [ ! -f "$vmlinux" ] || [ "$kernel" -nt "$vmlinux" ]; then
		mkdir -p "$(dirname "$vmlinux")"
		flock "$vmlinux.lock" sh -c '[ -f "$2" ] && [ ! "$1" -nt "$2" ] ||
			"$0" "$1" "$2"' "$here/extract-kernel.sh" "$kernel" "$vmlinux" \
			>>"$work/qemu.log" 2>&1
	fi
	[ -f "$vmlinux" ] && kernel=$vmlinux
fi
initrd=$top/build/$kver/vm-initramfs.gz
if [ ! -f "$initrd" ] || [ "$here/init" -nt "$initrd" ] ||
   [ "$here/mkinitramfs.sh" -nt "$initrd" ]; then
	mkdir -p "$(dirname "$initrd")"
	flock "$initrd.lock" "$here/mkinitramfs.sh" "$kver" "$initrd" ||
		{ echo "cannot build $initrd" >"$console"; exit 1; }
fi

drive_args=()
for d in $(header drives); do
	IFS=: read -r name size format <<<"$d"
	format=${format:-raw}
	case $format in
	raw) truncate -s "$size" "$work/$name.img" ;;
	qcow2) qemu-img create -q -f qcow2 "$work/$name.img" "$size" ||
		{ echo "cannot make the qcow2 image $name of $size" >"$console"; exit 1; } ;;
	*) echo "drive $d: format $format is neither raw nor qcow2" >"$console"; exit 1 ;;
	esac
	drive_args+=(-drive "file=$work/$name.img,if=none,id=$name,format=$format,cache=none"
		     -device "virtio-blk-pci,drive=$name,serial=$name")
done

# boot_guest CONSOLE LIMIT INITRD APPEND [QEMU-ARGS...]: run one guest with
# the test's memory, CPUs and drives, its serial console into CONSOLE, killed
# after LIMIT seconds. Returns QEMU's status (137: killed).
#
# One host thread for all guest CPUs (thread=single): with thread=multi,
# 6.12 guests now and then die at boot with an int3 oops in
# sched_clock_cpu while the kernel patches its own code across CPUs (seen
# 1 boot in ~25). Tests take the same time either way;
# HC_TCG_THREAD=multi brings the other back for experiments.
#
# The CPU model: QEMU's default, qemu64, lacks SSE4.2, so the kernel's and
# fio's crc32c run their table-driven code. With SSE4.2 (HC_CPU=Westmere)
# they run the crc32 instruction, which QEMU 7.2's TCG emulates one bit at
# a time (helper_crc32: 64 steps for an 8-byte crc32q), slower than the
# tables: vm/wb-basic took 60 s instead of 43, and make check 41 minutes
# instead of about 34 (2026-12-05). Every system, in tests and benches
# alike, gets the same model.
boot_guest() {
	local console=$1 limit=$2 initrd=$3 append=$4 monitor=none
	if [ -n "${HC_MONITOR:-}" ]; then
		rm -f "$HC_MONITOR"
		monitor=unix:$HC_MONITOR,server=on,wait=off
	fi
	shift 4
	timeout -s KILL "$limit" qemu-system-x86_64 \
		-accel tcg,thread=${HC_TCG_THREAD:-single} -cpu "${HC_CPU:-qemu64}" -m "${memory:-2G}" -smp "${smp:-2}" \
		-nodefaults -no-reboot -display none \
		-monitor "$monitor" \
		-serial "file:$console" -kernel "$kernel" -initrd "$initrd" \
		-device virtio-rng-pci \
		-append "$append" "${drive_args[@]}" "${clock_args[@]}" ${HC_QEMU_ARGS:-} "$@"
}

verdict=0
# fail REASON: the test fails; the reason goes to WORK_DIR/verdict.
fail() {
	echo "$1" >>"$work/verdict"
	verdict=1
}

# expect_console LOG WHAT REGEX...: each REGEX must show in LOG.
expect_console() {
	local log=$1 what=$2 re
	shift 2
	for re in "$@"; do
		grep -a -q -E -- "$re" "$log" || fail "$what never showed /$re/"
	done
}

# The test's limit plus time to boot and power off.
limit=$((timeout + ${HC_BOOT_SECONDS:-60}))
# run_boot N CONSOLE: the test's Nth boot.
run_boot() {
	boot_guest "$2" "$limit" "$initrd" \
		"console=ttyS0 loglevel=7 panic=-1 nokaslr hc.root=$top hc.test=$test hc.timeout=$timeout hc.timescale=${HC_TIME_SCALE:-1} hc.long=$long hc.boot=$1 hc.boots=$boots hc.module=${HC_MODULE:-release} ${HC_MODULES_ROOT:+hc.modroot=$HC_MODULES_ROOT} ${HC_APPEND:-} $append" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$work/out,mount_tag=results,security_model=none,multidevs=remap" \
		>>"$work/qemu.log" 2>&1
}

# Boots that end in a hard reset: each must reach its kill point.
for ((i = 1; i < boots && verdict == 0; i++)); do
	run_boot "$i" "$work/console-boot$i.log"
	[ $? = 137 ] && fail "boot $i: VM killed after ${limit}s"
	[ -f "$work/out/boot-$i.ok" ] ||
		fail "boot $i did not reach its kill point (see console-boot$i.log, out/test.log)"
	flagged=$("$here/scan-log.sh" "$work/console-boot$i.log" /dev/null "${allowed[@]}")
	[ -z "$flagged" ] || fail "boot $i, kernel log:
$flagged"
done
[ $verdict = 0 ] || exit 1

run_boot "$boots" "$console"
[ $? = 137 ] && fail "VM killed after ${limit}s"

rc=$(cat "$work/out/rc" 2>/dev/null)
if [ -z "$rc" ]; then
	fail "the test did not finish (no exit status from the guest)"
elif [ "$rc" != 0 ]; then
	fail "the test exited with status $rc"
fi
expect_console "$console" "the console log" "${console_wanted[@]}"

flagged=$("$here/scan-log.sh" "$console" "$work/out/dmesg.raw" "${allowed[@]}")
if [ -n "$flagged_re" ]; then
	# Harness self-test: the scanner must flag the provoked line, and only it.
	echo "$flagged" | grep -q -E -- "$flagged_re" ||
		fail "the log scanner did not flag /$flagged_re/"
	flagged=$(echo "$flagged" | grep -v -E -- "$flagged_re")
fi
[ -z "$flagged" ] || fail "kernel log:
$flagged"

# The second boot: the guest's own initramfs (initramfs-tools' or dracut's,
# made by the test) and its drives, as a machine that boots from them.
if [ -n "$reboot_args" ] && [ $verdict = 0 ]; then
	console2=$work/console2.log
	if [ ! -f "$work/out/initrd.img" ]; then
		fail "the test left no initrd.img for the second boot"
	else
		boot_guest "$console2" "${HC_BOOT_SECONDS:-60}" "$work/out/initrd.img" \
			"console=ttyS0 panic=-1 ${HC_APPEND:-} $reboot_args" \
			>"$work/qemu2.log" 2>&1
		[ $? = 137 ] && fail "second boot: VM killed after ${HC_BOOT_SECONDS:-60}s"
		expect_console "$console2" "the second boot's console" "${console2_wanted[@]}"
		flagged=$("$here/scan-log.sh" "$console2" /dev/null "${allowed[@]}")
		[ -z "$flagged" ] || fail "second boot, kernel log:
$flagged"
	fi
fi
exit $verdict
