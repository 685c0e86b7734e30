#!/bin/sh
# kernel-scripts.sh: print a directory holding checkpatch.pl, kernel-doc and
# their data files, unpacked once from Debian's linux-source-6.12 tarball
# (the headers packages do not ship checkpatch).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$top/build/kernel-scripts
tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
	echo "kernel-scripts: /usr/src/linux-source-6.12.tar.* missing (make deps)" >&2
	exit 1
fi
if [ ! -f "$dir/.done" ] || [ "$tarball" -nt "$dir/.done" ]; then
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -xf "$tarball" -C "$dir" --strip-components=2 \
		linux-source-6.12/scripts/checkpatch.pl \
		linux-source-6.12/scripts/spelling.txt \
		linux-source-6.12/scripts/const_structs.checkpatch \
		linux-source-6.12/scripts/kernel-doc
	touch "$dir/.done"
fi
echo "$dir"
