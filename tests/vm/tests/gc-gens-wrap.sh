# Bucket gens wrap past 255 and stale pointers never return data. A fresh
# 32 MiB cache of 64 KiB buckets (512 buckets, each reused many times);
# before the backing device attaches (so the tree holds no key), the
# debugfs gen_set gives every bucket gen 250 and gen_max_distance is
# lowered from 96 to 8: a bucket's gen may then run at most 8 past the
# oldest pointer into it, so GC must drop stale pointers for buckets to be
# reused at all.
#
# 1. In writethrough with sequential_cutoff 0, fio randwrite of 4 KiB to
#    64 KiB blocks, iodepth 16, over the first 80 MiB of hcache0 (2.5x the
#    cache) until at least 320 MiB (10x the cache; 30x under make
#    check-long) is written, overwriting blocks (no random map,
#    serialize_overlap) with crc32c verification (verify_backlog 512 and
#    a final pass), while a second, rate-limited job reads random blocks
#    of the region (some 60 a second under TCG: hits, and misses
#    promoted). A stale pointer
#    resolving to a reused bucket would hand back another block's data,
#    whose fio header names another offset: verification fails. Passes
#    when fio reports no error, no verify failure and no I/O of 5 s or
#    more; internal/buckets_gen_wrapped (255 to 0 bumps), gc_runs and
#    gc_keys_dropped are all above 0; and the consistency check passes.
# 2. The set is stopped and registered again (the gens come back from
#    the cache device) and fio's verify_only replays the writing job for
#    exactly the bytes it wrote: every block still written reads back.
# 3. The tightest limit: gen_max_distance 1 (it is not persisted) and the
#    random replacement policy, which may pick a bucket again soon after
#    it was reused, before GC has dropped the pointers its last bump made
#    stale (with lru and 8, GC running after every eighth of the cache
#    allocated always gets there first). In writeback, 160 MiB more (5x;
#    15x long) the same way with another seed; fio passes and gc_runs is
#    above 0. Writeback empties the cache, trigger_gc; the cache takes new
#    data (8 MiB written past the region with writeback paused must all
#    be dirty_data); the check passes; the set restarts and the replay
#    passes again; hcache0 and the raw backing device hold the same
#    80 MiB.
# Logged: the gen and GC counters (buckets_gen_wrapped,
# buckets_gen_limited, gc_*) and bucket_usage after each part.
# timeout: 600
# one-kernel: generation arithmetic and GC, which call no kernel interface the other tests do not; 2.5 min

. "$HC_ROOT/tests/vm/io-lib.sh"
. "$HC_ROOT/tests/vm/gc-lib.sh"

MiB=$((1 << 20))
cache_mib=32
region_mib=80
back_mib=$((region_mib + 16))
long=1
[ "${HC_LONG:-0}" = 1 ] && long=3
write1_mib=$((10 * long * cache_mib))
write2_mib=$((5 * long * cache_mib))
max_lat_ns=5000000000
R=/tmp/gc-gens-wrap
mkdir -p $R

# READER: the second job, random reads over the region; --exitall (a
# global option, wherever it is given) ends it when the writer is done.
READER=(--name=r --filename=/dev/hcache0 --rw=randread --bsrange=4k-64k
	--ioengine=libaio --direct=1 --iodepth=4 --size="${region_mib}m"
	--rate_iops=500 --time_based --runtime=3600 --randrepeat=0 --randseed=5)

# limit_gens N: gen_max_distance N (a debugfs setting, lost at a stop).
limit_gens() {
	[ -e "$IO_DBG/gen_max_distance" ] || hc_fail "$IO_DBG/gen_max_distance is missing"
	hc_log "gen_max_distance was $(cat "$IO_DBG/gen_max_distance")"
	hc_write "$IO_DBG/gen_max_distance" "$1"
	[ "$(cat "$IO_DBG/gen_max_distance")" = "$1" ] ||
		hc_fail "gen_max_distance reads $(cat "$IO_DBG/gen_max_distance") after writing $1"
}

# write_phase NAME SEED MIB: the writer (at least MIB written) and the
# reader; sets WROTE.
write_phase() {
	local t0 size=$(($3 > region_mib ? 2 * $3 : $3))
	t0=$(io_now)
	fio_job "$1" "$2" ${size}m --verify_backlog=512 --exitall "${READER[@]}"
	hc_log "$1: fio took $(io_elapsed "$t0") s"
	fio_check "$1"
	[ "$WROTE" -ge $(($3 * MiB)) ] || hc_fail "fio $1 wrote $WROTE bytes, not $3 MiB"
	hc_log "$1: $(io_stats_line hcache0); bypass_full $(io_stat hcache0 bypass_full)"
	hc_log "$1: $(gc_counters)"
	hc_log "$1: bucket_usage $(gc_usage)"
}

# replay NAME SEED BYTES: fio verify_only of the writer that wrote BYTES.
replay() {
	local t0
	t0=$(io_now)
	fio_job "$1-verify" "$2" "$3" --verify_only=1
	fio_check "$1-verify"
	hc_log "$1: fio verify_only found every block intact ($(io_elapsed "$t0") s)"
}

# Set-up as io_setup does, but with gen_set before the backing device
# attaches: registering it reads its partition table through the cache,
# and gen_set wants a tree without keys.
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
IO_CDEV=$(hc_nullb cache $cache_mib)
IO_BDEV=$(hc_nullb back $back_mib irqmode=2 completion_nsec=100000)
IO_CNAME=$(basename "$(readlink -f "$IO_CDEV")")
# shellcheck disable=SC2034
IO_BNAME=$(basename "$(readlink -f "$IO_BDEV")")
"$(hc_tool make-hcache)" -C "$IO_CDEV" -B "$IO_BDEV" --block 512 --bucket 64k >/dev/null ||
	hc_fail "make-hcache -C $IO_CDEV -B $IO_BDEV failed"
IO_UUID=$("$(hc_tool hcache-super-show)" "$IO_CDEV" | awk '$1 == "cset.uuid" { print $2 }')
IO_OFFSET=$("$(hc_tool hcache-super-show)" "$IO_BDEV" | awk '$1 == "backing.data_offset" { print $2 }')
[ -n "$IO_UUID" ] && [ -n "$IO_OFFSET" ] || hc_fail "hcache-super-show: no set uuid or data offset"
IO_SET=/sys/fs/hcache/$IO_UUID
IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
# shellcheck disable=SC2034
IO_BDEVS=("$IO_BDEV")
hc_load
hc_write /sys/fs/hcache/register "$IO_CDEV"
hc_wait test -d "$IO_SET"
hc_wait test -d "$IO_DBG"
[ -e "$IO_DBG/gen_set" ] || hc_fail "$IO_DBG/gen_set is missing"
[ -e "$IO_SET/internal/buckets_gen_wrapped" ] || hc_fail "$IO_SET/internal/buckets_gen_wrapped is missing"
hc_write "$IO_DBG/gen_set" 250
limit_gens 8
dev=$(io_register_backing "$IO_BDEV")
[ "$dev" = hcache0 ] || hc_fail "the backing device runs as $dev, not hcache0"
hc_log "set $IO_UUID: cache $IO_CDEV ($cache_mib MiB, $(cat "$IO_SET/nbuckets") buckets of $(cat "$IO_SET/bucket_size")), gens at 250, gen_max_distance 8; backing $IO_BDEV as hcache0"
io_cutoff hcache0 0
hc_log "bucket_usage $(gc_usage)"

hc_log "part 1: writethrough, $write1_mib MiB over $region_mib MiB"
write_phase part1 21 $write1_mib
wrote1=$WROTE
wrapped=$(gc_counter buckets_gen_wrapped)
[ "$wrapped" -gt 0 ] || hc_fail "no bucket's gen wrapped (buckets_gen_wrapped 0)"
[ "$(gc_counter gc_runs)" -gt 0 ] || hc_fail "GC never ran"
[ "$(gc_counter gc_keys_dropped)" -gt 0 ] || hc_fail "GC dropped no stale key"
[ "$(cat "$IO_DBG/gen_max_distance")" = 8 ] || hc_fail "gen_max_distance reads $(cat "$IO_DBG/gen_max_distance") after part 1"
io_check
no_trouble

hc_log "part 2: stop and register; the gens come back from disk"
io_restart
io_cutoff hcache0 0
hc_log "after the restart: $(gc_counters)"
replay part1 21 "$wrote1"
io_check

hc_log "part 3: writeback, $write2_mib MiB more, gen_max_distance 1, random replacement"
limit_gens 1
policy=/sys/block/$IO_CNAME/hcache/cache_replacement_policy
hc_write "$policy" random
grep -q '\[random\]' "$policy" || hc_fail "cache_replacement_policy reads '$(cat "$policy")' after writing random"
io_mode hcache0 writeback
write_phase part3 22 $write2_mib
wrote3=$WROTE
[ "$(gc_counter gc_runs)" -gt 0 ] || hc_fail "GC never ran in part 3"
wb_set hcache0 writeback_percent 0
wb_wait_clean hcache0 300
hc_log "written back in $WB_SECS s"
t0=$(io_now)
hc_write "$IO_SET/internal/trigger_gc" 1
hc_log "trigger_gc returned after $(io_elapsed "$t0") s: $(gc_counters)"
hc_log "bucket_usage $(gc_usage)"
takes_writes $((region_mib + 4))
io_check
no_trouble
io_restart
io_cutoff hcache0 0
replay part3 22 "$wrote3"
same_as_backing $region_mib
hc_log "at the end: $(gc_counters)"
io_teardown
no_trouble
