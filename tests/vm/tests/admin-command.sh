# The hcache command (tools/hcache.c) against a live set: what "show"
# and "stats" report is what sysfs holds, each action does what its sysfs
# file does, and every refusal names the device and exits with the code
# man/hcache.8 gives.
#
# Without the module: "show" exits 3 and says to load it. Then a set with
# hcache0 attached and a second backing device formatted for a set that
# is not registered (so it waits). "show --json": the cache device at the
# top with its set's uuid, hcache0's backing device under it with its
# mode, size and label, the waiting device at the top level, state
# "waiting". The table (sizes as lsblk gives them) and "show -o" pick
# columns. "stats --json" equals the stats_total files. set-mode and set
# write the files (a cache device stands for its set); a bad value exits
# 4 naming the device and the file; an unknown knob, or a knob of another
# kind of object, exits 1 before anything is written. "flush --wait"
# writes back 2 MiB of dirty data although writeback is paused, and
# leaves it paused. "detach --wait" writes 1 MiB more back and returns
# detached; attach brings hcache0 back; "stop" of the waiting device
# removes it; "stop" of the cache device stops the set; "register" brings
# the set back; a device that is not hcache's is refused, exit 4.
# timeout: 300
# one-kernel: the admin command's parsing and output, in userspace; admin-tunables makes its sysfs writes on both kernels
# expect-log: hcache: /dev/null: cannot register: no such block device

. "$HC_ROOT/tests/vm/io-lib.sh"

hc=$(hc_tool hcache)
out=/tmp/hcache.out err=/tmp/hcache.err

# run WANT_RC ARGS...: hcache ARGS must exit WANT_RC; output in $out, $err.
run() {
	local want=$1 rc=0
	shift
	"$hc" "$@" >"$out" 2>"$err" || rc=$?
	[ "$rc" = "$want" ] || hc_fail "'hcache $*' exited $rc, want $want: $(cat "$out" "$err")"
}
err_has() {
	grep -qF -- "$1" "$err" || hc_fail "hcache's error lacks '$1': $(cat "$err")"
}

# expect EXPR VALUE [EXPR VALUE]...: each Python expression over the JSON
# in $out (as j) prints as VALUE; one python run for them all.
expect() {
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
args = sys.argv[2:]
for e, want in zip(args[0::2], args[1::2]):
    got = str(eval(e))
    if got != want:
        sys.exit("%s is %r, want %r; JSON: %s" % (e, got, want, json.dumps(j)))
' "$out" "$@" 2>/tmp/expect.err || hc_fail "$(cat /tmp/expect.err)"
}

run 3 show
err_has "module not loaded"

io_setup 64 128 --bucket 64k
bsize=$(($(hc_size "$IO_BDEV") * 512))
hc_write "$(io_sysdir hcache0)/label" "db-disk"
# A device formatted for a set that is not registered waits for it.
wait_dev=$(hc_nullb waiter 32)
wait_name=$(basename "$(readlink -f "$wait_dev")")
"$(hc_tool make-hcache)" -B "$wait_dev" --block 512 \
	--cset-uuid 11111111-2222-3333-4444-555555555555 >/dev/null ||
	hc_fail "make-hcache -B $wait_dev failed"
# State clean (flags bits 4-5: 1), as once attached: it waits for its set.
python3 "$HC_ROOT/tests/vm/sbedit.py" "$wait_dev" flags=$((1 << 4)) >/dev/null
hc_write /sys/fs/hcache/register "$wait_dev"
hc_wait test -e "/sys/block/$wait_name/hcache/running"

run 0 show --json
expect 'len(j["hcache"])' 2 \
	'j["hcache"][0]["name"]' "$IO_CNAME" \
	'j["hcache"][0]["type"]' cache \
	'j["hcache"][0]["state"]' running \
	'j["hcache"][0]["set"]' "$IO_UUID" \
	'j["hcache"][0]["size"]' $((64 << 20)) \
	'j["hcache"][0]["errors"]' "$(cat "$IO_SET/errors")" \
	'j["hcache"][0]["children"][0]["name"]' "$IO_BNAME" \
	'j["hcache"][0]["children"][0]["dev"]' hcache0 \
	'j["hcache"][0]["children"][0]["mode"]' writethrough \
	'j["hcache"][0]["children"][0]["data"]' "$(cat "$(io_sysdir hcache0)/state")" \
	'j["hcache"][0]["children"][0]["size"]' "$bsize" \
	'j["hcache"][0]["children"][0]["label"]' db-disk \
	'j["hcache"][1]["name"]' "$wait_name" \
	'j["hcache"][1]["state"]' waiting \
	'j["hcache"][1]["data"]' clean \
	'j["hcache"][1]["dev"]' None
hc_log "show --json: the set, hcache0 under it, the waiting device"

# Hits, then the statistics as sysfs has them.
io_cutoff hcache0 0
dd if=/dev/urandom of=/dev/hcache0 bs=64k count=16 oflag=direct status=none
dd if=/dev/hcache0 of=/dev/null bs=4k count=256 iflag=direct status=none
io_stat_ge hcache0 cache_hits 256
run 0 stats /dev/hcache0 --json
pairs=('j["window"]' total)
for c in $IO_COUNTERS cache_hit_ratio; do
	pairs+=("j[\"$c\"]" "$(cat "$(io_sysdir hcache0)/stats_total/$c")")
done
expect "${pairs[@]}"
# The windows take in new counts on the set's accounting tick, which may
# fall between the command's read and the test's: either value is right.
before=$(cat "$IO_SET/stats_hour/cache_hits")
run 0 stats "$IO_UUID" --window hour
after=$(cat "$IO_SET/stats_hour/cache_hits")
grep -q -E "^  cache_hits  *($before|$after)\$" "$out" ||
	hc_fail "stats --window hour: cache_hits $before before and $after after the command, which printed: $(cat "$out")"
run 1 stats hcache0 --window week
err_has "unknown window 'week'"

# The table: a header, the devices, sizes as lsblk gives them.
run 0 show
head -n 1 "$out" | grep -q "^NAME  *TYPE  *DEV  *STATE" || hc_fail "show's header: $(cat "$out")"
grep -q "^$IO_CNAME  *cache .* 64M " "$out" || hc_fail "show: no cache line of 64M: $(cat "$out")"
grep -q "$IO_BNAME  *backing  *hcache0  *running  *clean  *writethrough  *128M " "$out" ||
	hc_fail "show: hcache0's line: $(cat "$out")"
run 0 show -b -o NAME,SIZE
[ "$(head -n 1 "$out" | tr -s ' ')" = "NAME SIZE" ] || hc_fail "show -o NAME,SIZE: $(cat "$out")"
grep -q "$IO_BNAME  *$bsize\$" "$out" || hc_fail "show -b: $(cat "$out")"
run 1 show -o NAME,COLOUR
err_has "unknown column 'COLOUR'"

# Actions, and their refusals.
run 0 set-mode /dev/hcache0 writeback
io_mode_is hcache0 writeback || hc_fail "set-mode writeback: $(cat "$(io_sysdir hcache0)/cache_mode")"
run 4 set-mode hcache0 sideways
err_has "hcache0: $IO_BNAME cache_mode: Invalid argument"
io_mode_is hcache0 writeback || hc_fail "a refused set-mode changed the mode"
run 0 set hcache0 writeback_percent=20 sequential_cutoff=1M
[ "$(cat "$(io_sysdir hcache0)/writeback_percent")" = 20 ] || hc_fail "set writeback_percent=20 did not take"
[ "$(io_read_num "$(io_sysdir hcache0)/sequential_cutoff")" = $((1 << 20)) ] || hc_fail "set sequential_cutoff=1M did not take"
run 0 set "$IO_CDEV" io_error_limit=7
[ "$(cat "$IO_SET/io_error_limit")" = 7 ] || hc_fail "set io_error_limit=7 through the cache device did not take"
run 0 set "$IO_UUID" cache_replacement_policy=fifo
grep -q '\[fifo\]' "/sys/block/$IO_CNAME/hcache/cache_replacement_policy" ||
	hc_fail "set cache_replacement_policy=fifo through the set did not take"
run 1 set hcache0 journal_delay_ms=5 writeback_percent=30
err_has "journal_delay_ms is a knob of a cache set"
run 1 set hcache0 writeback_percent=30 colour=blue
err_has "'colour=blue' is not KNOB=VALUE with a known knob"
[ "$(cat "$(io_sysdir hcache0)/writeback_percent")" = 20 ] || hc_fail "a refused set wrote writeback_percent"

# flush: dirty data written back although writeback is paused, which it
# stays.
run 0 set hcache0 writeback_running=0 sequential_cutoff=0
dd if=/dev/urandom of=/dev/hcache0 bs=4k count=512 seek=4096 oflag=direct status=none
dirty=$(wb_dirty hcache0)
[ "$dirty" -ge $((2 << 20)) ] || hc_fail "only $dirty bytes dirty after 2 MiB of writeback-mode writes"
sleep 2
[ "$(wb_dirty hcache0)" = "$dirty" ] || hc_fail "dirty data went from $dirty to $(wb_dirty hcache0) bytes with writeback paused"
run 0 flush /dev/hcache0 --wait
[ "$(wb_dirty hcache0)" = 0 ] || hc_fail "flush --wait returned with $(wb_dirty hcache0) bytes dirty"
[ "$(cat "$(io_sysdir hcache0)/writeback_running")" = 0 ] || hc_fail "flush changed writeback_running"
hc_wait grep -qx clean "$(io_sysdir hcache0)/state"
run 2 flush /dev/no-such-disk
hc_log "flush --wait: $dirty bytes written back with writeback paused"
dd if=/dev/urandom of=/dev/hcache0 bs=4k count=256 seek=8192 oflag=direct status=none
[ "$(wb_dirty hcache0)" -ge $((1 << 20)) ] || hc_fail "only $(wb_dirty hcache0) bytes dirty before the detach"
run 1 attach hcache0 "$IO_BDEV"
err_has "is a backing device; attach takes a cache set"
run 2 attach hcache0 /dev/no-such-disk
err_has "/dev/no-such-disk: No such file or directory"

# detach --wait: written back (writeback still paused), then detached.
run 0 detach hcache0 --wait
[ "$(cat "$(io_sysdir hcache0)/cache_set_uuid")" = 00000000-0000-0000-0000-000000000000 ] ||
	hc_fail "detach --wait returned with hcache0 still attached"
grep -qx none "$(io_sysdir hcache0)/state" || hc_fail "detached hcache0's state: $(cat "$(io_sysdir hcache0)/state")"
run 0 show --json
expect 'len(j["hcache"][0].get("children", []))' 0 \
	'[d["dev"] for d in j["hcache"][1:]].count("hcache0")' 1
run 0 attach /dev/hcache0 "$IO_CDEV"
hc_wait io_attached hcache0
run 0 show --json
expect 'j["hcache"][0]["children"][0]["dev"]' hcache0
hc_log "set-mode, set, detach, attach"

run 0 stop "$wait_dev"
hc_wait test ! -e "/sys/block/$wait_name/hcache"
run 2 stop "$wait_dev"
err_has "$wait_dev: not a registered hcache device"
run 0 stop "$IO_CNAME"
hc_wait test ! -e "$IO_SET"
hc_wait io_no_hcache
run 0 show --json
expect 'len(j["hcache"])' 0
run 0 register "$IO_CDEV" "$IO_BDEV"
hc_wait test -d "$IO_SET"
hc_wait io_attached hcache0
run 0 register "$IO_CDEV"
run 4 register /dev/null
err_has "/dev/null: the kernel refused to register it"
run 2 register /dev/no-such-disk
hc_log "stop, register"

io_teardown
