#!/bin/bash
# hcache-register writes the device's real path to register_quiet (with
# --async to register_async), and fails clearly for non-hcache devices and a missing module. HCACHE_SYSFS
# stands in for /sys/fs/hcache.
set -eu
. tests/tools/lib/common.bash

image c.img 100M
run 0 "$MAKE_HCACHE" -C c.img
mkdir sysfs
: > sysfs/register_quiet
: > sysfs/register_async
ln -s c.img link.img

HCACHE_SYSFS=$tmp/sysfs run 0 "$REGISTER" link.img
[ "$(cat sysfs/register_quiet)" = "$tmp/c.img" ] ||
	fail "wrote '$(cat sysfs/register_quiet)', want $tmp/c.img"
[ ! -s sysfs/register_async ] || fail "wrote to register_async without --async"
: > sysfs/register_quiet
HCACHE_SYSFS=$tmp/sysfs run 0 "$REGISTER" --async link.img
[ "$(cat sysfs/register_async)" = "$tmp/c.img" ] ||
	fail "--async wrote '$(cat sysfs/register_async)', want $tmp/c.img"
[ ! -s sysfs/register_quiet ] || fail "--async wrote to register_quiet"
HCACHE_SYSFS=$tmp/sysfs run 0 "$REGISTER" -a c.img

HCACHE_SYSFS=$tmp/nowhere run 4 "$REGISTER" c.img
err_has "hcache module not loaded"

image zero.img 1M
HCACHE_SYSFS=$tmp/sysfs run 3 "$REGISTER" zero.img
err_has "zero.img: not an hcache device: bad magic"
image tiny.img 100
HCACHE_SYSFS=$tmp/sysfs run 3 "$REGISTER" tiny.img
err_has "tiny.img: not an hcache device: smaller than 8192 bytes"
HCACHE_SYSFS=$tmp/sysfs run 2 "$REGISTER" missing.img
run 1 "$REGISTER"
echo PASS
