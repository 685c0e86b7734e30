#!/bin/bash
# hcache show's data checksum columns, from a fake /sys/fs/hcache
# (HCACHE_SYSFS): a set with crc32c, 3 csum_errors (of 5 errors) and two
# lines in csum_bad_dirty; a set with none, 0 and an empty list; a set of
# a module before data checksums, without the three files, whose cells
# stay empty (null in JSON) while the rest of its line is still shown.
# CHECKSUM and CSUM-ERRORS are default columns, BAD-DIRTY (the
# csum_bad_dirty lines counted) is not; in JSON the counts are numbers.
set -eu
. tests/tools/lib/common.bash

crc=aaaaaaaa-1111-2222-3333-444444444444
plain=bbbbbbbb-1111-2222-3333-444444444444
old=cccccccc-1111-2222-3333-444444444444
export HCACHE_SYSFS=$tmp/sysfs
for s in $crc $plain $old; do
	mkdir -p "sysfs/$s"
	echo 0 >"sysfs/$s/errors"
done
echo 5 >"sysfs/$crc/errors"
echo crc32c >"sysfs/$crc/checksum"
echo 3 >"sysfs/$crc/csum_errors"
printf '2048 0 4096\n10240 1 80\n' >"sysfs/$crc/csum_bad_dirty"
echo none >"sysfs/$plain/checksum"
echo 0 >"sysfs/$plain/csum_errors"
: >"sysfs/$plain/csum_bad_dirty"

# JSON: every column; the sets by name (the host's own devices, if any,
# may be listed too).
run 0 "$HCACHE" show --json
python3 - "$tmp/out" "$crc" "$plain" "$old" <<'EOF' >"$tmp/err" 2>&1 || fail "show --json"
import json, sys
sets = {o["name"]: o for o in json.load(open(sys.argv[1]))["hcache"]}
want = {
    sys.argv[2]: {"errors": 5, "checksum": "crc32c", "csum_errors": 3, "bad_dirty": 2},
    sys.argv[3]: {"errors": 0, "checksum": "none", "csum_errors": 0, "bad_dirty": 0},
    sys.argv[4]: {"errors": 0, "checksum": None, "csum_errors": None, "bad_dirty": None},
}
for name, keys in want.items():
    for k, v in keys.items():
        got = sets[name][k]
        # 3 must be the number 3, not the string "3".
        if got != v or type(got) is not type(v):
            sys.exit("%s: %s is %r, want %r" % (name, k, got, v))
    print("ok: %s: %s" % (name, keys))
EOF
cat "$tmp/err"

# The table's default columns: CHECKSUM and CSUM-ERRORS after ERRORS, not
# BAD-DIRTY.
run 0 "$HCACHE" show
head -n 1 "$tmp/out" | grep -q ' ERRORS  *CHECKSUM  *CSUM-ERRORS  *LABEL ' ||
	fail "show's header lacks 'ERRORS CHECKSUM CSUM-ERRORS LABEL'"
head -n 1 "$tmp/out" | grep -q 'BAD-DIRTY' && fail "BAD-DIRTY shown by default"
grep -q "^$crc  *cache  *running  *0B  *5  *crc32c  *3 *\$" "$tmp/out" ||
	fail "show: $crc's line"
grep -q "^$plain  *cache  *running  *0B  *0  *none  *0 *\$" "$tmp/out" ||
	fail "show: $plain's line"
grep -q "^$old  *cache  *running  *0B  *0 *\$" "$tmp/out" ||
	fail "show: $old's line (a module without checksums)"
echo "ok: show's default table"

# -o picks them, in any case; the old set's cells are empty.
run 0 "$HCACHE" show -o name,errors,checksum,csum-errors,bad-dirty
sed 's/  */ /g; s/ $//' "$tmp/out" | grep -E "^(NAME|$crc|$plain|$old) " >table
cat >want <<EOF
NAME ERRORS CHECKSUM CSUM-ERRORS BAD-DIRTY
$crc 5 crc32c 3 2
$plain 0 none 0 0
$old 0
EOF
diff -u want table >"$tmp/err" || fail "show -o: the table differs"
echo "ok: show -o NAME,ERRORS,CHECKSUM,CSUM-ERRORS,BAD-DIRTY"

# The most the kernel lists: 64 lines.
seq 1 64 | sed 's/.*/& 0 &/' >"sysfs/$crc/csum_bad_dirty"
run 0 "$HCACHE" show -o NAME,BAD-DIRTY
grep -q "^$crc  *64\$" "$tmp/out" || fail "64 bad dirty chunks not counted 64"
echo "ok: 64 lines of csum_bad_dirty"

run 0 "$HCACHE" show --help
for c in CHECKSUM CSUM-ERRORS BAD-DIRTY; do
	grep -q "^  $c " "$tmp/out" || fail "show --help lacks $c"
done
echo PASS
