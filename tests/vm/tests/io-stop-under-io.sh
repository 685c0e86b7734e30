# Stopping under cached I/O: fio randrw runs on /dev/hcache0 with a slow
# backing device (2 ms) while, in turn, the set is stopped, the backing
# device is detached (in writethrough: allowed, nothing is dirty), and the
# backing device is stopped. Each returns within the test's time (no
# request or promotion is left waiting), fio ends (with I/O errors once the
# disk is gone, which is expected), and after registering again the set
# passes its consistency check with no error counted. A stop in writeback
# mode keeps the dirty data: it is read back after the restart.
# timeout: 300

. "$HC_ROOT/tests/vm/io-lib.sh"

IO_BACK_ATTRS="irqmode=2 completion_nsec=2000000" io_setup 128 256
dev=hcache0

# --allow_file_create=0: a fio slow to see the disk gone (the debug kernel)
# otherwise lays out a 128 MiB regular file at /dev/hcache0, and the next
# disk of that name gets no device node.
load() {
	fio --name=load --filename=/dev/$dev --rw=randrw --bsrange=4k-64k \
		--allow_file_create=0 \
		--iodepth=32 --ioengine=libaio --direct=1 --size=128m \
		--time_based --runtime=60 --output=/tmp/fio.load >/dev/null 2>&1 &
	pid=$!
}

# The set stops while I/O is in flight; the disk goes with it.
load
sleep 5
hc_write "$IO_SET/stop" 1
hc_wait test ! -e "$IO_SET"
hc_wait io_no_hcache
wait "$pid" || true
hc_log "set stopped under I/O; fio exited"
hc_write /sys/fs/hcache/register "$IO_CDEV"
hc_wait test -d "$IO_SET"
io_register_backing "$IO_BDEV" >/dev/null
io_check

# Detach under I/O (writethrough: nothing dirty), then attach again.
load
sleep 5
hc_write "$(io_sysdir $dev)/detach" 1
[ "$(cat "$(io_sysdir $dev)/cache_set_id")" = 0 ] || hc_fail "still attached after detach"
sleep 2
hc_write "$(io_sysdir $dev)/attach" "$IO_UUID"
sleep 2
kill "$pid" 2>/dev/null
wait "$pid" || true
hc_log "detached and attached under I/O"
io_check

# Writeback data survives a stop under I/O: write a pattern, keep I/O
# going elsewhere, stop, register, read the pattern back.
io_mode $dev writeback
head -c $((4 << 20)) /dev/urandom >/tmp/pattern
dd if=/tmp/pattern of=/dev/$dev bs=64k seek=$((200 << 4)) oflag=direct conv=fsync 2>/dev/null ||
	hc_fail "writing the pattern failed"
load
sleep 3
hc_write "$(io_sysdir $dev)/stop" 1
hc_wait io_no_hcache
wait "$pid" || true
io_restart
dd if=/dev/$dev of=/tmp/back bs=64k skip=$((200 << 4)) count=64 iflag=direct 2>/dev/null
cmp -s /tmp/pattern /tmp/back || hc_fail "the dirty pattern did not survive the stop"
io_check
io_teardown
