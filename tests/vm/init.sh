#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# /init of the kevent test guest (busybox sh, PID 1).  Brings the machine
# up, mounts the build dir shared by 9p at its host path, then runs the
# tests (runner.sh) or an interactive shell, prints the result sentinel
# with the host's nonce and powers off.  PID 1 must never exit: a dying
# init panics the kernel, which the host would report as a crash.
set -u

PATH=/bin:/sbin:/usr/bin:/usr/sbin
HOME=/root
TMPDIR=/tmp
export PATH HOME TMPDIR

/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
# Only the applets that are missing: a real /bin/bash stays.
/bin/busybox --install -s
mkdir -p /dev/shm /dev/pts
# Criterion's shared arena and POSIX shm (the CUSE ring) need /dev/shm.
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
[ -e /dev/cuse ] || mknod /dev/cuse c 10 203
ip link set lo up
hostname kevent-guest

# shellcheck source=/dev/null
. /vm/config
# Progress marks on the console, so a slow or stuck phase shows in the log.
mark() {
	echo "@@ $* (uptime $(cut -d' ' -f1 /proc/uptime))"
}
mark "guest init"

finish() {
	echo "@@RESULT-$KV_NONCE rc=$1"
	sync
	poweroff -f
	# Not reached; if it were, keep PID 1 alive.
	while :; do sleep 1000; done
}

fatal() {
	echo "guest init: $*" >&2
	finish 1
}

while read -r ko; do
	insmod "/vm/modules/$ko" || fatal "insmod $ko failed"
	mark "insmod $ko"
done </etc/modules.order
mark "modules loaded"

# The source tree first (read-only), then the build dir, which may lie
# inside it, at their host paths: meson's absolute paths then hold here too.
P9="trans=virtio,version=9p2000.L,msize=262144,cache=none"
if [ "$KV_SRC" != "$KV_BUILD" ]; then
	mkdir -p "$KV_SRC" 2>/dev/null
	mount -t 9p -o "$P9,ro" kvsrc "$KV_SRC" || fatal "cannot mount the source tree by 9p"
fi
mkdir -p "$KV_BUILD" 2>/dev/null
mount -t 9p -o "$P9" kvbuild "$KV_BUILD" || fatal "cannot mount the build dir by 9p"
mkdir -p "$KV_RESULTS" || fatal "cannot create $KV_RESULTS"
uname -r >"$KV_RESULTS/uname"
cat /proc/version >"$KV_RESULTS/version"
mark "9p mounted"

# Settings that cannot be undone in a boot: applied once, before any
# backend starts, so the whole boot runs under them.
if [ -n "$KV_SYSCTLS" ]; then
	echo "$KV_SYSCTLS" | tr ',' '\n' | while IFS= read -r kv; do
		[ -n "$kv" ] || continue
		sysctl -w "$kv" >/dev/null || exit 1
	done || fatal "sysctl $KV_SYSCTLS failed"
	echo "$KV_SYSCTLS" >"$KV_RESULTS/sysctls"
fi

cd /tmp || fatal "no /tmp"
if [ "$KV_MODE" = shell ]; then
	/bin/sh /vm/runner.sh --shell
	finish 0
fi
/bin/sh /vm/runner.sh
finish $?
