#!/bin/sh
# run-m32.sh PROGRAM: run a 32-bit TAP program (the -m32 layout pins), or
# skip it, with the reason, when this kernel cannot execute 32-bit
# programs (no IA32 emulation: exec fails with ENOEXEC although gcc -m32
# links).  The pins themselves are _Static_asserts, checked whenever the
# abi-layout-m32 target compiles; the guest, whose kernel runs 32-bit
# programs, runs PROGRAM on every boot (tests/vm/meson.build, --extra).
# Any other failure to start PROGRAM fails the test.
set -u
LC_ALL=C
export LC_ALL
prog=${1:?usage: run-m32.sh PROGRAM}
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT
"$prog" 2>"$err"
rc=$?
if [ "$rc" = 126 ] && grep -q 'Exec format error' "$err"; then
	echo "1..0 # SKIP this kernel cannot execute 32-bit programs ($(tail -n 1 "$err")); the -m32 pins held at compile time, the guest runs them"
	exit 0
fi
cat "$err" >&2
exit "$rc"
