#!/bin/sh
# install-deps.sh: install everything hcache's build and tests need, from
# Debian's archive, non-interactively and idempotently.
#
# Kernels: Debian 12's 6.1 (the linux-image-amd64 / linux-headers-amd64
# metapackages) and 6.12 (the newest linux-image-6.12.*+deb12-amd64-unsigned
# that has matching headers). Versions are looked up with apt, never
# hard-coded; a 6.12 kernel already installed is kept.
set -eu

export DEBIAN_FRONTEND=noninteractive
APT_OPTS="-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold"

PKGS="build-essential kmod cpio busybox-static qemu-system-x86 qemu-utils
	libblkid-dev libsmartcols-dev uuid-dev pkg-config fio udev e2fsprogs xfsprogs sparse
	clang libclang-rt-14-dev valgrind dmsetup util-linux fdisk man-db groff
	linux-source-6.12 dkms xz-utils python3 gnuplot-nox initramfs-tools
	bcache-tools procps debhelper dh-dkms lintian dracut-core"

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: must run as root (apt-get install)" >&2
	exit 1
fi

missing() {
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
			grep -q '^install ok installed$' || echo "$p"
	done
}

updated=0
apt_update() {
	[ $updated = 1 ] && return 0
	apt-get update -q >/dev/null
	updated=1
}

# The newest installed 6.12 Debian kernel with headers, if any.
installed_612() {
	for d in /usr/src/linux-headers-6.12.*+deb12-amd64; do
		[ -d "$d" ] || continue
		v=${d#/usr/src/linux-headers-}
		[ -f "/boot/vmlinuz-$v" ] && echo "$v"
	done | sort -V | tail -n 1
}

pick_612() {
	apt_update
	apt-cache pkgnames linux-image-6.12. |
		grep -E '^linux-image-6\.12\.[0-9]+\+deb12-amd64-unsigned$' |
		sed -e 's/^linux-image-//' -e 's/-unsigned$//' | sort -rV |
		while read -r v; do
			if apt-cache show "linux-headers-$v" >/dev/null 2>&1; then
				echo "$v"
				break
			fi
		done
}

want="$PKGS linux-image-amd64 linux-headers-amd64"
v612=$(installed_612)
if [ -z "$v612" ]; then
	v612=$(pick_612)
	if [ -z "$v612" ]; then
		echo "install-deps: no linux-image-6.12.*+deb12-amd64-unsigned with headers in apt" >&2
		exit 1
	fi
	want="$want linux-image-$v612-unsigned linux-headers-$v612"
fi

# shellcheck disable=SC2086
todo=$(missing $want)
if [ -n "$todo" ]; then
	apt_update
	echo "install-deps: installing" $todo
	# shellcheck disable=SC2086
	apt-get install $APT_OPTS --no-install-recommends $todo
fi
echo "install-deps: all dependencies present"
