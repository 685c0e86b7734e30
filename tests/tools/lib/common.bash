# SPDX-License-Identifier: GPL-2.0
# Sourced by tests/tools/*.sh (run from the repo top, tools built by
# 'make -C tools'). Gives each test a scratch directory, removed on exit,
# and helpers that say what failed.

top=$(pwd)
MAKE_HCACHE=$top/tools/make-hcache
SUPER_SHOW=$top/tools/hcache-super-show
PROBE=$top/tools/probe-hcache
REGISTER=$top/tools/hcache-register
HCACHE=$top/tools/hcache

for t in "$MAKE_HCACHE" "$SUPER_SHOW" "$PROBE" "$REGISTER" "$HCACHE"; do
	[ -x "$t" ] || { echo "FAIL: $t not built (make -C tools)" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

fail() {
	echo "FAIL: $*" >&2
	for f in out err; do
		[ -s "$tmp/$f" ] && { echo "--- $f:" >&2; cat "$tmp/$f" >&2; }
	done
	exit 1
}

# run WANT_RC CMD...: run CMD, stdout to $tmp/out, stderr to $tmp/err, and
# fail unless it exits WANT_RC.
run() {
	local want=$1 rc=0
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" -eq "$want" ] || fail "'$*' exited $rc, want $want"
	echo "ok: '$*' exited $rc"
}

# err_has TEXT / out_has TEXT: the last run's stderr / stdout contains TEXT.
err_has() {
	grep -qF -- "$1" "$tmp/err" || fail "stderr lacks '$1'"
}
out_has() {
	grep -qF -- "$1" "$tmp/out" || fail "stdout lacks '$1'"
}

# field DEV KEY: one field of 'hcache-super-show --json DEV'.
field() {
	"$SUPER_SHOW" -f --json "$1" | python3 -c '
import json, sys
v = json.load(sys.stdin).get(sys.argv[1])
print("null" if v is None else str(v).lower() if isinstance(v, bool) else v)
' "$2"
}

# expect_field DEV KEY VALUE
expect_field() {
	local got
	got=$(field "$1" "$2")
	[ "$got" = "$3" ] || fail "$1: $2 is '$got', want '$3'"
	echo "ok: $1 $2 = $3"
}

# image NAME SIZE: a sparse image file.
image() {
	rm -f "$1"
	truncate -s "$2" "$1"
}
