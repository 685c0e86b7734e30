# udev.sh: helpers for the udev-* and boot-* VM tests, sourced by them after
# lib.sh. The guest's root is a throwaway overlay, so the rules can be
# installed where a real system has them.

HC_UDEV_LOG=/tmp/udevd.log
HC_UDEV_RULES=/lib/udev/rules.d/69-hcache.rules

# hc_udev_install_rules: install udev/69-hcache.rules as `make install`
# would, but calling the tools of this tree instead of /usr/sbin.
hc_udev_install_rules() {
	sed "s#/usr/sbin/#$HC_ROOT/tools/#g" "$HC_ROOT/udev/69-hcache.rules" \
		>"$HC_UDEV_RULES" || hc_fail "cannot install $HC_UDEV_RULES"
	grep -q "$HC_ROOT/tools/hcache-register" "$HC_UDEV_RULES" ||
		hc_fail "the installed rules do not call $HC_ROOT/tools/hcache-register"
}

# hc_udev_start: run systemd-udevd in the background, with debug output in
# $HC_UDEV_LOG (not the kernel log), and wait until it answers.
hc_udev_start() {
	SYSTEMD_LOG_TARGET=console /lib/systemd/systemd-udevd --debug \
		>"$HC_UDEV_LOG" 2>&1 &
	HC_UDEVD_PID=$!
	# Keep udevd's log with the results, whatever the outcome.
	trap 'cp "$HC_UDEV_LOG" "$HC_RESULTS/udevd.log" 2>/dev/null || true' EXIT
	hc_wait hc_udev_ping
	hc_log "systemd-udevd running (pid $HC_UDEVD_PID)"
}

hc_udev_ping() {
	udevadm control --ping 2>/dev/null
}

# hc_udev_stop: stop the udevd that hc_udev_start started.
hc_udev_stop() {
	udevadm settle --timeout=30 || true
	udevadm control --exit || kill "$HC_UDEVD_PID" 2>/dev/null || true
	wait "$HC_UDEVD_PID" 2>/dev/null || true
}

# hc_udev_trigger ACTION DEV...: send ACTION (add, change) for the devices
# and wait until udev has handled them.
hc_udev_trigger() {
	local action=$1
	shift
	udevadm trigger --action="$action" --settle "$@" ||
		hc_fail "udevadm trigger --action=$action $*"
	udevadm settle --timeout=30 || hc_fail "udevadm settle timed out"
}

# hc_udev_no_failures: udevd ran no program that failed and logged no
# error about an hcache rule or tool. "Failed to find module 'hcache'" is
# the kmod builtin's debug-level note that the module is not installed
# (the tests insert it by path); it is not an error.
hc_udev_no_failures() {
	local bad
	bad=$(grep -E "failed with exit code|69-hcache.rules.*(error|invalid|unknown)|Failed to" \
		"$HC_UDEV_LOG" | grep -i -E "hcache" |
		grep -v -F "Failed to find module 'hcache'" || true)
	[ -z "$bad" ] || hc_fail "udevd reported: $bad"
}

# hc_link_is LINK TARGET: LINK exists and resolves to TARGET.
hc_link_is() {
	[ -L "$1" ] && [ "$(readlink -f "$1")" = "$2" ]
}
