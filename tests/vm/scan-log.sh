#!/bin/bash
# scan-log.sh CONSOLE_LOG DMESG_RAW [ALLOWED_REGEX...]: print every line of
# the guest's kernel log that means trouble, and exit 1 if there is any.
#
# Trouble is any kernel warning, BUG, oops, panic, KASAN/UBSAN/kmemleak
# report, lockdep splat, hung task or soft lockup (looked for in the serial
# console log, which survives a dying guest), and any hcache message at
# error level or worse (looked for in dmesg -r output, which keeps levels).
# A line matching one of the ALLOWED_REGEX (a test's "# expect-log:") is not
# trouble.
#
# One warning is the emulator's, not the guest's, and is let through in
# every test: exc_debug_kernel's WARN_ON_ONCE(dr6 & DR_STEP), a
# single-step debug trap taken in kernel mode, which no code in these
# guests asks for (no kprobes, no kgdb). TCG now and then leaves the
# trap flag set on entry to the kernel; the kernel's own comment there
# names QEMU as a known cause. Seen once in about 170 guest hours: in
# powercut-volatile@6.12 under make check-long, in a python3 preadv()
# through dm-linear, with no hcache frame on the stack.
set -u

console=$1
dmesg_raw=$2
shift 2

crash='WARNING:|BUG:|kernel BUG at|Oops|general protection fault|Kernel panic|'
crash+='KASAN:|UBSAN:|unreferenced object|possible circular locking|'
crash+='possible recursive locking|inconsistent lock state|'
crash+='blocked for more than|soft lockup|hard LOCKUP|rcu_(sched|preempt) detected stall|'
crash+='list_(add|del) corruption|refcount_t: |Unable to handle kernel|'
crash+='stack-protector|double fault|segfault at .* in hcache|'
# kmemleak turning itself off would hide every later leak.
crash+='kmemleak: Kernel memory leak detector disabled|kmemleak: .*[Pp]ool empty'

{
	[ -f "$console" ] && grep -a -E "$crash" "$console"
	# Level 0-3 (emerg, alert, crit, err) from hcache itself.
	[ -f "$dmesg_raw" ] && grep -a -E '^<[0-3]>(\[[ 0-9.]+\] )?hcache:' "$dmesg_raw"
} | sort -u | while IFS= read -r line; do
	allowed=0
	for re in "$@" 'WARNING: CPU: [0-9]+ PID: [0-9]+ at arch/x86/kernel/traps\.c:[0-9]+ exc_debug_kernel\+'; do
		if echo "$line" | grep -q -E -- "$re"; then
			allowed=1
			break
		fi
	done
	[ $allowed = 1 ] || echo "$line"
done | grep . && exit 1
exit 0
