# At power-off the reboot notifier stops every registered device, running
# or waiting, before the devices underneath go away. The test leaves two
# devices registered; the harness then powers the guest off and checks the
# console for both stops.
# timeout: 120
# expect-console: hcache: running: stopping hcache0
# expect-console: hcache: waiting: unregistered

running=$(hc_nullb running 32)
waiting=$(hc_nullb waiting 32)
"$(hc_tool make-hcache)" -B "$running" >/dev/null
"$(hc_tool make-hcache)" -B "$waiting" --cset-uuid 01234567-89ab-cdef-0123-456789abcdef >/dev/null
python3 "$HC_ROOT/tests/vm/sbedit.py" "$waiting" flags=$((1 << 4))
hc_load
hc_write /sys/fs/hcache/register "$running"
hc_write /sys/fs/hcache/register "$waiting"
hc_wait test -b /dev/hcache0
dd if=/dev/urandom of=/dev/hcache0 bs=1M count=4 oflag=direct status=none
rmmod hcache 2>/dev/null && hc_fail "the module unloaded with devices registered"
hc_log "rmmod refused while devices are registered; leaving them for power-off"
