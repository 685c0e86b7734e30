#!/bin/sh
# kernel-release.sh KDIR: print the release (uname -r) of the kernel whose
# build headers are in KDIR. Debian's include/config/kernel.release names
# the upstream version on 6.1, so the generated utsrelease.h is read instead.
set -eu
f=$1/include/generated/utsrelease.h
if [ ! -f "$f" ]; then
	echo "kernel-release: $1 holds no kernel build headers ($f is missing)" >&2
	exit 1
fi
sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' "$f"
