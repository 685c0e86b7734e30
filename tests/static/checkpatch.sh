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
# trace.h is laid out as TRACE_EVENT() wants, as the kernel's own
# include/trace/events/ are: its macro lists and open-ended TP_ lines are
# that layout, not a style slip; everything else is checked as above.
#
# Three perl processes at once (the files in two halves, and trace.h):
# checkpatch is single-threaded, and make check runs this with a core
# idle. Each must exit 0 (checkpatch's status for no error, warning or
# check) and print no finding.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
set -- $files
half=$((($# + 1) / 2))
cp_run() { # cp_run NAME IGNORE FILE...
	name=$1 ignore=$2
	shift 2
	rc=0
	perl "$scripts/checkpatch.pl" --no-tree --strict --terse --show-types \
		--ignore "$ignore" -f "$@" >"$out/$name" 2>&1 || rc=$?
	echo "$rc" >"$out/$name.rc"
}
# shellcheck disable=SC2046 # file lists
cp_run first FILE_PATH_CHANGES,BIT_MACRO $(printf '%s\n' "$@" | head -n $half) &
# shellcheck disable=SC2046
cp_run second FILE_PATH_CHANGES,BIT_MACRO $(printf '%s\n' "$@" | tail -n +$((half + 1))) &
cp_run trace FILE_PATH_CHANGES,COMPLEX_MACRO,OPEN_ENDED_LINE,PARENTHESIS_ALIGNMENT \
	drivers/md/hcache/trace.h &
wait
cat "$out/first" "$out/second" "$out/trace" >&2
for name in first second trace; do
	[ "$(cat "$out/$name.rc")" = 0 ] || exit 1
done
! grep -qE '(ERROR|WARNING|CHECK):' "$out/first" "$out/second" "$out/trace"
