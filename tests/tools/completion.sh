#!/bin/bash
# hcache's bash completion (completion/hcache) offers the commands, each
# command's options, the cache modes after set-mode DEV, the windows after
# --window, the columns after -o and the knobs of set (with '=').
set -eu
. tests/tools/lib/common.bash
. "$top/completion/hcache"

# complete WORDS...: COMPREPLY for the command line WORDS, the last being
# the word under the cursor, sorted on one line.
complete_line() {
	COMP_WORDS=("$@")
	COMP_CWORD=$(($# - 1))
	COMPREPLY=()
	_hcache
	printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
}

# expect WANT WORDS...
expect() {
	local want=$1 got
	shift
	got=$(complete_line "$@")
	[ "$got" = "$want" ] || fail "completing '$*': '$got', want '$want'"
	echo "ok: '$*' -> $got"
}

expect "set set-mode show stats stop " hcache s
expect "flush " hcache fl
expect "--wait " hcache flush --w
expect "--json --window " hcache stats --
expect "writearound writeback writethrough " hcache set-mode hcache0 wri
expect "five_minute " hcache stats hcache0 --window f
expect "BYP-FULL BYP-MODE BYP-POLICY BYP-SEQ BYPASSED " hcache show -o BYP
expect "writeback_rate= writeback_rate_d_term= writeback_rate_i_term_inverse= writeback_rate_minimum= writeback_rate_p_term_inverse= writeback_rate_update_seconds= " hcache set hcache0 writeback_rate
expect "--all-columns " hcache show --a
expect "CSUM-ERRORS " hcache show -o CS
echo PASS
