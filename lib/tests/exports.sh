#!/bin/sh
# libkevent exports exactly the symbols of its version script (TAP).
set -u
lib=${1:?libkevent.so}; sym=${2:?libkevent.sym}
want=$(sed -n 's/^\t\([a-z_][a-z0-9_]*\);$/\1/p' "$sym" | sort)
have=$(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort)
echo "TAP version 13"; echo "1..2"
if [ "$want" = "$have" ]; then echo "ok 1 - exports match libkevent.sym"; else
	echo "not ok 1 - exports differ from libkevent.sym"; diff <(echo "$want") <(echo "$have") 2>/dev/null | sed 's/^/# /'; fi
if nm -D --defined-only "$lib" | grep -q 'KEVENT_0.1'; then echo "ok 2 - symbols carry version KEVENT_0.1"; else echo "not ok 2 - no KEVENT_0.1 version node"; fi
