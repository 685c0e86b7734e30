# With udev/69-hcache.rules installed and systemd-udevd running, an add
# event on a formatted backing device registers it by itself: /dev/hcache0
# appears with /dev/hcache/by-uuid/<dev uuid> and /dev/hcache/by-label/<label>.
# A repeated change event is no error, a device that is not hcache is left
# alone, the by-label link follows label changes, named by the encoded
# label (label_enc: "second label" links as second\x20label, "données" as
# itself; with the raw label, udev made second_label), a synthetic event on
# /dev/hcache0 keeps the links, and stop removes them.
# timeout: 90
# one-kernel: the udev rules do not depend on the kernel; udev-assemble runs them on both

. "$HC_ROOT/tests/vm/udev.sh"

dev=$(hc_nullb back 64)
other=$(hc_nullb other 16)
"$(hc_tool make-hcache)" -B "$dev" --label first >/dev/null
hc_load
hc_udev_install_rules
hc_udev_start

hc_udev_trigger add "$dev" "$other"
hc_wait test -b /dev/hcache0
sys=/sys/block/hcache0/hcache
uuid=$(cat $sys/backing_dev_uuid)
hc_wait hc_link_is "/dev/hcache/by-uuid/$uuid" /dev/hcache0
hc_wait hc_link_is /dev/hcache/by-label/first /dev/hcache0
hc_log "add event: /dev/hcache0, by-uuid/$uuid, by-label/first"
udevadm info --query=property "$dev" | grep -q '^ID_HCACHE_KIND=backing$' ||
	hc_fail "no ID_HCACHE_KIND=backing on $dev: $(udevadm info --query=property "$dev")"
udevadm info --query=property "$other" | grep -q '^ID_FS_TYPE=hcache$' &&
	hc_fail "$other probed as hcache"
[ ! -e /sys/block/hcache1 ] || hc_fail "a second hcache device appeared"

# Repeated change events on the registered device: no error, no new device.
hc_udev_trigger change "$dev"
hc_udev_trigger change "$dev"
[ ! -e /sys/block/hcache1 ] || hc_fail "a change event made a second hcache device"
[ "$(dmesg | grep -c 'running as hcache')" = 1 ] ||
	hc_fail "expected one 'running as' line: $(dmesg | grep 'hcache:')"
dmesg | grep -q 'already registered' && hc_fail "change event logged 'already registered'"
hc_link_is "/dev/hcache/by-uuid/$uuid" /dev/hcache0 || hc_fail "by-uuid link lost on change"
hc_log "two change events on $dev: no error"

# An event without the kernel's variables (udevadm trigger on hcache0) keeps
# the links: the rules read the same values from sysfs.
hc_udev_trigger change /dev/hcache0
hc_link_is "/dev/hcache/by-uuid/$uuid" /dev/hcache0 || hc_fail "by-uuid link lost on a synthetic change"
hc_link_is /dev/hcache/by-label/first /dev/hcache0 || hc_fail "by-label link lost on a synthetic change"

# Label changes: the link follows, named by the encoded label (a space is
# \x20, as in /dev/disk/by-label/; UTF-8 stays); no label, no link.
hc_write $sys/label "second label"
udevadm settle --timeout=30
hc_wait hc_link_is '/dev/hcache/by-label/second\x20label' /dev/hcache0
[ "$(cat $sys/label_enc)" = 'second\x20label' ] || hc_fail "label_enc reads '$(cat $sys/label_enc)'"
[ ! -e /dev/hcache/by-label/first ] || hc_fail "by-label/first still there after the label change"
[ ! -e /dev/hcache/by-label/second_label ] || hc_fail "by-label/second_label: the raw label's space became '_'"
# A synthetic event reads label_enc from sysfs: the same link.
hc_udev_trigger change /dev/hcache0
hc_link_is '/dev/hcache/by-label/second\x20label' /dev/hcache0 || hc_fail "the encoded by-label link lost on a synthetic change"
hc_write $sys/label "$(printf 'donn\303\251es')"
udevadm settle --timeout=30
hc_wait hc_link_is "/dev/hcache/by-label/$(printf 'donn\303\251es')" /dev/hcache0
hc_write $sys/label ""
udevadm settle --timeout=30
hc_wait test ! -e "/dev/hcache/by-label/$(printf 'donn\303\251es')"
hc_link_is "/dev/hcache/by-uuid/$uuid" /dev/hcache0 || hc_fail "by-uuid link lost with the label"
hc_write $sys/label third
udevadm settle --timeout=30
hc_wait hc_link_is /dev/hcache/by-label/third /dev/hcache0
hc_log "by-label followed: first -> second\\x20label -> données -> (none) -> third"

# A filesystem on /dev/hcache0 gets its /dev/disk/by-uuid link.
mkfs.ext4 -q -U 6a1f4c3e-2b7d-4e58-9c0a-1d2e3f405162 /dev/hcache0
udevadm settle --timeout=30
hc_wait hc_link_is /dev/disk/by-uuid/6a1f4c3e-2b7d-4e58-9c0a-1d2e3f405162 /dev/hcache0
hc_log "filesystem on /dev/hcache0 has its /dev/disk/by-uuid link"

# Stop: /dev/hcache0 and every link go.
hc_write $sys/stop 1
udevadm settle --timeout=30
hc_wait test ! -e /dev/hcache0
hc_wait test ! -e "/dev/hcache/by-uuid/$uuid"
hc_wait test ! -e /dev/hcache/by-label/third
hc_wait test ! -e /dev/disk/by-uuid/6a1f4c3e-2b7d-4e58-9c0a-1d2e3f405162
hc_log "stop removed /dev/hcache0 and its links"

# And a new add event brings it back.
hc_udev_trigger add "$dev"
hc_wait hc_link_is "/dev/hcache/by-uuid/$uuid" /dev/hcache0
hc_write $sys/stop 1
udevadm settle --timeout=30
hc_wait test ! -e /dev/hcache0

hc_udev_no_failures
hc_udev_stop
hc_unload
