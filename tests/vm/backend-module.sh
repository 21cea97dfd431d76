# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2034 # the runner reads the BACKEND_* variables
#
# Backend "module" (sourced by runner.sh): kmod/kevent.ko.
# Owner of the steps below: the kmod engineer may add checks here (e.g.
# debugfs allocation counters that must read 0 before rmmod, design.md C6).
# The runner fails the backend on BUG/WARNING/Oops/slab reports in dmesg.
#
# Hooks: backend_start DIR, backend_alive, backend_stop DIR; each returns
# non-zero with $BACKEND_REASON set on failure.

BACKEND_DEVICE=/dev/kevent

backend_start() {
	if [ -e "$BACKEND_DEVICE" ]; then
		BACKEND_REASON="$BACKEND_DEVICE exists before insmod"
		return 1
	fi
	# Test runs let the suite inject faults on its own queues (D19); the
	# interactive guest serves the plain device.
	fault=
	[ "$KV_MODE" = run ] && fault=fault_inject=1
	# shellcheck disable=SC2086 # empty or one word
	if ! insmod "$KV_MODULE_KO" $fault >"$1/insmod.log" 2>&1; then
		BACKEND_REASON="insmod failed: $(last_line "$1/insmod.log")"
		return 1
	fi
	MODULE_NAME=$(basename "$KV_MODULE_KO" .ko | tr - _)
	wait_for_device "$BACKEND_DEVICE"
}

# Checked after every client program.
backend_alive() {
	if [ ! -e "$BACKEND_DEVICE" ]; then
		BACKEND_REASON="$BACKEND_DEVICE disappeared"
		return 1
	fi
}

backend_stop() {
	# design.md C6: every allocation counter reads 0 before rmmod.  fsnotify
	# frees marks from its own worker, so allow it a moment.
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null || true
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		bad=$(grep -L '^0$' /sys/kernel/debug/kevent/* 2>/dev/null || true)
		[ -z "$bad" ] && break
		usleep 100000
	done
	if [ -n "$bad" ]; then
		BACKEND_REASON="debugfs counters not 0: $bad"
		return 1
	fi
	if ! rmmod "$MODULE_NAME" >"$1/rmmod.log" 2>&1; then
		BACKEND_REASON="rmmod failed: $(last_line "$1/rmmod.log")"
		return 1
	fi
	if [ -e "$BACKEND_DEVICE" ]; then
		BACKEND_REASON="$BACKEND_DEVICE still present after rmmod"
		return 1
	fi
}
