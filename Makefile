# SPDX-License-Identifier: GPL-2.0
#
# hcache top-level Makefile.
#
#   make                 build hcache.ko (see KDIR below) and the tools
#   make deps            install everything the build and tests need (apt)
#   make check           deps, build, unit tests, static checks, VM tests
#   make check-long      the same plus the long soaks
#   make check-debug     the VM tests on a KASAN/lockdep/kmemleak kernel
#   make check T=NAME    only the tests whose name contains NAME (or any
#                        of several: T="NAME1 NAME2")
#   make demo            boot a VM and show hcache at work
#   make bench           hcache against bcache, dm-cache, raw disks (KERNELS=)
#   make bench-profile   where hcache's time goes in bench workload a, b, c, d or e
#                        (WORKLOAD=, KERNEL=, MODE=, ADMIT=, SYSTEM=)
#   make bench-pair      workload c on hcache and dm-writecache in turns
#                        (KERNEL=, ROUNDS=, WORKLOAD=h for h, CHECKSUM=crc32c)
#   make bench-scale     cache hits with 1 and 2 fio jobs on 2 guest CPUs:
#                        does hcache scale as the raw disk does (KERNEL=, ROUNDS=)
#   make bench-keys      registration (after a clean stop and after a power
#                        cut) and the first read against the number of keys
#                        (KERNEL=, KEYS=, CUT_KEYS=, REAL_KEYS=)
#   make deb             the Debian packages hcache-dkms and hcache-tools, in
#                        build/deb/ (VERSION= sets their version)
#   make install         install the module, tools, rules and man pages
#
# KDIR=<kernel build dir> builds for that kernel. Without it: the running
# kernel when its headers are installed, else every installed kernel that
# has headers (/lib/modules/*/build).

RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
ifneq ($(KDIR),)
KDIRS := $(KDIR)
else ifneq ($(wildcard $(RUNNING_KDIR)/Makefile),)
KDIRS := $(RUNNING_KDIR)
else
KDIRS := $(patsubst %/Makefile,%,$(wildcard /lib/modules/*/build/Makefile))
endif

# Extra arguments for the module build (W=1 and C=2 are used by the tests).
KBUILD_ARGS ?=

PREFIX ?= /usr
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

.PHONY: all modules tools deps check check-long check-debug unit demo bench bench-profile bench-pair bench-scale bench-keys deb install uninstall clean help

all: modules tools

modules:
	@if [ -z "$(strip $(KDIRS))" ]; then \
		echo "hcache: no kernel headers found: run 'make deps' or pass KDIR=" >&2; \
		exit 1; \
	fi
	@set -e; for k in $(KDIRS); do \
		./scripts/build-module.sh "$$k" $(KBUILD_ARGS); \
	done

tools:
	$(MAKE) -C tools

deps:
	./scripts/install-deps.sh

unit:
	$(MAKE) -C tests/unit check

check: deps
	./tests/run $(if $(T),--filter "$(T)")

check-long: deps
	./tests/run --long $(if $(T),--filter "$(T)")

# The VM tests on a debug kernel built (or reused) by scripts/debug-kernel.sh,
# whose output tells tests/run where it is. Not part of check: the first
# build takes about 15 minutes. T=NAME: only the VM tests matching NAME
# (T="NAME1 NAME2": those matching any of them).
# Tests get three times their usual time limits on that slower kernel.
check-debug: deps
	@set -e; vars=$$(./scripts/debug-kernel.sh); set -a; eval "$$vars"; set +a; \
	./scripts/build-module.sh "$$HC_KDIR" >/dev/null; \
	HC_DEBUG=1 ./scripts/build-module.sh "$$HC_KDIR" >/dev/null; \
	tests/vm/build-selftest.sh "$$HC_KDIR"; \
	$(MAKE) -C tools; \
	$(MAKE) -C tests/vm/helpers; \
	HC_APPEND="null_blk.nr_devices=0 pci=noacpi" HC_BOOT_SECONDS=180 HC_TIME_SCALE=3 \
		./tests/run --filter "$(if $(T),$(addprefix vm/,$(T)),vm/)"

demo: deps
	./tests/demo.sh

# One guest per kernel runs the same fio jobs on hcache, stock bcache,
# dm-cache, dm-writecache and the raw disks (tests/bench/); the report and
# plots go to bench-results/<date>-<kernel>/, after building hcache.ko and
# the tools. KERNELS="6.12 6.1" picks kernels (default: 6.12). The build is
# a second make, started after deps: this one chose KDIRS when it read this
# file, before deps could install the kernel headers on a new machine.
bench: deps
	$(MAKE) modules tools
	KERNELS="$(KERNELS)" ./tests/bench/run.sh

# Where hcache's time goes in bench workload WORKLOAD (a to e, default c):
# one guest, the second of three runs traced with ftrace (tests/bench/).
bench-profile: deps
	$(MAKE) modules tools
	WORKLOAD="$(WORKLOAD)" KERNEL="$(KERNEL)" MODE="$(MODE)" ADMIT="$(ADMIT)" SYSTEM="$(SYSTEM)" \
		./tests/bench/profile.sh

# Bench workload c on hcache and dm-writecache in turns in one guest, ROUNDS
# times (default 4): a write-path change against c's bar in 4 minutes.
bench-pair: deps
	$(MAKE) modules tools
	KERNEL="$(KERNEL)" ROUNDS="$(ROUNDS)" WORKLOAD="$(WORKLOAD)" CHECKSUM="$(CHECKSUM)" ./tests/bench/pair.sh

# Cache hits with one fio job and then two on a two-CPU guest under
# multi-threaded TCG, on the host's clock: hcache, bcache and the raw cache
# disk, ROUNDS times (default 5). Wants an otherwise idle host.
bench-scale: deps
	$(MAKE) modules tools
	KERNEL="$(KERNEL)" ROUNDS="$(ROUNDS)" ./tests/bench/scale.sh

# What the number of keys costs at registration: a cache filled with KEYS
# keys in turn (default 100000 1000000 10000000; the first REAL_KEYS,
# default 1000000, written by fio, the rest by the debug build's fill),
# stopped and registered again each time, then given CUT_KEYS (default
# 10000) keys only its journal holds, its power cut, and registered again,
# on the instruction clock.
bench-keys: deps
	$(MAKE) modules tools
	KERNEL="$(KERNEL)" KEYS="$(KEYS)" CUT_KEYS="$(CUT_KEYS)" REAL_KEYS="$(REAL_KEYS)" ./tests/bench/keys.sh

# Debian packages, built by debhelper from a copy of the tree and checked
# with lintian (scripts/make-deb.sh). VERSION= (default: dkms.conf's).
deb: deps
	./scripts/make-deb.sh "$(VERSION)"

install: all
	./scripts/install.sh install "$(DESTDIR)" "$(SBINDIR)" "$(MANDIR)" $(KDIRS)

uninstall:
	./scripts/install.sh uninstall "$(DESTDIR)" "$(SBINDIR)" "$(MANDIR)" $(KDIRS)

clean:
	rm -rf build
	$(MAKE) -C tools clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/vm/helpers clean

help:
	@sed -n '3,/^#   make install/s/^# \{0,1\}//p' Makefile
