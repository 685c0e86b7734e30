#!/bin/bash
# demo-clone.sh KERNEL WORKDIR: `make demo` as a new user runs it, in a
# fresh git clone of this repository's HEAD (what CI checks out), on one
# kernel, so that a step the demo needs and does not build itself fails
# here. Its output goes to WORKDIR/demo.log; it passes when make demo
# does and the demo said what it set out to show.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
k=$1 work=$2
rm -rf "$work"
mkdir -p "$work"
git clone -q "$top" "$work/clone" || { echo "git clone $top failed" >&2; exit 1; }
cd "$work/clone" || exit 1
# As a user runs it: none of the harness's settings (tests/run exports
# HC_MODULE=debug, which the demo does not build).
for v in $(compgen -e); do
	case $v in HC_* | J | T | results) unset "$v" ;; esac
done
KERNELS=$k make demo >"$work/demo.log" 2>&1
rc=$?
if [ $rc != 0 ]; then
	tail -n 30 "$work/demo.log" >&2
	echo "make demo in a fresh clone failed (exit $rc): $work/demo.log" >&2
	exit 1
fi
for want in "hcache register" "pass 3:" "hcache flush /dev/hcache0 --wait" "cache_hit_ratio" "stopped and unloaded cleanly"; do
	grep -qF -- "$want" "$work/demo.log" ||
		{ echo "the demo's output lacks '$want': $work/demo.log" >&2; exit 1; }
done
