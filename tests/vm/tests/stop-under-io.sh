# Stopping a device with I/O in flight on a slow backing device (no cache:
# passthrough) tears it down cleanly and loses nothing acknowledged.
# Three rounds: register; fio randrw (2 jobs, 4 KiB, over the first 64
# MiB of hcache0) and a writer (tests/vm/wb-writer.py: 4 KiB blocks of a
# known pattern over 8 MiB at 96 MiB, each write logged when intended and
# when acknowledged) run until both have done I/O (100 reads completed on
# hcache0, which only fio reads, 100 writes, and 10 writes acknowledged by
# the writer; fio can take over 10 s to start on a busy host); then the
# device is stopped.
# The stop waits for the bios in flight and returns; nothing hangs or
# warns. What came after fails with one of two errors and no other: EIO,
# for a bio that reached the dying disk, or ENOSPC, for a write issued
# after del_gendisk() set the capacity to 0 (block fops refuse a write at
# or past the end). fio must exit 2 (its status counts the jobs that
# ended with an error), each job's error 5 or 28, every error line of its
# own one of those, and each job must have written first; the writer must exit 2 with "[Errno 5]" or "[Errno 28]". Then
# whatever the writer had acknowledged, in every round so far, is on the
# raw backing device at its data offset, and, the device registered
# again, reads back through hcache0 (every sector its last acknowledged
# version, or one intended after, in flight at the stop).
# timeout: 240

dev=$(hc_nullb back 128 irqmode=2 completion_nsec=2000000)
"$(hc_tool make-hcache)" -B "$dev" >/dev/null
offset=$("$(hc_tool hcache-super-show)" "$dev" | awk '$1 == "backing.data_offset" { print $2 }')
[ -n "$offset" ] || hc_fail "hcache-super-show: no data offset"
W=$(mktemp -d /tmp/stop.XXXXXX)
writer=$HC_ROOT/tests/vm/wb-writer.py
wr_off=$((96 << 20))
hc_load
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
python3 "$writer" fill /dev/hcache0 "$W/log" --blocks 2048 --offset $wr_off ||
	hc_fail "wb-writer fill failed"

acked() {
	awk '$1 == "A" { n++ } END { print n + 0 }' "$W/log"
}

# written_ok WHERE DEV BYTE_OFFSET: the writer's region on DEV from there
# holds every acknowledged write.
written_ok() {
	local out
	out=$(python3 "$writer" verify "$2" "$W/log" --offset "$3") ||
		hc_fail "$1: acknowledged writes lost: $out"
	hc_log "$1: $out"
}

for round in 1 2 3; do
	if [ $round -gt 1 ]; then
		hc_write /sys/fs/hcache/register "$dev"
		hc_wait test -b /dev/hcache0
		written_ok "round $round, registered again, through hcache0" /dev/hcache0 $wr_off
	fi
	read -r r0 _ _ _ w0 _ </sys/block/hcache0/stat
	a0=$(acked)
	fio --name=load --filename=/dev/hcache0 --rw=randrw --bs=4k \
		--allow_file_create=0 --size=64m \
		--iodepth=32 --ioengine=libaio --direct=1 --time_based \
		--runtime=30 --numjobs=2 --output-format=json \
		--output="$W/fio.$round.json" 2>"$W/fio.$round.err" &
	fio=$!
	python3 "$writer" write /dev/hcache0 "$W/log" --offset $wr_off \
		--first-version $((round * 1000000)) --note "round $round" \
		>"$W/w.$round.out" 2>"$W/w.$round.err" &
	wpid=$!
	limit=$((60 * ${HC_TIME_SCALE:-1}))
	end=$((SECONDS + limit))
	while :; do
		kill -0 $fio 2>/dev/null || hc_fail "round $round: fio ended before the stop: $(head -c 600 "$W/fio.$round.err")"
		kill -0 $wpid 2>/dev/null || hc_fail "round $round: the writer ended before the stop: $(cat "$W/w.$round.err")"
		read -r r _ _ _ w _ </sys/block/hcache0/stat
		a=$(acked)
		[ $((r - r0)) -ge 100 ] && [ $((w - w0)) -ge 100 ] && [ $((a - a0)) -ge 10 ] && break
		[ $SECONDS -lt $end ] || hc_fail "round $round: no I/O within $limit s: $((r - r0)) reads and $((w - w0)) writes completed, $((a - a0)) acknowledged by the writer"
		sleep 0.2
	done
	hc_write /sys/block/hcache0/hcache/stop 1
	hc_wait test ! -e /dev/hcache0
	wait $fio && rc=0 || rc=$?
	# For the log: fio's report and errors, next to test.log.
	cp "$W/fio.$round.json" "$W/fio.$round.err" "$HC_RESULTS/"
	# fio's exit status is the number of its jobs that ended with an error.
	[ "$rc" = 2 ] || hc_fail "round $round: fio exited with $rc, not 2 (both jobs ended with an error): $(head -c 600 "$W/fio.$round.err")"
	out=$(python3 - "$W/fio.$round.json" "$W/fio.$round.err" 2>&1 <<'EOF'
import json, re, sys
t = open(sys.argv[1]).read()
d = json.loads(t[t.index("{"):])
for j in d["jobs"]:
    if j["error"] not in (5, 28):
        sys.exit("a job ended with error %d, not 5 (EIO) or 28 (ENOSPC)" % j["error"])
    if not j["write"]["io_bytes"]:
        sys.exit("a job wrote nothing before the stop")
ok = re.compile(r"fio: io_u error on file /dev/hcache0: (Input/output error|No space left on device): (read|write) offset=\d+, buflen=\d+$")
for line in open(sys.argv[2]).read().splitlines():
    if line and not ok.match(line):
        sys.exit("fio said: " + line)
print(", ".join("error %d after %d KiB written" % (j["error"], j["write"]["io_bytes"] >> 10) for j in d["jobs"]))
EOF
) || hc_fail "round $round: fio: $out"
	wait $wpid && rc=0 || rc=$?
	[ "$rc" = 2 ] || hc_fail "round $round: the writer exited with $rc, not 2: $(cat "$W/w.$round.err")"
	grep -q -x -E 'wb-writer: write: \[Errno (5\] Input/output error|28\] No space left on device)' "$W/w.$round.err" ||
		hc_fail "round $round: the writer said: $(cat "$W/w.$round.err")"
	hc_log "round $round: stopped after $((r - r0)) reads and $((w - w0)) writes completed, $((a - a0)) acknowledged by the writer; fio jobs: $out; the writer: $(cat "$W/w.$round.err")"
	written_ok "round $round, the raw device" "$dev" $((offset * 512 + wr_off))
done
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
written_ok "registered again, through hcache0" /dev/hcache0 $wr_off
dd if=/dev/hcache0 of=/dev/null bs=1M count=8 iflag=direct status=none
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0
hc_unload
rm -rf "$W"
