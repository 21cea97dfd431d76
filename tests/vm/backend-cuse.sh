# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2034 # the runner reads the BACKEND_* variables
#
# Backend "cuse" (sourced by runner.sh): the kevent-cuse daemon.
# Owner of the flags below: the cuse-daemon engineer may change them here.
#
# Hooks: backend_start DIR, backend_alive, backend_stop DIR; each returns
# non-zero with $BACKEND_REASON set on failure.  The daemon's output goes
# to DIR/daemon.log.

BACKEND_DEVICE=/dev/kevent
# Clients map the ring through the LD_PRELOAD shim on CUSE (no CUSE mmap).
BACKEND_PRELOAD=$KV_SHIM

backend_start() {
	if [ -e "$BACKEND_DEVICE" ]; then
		BACKEND_REASON="$BACKEND_DEVICE exists before the daemon started"
		return 1
	fi
	# Test runs let the suite inject faults on its own queues (D19); the
	# interactive guest serves the plain device.
	fault=
	[ "$KV_MODE" = run ] && fault=--fault-inject
	# A daemon built with -fprofile-instr-generate leaves its profile in the
	# build dir (9p) when it exits; any other daemon ignores the variable.
	# shellcheck disable=SC2086 # guest --daemon-args: split at spaces on purpose
	LLVM_PROFILE_FILE="$KV_BUILD/meson-logs/kevent-cuse-%p.profraw" "$KV_CUSE_DAEMON" --foreground --name kevent --mode 0666 $fault ${KV_CUSE_ARGS:-} \
		</dev/null >"$1/daemon.log" 2>&1 &
	CUSE_PID=$!
	wait_for_device "$BACKEND_DEVICE" "$CUSE_PID" || {
		BACKEND_REASON="$BACKEND_REASON: $(last_line "$1/daemon.log")"
		return 1
	}
}

# Checked after every client program.
backend_alive() {
	if ! pid_alive "$CUSE_PID"; then
		BACKEND_REASON="kevent-cuse exited: $(last_line "$DIR/daemon.log")"
		return 1
	fi
	if [ ! -e "$BACKEND_DEVICE" ]; then
		BACKEND_REASON="$BACKEND_DEVICE disappeared"
		return 1
	fi
}

backend_stop() {
	stop_pid "$CUSE_PID" || return 1
	i=0
	while [ -e "$BACKEND_DEVICE" ] && [ "$i" -lt 250 ]; do
		usleep 20000
		i=$((i + 1))
	done
	if [ -e "$BACKEND_DEVICE" ]; then
		BACKEND_REASON="$BACKEND_DEVICE still present after the daemon exited"
		return 1
	fi
}
