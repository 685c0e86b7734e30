# A backing device waits for its cache set when its superblock says clean
# or dirty. running=1 starts a clean one, persisting state stale and a new
# invalidation generation; a dirty one refuses 1 and takes "force" with a
# critical warning. pendings_cleanup drops devices still waiting.
# timeout: 180
# expect-log: hcache: .*dirty data in the cache is LOST
# expect-log: hcache: .*write "force" to running

sbedit="python3 $HC_ROOT/tests/vm/sbedit.py"
show="$(hc_tool hcache-super-show)"
dev=$(hc_nullb back 32)
"$(hc_tool make-hcache)" -B "$dev" >/dev/null
name=$(basename "$(readlink -f "$dev")")
sys=/sys/class/block/$name/hcache
set_uuid=0123456789abcdef0123456789abcdef
field() { $show "$dev" | awk -v f="$1" '$1 == f { print $2 }'; }
hc_load

hc_log "clean: waits, then runs stale on request"
$sbedit "$dev" flags=$((1 << 4)) set_uuid=$set_uuid
gen0=$(field backing.inval_gen)
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -d "$sys"
[ "$(cat "$sys/state")" = clean ] || hc_fail "state $(cat "$sys/state")"
[ "$(cat "$sys/running")" = 0 ] || hc_fail "running without its cache"
[ ! -e /dev/hcache0 ] || hc_fail "/dev/hcache0 exists for a waiting device"
hc_write "$sys/running" 1
hc_wait test -b /dev/hcache0
[ "$(cat "$sys/state")" = stale ] || hc_fail "state $(cat "$sys/state") after running"
[ "$(field backing.state)" = stale ] || hc_fail "superblock state $(field backing.state)"
[ "$(field backing.inval_gen)" = $((gen0 + 1)) ] || hc_fail "inval_gen $(field backing.inval_gen), was $gen0"
hc_write "$sys/stop" 1
hc_wait test ! -e /dev/hcache0

hc_log "stale: runs at once"
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -b /dev/hcache0
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0

hc_log "dirty: refuses 1, takes force"
$sbedit "$dev" flags=$((2 << 4))
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -d "$sys"
[ "$(cat "$sys/state")" = dirty ] || hc_fail "state $(cat "$sys/state")"
hc_write_fails "Device or resource busy" "$sys/running" 1
[ ! -e /dev/hcache0 ] || hc_fail "a dirty device ran without force"
hc_write "$sys/running" force
hc_wait test -b /dev/hcache0
hc_kmsg_has "dirty data in the cache is LOST"
[ "$(field backing.state)" = stale ] || hc_fail "superblock state $(field backing.state)"
hc_write /sys/block/hcache0/hcache/stop 1
hc_wait test ! -e /dev/hcache0

hc_log "pendings_cleanup"
$sbedit "$dev" flags=$((1 << 4))
hc_write /sys/fs/hcache/register "$dev"
hc_wait test -d "$sys"
hc_write /sys/fs/hcache/pendings_cleanup 1
hc_wait test ! -e "$sys"
hc_unload
