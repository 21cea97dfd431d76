#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Proves the three failure codes of tests/vm/guest, one short boot each:
# a failing guest test gives its own status (3), a kernel crash gives 125,
# a hang gives 124.  TAP on stdout.
#
# usage: exit-codes.sh GUEST BUILDDIR
set -eu

guest=$1
builddir=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
logdir=$builddir/meson-logs
mkdir -p "$logdir"

n=0
failed=0
# expect NAME WANT TIMEOUT PROBE [PATTERN]: PATTERN must appear in the table.
expect() {
	local name=$1 want=$2 timeout=$3 probe=$4 pattern=${5:-} rc=0 out
	out=$logdir/vm-exitcodes-$name.out
	# slub_debug off: these boots test the harness, not the kernel, and
	# its owner tracking costs ~10 s a boot under TCG.
	"$guest" run --builddir "$builddir" --backend none --extra "$here/$probe" \
		--slub-debug off --timeout "$timeout" --log-name "exitcodes-$name" \
		</dev/null >"$out" 2>&1 || rc=$?
	if [ "$rc" = 77 ]; then
		echo "1..0 # SKIP $(grep -m1 SKIP "$out" | sed 's/^guest: SKIP: //')"
		exit 0
	fi
	n=$((n + 1))
	if [ "$rc" != "$want" ]; then
		echo "not ok $n - $name: exit status $rc, want $want"
		sed 's/^/# /' "$out" | tail -n 30
		failed=1
	elif [ -n "$pattern" ] && ! grep -qE "$pattern" "$out"; then
		echo "not ok $n - $name: exit status $rc but no '$pattern' in the report"
		sed 's/^/# /' "$out" | tail -n 30
		failed=1
	else
		echo "ok $n - $name: exit status $rc"
		grep -m1 -E 'guest/boot|extra/' "$out" | sed 's/^/# /' || true
	fi
}

echo "TAP version 13"
expect failing-test 3 300 probe-exit3.sh '^none +extra/probe-exit3\.sh +fail exit status 3'
expect panic 125 300 probe-panic.sh 'guest/boot +fail crash'
# The probe never ends: the timeout is the test, short but long enough
# for a boot on a loaded machine (a hang during boot gives 124 as well).
expect hang 124 30 probe-hang.sh 'guest/boot +fail hang'
echo "1..$n"
exit "$failed"
