# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced by the one-guest bench tools' host halves (profile.sh, pair.sh),
# from the top of the tree. $tool names the tool in messages.
tool=${tool:-bench}

# bench_kernel: k, the newest installed kernel matching $KERNEL (a release
# or its prefix, default 6.12) with a built module; exits if none.
bench_kernel() {
	local b
	k=
	for b in /lib/modules/"${KERNEL:-6.12}"*/build; do
		[ -e "$b" ] && k=$(printf '%s\n' "$k" "$(basename "$(dirname "$b")")" | sort -V | tail -n 1)
	done
	if [ -z "$k" ] || [ ! -f "/boot/vmlinuz-$k" ]; then
		echo "$tool: no installed kernel matches '${KERNEL:-6.12}' (make deps)" >&2
		exit 1
	fi
	[ -f "build/$k/hcache/hcache.ko" ] ||
		{ echo "$tool: build/$k/hcache/hcache.ko is not built: run make" >&2; exit 1; }
}

# bench_collect RC WORK RES: copy the guest's results from WORK to RES;
# if the guest failed (RC not 0), say why and exit.
bench_collect() {
	cp -r "$2/out/." "$3/"
	cp "$2/console.log" "$3/" 2>/dev/null
	if [ "$1" != 0 ]; then
		echo "$tool: the guest failed: $(cat "$2/verdict" 2>/dev/null)" >&2
		grep -h '^FAIL' "$3/test.log" >&2 2>/dev/null
		exit 1
	fi
}
