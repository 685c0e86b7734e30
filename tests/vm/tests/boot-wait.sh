# The initramfs's local-block script bounds the wait for a missing cache
# device. Three registered backing devices wait for a cache set that never
# comes: one clean, one dirty, one clean with another policy. Until
# rd.hcache.wait has passed the script only says they wait. After it, without
# rd.hcache.run_without_cache=clean, it starts none and says why; with it, it
# starts the clean one (now stale, as /dev/hcache0) and never the dirty one.
# While their cache set shows in /sys/fs/hcache/loading (faked here through
# HCACHE_SYSFS), it waits past rd.hcache.wait, and decides once it is gone.
# Settings come from /conf/conf.d/hcache and the command line, which wins.
# timeout: 90

. "$HC_ROOT/tests/vm/udev.sh"

script=$HC_ROOT/initramfs/scripts/local-block/hcache
# rd.hcache.wait for the timed cases: 3 s, longer on a slow (debug) kernel,
# where two runs of the script can be 3 s apart.
W=$((3 * HC_TIME_SCALE))
hc_waiting_backing

# boot CMDLINE [CONF]: one run of the script, as initramfs-tools makes it.
boot() {
	echo "$1" >/tmp/cmdline
	printf '%s\n' "${2:-}" >/tmp/conf
	HCACHE_CMDLINE=/tmp/cmdline HCACHE_CONF=/tmp/conf HCACHE_RUNDIR=/tmp/run \
		HCACHE_SYSFS=${sysfs:-/sys/fs/hcache} sh "$script" /dev/hcache0 >>/tmp/console 2>&1 || hc_fail "the script failed"
}
console_has() {
	grep -q -F -- "$1" /tmp/console || hc_fail "the console lacks: $1; it has: $(cat /tmp/console)"
}

# Administrator said nothing: wait, then say why nothing starts.
boot "root=/dev/hcache0 rd.hcache.wait=$W"
console_has "is waiting for its cache device; waiting up to $W s"
[ "$(grep -c 'is waiting' /tmp/console)" = 2 ] || hc_fail "expected two 'waiting' lines: $(cat /tmp/console)"
boot "root=/dev/hcache0 rd.hcache.wait=$W"
[ "$(wc -l </tmp/console)" = 2 ] || hc_fail "the script repeated itself: $(cat /tmp/console)"
sleep $W
boot "root=/dev/hcache0 rd.hcache.wait=$W"
console_has "(label root): its cache device did not appear within $W s (rd.hcache.wait); NOT starting it without its cache: rd.hcache.run_without_cache=clean is not set"
console_has "(label data): its cache device did not appear within $W s (rd.hcache.wait); NOT starting it: its cache holds dirty data"
[ "$(cat "$c/running") $(cat "$d/running")" = "0 0" ] || hc_fail "a device started"
boot "root=/dev/hcache0 rd.hcache.wait=$W"
[ "$(wc -l </tmp/console)" = 4 ] || hc_fail "the script decided twice: $(cat /tmp/console)"
hc_log "without run_without_cache: nothing started, the console says why"
cat /tmp/console

# The conf file allows it, the command line takes it back.
rm -rf /tmp/run /tmp/console
boot "root=/dev/hcache0 rd.hcache.wait=0 rd.hcache.run_without_cache=no" "HCACHE_RUN_WITHOUT_CACHE=clean"
console_has "NOT starting it without its cache: rd.hcache.run_without_cache=clean is not set"
[ "$(cat "$c/running")" = 0 ] || hc_fail "the clean device started against the command line"

# The conf file allows it (and sets the wait), but the set is loading: wait.
rm -rf /tmp/run /tmp/console
mkdir -p /tmp/sysfs
echo "vdz $cset mark 1834 40" >/tmp/sysfs/loading
sysfs=/tmp/sysfs boot "root=/dev/hcache0" "HCACHE_WAIT=0
HCACHE_RUN_WITHOUT_CACHE=clean"
console_has "(label root): its cache set $cset is loading; waiting for it (vdz $cset mark 1834 40)"
console_has "(label data): its cache set $cset is loading; waiting for it"
grep -q "did not appear" /tmp/console && hc_fail "decided while the set loads: $(cat /tmp/console)"
[ "$(cat "$c/running")" = 0 ] || hc_fail "the clean device started while its set loads"
hc_log "a loading set is waited for past rd.hcache.wait"

# The load ended without the set: the clean one starts, stale.
: >/tmp/sysfs/loading
sysfs=/tmp/sysfs boot "root=/dev/hcache0" "HCACHE_WAIT=0
HCACHE_RUN_WITHOUT_CACHE=clean"
console_has "(label root): its cache device did not appear within 0 s (rd.hcache.wait); starting it WITHOUT its cache, as rd.hcache.run_without_cache=clean allows"
console_has "(label data): its cache device did not appear within 0 s (rd.hcache.wait); NOT starting it: its cache holds dirty data"
hc_wait test -b /dev/hcache0
[ "$(cat "$c/running")" = 1 ] || hc_fail "the clean device is not running"
[ "$(cat "$c/state")" = stale ] || hc_fail "the clean device is $(cat "$c/state"), not stale"
[ "$(cat "$d/running")" = 0 ] || hc_fail "the dirty device started"
[ "$(cat "$d/state")" = dirty ] || hc_fail "the dirty device is $(cat "$d/state")"
[ "$(cat /sys/block/hcache0/hcache/label)" = root ] || hc_fail "hcache0 is not the clean device"
hc_log "run_without_cache=clean: the clean device runs (stale), the dirty one waits"
cat /tmp/console

hc_write "$c/stop" 1
hc_write "$d/stop" 1
hc_wait test ! -e /dev/hcache0
hc_wait test ! -e "$d"
hc_unload
