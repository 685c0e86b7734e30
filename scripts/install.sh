#!/bin/sh
# install.sh install|uninstall DESTDIR SBINDIR MANDIR KDIR...: put hcache.ko
# (for each kernel in KDIR...) under /lib/modules/<release>/updates, the
# tools in SBINDIR, the man pages in MANDIR/man7 and man8, the udev rules in
# /lib/udev/rules.d, hcache's bash completion in
# /usr/share/bash-completion/completions, the initramfs-tools hook and
# boot script in /usr/share/initramfs-tools and the dracut module (with that
# same boot script) in /usr/lib/dracut/modules.d/90hcache, or take them
# away. With an empty DESTDIR it also runs depmod, and tells a running udevd
# to reload its rules.
set -eu
action=$1 destdir=$2 sbindir=$3 mandir=$4
shift 4
top=$(cd "$(dirname "$0")/.." && pwd)
tools=$(make -s --no-print-directory -C "$top/tools" print-tools 2>/dev/null || true)

# The Debian packages (make deb) and this script must not both install
# hcache: two hcache.ko files (updates/ and updates/dkms/) would leave the
# choice to depmod's order. On the running system (no DESTDIR) this refuses
# while either package is installed; it leaves a manifest in
# /var/lib/hcache, whose presence the packages refuse in turn. The package
# build itself runs this with HC_PACKAGING=1, into its own DESTDIR.
manifest=/var/lib/hcache/make-install
if [ -z "$destdir" ] && [ "${HC_PACKAGING:-0}" != 1 ]; then
	for pkg in hcache-tools hcache-dkms; do
		if dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null | grep -q ' installed$'; then
			echo "make $action: the Debian package $pkg is installed, and it owns hcache's files; remove the packages first (apt remove hcache-tools hcache-dkms), or keep using them instead of make $action" >&2
			exit 1
		fi
	done
fi

# put MODE SRC DST / drop DST: one file in or out, under DESTDIR.
put() {
	case $action in
	install) install -D -m "$1" "$2" "$destdir$3" ;;
	uninstall) rm -f "$destdir$3" ;;
	esac
}

for kdir in "$@"; do
	kver=$("$top/scripts/kernel-release.sh" "$kdir")
	put 0644 "$top/build/$kver/hcache/hcache.ko" "/lib/modules/$kver/updates/hcache.ko"
	[ -z "$destdir" ] && depmod -a "$kver"
done
for t in $tools; do
	put 0755 "$top/tools/$t" "$sbindir/$t"
done
for m in "$top"/man/*.[78]; do
	[ -e "$m" ] || continue
	put 0644 "$m" "$mandir/man${m##*.}/$(basename "$m")"
done

put 0644 "$top/udev/69-hcache.rules" /lib/udev/rules.d/69-hcache.rules
put 0644 "$top/completion/hcache" /usr/share/bash-completion/completions/hcache
put 0755 "$top/initramfs/hooks/hcache" /usr/share/initramfs-tools/hooks/hcache
put 0755 "$top/initramfs/scripts/local-block/hcache" \
	/usr/share/initramfs-tools/scripts/local-block/hcache
# dracut's module carries its own copy of the boot script: a system with
# dracut alone needs nothing from /usr/share/initramfs-tools.
dracut=/usr/lib/dracut/modules.d/90hcache
put 0755 "$top/dracut/90hcache/module-setup.sh" "$dracut/module-setup.sh"
put 0755 "$top/dracut/90hcache/hcache-wait.sh" "$dracut/hcache-wait.sh"
put 0755 "$top/initramfs/scripts/local-block/hcache" "$dracut/wait-for-cache"
# The directory is ours alone; kept if someone put more in it.
if [ "$action" = uninstall ]; then
	rmdir "$destdir$dracut" 2>/dev/null || true
fi
if [ -z "$destdir" ] && [ "${HC_PACKAGING:-0}" != 1 ]; then
	case $action in
	install)
		mkdir -p "$(dirname "$manifest")"
		printf '# hcache installed by make install from %s; make uninstall there removes it\n' "$top" >"$manifest"
		;;
	uninstall)
		rm -f "$manifest"
		rmdir "$(dirname "$manifest")" 2>/dev/null || true
		;;
	esac
fi
if [ -z "$destdir" ] && udevadm control --ping >/dev/null 2>&1; then
	udevadm control --reload
fi
# The initramfs is not rebuilt here: run update-initramfs -u (or dracut
# --force) to bring the module, rules and tools into it
# (Documentation/hcache/boot.rst).
