# Stopping under cached I/O, and what was acknowledged meanwhile. On a slow
# backing device (2 ms a request), in turn:
#   1. writethrough: the set is stopped under a fio randrw load (the first
#      128 MiB of hcache0) and a writer (tests/vm/wb-writer.py: 4 KiB
#      blocks of a known pattern over 16 MiB at 160 MiB, O_DSYNC writes
#      and plain ones covered by fdatasync, each logged when intended and
#      when acknowledged);
#   2. writethrough: the backing device is detached (at once: nothing is
#      dirty) and attached again (a new id: nothing cached before the
#      detach may be read) under a fio randwrite job that verifies what it
#      wrote (crc32c: every 512 writes, and the rest at its end);
#   3. writeback, writeback_running 0: a 4 MiB pattern is written dirty
#      at 200 MiB, then the backing device is stopped under the load and
#      the writer, whose acknowledged writes are then in the cache alone.
# A stop comes only once the load and the writer have both done I/O
# (100 reads completed on hcache0, which only fio reads, 100 writes, and
# 10 writes acknowledged by the writer; fio can take over 10 s to start
# on a busy host), and
# each returns within the test's time (no request or promotion is left
# waiting). The disk's disappearance ends both, with one of two errors
# and no other: EIO, for a bio that reached the dying disk, or ENOSPC,
# for a write issued after del_gendisk() set the capacity to 0 (block
# fops refuse a write at or past the end). fio must exit 1 (its status
# counts the jobs that ended with an error), its job's error 5 or 28,
# every error line of its own one of those, and it must have written
# before; the writer must exit 2 with "[Errno 5]" or "[Errno
# 28]". Across each stop, whatever the writer had acknowledged reads
# back, every sector its last acknowledged version or one intended after
# (in flight at the stop), after the set or device registers again:
# through hcache0, and in writethrough on the raw backing device at its
# data offset too. The detach/attach job must exit 0 with no error, and
# afterwards hcache0 and the raw backing device hold the same bytes over
# its region. After the writeback stop and a restart (the backing device
# registered first, writeback paused before it attaches), at least the
# pattern is still dirty (dirty_data exactly 4 MiB after it was written)
# and nothing was written back, and the pattern and the writer's region
# read back through hcache0; writeback then empties the
# cache (writeback_percent 0) and the raw backing device holds the
# pattern and passes the writer's check, and all of hcache0 reads the same
# as the raw backing device. The set passes its consistency check, with
# no error counted, after every step.
# timeout: 420

. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
IO_BACK_ATTRS="irqmode=2 completion_nsec=2000000" io_setup 128 256
dev=hcache0
W=$(mktemp -d /tmp/stop-io.XXXXXX)
writer=$HC_ROOT/tests/vm/wb-writer.py
wr_off=$((160 * MiB))
wr_blocks=4096
pat_off=$((200 * MiB))
python3 "$writer" fill /dev/$dev "$W/log" --blocks $wr_blocks --offset $wr_off ||
	hc_fail "wb-writer fill failed"

# load NAME: fio randrw over the first 128 MiB, in the background (pid in
# fpid). --allow_file_create=0: a fio slow to see the disk gone (the debug
# kernel) otherwise lays out a 128 MiB regular file at /dev/hcache0, and
# the next disk of that name gets no device node.
load() {
	fio --name=load --filename=/dev/$dev --rw=randrw --bsrange=4k-64k \
		--allow_file_create=0 \
		--iodepth=32 --ioengine=libaio --direct=1 --size=128m \
		--time_based --runtime=60 --output-format=json \
		--output="$W/$1.json" 2>"$W/$1.err" &
	fpid=$!
}

# write_start NAME FIRST_VERSION: the writer, in the background (pid in
# wpid), until the disk goes.
write_start() {
	python3 "$writer" write /dev/$dev "$W/log" --offset $wr_off \
		--first-version "$2" --note "$1" >"$W/$1.wout" 2>"$W/$1.werr" &
	wpid=$!
}

# acked: writes the writer has acknowledged so far.
acked() {
	awk '$1 == "A" { n++ } END { print n + 0 }' "$W/log"
}

# busy_then STOP_COMMAND...: wait until the load and the writer have both
# done I/O (both still running), then stop.
busy_then() {
	local r0 w0 a0 r w a limit=$((60 * ${HC_TIME_SCALE:-1})) end
	end=$((SECONDS + limit))
	read -r r0 _ _ _ w0 _ <"/sys/block/$dev/stat"
	a0=$(acked)
	while :; do
		kill -0 "$fpid" 2>/dev/null || hc_fail "fio ended before the stop: $(head -c 600 "$W/$name.err")"
		kill -0 "$wpid" 2>/dev/null || hc_fail "the writer ended before the stop: $(cat "$W/$name.werr")"
		read -r r _ _ _ w _ <"/sys/block/$dev/stat"
		a=$(acked)
		[ $((r - r0)) -ge 100 ] && [ $((w - w0)) -ge 100 ] && [ $((a - a0)) -ge 10 ] && break
		[ $SECONDS -lt $end ] || hc_fail "no I/O from the load and the writer within $limit s: $((r - r0)) reads and $((w - w0)) writes completed on $dev, $((a - a0)) acknowledged by the writer"
		sleep 0.2
	done
	hc_log "$name: $((r - r0)) reads and $((w - w0)) writes completed on $dev, $((a - a0)) acknowledged by the writer: stopping"
	"$@"
}

# stopped_ok NAME: the load and the writer ended on the stop, each with
# an error the header allows and no other.
stopped_ok() {
	local name=$1 rc out
	wait "$fpid" && rc=0 || rc=$?
	# For the log: fio's report and errors, next to test.log.
	cp "$W/$name.json" "$W/$name.err" "$HC_RESULTS/"
	# fio's exit status is the number of its jobs that ended with an error.
	[ "$rc" = 1 ] || hc_fail "$name: fio exited with $rc, not 1 (its one job ended with an error): $(head -c 600 "$W/$name.err")"
	out=$(python3 - "$W/$name.json" "$W/$name.err" 2>&1 <<'EOF'
import json, re, sys
t = open(sys.argv[1]).read()
d = json.loads(t[t.index("{"):])
for j in d["jobs"]:
    if j["error"] not in (5, 28):
        sys.exit("job %s ended with error %d, not 5 (EIO) or 28 (ENOSPC)" % (j["jobname"], j["error"]))
    if not j["write"]["io_bytes"]:
        sys.exit("job %s wrote nothing before the stop" % j["jobname"])
ok = re.compile(r"fio: io_u error on file /dev/hcache0: (Input/output error|No space left on device): (read|write) offset=\d+, buflen=\d+$")
for line in open(sys.argv[2]).read().splitlines():
    if line and not ok.match(line):
        sys.exit("fio said: " + line)
print(" ".join("%s: error %d after %d MiB written" % (j["jobname"], j["error"], j["write"]["io_bytes"] >> 20) for j in d["jobs"]))
EOF
) || hc_fail "$name: fio: $out"
	wait "$wpid" && rc=0 || rc=$?
	[ "$rc" = 2 ] || hc_fail "$name: the writer exited with $rc, not 2: $(cat "$W/$name.werr")"
	grep -q -x -E 'wb-writer: write: \[Errno (5\] Input/output error|28\] No space left on device)' "$W/$name.werr" ||
		hc_fail "$name: the writer said: $(cat "$W/$name.werr")"
	hc_log "$name: fio $out; the writer: $(cat "$W/$name.werr"); $(python3 "$writer" stats "$W/log" | awk '{ print $3 " writes intended, " $4 " acknowledged in all" }')"
}

# written_ok WHERE DEV BYTE_OFFSET: the writer's region on DEV from there
# holds every acknowledged write.
written_ok() {
	local out
	out=$(python3 "$writer" verify "$2" "$W/log" --offset "$3") ||
		hc_fail "$1: acknowledged writes lost: $out"
	hc_log "$1: $out"
}

# 1. The set stops while I/O is in flight; the disk goes with it.
name=set-stop
load $name
write_start $name 1
busy_then hc_write "$IO_SET/stop" 1
hc_wait test ! -e "$IO_SET"
hc_wait io_no_hcache
stopped_ok $name
hc_write /sys/fs/hcache/register "$IO_CDEV"
hc_wait test -d "$IO_SET"
io_register_backing "$IO_BDEV" >/dev/null
written_ok "after the set's stop, through hcache0" /dev/$dev $wr_off
written_ok "after the set's stop, on the raw backing device" "$IO_BDEV" $((IO_OFFSET * 512 + wr_off))
io_check

# 2. Detach under verifying I/O (writethrough: nothing dirty), then attach
# again.
name=detach
fio --name=verify --filename=/dev/$dev --rw=randwrite --bsrange=4k-64k \
	--iodepth=16 --ioengine=libaio --direct=1 --size=64m --io_size=4g \
	--runtime=12 --norandommap=1 --serialize_overlap=1 \
	--verify=crc32c --verify_backlog=512 --verify_fatal=1 \
	--output-format=json --output="$W/$name.json" 2>"$W/$name.err" &
fpid=$!
sleep 3
kill -0 $fpid || hc_fail "fio ended before the detach: $(head -c 600 "$W/$name.err")"
hc_write "$(io_sysdir $dev)/detach" 1
[ "$(cat "$(io_sysdir $dev)/cache_set_id")" = 0 ] || hc_fail "still attached after detach"
sleep 3
kill -0 $fpid || hc_fail "fio ended before the attach: $(head -c 600 "$W/$name.err")"
hc_write "$(io_sysdir $dev)/attach" "$IO_UUID"
hc_wait io_attached $dev
wait $fpid && rc=0 || rc=$?
[ "$rc" = 0 ] || hc_fail "fio across the detach and attach exited with $rc: $(grep -v 'verify limited' "$W/$name.err" | head -5)"
io_fio_ok <(grep -v 'verify limited' "$W/$name.err") || hc_fail "fio across the detach and attach: $(head -5 "$W/$name.err")"
out=$(python3 - "$W/$name.json" 2>&1 <<'EOF'
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])["jobs"][0]
if j["error"] or not j["write"]["io_bytes"] or not j["read"]["io_bytes"]:
    sys.exit("error %d, %d bytes written, %d verified" % (j["error"], j["write"]["io_bytes"], j["read"]["io_bytes"]))
print("%d MiB written and %d MiB verified" % (j["write"]["io_bytes"] >> 20, j["read"]["io_bytes"] >> 20))
EOF
) || hc_fail "fio across the detach and attach: $out"
hc_log "detached and attached under I/O: fio $out, no error"
h1=$(dd if=/dev/$dev bs=1M count=64 iflag=direct status=none | md5sum)
h2=$(dd if="$IO_BDEV" bs=1M iflag=direct,skip_bytes,count_bytes skip=$((IO_OFFSET * 512)) count=$((64 * MiB)) status=none | md5sum)
[ "$h1" = "$h2" ] || hc_fail "after the detach and attach, hcache0 and the raw backing device differ over fio's 64 MiB"
written_ok "after the detach and attach" /dev/$dev $wr_off
io_check

# 3. Writeback data survives a stop of the backing device under I/O: the
# pattern written dirty first, then the load and the writer, the stop,
# a restart, and everything read back.
name=backing-stop
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_running 0
io_pattern "$W/pattern" 4
dd if="$W/pattern" of=/dev/$dev bs=64k seek=$((pat_off / 65536)) oflag=direct conv=fsync status=none ||
	hc_fail "writing the pattern failed"
d=$(wb_dirty $dev)
[ "$d" = $((4 * MiB)) ] || hc_fail "dirty_data $d after writing the 4 MiB pattern in writeback"
load $name
write_start $name 1000000
busy_then hc_write "$(io_sysdir $dev)/stop" 1
hc_wait io_no_hcache
stopped_ok $name
# The restart, writeback paused throughout: the set stops; the backing
# device registers first (it waits for its set, its directory there) and
# gets writeback_running 0 before the set registers and it attaches; an
# attach would otherwise start writeback at once (at full speed a second
# later, with no foreground I/O), and on a slow guest it had written all
# back before a pause written just after the attach took effect.
io_stop
hc_write /sys/fs/hcache/register "$IO_BDEV"
hc_wait test -e "/sys/block/$IO_BNAME/hcache/writeback_running"
hc_write "/sys/block/$IO_BNAME/hcache/writeback_running" 0
hc_write /sys/fs/hcache/register "$IO_CDEV"
hc_wait test -d "$IO_SET"
hc_wait io_attached $dev
[ "$(io_hcache_of "$IO_BDEV")" = $dev ] || hc_fail "after the restart $IO_BDEV runs as $(io_hcache_of "$IO_BDEV")"
[ "$(wb_get $dev writeback_sectors_written)" = 0 ] || hc_fail "writeback wrote $(wb_get $dev writeback_sectors_written) sectors, paused"
d=$(wb_dirty $dev)
hc_log "dirty data after the restart: $d bytes"
[ "$d" -ge $((4 * MiB)) ] || hc_fail "dirty_data $d after the restart: not even the 4 MiB pattern is dirty"
io_get /dev/$dev $pat_off $((4 * MiB)) "$W/back"
wb_same "the dirty pattern after the stop, through hcache0" "$W/back" "$W/pattern" $pat_off
written_ok "after the backing device's stop, through hcache0" /dev/$dev $wr_off
io_check
wb_set $dev writeback_percent 0
wb_set $dev writeback_running 1
wb_wait_clean $dev 120
io_get_raw $pat_off $((4 * MiB)) "$W/raw"
wb_same "the pattern on the raw backing device after writeback" "$W/raw" "$W/pattern" $pat_off
written_ok "after writeback, on the raw backing device" "$IO_BDEV" $((IO_OFFSET * 512 + wr_off))
h1=$(dd if=/dev/$dev bs=1M iflag=direct status=none | md5sum)
h2=$(dd if="$IO_BDEV" bs=1M iflag=direct,skip_bytes skip=$((IO_OFFSET * 512)) status=none | md5sum)
[ "$h1" = "$h2" ] || hc_fail "after writeback, hcache0 and the raw backing device differ"
hc_log "after writeback, all of hcache0 reads the same as the raw backing device"
io_teardown
rm -rf "$W"
