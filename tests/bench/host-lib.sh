# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the one-guest bench tools' host halves (profile.sh, pair.sh),
# from the top of the tree. $tool names the tool in messages.
tool=${tool:-bench}

# The guest's clock: under plain TCG it is the host's, so every figure
# moves with how fast the host runs the guest just then, and on a shared
# host that swings by a factor of two or more within minutes (make bench
# on 6.12: the raw cache disk at 2277, 6232 and 3040 IOPS in one run's
# three rounds of c). On the instruction clock (tests/vm/run-test.sh,
# "clock: instructions") a figure depends only on what the guest executes
# and on the device model's latencies, and runs repeat to a tenth of a
# percent. Its 8 ns an instruction keep the CPU's cost per request near
# what it is under plain TCG here, so the backing disk stays bound by its
# latency (report.py checks it). BENCH_CLOCK=host runs the guest on the
# host's clock instead.
export HC_CLOCK
case ${BENCH_CLOCK:-icount} in
icount) HC_CLOCK=instructions ;;
host) HC_CLOCK=host ;;
*) echo "$tool: BENCH_CLOCK=$BENCH_CLOCK: icount or host" >&2; exit 1 ;;
esac

# bench_kernel: k, the newest installed kernel matching $KERNEL (a release,
# or its prefix up to a dot, dash or plus: 6.1 is 6.1.0-57-amd64, never
# 6.12.x; default 6.12) with a built module; exits if none.
bench_kernel() {
	local b want=${KERNEL:-6.12}
	k=
	for b in /lib/modules/*/build; do
		case $(basename "$(dirname "$b")") in
		"$want" | "$want".* | "$want"-* | "$want"+*) ;;
		*) continue ;;
		esac
		[ -e "$b" ] && k=$(printf '%s\n' "$k" "$(basename "$(dirname "$b")")" | sort -V | tail -n 1)
	done
	if [ -z "$k" ] || [ ! -f "/boot/vmlinuz-$k" ]; then
		echo "$tool: no installed kernel matches '${KERNEL:-6.12}' (make deps)" >&2
		exit 1
	fi
	[ -f "build/$k/hcache/hcache.ko" ] ||
		{ echo "$tool: build/$k/hcache/hcache.ko is not built: run make" >&2; exit 1; }
}

# bench_collect RC WORK RES: copy the guest's results from WORK to RES;
# if the guest failed (RC not 0), say why and exit.
bench_collect() {
	cp -r "$2/out/." "$3/"
	cp "$2/console.log" "$3/" 2>/dev/null
	if [ "$1" != 0 ]; then
		echo "$tool: the guest failed: $(cat "$2/verdict" 2>/dev/null)" >&2
		grep -h '^FAIL' "$3/test.log" >&2 2>/dev/null
		exit 1
	fi
}
