#!/bin/bash
# extract-kernel.sh BZIMAGE OUT: write to OUT the uncompressed kernel
# (vmlinux, an ELF file) that BZIMAGE carries, for QEMU to boot directly
# through its PVH entry point. Under TCG a guest spends 2-4 s unpacking an
# xz or zstd bzImage before the kernel's first line; every VM test boots at
# least once, so the harness unpacks each kernel once, here, instead.
#
# A bzImage is a small decompressor followed by the compressed kernel: find
# the first xz, zstd or gzip stream, unpack it (the decompressors stop at
# its end and complain about what follows, which is not an error here), and
# keep the result only if it is an ELF file with a PVH entry note (Xen
# ELF note 18, XEN_ELFNOTE_PHYS32_ENTRY; CONFIG_PVH). Exits 1 otherwise:
# run-test.sh then boots BZIMAGE as before.
set -uo pipefail

image=$1
out=$2
tmp=$out.tmp.$$
trap 'rm -f "$tmp"' EXIT

# offset MAGIC: the byte offset of the first MAGIC (printf format) in image.
offset() {
	LC_ALL=C grep -a -b -o -m 1 -P "$1" "$image" 2>/dev/null | head -n 1 | cut -d: -f1
}

found=
for kind in xz zstd gzip; do
	case $kind in
	xz) off=$(offset '\xfd7zXZ\x00'); unpack=(xz -dc) ;;
	zstd) off=$(offset '\x28\xb5\x2f\xfd'); unpack=(zstd -qdc) ;;
	gzip) off=$(offset '\x1f\x8b\x08'); unpack=(gzip -dc) ;;
	esac
	[ -n "$off" ] || continue
	tail -c +$((off + 1)) "$image" | "${unpack[@]}" >"$tmp" 2>/dev/null
	if [ "$(head -c 4 "$tmp" | od -An -tx1 | tr -d ' ')" = 7f454c46 ]; then
		found=$kind
		break
	fi
done
if [ -z "$found" ]; then
	echo "extract-kernel.sh: no xz, zstd or gzip kernel found in $image" >&2
	exit 1
fi
if ! readelf -n "$tmp" 2>/dev/null | grep -q -E '^[[:space:]]+Xen[[:space:]]+0x[0-9a-f]+[[:space:]]+(Unknown note type: \(0x00000012\)|PHYS32_ENTRY)'; then
	echo "extract-kernel.sh: the kernel in $image has no PVH entry point (CONFIG_PVH)" >&2
	exit 1
fi
mv "$tmp" "$out"
