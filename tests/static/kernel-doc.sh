#!/bin/sh
# kernel-doc.sh: every kernel-doc comment in the module is well formed.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
scripts=$("$top/tests/static/kernel-scripts.sh")
cd "$top"
out=$(perl "$scripts/kernel-doc" -none -Wall drivers/md/hcache/*.[ch] 2>&1)
if [ -n "$out" ]; then
	echo "$out"
	exit 1
fi
echo "kernel-doc: $(ls drivers/md/hcache/*.[ch] | wc -l) files clean"
