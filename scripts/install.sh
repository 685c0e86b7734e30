#!/bin/sh
# install.sh install|uninstall DESTDIR SBINDIR MANDIR KDIR...: put hcache.ko
# (for each kernel in KDIR...) under /lib/modules/<release>/updates, the
# tools in SBINDIR and the man pages in MANDIR/man8, or take them away.
set -eu
action=$1 destdir=$2 sbindir=$3 mandir=$4
shift 4
top=$(cd "$(dirname "$0")/.." && pwd)
tools=$(make -s -C "$top/tools" print-tools 2>/dev/null || true)

for kdir in "$@"; do
	kver=$("$top/scripts/kernel-release.sh" "$kdir")
	dst=$destdir/lib/modules/$kver/updates/hcache.ko
	case $action in
	install) install -D -m 0644 "$top/build/$kver/hcache/hcache.ko" "$dst" ;;
	uninstall) rm -f "$dst" ;;
	esac
	[ -z "$destdir" ] && depmod -a "$kver"
done
for t in $tools; do
	case $action in
	install) install -D -m 0755 "$top/tools/$t" "$destdir$sbindir/$t" ;;
	uninstall) rm -f "$destdir$sbindir/$t" ;;
	esac
done
for m in "$top"/man/*.8; do
	[ -e "$m" ] || continue
	case $action in
	install) install -D -m 0644 "$m" "$destdir$mandir/man8/$(basename "$m")" ;;
	uninstall) rm -f "$destdir$mandir/man8/$(basename "$m")" ;;
	esac
done
