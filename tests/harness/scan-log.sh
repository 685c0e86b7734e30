#!/bin/bash
# The log scanner flags every kind of kernel trouble it promises to, lets
# declared lines through, and stays quiet on an ordinary boot log.
set -u
scan=$(cd "$(dirname "$0")/../vm" && pwd)/scan-log.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

expect() { # expect flagged|clean CONSOLE_LINE DMESG_LINE [ALLOWED...]
	local want=$1
	printf '%s\n' "$2" >"$tmp/console"
	printf '%s\n' "$3" >"$tmp/dmesg"
	shift 3
	if "$scan" "$tmp/console" "$tmp/dmesg" "$@" >/dev/null; then
		got=clean
	else
		got=flagged
	fi
	if [ "$got" = "$want" ]; then
		echo "ok: $want: $(head -c 70 "$tmp/console") $(head -c 50 "$tmp/dmesg")"
	else
		echo "WRONG: expected $want, got $got: $(cat "$tmp/console" "$tmp/dmesg")"
		fails=$((fails + 1))
	fi
}

ts='[   12.345678]'
for line in \
	"$ts WARNING: CPU: 1 PID: 180 at drivers/md/hcache/btree.c:18 f+0x25/0xff0 [hcache]" \
	"$ts BUG: kernel NULL pointer dereference, address: 0000000000000008" \
	"$ts kernel BUG at drivers/md/hcache/alloc.c:99!" \
	"$ts Oops: 0000 [#1] PREEMPT SMP NOPTI" \
	"$ts general protection fault, probably for non-canonical address" \
	"$ts Kernel panic - not syncing: Fatal exception" \
	"$ts BUG: KASAN: slab-out-of-bounds in hc_bset_insert+0x1/0x2" \
	"$ts UBSAN: shift-out-of-bounds in drivers/md/hcache/bset.c:10:5" \
	"$ts unreferenced object 0xffff888003a1b200 (size 64):" \
	"$ts WARNING: possible circular locking dependency detected" \
	"$ts INFO: task kworker/0:1:42 blocked for more than 20 seconds." \
	"$ts watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [fio:99]" \
	"$ts rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:" \
	"$ts list_del corruption. prev->next should be ffff8880" \
	"$ts refcount_t: underflow; use-after-free." \
	"$ts kmemleak: Kernel memory leak detector disabled"; do
	expect flagged "$line" ""
done

expect flagged "" "<3>$ts hcache: vda: bad superblock checksum"
expect flagged "" "<2>hcache: cache set failed"
expect clean "" "<4>$ts hcache: loading out-of-tree module taints kernel."
expect clean "" "<6>$ts hcache: loaded"
expect clean "" "<3>$ts virtio_blk: unrelated driver error"
expect clean "$ts Run /init as init process" ""
expect clean "$ts hcache-vm: test exited with status 0" ""
expect clean "" "<3>$ts hcache: vdb: bad superblock checksum" 'bad superblock checksum'
expect flagged "" "<3>$ts hcache: vdb: other error" 'bad superblock checksum'
expect clean "$ts WARNING: CPU: 0 PID: 1 at x [hc_selftest]" "" 'hc_selftest'
# The emulator's stray single-step trap (scan-log.sh), and nothing like it.
expect clean "$ts WARNING: CPU: 1 PID: 6848 at arch/x86/kernel/traps.c:1120 exc_debug_kernel+0xca/0x160" ""
expect flagged "$ts WARNING: CPU: 1 PID: 6848 at arch/x86/kernel/traps.c:1120 exc_debug_user+0xca/0x160" ""
expect flagged "$ts WARNING: CPU: 1 PID: 6848 at drivers/md/hcache/traps.c:1120 exc_debug_kernel+0x1/0x2 [hcache]" ""

[ $fails = 0 ]
