# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2034 # the runner reads the BACKEND_* variables
#
# Backend "none" (sourced by runner.sh): no device at all; only the --extra
# programs run.  Used by the harness's own tests (exit-codes.sh).

BACKEND_DEVICE=""
BACKEND_TRIVIAL=1
BACKEND_CLIENT_TESTS=0

backend_start() {
	return 0
}

backend_stop() {
	return 0
}
