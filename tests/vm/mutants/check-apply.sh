#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Keeps the mutants from rotting: each tests/vm/mutants/*.patch must still
# apply to the source tree exactly as `run` applies it (patch -p1, no fuzz),
# or the mutation check silently loses that mutant (ERROR, not a result).
# Only patch --dry-run: the tree is never written.  Prints TAP, one line
# per patch; a failing line carries patch's own complaint.
set -u
src=${1:?usage: check-apply.sh SOURCE_DIR}
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v patch >/dev/null 2>&1; then
	echo "1..0 # SKIP patch(1) is not installed (scripts/install-deps adds it)"
	exit 77
fi
set -- "$here"/*.patch
if [ ! -e "$1" ]; then
	echo "1..0 # SKIP no mutant patches in $here"
	exit 77
fi
echo "1..$#"
i=0
fail=0
for p in "$@"; do
	i=$((i + 1))
	name=$(basename "$p" .patch)
	if out=$(patch -d "$src" -p1 --dry-run --forward --batch --fuzz=0 -i "$p" 2>&1); then
		echo "ok $i - $name"
	else
		fail=1
		echo "not ok $i - $name: no longer applies with --fuzz=0; re-make it against today's code (tests/vm/README.md)"
		printf '%s\n' "$out" | sed 's/^/# /'
	fi
done
exit $fail
