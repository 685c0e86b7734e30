#!/bin/bash
# mkinitramfs.sh KVER OUT: build the guest's tiny initramfs for kernel KVER:
# static busybox, our /init, and the modules needed to mount the host's root
# over virtio-9p with an overlay on top (virtio_pci, 9pnet_virtio, 9p,
# overlay and their dependencies, in load order, decompressed because
# busybox insmod cannot read .ko.xz). Built-in ones need nothing. With
# HC_MODULES_ROOT=DIR, KVER's modules are in DIR/lib/modules/KVER.
set -euo pipefail

kver=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

mkdir -p "$stage"/{bin,dev,proc,sys,host,rw,newroot,lib/mods}
cp /bin/busybox "$stage/bin/busybox"
cp "$here/init" "$stage/init"
chmod +x "$stage/init"

: >"$stage/lib/mods/order"
# virtio_rng (QEMU's -device virtio-rng-pci) seeds the guest's random
# number generator at once; a kernel without it (make check-debug's)
# gathers jitter entropy instead, a second or so later.
for m in virtio_pci virtio_blk virtio_rng 9pnet_virtio 9p overlay; do
	modprobe ${HC_MODULES_ROOT:+-d "$HC_MODULES_ROOT"} -S "$kver" \
		--show-depends "$m" 2>/dev/null ||
		[ "$m" = virtio_rng ] ||
		{ echo "mkinitramfs: no module $m for $kver" >&2; exit 1; }
done | awk '$1 == "insmod" { print $2 }' | awk '!seen[$0]++' | while read -r path; do
	name=$(basename "$path")
	case $name in
	*.ko.xz) xz -dc "$path" >"$stage/lib/mods/${name%.xz}"; name=${name%.xz} ;;
	*.ko.zst) zstd -qdc "$path" >"$stage/lib/mods/${name%.zst}"; name=${name%.zst} ;;
	*.ko) cp "$path" "$stage/lib/mods/$name" ;;
	*) echo "mkinitramfs: unexpected module file $path" >&2; exit 1 ;;
	esac
	echo "$name" >>"$stage/lib/mods/order"
done

(cd "$stage" && find . | cpio -o -H newc --quiet) | gzip -1 >"$out.tmp"
mv "$out.tmp" "$out"
