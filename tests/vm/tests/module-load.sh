# The freshly built module loads, creates /sys/fs/hcache, logs nothing
# alarming, and unloads leaving nothing behind, several times over.
# timeout: 60

for i in 1 2 3; do
	hc_load
	grep -q '^hcache ' /proc/modules || hc_fail "hcache not in /proc/modules"
	[ "$(cat /sys/module/hcache/version)" != "" ] || hc_fail "no module version"
	hc_unload
	grep -q '^hcache ' /proc/modules && hc_fail "hcache still loaded"
done
dmesg | grep -q 'hcache: loaded' || hc_fail "no load message in the kernel log"
hc_log "loaded and unloaded 3 times"
