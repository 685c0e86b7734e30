# Register/stop cycles leave no memory behind: no kmalloc or bio cache
# (unmerged, thanks to slab_nomerge) holds as many more objects afterwards
# as there were cycles, which a leak of one object per cycle would; and the
# module unloads. 300 cycles (1000 in check-long), as the rest of the
# system moves a cache by up to a slab (128 objects seen) meanwhile.
# timeout: 900
# one-kernel: a leak check over 300 register/stop cycles; register and cache-set register and stop on both kernels
# append: slab_nomerge

cycles=300
[ "$HC_LONG" = 1 ] && cycles=1000
dev=$(hc_nullb back 32)
"$(hc_tool make-hcache)" -B "$dev" >/dev/null
hc_load

# Counts made exact first: shrinking a cache empties its per-cpu slabs,
# whose free objects /proc/slabinfo would otherwise count as in use. Any
# allocation between the shrink and the read gives a cache a per-cpu slab
# again, a whole slab of "active" objects (512 for kmalloc-8): so nothing
# in between forks (bash builtins only, the file read with `read`), and
# the count is the least of five reads, which a leak moves and such noise
# seldom does in all five.
slab_sample() {
	local f name active rest
	echo 3 >/proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/*/shrink; do
		echo 1 >"$f" 2>/dev/null || true
	done
	while read -r name active rest; do
		case $name in
		kmalloc* | bio*) echo "$name $active" ;;
		esac
	done </proc/slabinfo
}

slab_objects() {
	local i
	for i in 1 2 3 4 5; do
		slab_sample >"/tmp/slab.$i"
	done
	cat /tmp/slab.[1-5] | awk '!($1 in min) || $2 < min[$1] { min[$1] = $2 }
		END { for (c in min) print c, min[c] }' | sort
}

# A first cycle warms per-cpu caches and lazily made slabs.
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0
sleep 1
slab_objects >/tmp/before

for i in $(seq "$cycles"); do
	hc_write /sys/fs/hcache/register "$dev"
	hc_wait test -b /dev/hcache0
	dd if=/dev/hcache0 of=/dev/null bs=64k count=4 iflag=direct status=none
	hc_write /sys/block/hcache0/hcache/stop 1
	hc_wait test ! -e /dev/hcache0
done
sleep 1
slab_objects >/tmp/after

join /tmp/before /tmp/after | awk -v c="$cycles" '
	{ d = $3 - $2; if (d >= c) { print "leak? " $1 ": " $2 " -> " $3; bad = 1 } }
	END { exit bad }' || hc_fail "objects grew across $cycles cycles"
join /tmp/before /tmp/after | awk '$3 != $2 { printf "%s %+d; ", $1, $3 - $2 } END { print "" }'
hc_log "$cycles cycles; no slab cache grew by $cycles objects or more"
hc_unload
