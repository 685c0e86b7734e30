#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/bench/pair.sh: make bench-pair. One QEMU guest runs
# tests/bench/pair-guest.sh: bench workload c (or d, or h) on hcache and
# dm-writecache in turns, ROUNDS times (default 4), about 4 minutes; prints
# each run and the ratio of the medians. For checking a change to the
# write path against the system that sets c's bar, without the 40 minutes
# of make bench. Results in bench-results/<date>-<kernel>-pair-<workload>/.
#
# Environment:
#   KERNEL=RELEASE   a kernel release or its prefix (default: the newest
#                    installed 6.12)
#   ROUNDS=N         runs of each system (default 4)
#   WORKLOAD=c|d|h   c (default): 4 KiB random writes, iodepth 32; d: 4 KiB
#                    random reads of what one run of c wrote; h: 4 KiB
#                    random writes, iodepth 1, an fsync after each
#   CHECKSUM=crc32c|none  hcache's data checksums (make-hcache --checksum;
#                    default: make-hcache's default)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
tool=bench-pair
. tests/bench/host-lib.sh
rounds=${ROUNDS:-4}
case $rounds in '' | *[!0-9]* | 0) echo "bench-pair: ROUNDS=$rounds: a number of runs" >&2; exit 1 ;; esac
wl=${WORKLOAD:-c}
case $wl in c | d | h) ;; *) echo "bench-pair: WORKLOAD=$wl: c, d or h" >&2; exit 1 ;; esac
csum=${CHECKSUM:-}
case $csum in '' | crc32c | none) ;; *) echo "bench-pair: CHECKSUM=$csum: crc32c or none" >&2; exit 1 ;; esac
bench_kernel
res=${BENCH_OUT:-$top/bench-results}/$(date -u +%Y-%m-%d-%H%M)-$k-pair-$wl${csum:+-$csum}
work=$top/build/bench-pair/$k
mkdir -p "$res" "$(dirname "$work")"
echo "bench-pair: $k, workload $wl, hcache${csum:+ (checksum $csum)} and dm-writecache in turns, $rounds rounds"
HC_APPEND="${HC_APPEND:-} hcbench.rounds=$rounds hcbench.workload=$wl${csum:+ hcbench.checksum=$csum}" \
	tests/vm/run-test.sh "$k" tests/bench/pair-guest.sh "$work"
rc=$?
bench_collect $rc "$work" "$res"
cat "$res/pair.txt"
# The medians and the ratio per round.
awk '{ v[$1, ++n[$1]] = $3 }
     function median(s,   i, j, t, a, m) {
	m = n[s]
	for (i = 1; i <= m; i++) a[i] = v[s, i]
	for (i = 2; i <= m; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
     }
     END {
	h = median("hcache"); d = median("dmwc")
	printf "median IOPS: hcache %d, dm-writecache %d: %.2fx; per round:", h, d, d ? h / d : 0
	for (i = 1; i <= n["hcache"]; i++) printf " %.2f", v["dmwc", i] ? v["hcache", i] / v["dmwc", i] : 0
	printf "\n"
     }' "$res/pair.txt" | tee "$res/summary.txt"
echo "bench-pair: $res"
