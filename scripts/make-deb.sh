#!/bin/sh
# make-deb.sh VERSION OUTDIR: make deb. Builds the Debian packages
# hcache-dkms and hcache-tools at VERSION (default: dkms.conf's) from a copy
# of the tree in build/deb/, with debhelper, then checks them with lintian
# at its default level (errors and warnings fail the build). The .deb
# files are left in OUTDIR (default build/deb/). Needs debhelper, dh-dkms,
# lintian and the tools' build dependencies (make deps installs them).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
version=${1:-}
[ -n "$version" ] ||
	version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")
out=${2:-$top/build/deb}
case $version in
[0-9]*) ;;
*)
	echo "make deb: VERSION=$version: a Debian version starts with a digit" >&2
	exit 1
	;;
esac
case $version in
*[!0-9A-Za-z.+~]*)
	echo "make deb: VERSION=$version: only digits, letters and . + ~ (a native package has no revision)" >&2
	exit 1
	;;
esac
for tool in dpkg-buildpackage dh dh_dkms lintian; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "make deb: $tool is missing: run make deps (it installs debhelper, dh-dkms and lintian)" >&2
		exit 1
	}
done

work=$top/build/deb/work
stage=$work/hcache-$version
rm -rf "$work"
mkdir -p "$stage" "$out"
# What the packages are built from: the tree's sources, none of its
# build products.
(cd "$top" && tar -cf - --exclude=build --exclude='*.o' --exclude='*.ko' \
	--exclude=debian/changelog \
	LICENSE README.md Makefile dkms.conf debian drivers scripts tools \
	udev initramfs dracut man completion Documentation) |
	tar -xf - -C "$stage"
make -s -C "$stage/tools" clean
cat >"$stage/debian/changelog" <<CHANGELOG
hcache ($version) unstable; urgency=medium

  * Built from the hcache source tree by make deb.

 -- hcache developers <maintainers@users.noreply.a-seed-0c4e5afb.example>  $(date -R)
CHANGELOG

echo "make deb: building hcache-dkms and hcache-tools $version in $stage"
(cd "$stage" && dpkg-buildpackage -b -us -uc) >"$work/build.log" 2>&1 || {
	tail -n 30 "$work/build.log" >&2
	echo "make deb: dpkg-buildpackage failed; the whole log is $work/build.log" >&2
	exit 1
}
changes=$work/hcache_${version}_$(dpkg --print-architecture).changes
echo "make deb: lintian"
lintian --fail-on error,warning "$changes" || {
	echo "make deb: lintian found errors or warnings (above)" >&2
	exit 1
}
for deb in "$work"/hcache-dkms_"$version"_all.deb "$work"/hcache-tools_"$version"_*.deb; do
	cp "$deb" "$out/"
	echo "make deb: $out/$(basename "$deb")"
done
