#!/bin/bash
# demo.sh: the host half of `make demo`: build the tools and the module,
# then boot each kernel (KERNELS= picks some) in a VM that runs
# tests/vm/demo.sh, and print what it printed.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
mkdir -p build
# The guest runs the tools built here (the host's tree is its root).
make -C tools >build/demo-tools.log 2>&1 || { cat build/demo-tools.log; exit 1; }
ran=0
for b in /lib/modules/*/build; do
	k=$(basename "$(dirname "$b")")
	[ -f "/boot/vmlinuz-$k" ] || continue
	# KERNELS="6.12": only the kernels named (a release or its prefix).
	if [ -n "${KERNELS:-}" ]; then
		keep=0
		for want in $KERNELS; do
			case $k in "$want"|"$want".*|"$want"-*) keep=1 ;; esac
		done
		[ $keep = 1 ] || continue
	fi
	ran=1
	echo "== hcache demo on $k"
	./scripts/build-module.sh "$b" >/dev/null 2>build/demo-build.log ||
		{ cat build/demo-build.log; exit 1; }
	work=$top/build/demo/$k
	if tests/vm/run-test.sh "$k" tests/vm/demo.sh "$work"; then
		cat "$work/out/test.log"
	else
		cat "$work/out/test.log" "$work/verdict" 2>/dev/null || true
		echo "demo failed on $k: see $work/console.log" >&2
		exit 1
	fi
done
[ $ran = 1 ] || { echo "demo: no kernel with both /boot/vmlinuz and headers${KERNELS:+ matching $KERNELS} (make deps)" >&2; exit 1; }
