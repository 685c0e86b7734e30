# Many backing devices on one cache set: 8 under make check, 64 under make
# check-long (null_blk disks of 64 MiB; QEMU's bus holds only about 30
# virtio disks). All are formatted to join one 512 MiB cache set and
# attached, the odd ones in writeback (writeback paused), the even ones in
# writethrough. Then:
#  1. fio writes 4 MiB at random in 4 KiB blocks on every hcacheN at once
#     (one job per device, each with its own seed, so that data landing on
#     another device's blocks fails the verify) and verifies it;
#  2. half the devices (the odd ones, all dirty) are detached: each writes
#     its dirty data back and runs on without a cache; fio verifies every
#     device again, the detached ones straight from their backing device;
#  3. the set and the detached devices stop, and everything registers
#     again: the attached half comes back attached (same set), the other
#     half runs on its own, and fio verifies all of them once more.
# The set's table must list exactly the attached half at the end, and the
# set count no error.
# timeout: 300
# timeout-long: 1200
# one-kernel: attach, the set's table and detach do not differ between the kernels; both under check-long (64 devices: 209 s on 6.1)

. "$HC_ROOT/tests/vm/io-lib.sh"

n=8
[ "${HC_LONG:-0}" = 1 ] && n=64
W=$(mktemp -d /tmp/many.XXXXXX)
io_setup 512 64
devs=(hcache0)
bdevs=("$IO_BDEV")
for ((i = 1; i < n; i++)); do
	io_add_backing "back$i" 64
	devs+=("$IO_NEW")
	bdevs+=("$IO_NEW_BDEV")
done
for ((i = 0; i < n; i++)); do
	io_cutoff "${devs[$i]}" 0
	if ((i % 2)); then
		io_mode "${devs[$i]}" writeback
		wb_set "${devs[$i]}" writeback_running 0
	fi
done
hc_log "$n backing devices attached to set $IO_UUID: ${devs[*]}"

# verify_all WHAT [--verify_only]: one fio job per device, 4 MiB at random
# in 4 KiB blocks, all at once; with --verify_only, only the verify pass.
verify_all() {
	local what=$1 args=() i dev
	shift
	for ((i = 0; i < n; i++)); do
		dev=$(io_hcache_of "${bdevs[$i]}") || hc_fail "$what: ${bdevs[$i]} runs as no hcacheN"
		args+=(--name="d$i" --filename="/dev/$dev" --randseed=$((1000 + i)))
	done
	fio --direct=1 --ioengine=psync --rw=randwrite --bs=4k --size=4M \
		--verify=crc32c --do_verify=1 "$@" "${args[@]}" \
		--output="$W/fio.out" >/dev/null 2>&1 ||
		hc_fail "$what: fio failed: $(grep -i -E 'err|verify' "$W/fio.out" | head -5)"
	io_fio_ok "$W/fio.out" || hc_fail "$what: $(grep -i -E 'err|verify' "$W/fio.out" | head -5)"
}

verify_all "writing all $n at once"
dirty=0
for ((i = 1; i < n; i += 2)); do
	dirty=$((dirty + $(wb_dirty "${devs[$i]}")))
done
[ "$dirty" -gt 0 ] || hc_fail "the writeback half holds no dirty data"
hc_log "fio wrote and verified 4 MiB on each of the $n at once; $dirty bytes dirty on the writeback half; $(io_stats_line set)"

for ((i = 1; i < n; i += 2)); do
	hc_write "$(io_sysdir "${devs[$i]}")/detach" 1
done
for ((i = 1; i < n; i += 2)); do
	hc_wait wb_detached "${devs[$i]}"
done
for ((i = 0; i < n; i += 2)); do
	io_attached "${devs[$i]}" || hc_fail "${devs[$i]} is no longer attached after the others' detach"
done
verify_all "after detaching half" --verify_only
hc_log "detached the $((n / 2)) writeback devices (dirty data written back); all $n verify"

# stop_detached: stop the detached half, which no set stop reaches.
stop_detached() {
	local i
	for ((i = 1; i < n; i += 2)); do
		hc_write "$(io_sysdir "$(io_hcache_of "${bdevs[$i]}")")/stop" 1
	done
}

# Stop: the detached devices, then the set (its attached devices with it).
stop_detached
io_stop
hc_write /sys/fs/hcache/register "$IO_CDEV"
hc_wait test -d "$IO_SET"
for ((i = 0; i < n; i++)); do
	hc_write /sys/fs/hcache/register "${bdevs[$i]}"
done
for ((i = 0; i < n; i++)); do
	hc_wait io_hcache_of "${bdevs[$i]}" >/dev/null
	dev=$(io_hcache_of "${bdevs[$i]}")
	if ((i % 2)); then
		wb_detached "$dev" || hc_fail "${bdevs[$i]}, detached before the stop, came back attached as $dev"
	else
		hc_wait io_attached "$dev"
	fi
done
attached=$(ls -d "$IO_SET"/bdev* | wc -l)
[ "$attached" = $((n / 2)) ] || hc_fail "the set lists $attached backing devices after the restart, not $((n / 2))"
verify_all "after a stop and a new registration" --verify_only
hc_log "after a stop and a new registration: $((n / 2)) attached, $((n / 2)) on their own, all $n verify"
stop_detached
io_teardown
