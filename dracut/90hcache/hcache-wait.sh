#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# hcache: dracut initqueue/settled hook. dracut's initqueue sources it on
# each pass of its main loop once udev is idle (about twice a second) for as
# long as it waits for the root device. It runs the initramfs-tools boot
# script (installed as /usr/lib/hcache/wait-for-cache), which bounds the
# wait for a missing cache device and keeps its state in /run/hcache: run
# as a program, not sourced, since that script ends with exit 0. The
# command line it reads is dracut's (/etc/cmdline.d, then the kernel's,
# which wins); its messages go to stderr, which dracut sends to the console
# as it does its own warnings. Read Documentation/hcache/boot.rst.

if [ -x /usr/lib/hcache/wait-for-cache ]; then
	mkdir -p /run/hcache
	getcmdline >/run/hcache/cmdline
	HCACHE_CMDLINE=/run/hcache/cmdline /usr/lib/hcache/wait-for-cache >&2
fi
