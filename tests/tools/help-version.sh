#!/bin/bash
# Every tool has --help and --version (exit 0, on stdout) and rejects an
# unknown option with exit 1 and the usage on stderr.
set -eu
. tests/tools/lib/common.bash

for t in "$MAKE_HCACHE" "$SUPER_SHOW" "$PROBE" "$REGISTER" "$HCACHE"; do
	name=$(basename "$t")
	for h in --help -h; do
		run 0 "$t" $h
		out_has "Usage: $name"
		out_has "--version"
		out_has "Exit status:"
	done
	for v in --version -V; do
		run 0 "$t" $v
		grep -qE "^$name \(hcache\) [0-9]" "$tmp/out" ||
			fail "$name $v: '$(cat "$tmp/out")'"
	done
	run 1 "$t" --no-such-option
	err_has "Usage: $name"
	# Every long option in --help is in the man page.
	"$t" --help | grep -oE -- '--[a-z][a-z-]+' | sort -u | while read -r opt; do
		grep -qF -- "${opt//-/\\-}" "$top/man/$name.8" ||
			fail "$name: $opt missing from man/$name.8"
	done
done
echo PASS
