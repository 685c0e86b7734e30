#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/bench/keys.sh: make bench-keys. What does the number of keys cost
# when a set registers? One guest of one CPU (the debug build, for its
# fill) on the instruction clock runs tests/bench/keys-guest.sh: a cache filled with
# KEYS keys in turn (default 100000 1000000 10000000), each time stopped
# cleanly and registered again (three times, the medians counting), then given CUT_KEYS more keys that only
# the journal holds, its power cut, and registered again. Prints, per
# count, the registration time, the time to the first read served, the
# btree nodes cached and the memory the registration took, the hits a
# second with every node cached, and the registration time after the
# power cut (with the journal entries and keys it replayed); then the
# verdicts against the scale issue's goals: the first read after
# registration with the most keys at most 1.2 times as late as with the
# fewest, and a hit at most 1.5 times as costly; and, with no goal, how
# much longer the registration after a power cut takes with the most
# keys than with the fewest. About 10 minutes with the default counts.
# Results in bench-results/<date>-<kernel>-keys/.
#
# keys.txt, one line per count: keys, registration seconds, seconds to
# the first read (medians of three), nodes cached and vmalloc and slab growth in KiB once the
# mark pass behind I/O ended, hits a second, then for the registration
# after the power cut (the set holding KEYS plus CUT_KEYS keys): seconds,
# journal entries replayed, keys replayed; then the seconds of the mark
# pass behind I/O after the clean stop.
#
# Environment:
#   KERNEL=RELEASE   a kernel release or its prefix (default: the newest
#                    installed 6.12)
#   KEYS="N..."      the key counts, ascending
#   REAL_KEYS=N      the keys written through the cache by fio (default
#                    1000000; the rest come from the debug build's fill,
#                    which writes their data too)
#   CUT_KEYS=N       the keys journalled before each power cut (default
#                    10000; at most the keys each count adds)
#
# Exit status: 0 if the goal holds; 1 if it does not, or the guest failed
# (a failed check after a power cut included).
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
tool=bench-keys
. tests/bench/host-lib.sh
keys=${KEYS:-100000 1000000 10000000}
cut_keys=${CUT_KEYS:-10000}
real_keys=${REAL_KEYS:-1000000}
for n in $keys; do
	case $n in '' | *[!0-9]* | 0) echo "bench-keys: KEYS=$keys: key counts" >&2; exit 1 ;; esac
done
case $cut_keys in '' | *[!0-9]* | 0) echo "bench-keys: CUT_KEYS=$cut_keys: a key count" >&2; exit 1 ;; esac
case $real_keys in '' | *[!0-9]*) echo "bench-keys: REAL_KEYS=$real_keys: a key count" >&2; exit 1 ;; esac
bench_kernel
HC_DEBUG=1 ./scripts/build-module.sh "/lib/modules/$k/build" >/dev/null ||
	{ echo "$tool: building the debug module for $k failed" >&2; exit 1; }
res=${BENCH_OUT:-$top/bench-results}/$(date -u +%Y-%m-%d-%H%M)-$k-keys
work=$top/build/bench-keys/$k
mkdir -p "$res" "$(dirname "$work")"
echo "bench-keys: $k, instruction clock, keys: $keys (the first $real_keys written by fio), $cut_keys more before each power cut"
HC_MODULE=debug HC_APPEND="${HC_APPEND:-} hcbench.keys=${keys// /,} hcbench.cut_keys=$cut_keys hcbench.real_keys=$real_keys" \
	tests/vm/run-test.sh "$k" tests/bench/keys-guest.sh "$work" || bench_collect 1 "$work" "$res"
bench_collect 0 "$work" "$res"
awk '{ printf "%9d keys: registration %6.2f s, first read %6.2f s after the register write, mark pass behind I/O %6.2f s, then %5d nodes cached, vmalloc +%d MiB, slab +%d MiB, %d hits a second; after a power cut: registration %6.2f s, %d keys replayed from %d journal entries\n", $1, $2, $3, $11, $4, $5 / 1024, $6 / 1024, $7, $8, $10, $9 }
     NR == 1 { first = $3; fk = $1; fiops = $7; freg = $2; fcut = $8 }
     { last = $3; lk = $1; liops = $7; lreg = $2; lcut = $8 }
     END {
	if (NR < 2 || !liops || !fcut) exit 1
	r = last / first
	c = fiops / liops
	printf "first read with %d keys %.2fx as late as with %d (goal at most 1.2x)\n", lk, r, fk
	printf "a hit with %d keys costs %.2fx what it costs with %d (IOPS on the instruction clock; goal at most 1.5x)\n", lk, c, fk
	printf "registration after a power cut at %d keys %.2fx as long as at %d (after a clean stop %.2fx; no goal)\n", lk, lcut / fcut, fk, lreg / freg
	exit r <= 1.2 && c <= 1.5 ? 0 : 1
     }' "$res/keys.txt" | tee "$res/summary.txt"
rc=${PIPESTATUS[0]}
echo "bench-keys: $res"
exit "$rc"
