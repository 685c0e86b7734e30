# The release build (what DKMS, make install and the packages build) has
# none of the debug build's knobs: no delay or fault points, and no
# debugfs file that can break a set's promises (fill, gen_set,
# gen_max_distance); the read-only ones and flush are there. The debug
# build, which the other VM tests load, has them all.
# timeout: 120

. "$HC_ROOT/tests/vm/io-lib.sh"

[ -f "$HC_KO_RELEASE" ] || hc_fail "the release build $HC_KO_RELEASE is not built"
HC_KO=$HC_KO_RELEASE io_setup 64 128 --bucket 64k
root=/sys/kernel/debug/hcache
for f in check keys flush; do
	[ -e "$IO_DBG/$f" ] || hc_fail "the release build lacks $IO_DBG/$f"
done
for f in fill gen_set gen_max_distance; do
	[ ! -e "$IO_DBG/$f" ] || hc_fail "the release build has $IO_DBG/$f"
done
for d in delay fail; do
	[ ! -e "$root/$d" ] || hc_fail "the release build has $root/$d"
done
hc_log "release build: check, keys and flush only"
io_teardown

HC_KO=$HC_KO io_register
for f in fill gen_set gen_max_distance; do
	[ -e "$IO_DBG/$f" ] || hc_fail "the debug build lacks $IO_DBG/$f"
done
for p in delay/wb_checked fail/cache_write; do
	[ -d "$root/$p" ] || hc_fail "the debug build lacks $root/$p"
done
hc_log "debug build: fill, gen_set, gen_max_distance, delay and fault points"
io_teardown
