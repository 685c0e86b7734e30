#!/bin/sh
# build-module.sh KDIR [MAKE-ARGS...]: build hcache.ko for the kernel whose
# headers are in KDIR, in build/<kernel release>/hcache/, and print the
# module's path. HC_DEBUG=1 builds the debug variant (drivers/md/hcache/
# debug.h: delay and fault points for the tests) in
# build/<kernel release>/hcache-debug/ instead; nothing installed uses it.
#
# Kbuild writes objects next to the sources, so each kernel gets its own
# directory of links to drivers/md/hcache/ plus its own compat_generated.h;
# two kernels can then be built from one tree without cleaning in between.
set -eu

kdir=$1
shift
top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/drivers/md/hcache

kver=$("$top/scripts/kernel-release.sh" "$kdir")
if [ "${HC_DEBUG:-0}" = 1 ]; then
	out=$top/build/$kver/hcache-debug
	set -- HC_DEBUG=1 "$@"
else
	out=$top/build/$kver/hcache
fi

mkdir -p "$out"
# Drop links whose source was removed or renamed, then link what is there.
find "$out" -maxdepth 1 -type l ! -exec test -e {} \; -delete
for f in "$src"/*.c "$src"/*.h "$src"/Kbuild; do
	[ -e "$f" ] || continue
	ln -sfn "$f" "$out/$(basename "$f")"
done

"$src/compat/probe.sh" "$kdir" "$out"
# HC_REBUILD=1: compile every object again (the tests want every warning).
[ "${HC_REBUILD:-0}" = 1 ] && make -C "$kdir" M="$out" clean >&2
# One job per CPU (HC_JOBS=N: N); with -j, make's output is grouped per
# file, so a warning stays next to its file name.
make -C "$kdir" M="$out" -j"${HC_JOBS:-$(nproc)}" --output-sync=target "$@" modules >&2
echo "$out/hcache.ko"
