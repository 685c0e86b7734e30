# writeback_idle_seconds: writeback runs at full speed only once the
# backing device has had no request for that long, and not before.
#
# 1. The module loads with its default (HC_WB_IDLE_SECONDS, which the other
#    tests set to 1, unset): the module parameter and the device's file
#    read 30; both refuse 0, 3601 and abc and keep their value.
# 2. 2 MiB written in writeback mode (writeback_delay 0), 4 KiB blocks
#    4 KiB apart, below the target of a 128 MiB cache; then 6 s with no
#    request. writeback_rate_debug's idle stays 0 and writeback keeps to
#    its rate (it starts at the minimum, 4 KiB a second, and never cuts a
#    run, so the blocks must not touch): at least 1.75 MiB stays dirty.
#    With the full-speed path taken after 1 s, as before the tunable, all
#    of it is written back within about 2 s.
# 3. writeback_idle_seconds 1: idle reads 1 and dirty_data reaches 0 within
#    15 s.
# 4. The module parameter set to 7 is what the device reads once it
#    registers again (a restart of the set).
# timeout: 120

unset HC_WB_IDLE_SECONDS
. "$HC_ROOT/tests/vm/io-lib.sh"

MiB=$((1 << 20))
param=/sys/module/hcache/parameters/writeback_idle_seconds
io_setup 128 256
dev=hcache0
sys=$(io_sysdir $dev)

# refused FILE VALUE: the write fails and FILE keeps its value.
refused() {
	local before
	before=$(cat "$1")
	if { printf '%s\n' "$2" >"$1"; } 2>/dev/null; then
		hc_fail "writing '$2' to $1 succeeded"
	fi
	[ "$(cat "$1")" = "$before" ] || hc_fail "$1 changed from '$before' to '$(cat "$1")' on a refused write of '$2'"
}

hc_log "part 1: the defaults"
[ "$(cat $param)" = 30 ] || hc_fail "the module parameter reads $(cat $param), not 30"
[ "$(cat "$sys/writeback_idle_seconds")" = 30 ] || hc_fail "$dev's writeback_idle_seconds reads $(cat "$sys/writeback_idle_seconds"), not 30"
for v in 0 3601 abc; do
	refused $param $v
	refused "$sys/writeback_idle_seconds" $v
done

hc_log "part 2: 6 s without a request, below the target"
io_mode $dev writeback
io_cutoff $dev 0
wb_set $dev writeback_delay 0
# 4 KiB blocks with a 4 KiB hole after each: 512 runs of one block, so
# that writeback's pacing, which never cuts a run, cannot take more than a
# few blocks a second at the minimum rate.
fio --name=gaps --filename=/dev/$dev --rw=write:4k --bs=4k --size=$((4 * MiB)) \
	--ioengine=psync --direct=1 --output=/tmp/gaps.fio >/dev/null 2>&1 ||
	hc_fail "fio failed: $(tail -5 /tmp/gaps.fio)"
d0=$(wb_dirty $dev)
[ "$d0" = $((2 * MiB)) ] || hc_fail "dirty_data $d0 after 2 MiB of writeback-mode writes"
read -r _ _ target _ <<<"$(wb_rate_debug $dev)"
[ "$target" -gt $((2 * MiB)) ] || hc_fail "the target ($target bytes) is not above the 2 MiB written"
sleep 6
read -r rate dirty _ _ _ _ idle _ <<<"$(wb_rate_debug $dev)"
d1=$(wb_dirty $dev)
hc_log "after 6 s: dirty_data $d1 (was $d0), rate $rate bytes/s, idle $idle"
[ "$idle" = 0 ] || hc_fail "writeback_rate_debug says idle 6 s after the last request, with writeback_idle_seconds 30"
[ "$d1" -ge $((7 * MiB / 4)) ] ||
	hc_fail "writeback wrote back $((d0 - d1)) of $d0 dirty bytes in 6 s without a request, with writeback_idle_seconds 30 (full speed before the device was idle)"

hc_log "part 3: writeback_idle_seconds 1"
wb_set $dev writeback_idle_seconds 1
wb_wait_clean $dev 15 "with writeback_idle_seconds 1"
hc_log "clean $WB_SECS s after writeback_idle_seconds became 1"

hc_log "part 4: the parameter is a registering device's default"
hc_write $param 7
io_restart
[ "$(cat "$sys/writeback_idle_seconds")" = 7 ] || hc_fail "$dev registered after the parameter became 7 reads writeback_idle_seconds $(cat "$sys/writeback_idle_seconds")"
io_check
