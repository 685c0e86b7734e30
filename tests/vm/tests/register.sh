# Registering a formatted backing device makes /dev/hcache0 of the right
# size; registering twice is -EBUSY, register_quiet is 0; the sysfs files
# work and label and cache mode persist across stop and register (a label
# with a control character or a '/' is refused); uevents
# carry the uuid and label; stop removes everything and the module unloads.
# timeout: 120
# expect-log: hcache: .*cannot register: already registered

dev=$(hc_nullb back 64)
"$(hc_tool make-hcache)" -B "$dev" --label first >/dev/null
hc_load

udevadm monitor --kernel --property --subsystem-match=block >/tmp/uevents 2>&1 &
monitor=$!
sleep 1
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
offset=$("$(hc_tool hcache-super-show)" "$dev" | awk '$1 == "backing.data_offset" { print $2 }')
[ -n "$offset" ] || hc_fail "no data_offset in hcache-super-show output"
[ "$(hc_size /dev/hcache0)" = $(( $(hc_size "$dev") - offset )) ] ||
	hc_fail "/dev/hcache0 has $(hc_size /dev/hcache0) sectors, expected $(hc_size "$dev") - $offset"
hc_log "/dev/hcache0: $(hc_size /dev/hcache0) sectors = $(hc_size "$dev") - $offset"

hc_write_fails "Device or resource busy" /sys/fs/hcache/register "$dev"
hc_write /sys/fs/hcache/register_quiet "$dev"
"$(hc_tool hcache-register)" "$dev" || hc_fail "hcache-register failed on a registered device"

sys=/sys/block/hcache0/hcache
name=$(basename "$(readlink -f "$dev")")
[ "$(readlink -f $sys)" = "$(readlink -f /sys/class/block/$name/hcache)" ] ||
	hc_fail "$sys is not the backing device's hcache directory"
[ "$(cat $sys/backing_dev_name)" = "$name" ] || hc_fail "backing_dev_name"
[ "$(cat $sys/state)" = none ] || hc_fail "state is $(cat $sys/state)"
[ "$(cat $sys/running)" = 1 ] || hc_fail "not running"
[ "$(cat $sys/label)" = first ] || hc_fail "label is '$(cat $sys/label)'"
uuid=$(cat $sys/backing_dev_uuid)
"$(hc_tool hcache-super-show)" "$dev" | grep -q -i "$uuid" ||
	hc_fail "backing_dev_uuid $uuid is not the superblock's"
grep -q '^\[writethrough\] writeback writearound none$' $sys/cache_mode ||
	hc_fail "cache_mode: $(cat $sys/cache_mode)"

hc_write $sys/label "second label"
sleep 1
kill $monitor || hc_fail "udevadm monitor died: $(cat /tmp/uevents)"
grep -q "^HCACHE_UUID=$uuid$" /tmp/uevents || hc_fail "no uevent with HCACHE_UUID=$uuid"
grep -q '^HCACHE_LABEL=first$' /tmp/uevents || hc_fail "no uevent with the first label"
grep -q '^HCACHE_LABEL=second label$' /tmp/uevents || hc_fail "no uevent for the label change"
hc_write $sys/cache_mode writeback
hc_write_fails "Invalid argument" $sys/cache_mode bogus
hc_write_fails "Invalid argument" $sys/label "$(printf 'x%.0s' $(seq 40))"
# make-hcache's rule (hc_label_check()): no control character, no '/'
# (udev's by-label link would nest), and the log says why.
hc_write_fails "Invalid argument" $sys/label "a/b"
hc_write_fails "Invalid argument" $sys/label "$(printf 'tab\there')"
dmesg | grep -q "label refused: label holds a '/'" ||
	hc_fail "no log line saying why 'a/b' was refused"
[ "$(cat $sys/label)" = "second label" ] ||
	hc_fail "a refused label changed it to '$(cat $sys/label)'"

hc_write $sys/stop 1
hc_wait test ! -e /dev/hcache0
hc_wait test ! -e "/sys/class/block/$name/hcache"

hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
[ "$(cat $sys/label)" = "second label" ] || hc_fail "label not persisted"
grep -q '\[writeback\]' $sys/cache_mode || hc_fail "cache_mode not persisted"
"$(hc_tool hcache-super-show)" "$dev" | grep -q "second label" ||
	hc_fail "label not in the superblock"
hc_write $sys/stop 1
hc_wait test ! -e /dev/hcache0
hc_unload
