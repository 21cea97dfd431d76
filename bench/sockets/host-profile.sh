#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The host's half of bench/sockets/guest-profile.sh with KEVENT_HOST_PERF=1:
# where qemu itself spends the guest's time at each number of sockets.
# Follows LOG (the stderr of `tests/vm/guest run --verbose`, which copies
# the serial console there); on "kevent-host-perf: start TAG" it samples
# the qemu process that serves BUILDDIR (its 9p share names the dir) with
# `perf record -g` into OUT/TAG.data, and stops at "kevent-host-perf:
# stop".  Stop it with SIGTERM once the guest run has returned.  Then
# `host-profile.sh --report OUT` prints, per TAG, qemu's self time by
# symbol and the share of the soft-MMU's slow path (below).  Example:
#   tests/vm/guest run --builddir build-bench --backend module --smp 2 \
#     --slub-debug off --filter 'get/max_zero*' --verbose \
#     --env E2006=$PWD/build-bench/bench/sockets/bench-epoll2006 \
#     --env KEVENT_HOST_PERF=1 --env KEVENT_PROF_N=1000,2000 \
#     --env KEVENT_PROF_READERS=lt,kevent \
#     --extra bench/sockets/guest-profile.sh --extra /usr/bin/perf 2>/tmp/g.log &
#   bench/sockets/host-profile.sh /tmp/g.log /tmp/hp $PWD/build-bench
#   bench/sockets/host-profile.sh --report /tmp/hp
set -u

# The soft-MMU's slow path in qemu 7.x (TCG): a guest load or store whose
# page is not in the vCPU's soft TLB leaves the translated code for the
# *_mmu helpers, which look in the victim TLB and else walk the guest's
# page tables (x86_cpu_tlb_fill) and refill the entry (tlb_set_page*).
# Static helpers of that path are counted under the exported symbol
# before them, as perf sees only qemu's dynamic symbols.
SLOW='^(helper_(le|be|ret)_(ld|st)[a-z]*_mmu|cpu_(ld|st)[a-z_]*|x86_cpu_tlb_fill|tlb_set_page[a-z_]*|probe_access[a-z_]*|get_page_addr_code[a-z_]*|address_space_translate[a-z_]*|address_space_ld[a-z_]*|address_space_st[a-z_]*|flatview_translate|iotlb_to_section|memory_region_section_get_iotlb|qemu_ram_addr_from_host[a-z_]*)$'

report() {
	local out=$1 d
	for d in "$out"/*.data; do
		[ -f "$d" ] || continue
		echo "== $(basename "$d" .data)"
		perf report -q -i "$d" --no-children --sort dso -g none 2>/dev/null | head -6
		echo "-- by symbol"
		perf report -q -i "$d" --no-children --sort sym -g none 2>/dev/null | head -30
		echo "-- the soft-MMU slow path (helpers *_mmu, tlb fill, page walk, refill)"
		perf report -q -i "$d" --no-children --sort sym -g none 2>/dev/null |
			awk -v re="$SLOW" '{ s = $3; if (s ~ re) { sub("%", "", $1); t += $1 } }
			     END { printf "    %.2f%%  of qemu'"'"'s samples\n", t }'
		echo "-- translated guest code (no symbol: JIT)"
		perf report -q -i "$d" --no-children --sort dso -g none 2>/dev/null |
			awk '$2 ~ /^\[unknown\]|^\[JIT\]|perf-[0-9]+\.map|anon/ { print }'
	done
}

[ "${1:-}" = --report ] && { report "$2"; exit 0; }
[ $# -eq 3 ] || { echo "usage: $0 LOG OUTDIR BUILDDIR | --report OUTDIR" >&2; exit 2; }
LOG=$1 OUT=$2 BUILD=$3
mkdir -p "$OUT"
PERF_PID=
qemu_pid() {
	local p
	for p in $(pgrep -x qemu-system-x86 2>/dev/null; pgrep -x qemu-system-x86_64 2>/dev/null); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q "path=$BUILD," && { echo "$p"; return; }
	done
}
stop_perf() {
	[ -n "$PERF_PID" ] || return 0
	kill -INT "$PERF_PID" 2>/dev/null
	wait "$PERF_PID" 2>/dev/null
	PERF_PID=
}
while [ ! -e "$LOG" ]; do sleep 0.2; done
exec 3< <(exec tail -n +1 -F "$LOG" 2>/dev/null)
TAIL_PID=$!
trap 'stop_perf; kill "$TAIL_PID" 2>/dev/null; exit 0' TERM INT
while IFS= read -r line <&3; do
	case $line in
	*"kevent-host-perf: start "*)
		tag=${line##*kevent-host-perf: start }
		tag=${tag%%[[:space:]]*}
		q=$(qemu_pid)
		[ -n "$q" ] || { echo "no qemu serving $BUILD" >&2; continue; }
		stop_perf
		perf record -q -g -F "${PERF_FREQ:-250}" -p "$q" -o "$OUT/$tag.data" >/dev/null 2>&1 &
		PERF_PID=$!
		echo "host perf: $tag (qemu $q, perf $PERF_PID)" >&2
		;;
	*"kevent-host-perf: stop"*)
		stop_perf
		;;
	esac
done
