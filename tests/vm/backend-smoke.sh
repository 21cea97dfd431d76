# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2034 # the runner reads the BACKEND_* variables
#
# Backend "smoke" (sourced by runner.sh): proves cuse.ko, /dev/cuse,
# devtmpfs and a libfuse3 CUSE server work before the real daemon exists.
# The self-test asks the smoke device its one ioctl (smoke-client.c).
#
# Hooks: backend_start DIR, backend_selftest DIR, backend_stop DIR; each
# returns non-zero with $BACKEND_REASON set on failure.

BACKEND_DEVICE=/dev/kevent-smoke
BACKEND_CLIENT_TESTS=0
BACKEND_EXTRAS=0
BACKEND_SELFTEST=smoke/ping

backend_start() {
	if [ ! -d /sys/module/cuse ] || [ ! -c /dev/cuse ]; then
		BACKEND_REASON="cuse is not loaded (/sys/module/cuse or /dev/cuse missing)"
		return 1
	fi
	if [ -z "$KV_SMOKE_DAEMON" ]; then
		BACKEND_REASON="smoke programs were not built"
		return 1
	fi
	"$KV_SMOKE_DAEMON" --name kevent-smoke </dev/null >"$1/daemon.log" 2>&1 &
	SMOKE_PID=$!
	wait_for_device "$BACKEND_DEVICE" "$SMOKE_PID" || {
		BACKEND_REASON="$BACKEND_REASON: $(last_line "$1/daemon.log")"
		return 1
	}
}

backend_selftest() {
	if "$KV_SMOKE_CLIENT" "$BACKEND_DEVICE" >"$1/client.log" 2>&1; then
		return 0
	fi
	BACKEND_REASON="smoke-client: $(last_line "$1/client.log")"
	return 1
}

backend_stop() {
	stop_pid "$SMOKE_PID" || return 1
	# CUSE removes the node when its server goes.
	i=0
	while [ -e "$BACKEND_DEVICE" ] && [ "$i" -lt 250 ]; do
		usleep 20000
		i=$((i + 1))
	done
	if [ -e "$BACKEND_DEVICE" ]; then
		BACKEND_REASON="$BACKEND_DEVICE still present after the server exited"
		return 1
	fi
}
