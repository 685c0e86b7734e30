#!/bin/bash
# probe-hcache prints udev properties for hcache devices and nothing for
# anything else (ext4, zeroes, a corrupt superblock, a tiny file).
set -eu
. tests/tools/lib/common.bash

image c.img 100M
image b.img 100M
run 0 "$MAKE_HCACHE" -C c.img -B b.img --label "my cache"
dev=$(field c.img dev_uuid)
set_uuid=$(field c.img cset_uuid)

run 0 "$PROBE" -o udev c.img
cat > want <<EOT
ID_FS_TYPE=hcache
ID_FS_UUID=$dev
ID_FS_UUID_ENC=$dev
ID_FS_LABEL=my_cache
ID_FS_LABEL_ENC=my\x20cache
ID_HCACHE_KIND=cache
ID_HCACHE_SET_UUID=$set_uuid
EOT
diff -u want "$tmp/out" || fail "udev output differs"
run 0 "$PROBE" -o udev b.img
out_has "ID_FS_UUID=$(field b.img dev_uuid)"
out_has "ID_HCACHE_KIND=backing"

run 0 "$PROBE" b.img
out_has "b.img: UUID=\"$(field b.img dev_uuid)\" LABEL=\"my cache\" TYPE=\"hcache\""

image fs.img 32M
mkfs.ext4 -q -F fs.img
image zero.img 1M
image tiny.img 100
cp c.img bad.img
printf 'X' | dd of=bad.img bs=1 seek=5000 conv=notrunc status=none
for f in fs.img zero.img tiny.img bad.img; do
	for o in "-o udev" ""; do
		run 0 "$PROBE" $o $f
		[ ! -s "$tmp/out" ] || fail "probe-hcache $o printed for $f"
	done
done

run 2 "$PROBE" -o udev missing.img
err_has "missing.img"
run 1 "$PROBE" -o json c.img
echo PASS
