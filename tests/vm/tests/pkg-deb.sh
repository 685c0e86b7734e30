# The Debian packages (make deb), installed with dpkg in the guest's
# throwaway root: DKMS installs hcache.ko for the running kernel, modprobe
# loads that build, udev assembles a formatted set with the packaged rules
# and tools, and an upgrade to the next version while fio writes and
# verifies through /dev/hcache0 keeps the loaded module (its srcversion
# unchanged, I/O going on) while modinfo names the new build. make install
# refuses while the packages are installed, and dpkg -r removes every file
# they installed. The packages, and DKMS's builds of their module source
# for this kernel, come from the host (tests/vm/build-debs.sh, tests/run's
# step vm/build-debs): one DKMS build takes over 15 minutes under TCG. Each
# build waits, as a binaries-only archive, where the package's postinst
# looks for one, so that its dkms install finds the module built.
# timeout: 600
# memory: 2G
# one-kernel: two DKMS builds on the host before the guests start (about 2 minutes); make check-long runs it on both kernels
# distro-kernel-only: DKMS builds against the distribution's headers

. "$HC_ROOT/tests/vm/udev.sh"

old=${HC_DEB_OLD:-0.1~test1}
new=${HC_DEB_NEW:-0.1~test2}
debs=$HC_ROOT/build/deb/test
for v in "$old" "$new"; do
	for f in hcache-dkms_${v}_all.deb hcache-tools_${v}_amd64.deb \
		"dkms-$HC_KVER/hcache-$v.dkms.tar.gz"; do
		[ -f "$debs/$f" ] || hc_fail "$debs/$f is missing: tests/vm/build-debs.sh builds it"
	done
done
# pkg_install VERSION: dpkg -i both packages at VERSION, DKMS's build of
# the module for this kernel waiting where the postinst looks for it.
pkg_install() {
	mkdir -p /usr/share/hcache-dkms
	cp "$debs/dkms-$HC_KVER/hcache-$1.dkms.tar.gz" /usr/share/hcache-dkms/
	dpkg -i "$debs/hcache-dkms_${1}_all.deb" "$debs/hcache-tools_${1}_amd64.deb"
}
kdir=$(readlink -f "/lib/modules/$HC_KVER/build")
[ -e "$kdir/Makefile" ] || hc_fail "no kernel headers for $HC_KVER"

# depmod over all of the kernel's modules takes minutes under TCG: only
# the modules this guest needs, with the link to the headers DKMS builds
# against, in a /lib/modules of their own (in the overlay), which shows
# DKMS this kernel alone: it would build for the newest installed kernel
# too.
mods=/lib/modules/$HC_KVER
small=$(hc_small_modules libcrc32c crc32c_generic null_blk)
ln -s "$kdir" "$small/build"
mount --bind /tmp/modules /lib/modules
# DKMS takes the modules' compression from modules.dep.
depmod -a "$HC_KVER" || hc_fail "depmod failed"
# The hcache-tools trigger would rebuild the initramfs of the newest
# kernel: minutes under TCG, and not what this test is about.
mkdir -p /etc/initramfs-tools
echo update_initramfs=no >/etc/initramfs-tools/update-initramfs.conf

# installed_files PKG...: the files (not directories) the packages own.
installed_files() {
	dpkg -L "$@" | while read -r f; do
		if [ -f "$f" ]; then
			echo "$f"
		fi
	done
}
# loaded_srcversion: the running module's, or "none".
loaded_srcversion() {
	cat /sys/module/hcache/srcversion 2>/dev/null || echo none
}

# 1. Install version $old: DKMS installs its build for the running kernel.
t0=$SECONDS
pkg_install "$old" >/tmp/dpkg-old.log 2>&1 || hc_fail "dpkg -i $old failed: $(tail -n 30 /tmp/dpkg-old.log)"
hc_log "dpkg -i $old: $((SECONDS - t0)) s"
dkms status -m hcache -v "$old" -k "$HC_KVER" | grep -q ': installed' ||
	hc_fail "dkms did not install hcache $old for $HC_KVER: $(dkms status 2>&1)"
path=$(modinfo -k "$HC_KVER" -n hcache) || hc_fail "modinfo finds no hcache"
case $path in
*/updates/dkms/hcache.ko*) ;;
*) hc_fail "modinfo names $path, not DKMS's build" ;;
esac
[ "$(modinfo -k "$HC_KVER" -F version hcache)" = "$old" ] ||
	hc_fail "modinfo's version is $(modinfo -k "$HC_KVER" -F version hcache), not $old"
for f in /usr/sbin/make-hcache /usr/sbin/hcache /usr/sbin/probe-hcache \
	/usr/sbin/hcache-register /lib/udev/rules.d/69-hcache.rules \
	/usr/share/man/man8/make-hcache.8.gz \
	/usr/share/initramfs-tools/scripts/local-block/hcache \
	/usr/lib/dracut/modules.d/90hcache/module-setup.sh \
	/usr/share/doc/hcache-tools/ABI/sysfs-fs-hcache.gz; do
	[ -e "$f" ] || hc_fail "hcache-tools did not install $f"
done
hc_log "DKMS built $path ($old)"

# make install refuses while the packages are installed.
if "$HC_ROOT/scripts/install.sh" install "" /usr/sbin /usr/share/man "$kdir" \
	>/tmp/make-install.log 2>&1; then
	hc_fail "make install ran over the installed packages"
fi
grep -q "the Debian package hcache-.* is installed" /tmp/make-install.log ||
	hc_fail "make install refused without saying why: $(cat /tmp/make-install.log)"
hc_log "make install refused: $(cat /tmp/make-install.log)"

# 2. modprobe loads DKMS's build; udev assembles a formatted set.
modprobe hcache || hc_fail "modprobe hcache failed"
[ "$(cat /sys/module/hcache/version)" = "$old" ] ||
	hc_fail "the loaded module is version $(cat /sys/module/hcache/version), not $old"
src_old=$(loaded_srcversion)
cdev=$(hc_nullb cache 128)
bdev=$(hc_nullb back 256)
make-hcache -C "$cdev" -B "$bdev" --label pkg >/dev/null || hc_fail "make-hcache failed"
hc_udev_start
hc_udev_trigger add "$cdev" "$bdev"
hc_wait test -b /dev/hcache0
hc_wait grep -q '^1$' /sys/block/hcache0/hcache/cache_set_id
hc_wait hc_link_is /dev/hcache/by-label/pkg /dev/hcache0
hc_udev_no_failures
hc_write /sys/block/hcache0/hcache/cache_mode writeback
hc_log "udev assembled /dev/hcache0 with the packaged rules and tools"

# 3. Upgrade to $new while fio writes and verifies through /dev/hcache0:
# rounds of 4 MiB of random writes, each read back and checked, until told
# to stop; every round must pass, and rounds must run during the upgrade.
# At 200 I/Os a second, so that dpkg gets most of the one guest CPU.
io_loop() {
	local n=0
	while [ ! -e /tmp/io.stop ]; do
		n=$((n + 1))
		fio --name=upgrade-$n --filename=/dev/hcache0 --direct=1 \
			--ioengine=libaio --rw=randwrite --bs=4k --iodepth=8 \
			--offset=$(((n % 16) * 4))m --size=4m --randseed=$n \
			--rate_iops=200 \
			--verify=crc32c --verify_fatal=1 --do_verify=1 \
			--output=/tmp/fio-$n.out >/dev/null 2>&1 ||
			{ echo "round $n failed" >>/tmp/io.failed; return 1; }
		echo "$n" >/tmp/io.rounds
	done
}
rm -f /tmp/io.stop /tmp/io.failed /tmp/io.rounds
io_loop &
io_pid=$!
hc_wait test -s /tmp/io.rounds
r0=$(cat /tmp/io.rounds)
t0=$SECONDS
pkg_install "$new" >/tmp/dpkg-new.log 2>&1 || hc_fail "dpkg -i $new failed: $(tail -n 30 /tmp/dpkg-new.log)"
hc_log "dpkg -i $new under I/O: $((SECONDS - t0)) s"
[ ! -e /tmp/io.failed ] || hc_fail "fio failed during the upgrade: $(cat /tmp/io.failed; cat /tmp/fio-*.out | grep -i -m 5 'err\|verify')"
r1=$(cat /tmp/io.rounds)
[ "$r1" -gt "$r0" ] || hc_fail "no verified round of I/O completed during the upgrade"
[ "$(loaded_srcversion)" = "$src_old" ] ||
	hc_fail "the loaded module changed: srcversion $src_old, now $(loaded_srcversion)"
[ "$(cat /sys/module/hcache/version)" = "$old" ] ||
	hc_fail "the loaded module's version is now $(cat /sys/module/hcache/version)"
path=$(modinfo -k "$HC_KVER" -n hcache)
case $path in
*/updates/dkms/hcache.ko*) ;;
*) hc_fail "after the upgrade modinfo names $path" ;;
esac
[ "$(modinfo -k "$HC_KVER" -F version hcache)" = "$new" ] ||
	hc_fail "after the upgrade modinfo's version is $(modinfo -k "$HC_KVER" -F version hcache), not $new"
if dkms status -m hcache -v "$old" 2>/dev/null | grep -q .; then
	hc_fail "dkms still has $old: $(dkms status -m hcache)"
fi
touch /tmp/io.stop
wait $io_pid || hc_fail "fio failed: $(cat /tmp/io.failed 2>/dev/null)"
hc_log "upgraded to $new under I/O: $((r1 - r0)) verified rounds of fio during it, $(cat /tmp/io.rounds) in all; the loaded module kept (srcversion $src_old); modinfo names $path ($new)"

# 4. dpkg -r takes away every file the packages installed; the loaded
# module goes on serving (it is not unloaded).
files=$(installed_files hcache-dkms hcache-tools)
built=$(find /var/lib/dkms/hcache "$mods/updates" -name 'hcache.ko*')
dpkg -r hcache-tools hcache-dkms >/tmp/dpkg-r.log 2>&1 ||
	hc_fail "dpkg -r failed: $(tail -n 30 /tmp/dpkg-r.log)"
for f in $files $built; do
	[ ! -e "$f" ] || hc_fail "dpkg -r left $f"
done
if [ -e /var/lib/dkms/hcache ]; then
	left=$(find /var/lib/dkms/hcache -name 'hcache.ko*')
	[ -z "$left" ] || hc_fail "dpkg -r left DKMS builds: $left"
fi
if modinfo -k "$HC_KVER" -n hcache >/dev/null 2>&1; then
	hc_fail "modinfo still finds hcache after dpkg -r: $(modinfo -k "$HC_KVER" -n hcache)"
fi
dd if=/dev/hcache0 of=/dev/null bs=4k count=256 iflag=direct 2>/dev/null ||
	hc_fail "/dev/hcache0 stopped serving after dpkg -r"
hc_log "dpkg -r removed $(echo "$files" | wc -w) files and the DKMS builds; /dev/hcache0 still serves"

# 5. After make install, dpkg refuses the packages.
hc_write "/sys/block/hcache0/hcache/stop" 1 2>/dev/null ||
	hc_fail "cannot stop /dev/hcache0"
hc_udev_stop
"$HC_ROOT/scripts/install.sh" install "" /usr/sbin /usr/share/man >/tmp/make-install2.log 2>&1 ||
	hc_fail "make install (tools only) failed: $(cat /tmp/make-install2.log)"
if dpkg -i "$debs/hcache-tools_${new}_amd64.deb" >/tmp/dpkg-refused.log 2>&1; then
	hc_fail "dpkg installed hcache-tools over a make install"
fi
grep -q "installed with make install" /tmp/dpkg-refused.log ||
	hc_fail "dpkg refused without saying why: $(cat /tmp/dpkg-refused.log)"
hc_log "dpkg refused after make install: $(grep 'make install' /tmp/dpkg-refused.log | head -n 2 | tr '\n' ' ')"
"$HC_ROOT/scripts/install.sh" uninstall "" /usr/sbin /usr/share/man >/dev/null 2>&1 ||
	hc_fail "make uninstall failed"
[ ! -e /var/lib/hcache/make-install ] || hc_fail "make uninstall left its manifest"
