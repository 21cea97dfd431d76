#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Build kevent.ko out of tree without writing into the source tree:
# copy the module sources into a work directory under the meson build dir
# and run kbuild there.
#   kbuild.sh <srcdir> <workdir> <kdir> <uapi-include-dir> <output.ko>
set -eu
src=$1 work=$2 kdir=$3 uapi=$4 out=$5
mkdir -p "$work"
for f in Kbuild "$src"/*.h "$src"/*.c; do
	f=$(basename "$f")
	# cp only when changed, so kbuild's own dependency tracking holds
	cmp -s "$src/$f" "$work/$f" 2>/dev/null || cp "$src/$f" "$work/$f"
done
make -s -C "$kdir" M="$work" KEVENT_UAPI="$uapi" modules
cp "$work/kevent.ko" "$out"
