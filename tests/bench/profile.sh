#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/bench/profile.sh: make bench-profile. One QEMU guest runs
# tests/bench/profile-guest.sh: one bench workload on hcache alone, its
# second run traced with ftrace, the time summed per hcache function, its
# third sampled from the host (tests/bench/rip-sample.py): the share of
# the guest CPU's time in each kernel function, user mode and idle.
# Results in bench-results/<date>-<kernel>-profile-<workload>/.
#
# Environment:
#   WORKLOAD=a|b|c|d|e zipf reads from an empty cache (a), cold random
#                    reads (b), 4 KiB random writes (c), reading back
#                    what c wrote (d) or mkfs.ext4 over and over (e);
#                    default c
#   KERNEL=RELEASE   a kernel release or its prefix (default: the newest
#                    installed 6.12)
#   MODE=MODE        hcache's cache mode (default writeback; none gives
#                    the floor: every I/O passed to the backing device)
#   ADMIT=POLICY     hcache's admission_policy (default second_access)
#                    The guest refuses a mode or policy hcache does not
#                    know, as sysfs does, so no list of them is kept here.
#   SYSTEM=NAME      hcache (default), dmwc (dm-writecache as make bench
#                    sets it up) or rawc (the cache disk alone): the same
#                    runs and samples on another system, to set beside
#                    hcache's; only hcache's are traced
#   SAMPLE_RUN=N     sample run N (1, 2 or 3; default 3) instead: 1 sees
#                    the cache filling up; 2 is then not traced
#   INSNS=1          also count the guest's instructions in the sampled
#                    run, per function and per I/O, with the QEMU plugin
#                    tests/bench/insn-count.c (insn-summary.txt, and the
#                    raw counts in insn-counts.txt)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 1
tool=bench-profile
. tests/bench/host-lib.sh
w=${WORKLOAD:-c}
case $w in a | b | c | d | e) ;; *) echo "bench-profile: WORKLOAD=$w: a, b, c, d or e" >&2; exit 1 ;; esac
mode=${MODE:-writeback}
admit=${ADMIT:-second_access}
sys=${SYSTEM:-hcache}
case $sys in hcache | dmwc | rawc) ;; *) echo "bench-profile: SYSTEM=$sys: hcache, dmwc or rawc" >&2; exit 1 ;; esac
bench_kernel
tag=$mode-$admit
[ "$sys" = hcache ] || tag=$sys
res=${BENCH_OUT:-$top/bench-results}/$(date -u +%Y-%m-%d-%H%M)-$k-profile-$w-$tag
work=$top/build/bench-profile/$k
mkdir -p "$res" "$(dirname "$work")"
echo "bench-profile: $k, workload $w, $sys ($tag): one guest, about 3 minutes"
# Outside $work, which tests/vm/run-test.sh empties first.
export HC_MONITOR=$work.monitor
rm -f "$HC_MONITOR" "$work.rip"
python3 tests/bench/rip-sample.py sample "$HC_MONITOR" "$work/out" "$work.rip" &
sampler=$!
rm -f "$work.insns"
if [ "${INSNS:-0}" = 1 ]; then
	plugin=$top/build/insn-count.so
	gcc -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden -o "$plugin" \
		tests/bench/insn-count.c -lpthread || exit 1
	HC_QEMU_ARGS="${HC_QEMU_ARGS:-} -plugin $plugin,dir=$work/out,out=$work.insns"
	export HC_QEMU_ARGS
fi
HC_APPEND="${HC_APPEND:-} hcbench.workload=$w hcbench.mode=$mode hcbench.admit=$admit hcbench.system=$sys hcbench.sample_run=${SAMPLE_RUN:-3}" \
	tests/vm/run-test.sh "$k" tests/bench/profile-guest.sh "$work"
rc=$?
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
bench_collect $rc "$work" "$res"
python3 tests/bench/rip-sample.py report "$work.rip" "$res/kallsyms.txt" \
	>"$res/rip-summary.txt" || echo "bench-profile: no samples of run ${SAMPLE_RUN:-3}" >&2
if [ "${INSNS:-0}" = 1 ]; then
	python3 tests/bench/rip-sample.py insns "$work.insns" "$res/kallsyms.txt" \
		"$(cat "$res/sampled-ios" 2>/dev/null)" >"$res/insn-summary.txt" ||
		echo "bench-profile: no instructions counted in run ${SAMPLE_RUN:-3}" >&2
	cp "$work.insns" "$res/insn-counts.txt" 2>/dev/null
fi
cat "$res/runs.txt"
[ ! -f "$res/ftrace-summary.txt" ] || cat "$res/ftrace-summary.txt"
head -n 40 "$res/rip-summary.txt" 2>/dev/null
[ ! -f "$res/insn-summary.txt" ] || head -n 60 "$res/insn-summary.txt"
echo "bench-profile: $res"
