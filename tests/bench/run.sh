#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/bench/run.sh: make bench. For each kernel, one QEMU guest
# (tests/vm/run-test.sh) runs tests/bench/guest.sh: the same fio jobs on a
# raw backing disk, a raw cache disk, hcache, stock bcache, dm-cache and
# dm-writecache, all built from identical null_blk disks. Then
# tests/bench/report.py writes bench-results/<date>-<kernel>/report.md and
# the warm-up plots. Needs hcache.ko and the tools built (make) and the
# packages of make deps.
#
# Environment:
#   KERNELS="6.12 6.1"   kernels to run, each a release or its prefix
#                        (default: the newest installed 6.12)
#   BENCH_RUNTIME=S      seconds per fio run (default 10); also
#                        BENCH_BACK_MIB, BENCH_BACK_NSEC, BENCH_CACHE_MIB,
#                        BENCH_CACHE_NSEC, BENCH_BUCKET, BENCH_IODEPTH,
#                        BENCH_ZIPF_MIB (see guest.sh for the defaults)
#   BENCH_ADMIT=POLICY   hcache's admission_policy (default second_access,
#                        hcache's default)
#   BENCH_OUT=DIR        where the per-kernel folders go (default
#                        bench-results/)
#   BENCH_CLOCK=host     the guest on the host's clock, not QEMU's
#                        instruction count (see tests/bench/host-lib.sh)
# Exits 0 when every kernel's guest finished cleanly and its report was
# written; the report's PASS/MISS column does not change the exit status.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
out=${BENCH_OUT:-$top/bench-results}
. tests/bench/host-lib.sh

# Kernels that are installed (/boot/vmlinuz) and have headers, as tests/run.
installed=()
for b in /lib/modules/*/build; do
	k=$(basename "$(dirname "$b")")
	[ -f "/boot/vmlinuz-$k" ] && installed+=("$k")
done
kernels=()
for want in ${KERNELS:-6.12}; do
	match=()
	for k in "${installed[@]}"; do
		case $k in "$want" | "$want".* | "$want"-*) match+=("$k") ;; esac
	done
	if [ ${#match[@]} = 0 ]; then
		echo "bench: no installed kernel matches '$want' (make deps)" >&2
		exit 1
	fi
	# A prefix picks the newest release it matches.
	kernels+=("$(printf '%s\n' "${match[@]}" | sort -V | tail -n 1)")
done

for t in make-hcache hcache-super-show; do
	[ -x "tools/$t" ] || { echo "bench: tools/$t is not built: run make first" >&2; exit 1; }
done

append=
for v in back_mib back_nsec cache_mib cache_nsec bucket runtime iodepth zipf_mib admit; do
	V=BENCH_${v^^}
	[ -z "${!V:-}" ] || append+=" hcbench.$v=${!V}"
done

append+=" hcbench.clock=${BENCH_CLOCK:-icount}"
status=0
for k in "${kernels[@]}"; do
	if [ ! -f "build/$k/hcache/hcache.ko" ]; then
		echo "bench: build/$k/hcache/hcache.ko is not built: run make (or make KDIR=/lib/modules/$k/build)" >&2
		status=1
		continue
	fi
	stamp=$(date -u +%Y-%m-%d-%H%M)
	res=$out/$stamp-$k
	work=$top/build/bench/$k
	mkdir -p "$res" "$(dirname "$work")"
	echo "bench: $k: one guest, 20 to 40 minutes; log: $work/out/test.log"
	t0=$SECONDS
	# Other guests on the host take CPU time from this one: note them.
	others0=$(pgrep -c -f '^qemu-system' || true)
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	# ... and every 10 s while it runs (this guest is one of them).
	(while sleep 10; do pgrep -c -f '^qemu-system' || true; done) >"$work.qemus" 2>/dev/null &
	sampler=$!
	HC_APPEND="${HC_APPEND:-}$append" tests/vm/run-test.sh "$k" tests/bench/guest.sh "$work"
	rc=$?
	secs=$((SECONDS - t0))
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	cp -r "$work/out/." "$res/"
	cp "$work/console.log" "$res/" 2>/dev/null
	{
		echo "host $(nproc) CPUs; load average before $load0, after $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "other QEMU guests running on the host when the bench started: $others0, when it ended: $(pgrep -c -f '^qemu-system' || true)"
		awk '{ n++; o = $1 - 1; s += o; if (o > m) m = o }
		     END { if (n) printf "other QEMU guests while it ran (every 10 s): mean %.1f, at most %d\n", s / n, m }' "$work.qemus"
		echo "wall time of the guest: ${secs} s"
	} >"$res/host.txt"
	{
		if [ $rc = 0 ]; then
			echo "the guest finished cleanly in ${secs} s"
		else
			echo "FAILED after ${secs} s: $(cat "$work/verdict" 2>/dev/null)"
		fi
	} >"$res/harness-verdict.txt"
	if ! python3 tests/bench/report.py "$res"; then
		echo "bench: $k: no report (see $res/test.log)" >&2
		status=1
		continue
	fi
	[ $rc = 0 ] || { echo "bench: $k: the guest failed: $(cat "$work/verdict" 2>/dev/null)" >&2; status=1; }
	echo "bench: $k: $res/report.md (${secs} s)"
	sed -n '/^## Goals/,/^## Results/p' "$res/report.md" | sed '$d'
done
exit $status
