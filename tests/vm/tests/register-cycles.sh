# Register/stop cycles leave no memory behind, in two kinds of cycle:
#   backing  a backing device alone: register it, read 256 KiB through
#            hcache0, stop it;
#   set      a cache set with its backing device attached: register the
#            cache device, then the backing device, write 256 KiB through
#            hcache0 (writethrough: the cache and the backing device) and
#            read 512 KiB, stop the set.
# 300 of each (1000 of each in check-long), the backing cycles first.
# A first cycle of each kind warms per-cpu caches and lazily made slabs;
# the null_blk disks are written whole before anything else, so that the
# pages null_blk keeps for their data are all there from the start (an
# hcache write to a sector not written before would take one more). Then
# three counts are read before and after each kind's cycles, each after
# shrinking the kmalloc and bio caches, and each must grow by less than
# a leak of one object a cycle would make it grow:
#   slab     no kmalloc or bio cache (unmerged, thanks to slab_nomerge)
#            holds as many more objects as there were cycles;
#   vmalloc  VmallocUsed (/proc/meminfo: the pages of every vmalloc area;
#            a vmalloc, even of one byte, takes a page) grows by less than
#            half a page per cycle;
#   pages    the pages the kernel holds that no counter claims grow by
#            less than half a page per cycle: MemTotal less the free
#            pages (buddy lists and every CPU's lists, /proc/zoneinfo)
#            less the file, anonymous, slab, page-table, vmalloc and
#            per-cpu pages (kernel stacks are vmalloc areas here,
#            CONFIG_VMAP_STACK).
# A leak of a page or a vmalloc per cycle would add a page per cycle,
# twice the tolerance (300 pages over 300 cycles against 150); what the
# rest of the system moves meanwhile stayed far below it (6.1 and 6.12,
# 300 cycles of each: pages -20 to +34, vmalloc -8 to +8; with a module
# leaking a page, a one-page vmalloc and a kmalloc-64 object a cycle:
# pages +284 to +349, vmalloc +296 to +312, kmalloc-64 +300).
# Each read is the least of five, which a leak moves and noise seldom
# does in all five. Every count is checked before the test fails, naming
# each that grew. The module unloads at the end.
# timeout: 900
# one-kernel: a leak check over register/stop cycles; register and cache-set register and stop on both kernels
# long-only: 1000 register/stop cycles of each kind against a leak of one object a cycle; register and cache-set register and stop on both kernels in make check
# append: slab_nomerge

cycles=300
[ "$HC_LONG" = 1 ] && cycles=1000
# The set's devices (block size 512, as the I/O tests make them) and a
# backing device alone; each written whole first.
cdev=$(hc_nullb cache 128)
bdev=$(hc_nullb back 64)
solo=$(hc_nullb solo 32)
for d in "$cdev" "$bdev" "$solo"; do
	dd if=/dev/zero of="$d" bs=1M count=$(($(hc_size "$d") / 2048)) oflag=direct status=none ||
		hc_fail "filling $d failed"
done
"$(hc_tool make-hcache)" -C "$cdev" -B "$bdev" --block 512 >/dev/null ||
	hc_fail "make-hcache -C $cdev -B $bdev failed"
uuid=$("$(hc_tool hcache-super-show)" "$cdev" | awk '$1 == "cset.uuid" { print $2 }')
[ -n "$uuid" ] || hc_fail "hcache-super-show: no set uuid"
set_dir=/sys/fs/hcache/$uuid
"$(hc_tool make-hcache)" -B "$solo" >/dev/null || hc_fail "make-hcache -B $solo failed"
head -c $((256 << 10)) /dev/urandom >/tmp/rc-data
hc_load

# The cycles poll with builtins only (a fork costs tens of ms under TCG,
# which made a set cycle take 2.9 s): nap sleeps 20 ms reading a fifo
# that nothing writes; poll retries a condition for up to 10 s.
mkfifo /tmp/rc-fifo
exec {nap_fd}<>/tmp/rc-fifo
nap() {
	read -r -t 0.02 -u "$nap_fd" _ || [ $? -gt 128 ]
}
poll() { # COND...
	local i
	for ((i = 0; i < 500; i++)); do
		"$@" && return 0
		nap
	done
	hc_fail "timed out waiting for: $*"
}
gone() {
	[ ! -e "$1" ]
}
attached() { # hcache0 runs attached to the set
	local u
	[ -b /dev/hcache0 ] && [ -r /sys/block/hcache0/hcache/cache_set_uuid ] &&
		read -r u </sys/block/hcache0/hcache/cache_set_uuid && [ "$u" = "$uuid" ]
}

backing_cycle() {
	hc_write /sys/fs/hcache/register "$solo"
	poll test -b /dev/hcache0
	dd if=/dev/hcache0 of=/dev/null bs=64k count=4 iflag=direct status=none ||
		hc_fail "reading hcache0 failed"
	hc_write /sys/block/hcache0/hcache/stop 1
	poll gone /dev/hcache0
}

set_cycle() {
	hc_write /sys/fs/hcache/register "$cdev"
	poll test -d "$set_dir"
	hc_write /sys/fs/hcache/register "$bdev"
	poll attached
	dd if=/tmp/rc-data of=/dev/hcache0 bs=64k oflag=direct status=none ||
		hc_fail "writing hcache0 failed"
	dd if=/dev/hcache0 of=/dev/null bs=64k count=8 iflag=direct status=none ||
		hc_fail "reading hcache0 failed"
	hc_write "$set_dir/stop" 1
	poll gone "$set_dir"
	poll gone /dev/hcache0
}

# Counts made exact first: shrinking a cache empties its per-cpu slabs,
# whose free objects /proc/slabinfo would otherwise count as in use. Any
# allocation between the shrink and the read gives a cache a per-cpu slab
# again, a whole slab of "active" objects (512 for kmalloc-8): so nothing
# in between forks (bash builtins only, the files read with `read`).
# Only the caches counted are shrunk, and the page cache is not dropped
# (the pages count leaves file pages out): under TCG, dropping it (the
# executables' pages, which QEMU has translated code for) before every
# sample made the next writes to those pages crawl, a page cleared in
# over 80 s, which the kernel reported as a soft lockup.
# One sample: "slab:NAME OBJECTS" per kmalloc and bio cache, then
# "vmalloc PAGES" and "pages PAGES".
sample() {
	local f name active rest k v pcp=0 free=0 acc=0 total=0 vm=0
	for f in /sys/kernel/slab/kmalloc*/shrink /sys/kernel/slab/bio*/shrink; do
		echo 1 >"$f"
	done
	while read -r name active rest; do
		case $name in
		kmalloc* | bio*) echo "slab:$name $active" ;;
		esac
	done </proc/slabinfo
	while read -r k v rest; do
		case $k in
		count:) pcp=$((pcp + v)) ;;
		esac
	done </proc/zoneinfo
	while read -r k v; do
		case $k in
		nr_free_pages) free=$v ;;
		nr_file_pages | nr_anon_pages | nr_slab_reclaimable | nr_slab_unreclaimable | nr_page_table_pages)
			acc=$((acc + v)) ;;
		esac
	done </proc/vmstat
	while read -r k v _; do
		case $k in
		MemTotal:) total=$((v / 4)) ;;
		VmallocUsed:) vm=$((v / 4)) ;;
		Percpu:) acc=$((acc + v / 4)) ;;
		esac
	done </proc/meminfo
	echo "vmalloc $vm"
	echo "pages $((total - free - pcp - acc - vm))"
}

# counts FILE: the least of five samples of each count, into FILE.
counts() {
	local i
	for i in 1 2 3 4 5; do
		sample >"/tmp/rc-sample.$i"
	done
	cat /tmp/rc-sample.[1-5] | awk '!($1 in min) || $2 < min[$1] { min[$1] = $2 }
		END { for (c in min) print c, min[c] }' | sort >"$1"
}

# check KIND BEFORE AFTER: every count grew by less than its tolerance;
# logs the changes; returns 1 (having said why) if any did not.
check() {
	join "$2" "$3" | awk -v kind="$1" -v c="$cycles" '
	{
		d = $3 - $2
		if ($1 ~ /^slab:/) {
			if (d >= c) { printf "%s: %s grew by %d objects over %d cycles\n", kind, substr($1, 6), d, c; bad = 1 }
			else if (d != 0) slabs = slabs sprintf(" %s %+d", substr($1, 6), d)
		} else {
			if (2 * d >= c) { printf "%s: %s grew by %d pages over %d cycles (a leak of one a cycle: %d)\n", kind, $1, d, c, c; bad = 1 }
			other = other sprintf(" %s %+d", $1, d)
		}
	}
	END {
		printf "%s, %d cycles:%s pages; slab objects:%s\n", kind, c, other, slabs ? slabs : " no change"
		exit bad
	}'
}

bad=0
backing_cycle
sleep 1
counts /tmp/rc-before-backing
t0=$SECONDS
for i in $(seq "$cycles"); do
	backing_cycle
done
sleep 1
counts /tmp/rc-after-backing
hc_log "$cycles backing cycles in $((SECONDS - t0)) s"
check backing /tmp/rc-before-backing /tmp/rc-after-backing || bad=1

set_cycle
sleep 1
counts /tmp/rc-before-set
t0=$SECONDS
for i in $(seq "$cycles"); do
	set_cycle
done
sleep 1
counts /tmp/rc-after-set
hc_log "$cycles set cycles in $((SECONDS - t0)) s"
check set /tmp/rc-before-set /tmp/rc-after-set || bad=1
[ $bad = 0 ] || hc_fail "memory grew across the cycles (above)"
hc_log "no slab cache grew by $cycles objects, nor vmalloc or unclaimed pages by $((cycles / 2)) pages, in either kind of cycle"
hc_unload
