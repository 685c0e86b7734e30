# ext4 on an attached device, in every cache mode: mkfs.ext4, mount, write
# files of several sizes (1 byte to 9 MiB, about 20 MiB), fsync them,
# unmount, drop the page cache, mount again and check every checksum; then
# switch to the next mode and check again (what an earlier mode left,
# dirty data included, must read back in the next). After the writeback
# round the set is stopped and registered again first, so the dirty data
# comes back from a warm restart. e2fsck finds each filesystem clean; at
# the end errors is 0 and the consistency check says ok.
# timeout: 300
# one-kernel: ext4 over hcache0; passthrough-io and io-fio-modes cover flush, FUA, discard and every mode on both kernels

. "$HC_ROOT/tests/vm/io-lib.sh"

io_setup 128 256
dev=hcache0
mnt=/mnt/io
mkdir -p $mnt /tmp/files
sizes="1 4096 12345 65536 1048576 3145745 7340032 9437184"

# verify WHEN: mount, compare every checksum, unmount, fsck.
verify() {
	echo 3 >/proc/sys/vm/drop_caches
	mount -t ext4 /dev/$dev $mnt || hc_fail "$1: mount failed"
	(cd $mnt && sha256sum -c --quiet /tmp/files/sums) ||
		hc_fail "$1: files changed"
	umount $mnt
	e2fsck -f -n /dev/$dev >/tmp/fsck.out 2>&1 ||
		hc_fail "$1: e2fsck: $(tail -5 /tmp/fsck.out)"
	hc_log "$1: files and filesystem intact"
}

set -- writethrough writeback writearound none writethrough
while [ $# -gt 1 ]; do
	mode=$1 next=$2
	shift
	io_mode $dev "$mode"
	t0=$(io_now)
	mkfs.ext4 -q -F /dev/$dev || hc_fail "$mode: mkfs.ext4 failed"
	mount -t ext4 /dev/$dev $mnt || hc_fail "$mode: mount failed"
	mkdir $mnt/d
	: >/tmp/files/sums
	for s in $sizes; do
		head -c "$s" /dev/urandom >"$mnt/d/f$s"
		(cd $mnt && sha256sum "d/f$s") >>/tmp/files/sums
	done
	# Small files in a tree too.
	for i in $(seq 50); do
		head -c $((i * 97)) /dev/urandom >"$mnt/d/s$i"
	done
	(cd $mnt && sha256sum d/s*) >>/tmp/files/sums
	sync "$mnt"/d/* "$mnt/d" "$mnt"
	written=$(du -sk $mnt/d | cut -f1)
	umount $mnt
	hc_log "$mode: mkfs and $written KiB of files written in $(io_elapsed "$t0") s"
	verify "$mode"
	if [ "$mode" = writeback ]; then
		io_restart
		io_mode_is $dev writeback || hc_fail "cache_mode after restart: $(cat "$(io_sysdir $dev)/cache_mode")"
		verify "writeback, after a stop and register"
	fi
	io_mode $dev "$next"
	verify "written in $mode, read in $next"
	io_check
	hc_log "$(io_stats_line $dev)"
done
io_teardown
