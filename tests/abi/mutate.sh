#!/bin/sh
# Proves the layout pins can fail: each mutation of a copy of the header must
# make tests/abi/layout.c fail to build.  Prints TAP.  Pass -m32 as the third
# argument: the alignment mutation is only visible to a 32-bit build.
set -u
cc=${1:?compiler}; src=${2:?source dir}; cflags=${3:-}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/linux"
mutations='s/__u32 event;\t/__u32 event_moved;\n\t__u32 event;/
s/#define KEVENTS_ON_PAGE\t\t\t255/#define KEVENTS_ON_PAGE\t\t\t256/
s/ __attribute__((aligned(8)))//
s/#define KEVENT_POLL_POLLHUP\t\t0x0010/#define KEVENT_POLL_POLLHUP\t\t0x0800/
s/__u32 __pad;\t\t\t\/\* the 2006/__u32 __pad[2];\t\t\t\/\* the 2006/
s/#define KEVENT_RING_HDR_SIZE\t\t8/#define KEVENT_RING_HDR_SIZE\t\t4/'
n=$(printf '%s\n' "$mutations" | wc -l)
echo "TAP version 13"; echo "1..$n"
i=0
printf '%s\n' "$mutations" | while IFS= read -r m; do
	i=$((i + 1))
	sed "$m" "$src/include/uapi/linux/kevent.h" > "$tmp/linux/kevent.h"
	if [ "$m" = 's/ __attribute__((aligned(8)))//' ] && [ "$cflags" != -m32 ]; then
		echo "ok $i # SKIP mutation $i (alignment) is visible only to a -m32 build, and this build has none"
	elif cmp -s "$tmp/linux/kevent.h" "$src/include/uapi/linux/kevent.h"; then
		echo "not ok $i - mutation $i did not apply: $m"
	elif "$cc" $cflags -std=c11 -I"$tmp" -c "$src/tests/abi/layout.c" -o "$tmp/l.o" 2>/dev/null; then
		echo "not ok $i - mutation $i still builds: $m"
	else
		echo "ok $i - mutation $i is caught"
	fi
done
