#!/bin/sh
# build-selftest.sh KDIR: build the harness's throwaway module
# (selftest-module/) for the kernel in KDIR, in build/<release>/selftest/.
set -eu
kdir=$1
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
kver=$("$top/scripts/kernel-release.sh" "$kdir")
out=$top/build/$kver/selftest
mkdir -p "$out"
for f in "$here"/selftest-module/*; do
	ln -sfn "$f" "$out/$(basename "$f")"
done
make -C "$kdir" M="$out" modules >&2
