#!/bin/sh
# build-debs.sh KVER...: what vm/pkg-deb installs, built on the host by
# tests/run (its step vm/build-debs) before the guests boot.
#   build/deb/test/hcache-{dkms,tools}_VERSION_*.deb   make deb's packages at
#       0.1~test1 and 0.1~test2, each checked by lintian
#   build/deb/test/dkms-KVER/hcache-VERSION.dkms.tar.gz   DKMS's build of each
#       package's module source for KVER, as a binaries-only archive
# DKMS builds the module from the source the package installs, as its
# postinst would, but natively, into a DKMS tree of its own here: under TCG
# one build takes more than 15 minutes. The guest puts the archive where
# the package's postinst looks for one (/usr/share/hcache-dkms), so its
# dkms install finds the module built.
set -eu

top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/deb/test
versions="0.1~test1 0.1~test2"
rm -rf "$out"
mkdir -p "$out"
for v in $versions; do
	"$top/scripts/make-deb.sh" "$v" "$out"
done
for k in "$@"; do
	mkdir -p "$out/dkms-$k"
	for v in $versions; do
		work=$(mktemp -d)
		dpkg-deb -x "$out/hcache-dkms_${v}_all.deb" "$work/root"
		mkdir "$work/dkms"
		trees="--sourcetree $work/root/usr/src --dkmstree $work/dkms"
		# shellcheck disable=SC2086 # $trees is two options
		dkms add -m hcache -v "$v" $trees >/dev/null
		echo "build-debs: dkms build hcache $v for $k"
		# shellcheck disable=SC2086
		dkms build -m hcache -v "$v" -k "$k" $trees ||
			{ cat "$work/dkms/hcache/$v/build/make.log" >&2 2>/dev/null; exit 1; }
		# shellcheck disable=SC2086
		dkms mktarball -m hcache -v "$v" -k "$k" --binaries-only \
			--archive "$out/dkms-$k/hcache-$v.dkms.tar.gz" $trees >/dev/null
		rm -rf "$work"
	done
done
ls -l "$out" "$out"/dkms-*
