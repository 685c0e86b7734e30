#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/bench/scale.sh: make bench-scale. Do cache hits scale across CPUs?
# One QEMU guest with two CPUs under multi-threaded TCG (a host thread per
# guest CPU) on the host's clock runs tests/bench/scale-guest.sh: 4 KiB
# random reads of a wholly cached region with one fio job and then two, on
# the raw cache disk, hcache and bcache, in turns, ROUNDS times. Prints
# each system's median IOPS with one and two jobs, its gain (two jobs over
# one, the median of the rounds) with their spread, and the verdict: hcache must gain
# at least 0.9 times what the raw cache disk gains. If the raw disk gains
# under 1.3x, the host did not give the guest two CPUs' worth of time and
# the run is void. The host should be otherwise idle: other QEMU guests
# and the load average are recorded. About 15 minutes. Results in
# bench-results/<date>-<kernel>-scale/.
#
# Environment:
#   KERNEL=RELEASE   a kernel release or its prefix (default: the newest
#                    installed 6.12)
#   ROUNDS=N         rounds (default 5)
#
# Exit status: 0 if the run is valid and hcache scales as required; 1 if
# it does not, or the guest failed; 2 if the run is void.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
tool=bench-scale
BENCH_CLOCK=host
. tests/bench/host-lib.sh
rounds=${ROUNDS:-5}
case $rounds in '' | *[!0-9]* | 0) echo "bench-scale: ROUNDS=$rounds: a number of rounds" >&2; exit 2 ;; esac
bench_kernel
res=${BENCH_OUT:-$top/bench-results}/$(date -u +%Y-%m-%d-%H%M)-$k-scale
work=$top/build/bench-scale/$k
mkdir -p "$res" "$(dirname "$work")"
others=$(pgrep -c -f '^qemu-system' || true)
load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "bench-scale: $k, 2 CPUs, multi-threaded TCG, host clock, $rounds rounds; other QEMU guests now: $others, load $load0"
HC_TCG_THREAD=multi HC_APPEND="${HC_APPEND:-} hcbench.rounds=$rounds" \
	tests/vm/run-test.sh "$k" tests/bench/scale-guest.sh "$work" || bench_collect 1 "$work" "$res"
bench_collect 0 "$work" "$res"
{
	echo "host $(nproc) CPUs; load average before $load0, after $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "other QEMU guests when the run started: $others, when it ended: $(pgrep -c -f '^qemu-system' || true)"
} >"$res/host.txt"
cat "$res/host.txt"
# scale.txt: system jobs round IOPS hits. A system's gain is the median of
# its per-round gains, each two runs made one after the other: on the
# host's clock the guest's speed drifts by a factor of two within minutes
# (one job on the raw disk from 3339 to 7068 IOPS in one run), and a
# ratio of medians taken minutes apart carried that drift into the gain.
awk '{ v[$1, $2, $3] = $4; if ($3 > r) r = $3 }
     function median(a, m,   i, j, t) {
	for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
     }
     END {
	split("rawc hcache bcache", sys, " ")
	for (s = 1; s <= 3; s++) {
		n = sys[s]
		for (i = 1; i <= r; i++) { a1[i] = v[n, 1, i]; a2[i] = v[n, 2, i]; g[i] = a1[i] ? a2[i] / a1[i] : 0 }
		m1 = median(a1, r); m2 = median(a2, r)
		lo = hi = g[1]
		for (i = 2; i <= r; i++) { if (g[i] < lo) lo = g[i]; if (g[i] > hi) hi = g[i] }
		gain[n] = median(g, r)
		printf "%-7s 1 job %7d IOPS, 2 jobs %7d IOPS (medians): gain %.2fx (median of the rounds, %.2f to %.2f)\n", n, m1, m2, gain[n], lo, hi
	}
	if (gain["rawc"] < 1.3) {
		printf "void: the raw cache disk gained %.2fx (under 1.3x): the guest did not get two CPUs\n", gain["rawc"]
		exit 2
	}
	rel = gain["hcache"] / gain["rawc"]
	printf "hcache gains %.2f of what the raw disk gains (goal 0.9); bcache %.2f\n", rel, gain["bcache"] / gain["rawc"]
	exit rel >= 0.9 ? 0 : 1
     }' "$res/scale.txt" | tee "$res/summary.txt"
rc=${PIPESTATUS[0]}
echo "bench-scale: $res"
exit "$rc"
