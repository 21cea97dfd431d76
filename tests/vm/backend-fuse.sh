# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2034 # the runner reads the BACKEND_* variables
#
# Backend "fuse" (sourced by runner.sh): the kevent-cuse daemon serving the
# file $FUSE_MNT/kevent of a FUSE mount (kevent-cuse --fuse), with
# /dev/kevent as a symlink to it (--link).  The clients take the file's own
# path; the ring maps with a plain mmap() (no preload shim).
# Owner of the flags below: the cuse-daemon engineer may change them here.
#
# Hooks: backend_start DIR, backend_alive, backend_stop DIR; each returns
# non-zero with $BACKEND_REASON set on failure.  The daemon's output goes
# to DIR/daemon.log.

FUSE_MNT=/run/kevent-fuse
FUSE_LINK=/dev/kevent
BACKEND_DEVICE=$FUSE_MNT/kevent
BACKEND_PRELOAD=

backend_start() {
	if [ -e "$FUSE_LINK" ] || [ -L "$FUSE_LINK" ]; then
		BACKEND_REASON="$FUSE_LINK exists before the daemon started"
		return 1
	fi
	if [ ! -e /dev/fuse ]; then
		BACKEND_REASON="/dev/fuse is missing in the guest"
		return 1
	fi
	mkdir -p "$FUSE_MNT" || {
		BACKEND_REASON="cannot create $FUSE_MNT"
		return 1
	}
	fault=
	[ "$KV_MODE" = run ] && fault=--fault-inject
	# shellcheck disable=SC2086 # guest --daemon-args: split at spaces on purpose
	LLVM_PROFILE_FILE="$KV_BUILD/meson-logs/kevent-cuse-%p.profraw" "$KV_CUSE_DAEMON" --foreground --fuse "$FUSE_MNT" --link "$FUSE_LINK" --mode 0666 $fault ${KV_CUSE_ARGS:-} \
		</dev/null >"$1/daemon.log" 2>&1 &
	FUSE_PID=$!
	wait_for_device "$FUSE_LINK" "$FUSE_PID" || {
		BACKEND_REASON="$BACKEND_REASON: $(last_line "$1/daemon.log")"
		return 1
	}
	wait_for_device "$BACKEND_DEVICE" "$FUSE_PID" || {
		BACKEND_REASON="$BACKEND_REASON: $(last_line "$1/daemon.log")"
		return 1
	}
}

# Checked after every client program.
backend_alive() {
	if ! pid_alive "$FUSE_PID"; then
		BACKEND_REASON="kevent-cuse --fuse exited: $(last_line "$DIR/daemon.log")"
		return 1
	fi
	if [ ! -e "$BACKEND_DEVICE" ]; then
		BACKEND_REASON="$BACKEND_DEVICE disappeared"
		return 1
	fi
}

backend_stop() {
	stop_pid "$FUSE_PID" || return 1
	if [ -L "$FUSE_LINK" ]; then
		BACKEND_REASON="the --link symlink $FUSE_LINK is still there after the daemon exited"
		return 1
	fi
	if grep -qs " $FUSE_MNT fuse" /proc/mounts; then
		BACKEND_REASON="$FUSE_MNT still mounted after the daemon exited"
		return 1
	fi
}
