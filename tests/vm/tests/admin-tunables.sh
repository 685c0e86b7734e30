# Settings made with `hcache set` survive a stop and register, and a
# reboot: writeback_percent, sequential_cutoff, admission_policy and
# stop_when_cache_set_failed in the backing superblock, io_error_limit and
# io_error_halflife in the cache superblock (HC_FEAT_COMPAT_TUNABLES), as
# cache_mode, cache_replacement_policy and discard already did. `hcache
# show` lists, in TUNED, what differs from the defaults.
#
# Boot 1 formats two virtio disks (they keep what the guest wrote across a
# reset), sets every one of them to a value that is not its default, checks
# sysfs, TUNED and the superblocks (hcache-super-show), stops the set and
# registers it again, checks again, changes two of them once more and ends
# with a hard reset (sysrq-b): each setting was written with a flush and
# FUA when it was made. Boot 2 registers and must find the last values;
# a setting put back to its default leaves TUNED. Before the superblock
# kept them, every value read its default after the register.
# timeout: 120
# drives: cache:128M backing:128M
# boots: 2

. "$HC_ROOT/tests/vm/io-lib.sh"

hc=$(hc_tool hcache)
cdev=$(hc_drive cache)
bdev=$(hc_drive backing)
io_devices "$cdev" "$bdev"
if [ "$HC_BOOT" = 1 ]; then
	"$(hc_tool make-hcache)" -C "$IO_CDEV" -B "$IO_BDEV" --block 512 >/dev/null ||
		hc_fail "make-hcache -C $IO_CDEV -B $IO_BDEV failed"
fi
IO_UUID=$("$(hc_tool hcache-super-show)" "$IO_CDEV" | awk '$1 == "cset.uuid" { print $2 }')
IO_SET=/sys/fs/hcache/$IO_UUID
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
IO_DBG=/sys/kernel/debug/hcache/$IO_UUID
io_register
sys=$(io_sysdir hcache0)

# check WHEN KNOB=VALUE...: each sysfs file reads VALUE (a choice: selected).
check() {
	local when=$1 kv knob want dir got
	shift
	for kv in "$@"; do
		knob=${kv%%=*} want=${kv#*=}
		case $knob in
		io_error_*) dir=$IO_SET ;;
		*) dir=$sys ;;
		esac
		got=$(cat "$dir/$knob")
		case $got in *"["*) got=$(sed 's/.*\[\(.*\)\].*/\1/' <<<"$got") ;; esac
		[ "$got" = "$want" ] || hc_fail "$when: $knob reads '$got', want '$want'"
	done
}

# tuned ROW WANT: hcache show's TUNED for hcache0's backing device (ROW
# backing) or the set (ROW cache), "" for none.
tuned() {
	local got
	got=$("$hc" show --json -o NAME,TYPE,TUNED | python3 -c '
import json, sys
rows = []
def walk(r):
    for x in r:
        rows.append(x)
        walk(x.get("children", []))
walk(json.load(sys.stdin)["hcache"])
print([r["tuned"] or "" for r in rows if r["type"] == sys.argv[1]][0])
' "$1") || hc_fail "hcache show --json failed"
	[ "$got" = "$2" ] || hc_fail "boot $HC_BOOT: TUNED of the $1 row is '$got', want '$2'"
}

# sb DEV FIELD WANT: the superblock keeps FIELD as WANT.
sb() {
	local got
	got=$("$(hc_tool hcache-super-show)" "$1" | awk -v f="$2" '$1 == f { print $2 }')
	[ "$got" = "$3" ] || hc_fail "boot $HC_BOOT: $1's superblock has $2 '$got', want '$3'"
}

if [ "$HC_BOOT" = 1 ]; then
	check "before any setting" writeback_percent=10 sequential_cutoff=4194304 \
		admission_policy=second_access stop_when_cache_set_failed=auto \
		io_error_limit=64 io_error_halflife=60
	tuned backing ""
	tuned cache ""
	"$hc" set hcache0 writeback_percent=25 sequential_cutoff=1M \
		admission_policy=first_access stop_when_cache_set_failed=always ||
		hc_fail "hcache set on hcache0 failed"
	"$hc" set "$IO_UUID" io_error_limit=9 io_error_halflife=3600 ||
		hc_fail "hcache set on the set failed"
	want=(writeback_percent=25 sequential_cutoff=1048576 admission_policy=first_access
	      stop_when_cache_set_failed=always io_error_limit=9 io_error_halflife=3600)
	check "after hcache set" "${want[@]}"
	tuned backing "writeback_percent=25,sequential_cutoff=1048576,admission_policy=first_access,stop_when_cache_set_failed=always"
	tuned cache "io_error_limit=9,io_error_halflife=3600"
	sb "$IO_BDEV" backing.writeback_percent 25
	sb "$IO_BDEV" backing.sequential_cutoff 1048576
	sb "$IO_BDEV" backing.admission_policy 0
	sb "$IO_BDEV" backing.stop_when_failed 1
	sb "$IO_CDEV" cache.io_error_limit 9
	sb "$IO_CDEV" cache.io_error_halflife 3600
	sb "$IO_BDEV" sb.compat 0x0000000000000001

	io_restart
	sys=$(io_sysdir hcache0)
	check "after a stop and register" "${want[@]}"
	hc_log "boot 1: six settings made, kept over a stop and register"

	# Back to the default: kept as a setting, no longer listed in TUNED.
	"$hc" set hcache0 writeback_percent=10 sequential_cutoff=0 ||
		hc_fail "hcache set failed"
	"$hc" set "$IO_UUID" io_error_limit=12 || hc_fail "hcache set failed"
	touch "$HC_RESULTS/boot-1.ok"
	sync "$HC_RESULTS/boot-1.ok"
	echo b >/proc/sysrq-trigger
	sleep 30
fi

check "boot 2, after a hard reset" writeback_percent=10 sequential_cutoff=0 \
	admission_policy=first_access stop_when_cache_set_failed=always \
	io_error_limit=12 io_error_halflife=3600
tuned backing "sequential_cutoff=0,admission_policy=first_access,stop_when_cache_set_failed=always"
tuned cache "io_error_limit=12,io_error_halflife=3600"
hc_log "boot 2: the settings of boot 1 after a hard reset; the default put back is not listed"
io_check
