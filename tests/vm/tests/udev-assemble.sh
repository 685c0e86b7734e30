# With udev/69-hcache.rules installed and systemd-udevd running, add events
# assemble a cache set and its backing device on their own, whichever
# appears first: a backing device formatted with the cache runs and
# attaches when the set comes; an attached (clean) one waits for the set
# and runs once it registers; with the set there first, it attaches at
# once. Repeated change events on both cause no error and no new device;
# the by-uuid and by-label links appear.
# timeout: 150

. "$HC_ROOT/tests/vm/udev.sh"

cdev=$(hc_nullb cache 128)
bdev=$(hc_nullb back 64)
"$(hc_tool make-hcache)" -C "$cdev" -B "$bdev" --label data >/dev/null
uuid=$("$(hc_tool hcache-super-show)" "$cdev" | awk '$1 == "cset.uuid" { print $2 }')
set=/sys/fs/hcache/$uuid
sys=/sys/block/hcache0/hcache
hc_load
hc_udev_install_rules
hc_udev_start

# 1. Backing device first: never attached, it runs, then attaches.
hc_udev_trigger add "$bdev"
hc_wait test -b /dev/hcache0
[ "$(cat $sys/cache_set_id)" = 0 ] || hc_fail "attached before its set came"
hc_udev_trigger add "$cdev"
hc_wait test -d "$set"
hc_wait grep -q '^1$' $sys/cache_set_id
[ "$(cat $sys/state)" = clean ] || hc_fail "state $(cat $sys/state) after attaching"
bdev_uuid=$(cat $sys/backing_dev_uuid)
hc_wait hc_link_is "/dev/hcache/by-uuid/$bdev_uuid" /dev/hcache0
hc_wait hc_link_is /dev/hcache/by-label/data /dev/hcache0
hc_log "backing first: /dev/hcache0 ran, then attached to $uuid as id 1"

# Change events on both members: nothing new, no error.
hc_udev_trigger change "$cdev" "$bdev"
hc_udev_trigger change "$cdev" "$bdev"
[ ! -e /sys/block/hcache1 ] || hc_fail "a change event made a second hcache device"
[ "$(dmesg | grep -c 'cache set .* created\|cache set .* registered')" = 1 ] ||
	hc_fail "the set registered more than once: $(dmesg | grep 'hcache:')"
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_wait test ! -e /dev/hcache0

# 2. Backing device first again, now attached and clean: it waits.
hc_udev_trigger add "$bdev"
sleep 2
[ ! -e /dev/hcache0 ] || hc_fail "an attached device ran without its cache set"
hc_udev_trigger add "$cdev"
hc_wait test -b /dev/hcache0
hc_wait hc_link_is "/dev/hcache/by-uuid/$bdev_uuid" /dev/hcache0
[ "$(cat $sys/cache_set_id)" = 1 ] || hc_fail "id $(cat $sys/cache_set_id) after waiting"
hc_log "attached device waited for its set, then ran as id 1"
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_wait test ! -e /dev/hcache0

# 3. Cache device first: the backing device attaches as it registers.
hc_udev_trigger add "$cdev"
hc_wait test -d "$set"
hc_udev_trigger add "$bdev"
hc_wait test -b /dev/hcache0
[ "$(cat $sys/cache_set_id)" = 1 ] || hc_fail "id $(cat $sys/cache_set_id), cache first"
hc_log "cache first: attached at once as id 1"
hc_write "$set/stop" 1
hc_wait test ! -e "$set"
hc_wait test ! -e /dev/hcache0

hc_udev_no_failures
hc_udev_stop
hc_unload
