#!/bin/bash
# debug-kernel.sh: build, or reuse from the cache, the debug kernel that
# `make check-debug` tests on, and print where it is as shell assignments:
#   HC_KDIR=...            the kernel build tree (a KDIR for build-module.sh)
#   HC_KERNEL_IMAGE=...    its bzImage
#   HC_KERNEL_RELEASE=...  its release (uname -r)
#   HC_MODULES_ROOT=...    holds lib/modules/<release>/ (modules.builtin...)
# for `eval "$(scripts/debug-kernel.sh)"`. Progress goes to stderr.
#
# The kernel is Debian's linux-source-6.12 configured as x86_64_defconfig +
# kvm_guest.config + tests/debug-kernel.config (KASAN, lockdep, kmemleak,
# debug objects, fault injection, KUnit, the guest's drivers built in).
# It lives outside the repository, in
#   ${HC_DEBUG_KERNEL_CACHE:-/var/cache/hcache-debug-kernel}/<key>/
# where <key> hashes the fragment's settings, the source package's version
# and this script's recipe version; a matching complete build is reused as is. A new
# build takes about 15 minutes on 2 cores (HC_JOBS=N, default 2); its log is
# <key>/build.log. Nothing under /boot or the host's /lib/modules is touched.
set -euo pipefail

# Bump when the build steps below change in a way that changes the result.
recipe=1

top=$(cd "$(dirname "$0")/.." && pwd)
fragment=$top/tests/debug-kernel.config
tarball=/usr/src/linux-source-6.12.tar.xz
cache=${HC_DEBUG_KERNEL_CACHE:-/var/cache/hcache-debug-kernel}
jobs=${HC_JOBS:-2}

say() { echo "debug-kernel: $*" >&2; }
die() { say "$*"; exit 1; }

# What a kernel build needs beyond make deps (apt-get, when root).
missing=$(for p in linux-source-6.12 build-essential flex bison bc libelf-dev \
		libssl-dev kmod xz-utils; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || echo "$p"
done)
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || die "missing packages:" $missing
	say "installing" $missing
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >&2
fi

pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
# The fragment's settings, not its comments, are part of the key.
key=$({ echo "recipe $recipe"; echo "linux-source-6.12 $pkgver"
	grep -E '^(CONFIG_|# CONFIG_.* is not set$)' "$fragment"; } |
	sha256sum | cut -c1-16)
dir=$cache/$key
src=$dir/linux-source-6.12
modroot=$dir/modroot

print_env() {
	echo "HC_KDIR=$src"
	echo "HC_KERNEL_IMAGE=$src/arch/x86/boot/bzImage"
	echo "HC_KERNEL_RELEASE=$(cat "$dir/release")"
	echo "HC_MODULES_ROOT=$modroot"
}

mkdir -p "$dir"
# One builder per key; a second caller waits and then reuses its result.
exec 9>"$dir.lock"
flock 9
if [ -f "$dir/complete" ]; then
	say "reusing $dir ($(cat "$dir/release"))"
	print_env
	exit 0
fi

log=$dir/build.log
say "building $pkgver with $(basename "$fragment") in $dir (log: $log)"
start=$SECONDS
# An interrupted build of this key resumes in its tree: kbuild rebuilds
# only what is missing or what a changed option touches.
rm -rf "$modroot"
[ -f "$dir/extracted" ] || { rm -rf "$src"; tar -xJf "$tarball" -C "$dir"; touch "$dir/extracted"; }
{
	make -C "$src" x86_64_defconfig kvm_guest.config
	(cd "$src" && scripts/kconfig/merge_config.sh -m .config "$fragment")
	make -C "$src" olddefconfig
} >"$log" 2>&1 || die "configuring failed; see $log"

# Kconfig drops what it cannot satisfy without a word: check every line.
bad=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) want=$line; sym=${line%%=*} ;;
	"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want="# $sym is not set" ;;
	*) continue ;;
	esac
	got=$(grep -E "^($sym=|# $sym is not set)" "$src/.config" || true)
	# An unset option may also be absent altogether.
	[ "$got" = "$want" ] || { [ -z "$got" ] && [ "${want#\#}" != "$want" ]; } || {
		say "config: wanted '$want', got '${got:-nothing}'"
		bad=1
	}
done <"$fragment"
[ $bad = 0 ] || die "the fragment does not apply to this source; fix $fragment"

make -C "$src" -j"$jobs" bzImage modules >>"$log" 2>&1 ||
	die "build failed; see $log"
make -C "$src" INSTALL_MOD_PATH="$modroot" modules_install >>"$log" 2>&1 ||
	die "modules_install failed; see $log"
"$top/scripts/kernel-release.sh" "$src" >"$dir/release"
touch "$dir/complete"
say "built $(cat "$dir/release") in $(( (SECONDS - start) / 60 )) min"
print_env
