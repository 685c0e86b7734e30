# The passthrough path makes progress under memory pressure: with swap on
# /dev/hcache0 and a guest of 384 MiB, a process that dirties 640 MiB is
# swapped out and back in through hcache without deadlock, and its data
# comes back intact. The backing device is a virtio disk: a memory-backed
# one (null_blk, brd) would need memory to store what is swapped out.
# timeout: 600
# memory: 384M
# drives: swapdisk:1G

dev=$(hc_drive swapdisk)
"$(hc_tool make-hcache)" -B "$dev" >/dev/null
hc_load
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
mkswap -q /dev/hcache0
swapon /dev/hcache0

python3 - <<'PY' || hc_fail "the memory hog failed"
import hashlib
chunks = []
for i in range(640):
    chunks.append(bytes([i % 251]) * (1 << 20))
for i, c in enumerate(chunks):
    if c[0] != i % 251 or c[-1] != i % 251:
        raise SystemExit("chunk %d corrupted" % i)
print("640 MiB written and read back")
PY
used=$(awk '/^\/dev\/hcache0/ { print $4 }' /proc/swaps)
hc_log "swap used at the end: ${used:-?} KiB; swapped out in all: $(awk '/pswpout/ { print $2 }' /proc/vmstat) pages"
[ "$(awk '/pswpout/ { print $2 }' /proc/vmstat)" -gt 10000 ] ||
	hc_fail "too little was swapped out to test anything"
swapoff /dev/hcache0
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0
hc_unload
