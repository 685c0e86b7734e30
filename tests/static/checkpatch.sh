#!/bin/sh
# checkpatch.sh: every kernel-side C file passes checkpatch --strict with no
# error, warning or check.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
scripts=$("$top/tests/static/kernel-scripts.sh")
cd "$top"
files=$(ls drivers/md/hcache/*.[ch] drivers/md/hcache/compat/probes/*.c \
	tests/vm/selftest-module/*.c | grep -v '^drivers/md/hcache/trace\.h$')
# Ignored, each for a reason:
#  FILE_PATH_CHANGES: out of tree, there is no MAINTAINERS file to update;
#  BIT_MACRO: hcache_ondisk.h is compiled by the userspace tools too, where
#  BIT() does not exist, and on-disk bits read best as plain shifts.
# shellcheck disable=SC2086
perl "$scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
	--ignore FILE_PATH_CHANGES,BIT_MACRO -f $files | tee /dev/stderr |
	grep -E '(ERROR|WARNING|CHECK):' >/dev/null && exit 1
# trace.h is laid out as TRACE_EVENT() wants, as the kernel's own
# include/trace/events/ are: its macro lists and open-ended TP_ lines are
# that layout, not a style slip; everything else is checked as above.
perl "$scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
	--ignore FILE_PATH_CHANGES,COMPLEX_MACRO,OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT \
	-f drivers/md/hcache/trace.h | tee /dev/stderr |
	grep -E '(ERROR|WARNING|CHECK):' >/dev/null && exit 1
exit 0
