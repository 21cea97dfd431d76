#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Where the module's time goes in the 2006 comparison: a guest --extra
# program (module backend) for tests/vm/guest, not part of scripts/bench.
#   1. KEVENT_AB_KO set (another build of kevent.ko, e.g. main's): that
#      module and the booted one alternate, AB_PASSES (2) passes each, the
#      benchmark at N=2,000 (3 rounds of 1 s) in every pass: before/after
#      in one boot.  KEVENT_AB_KQUEUE=1 runs bench-kqueue-scale there
#      instead (epoll LT and the kqueue front, 3 rounds of 1 s at 2,000).
#      KEVENT_AB_LIB set (a directory under the build dir holding another
#      libkqueue-kevent.so.0, e.g. main's): bench-kqueue-scale with that
#      library (LD_LIBRARY_PATH) and with the built one alternate, the
#      same way (epoll LT and the kqueue front, 3 rounds of 1 s at 2,000).
#   2. KEVENT_AB_COMMIT=1: the ring reader committing after every wait and
#      lazily (the benchmark's default) alternate, the same way.
#      KEVENT_KQ_PARTS=1: the kqueue front's device path taken apart, AB_PASSES
#      passes at N=2,000 (3 rounds of 1 s): the raw get reader beside epoll
#      LT on revision 1, on revision 4 (D67's count, D69's check), with
#      POLLRDHUP, with LEVEL (D43), then the front beside epoll LT and
#      epoll LT + SIOCINQ (bench-kqueue-scale's KEVENT_KQSCALE_GET_* knobs).
#   3. perf (Debian's linux-perf, given as the next --extra so the harness
#      copies it and its libraries into the guest) samples the whole
#      machine while one reader runs alone (lt, kevent, ring), 2 s each:
#      self time by thread, by object and by symbol, and the module's own
#      functions summed (perf counts them in [kernel.kallsyms]), and the
#      wake-up and lock symbols.  KEVENT_PROF_BOTH=1 with KEVENT_AB_KO
#      profiles the kevent readers under the other module too.
#   4. KEVENT_PROF_N (default 2000), KEVENT_PROF_READERS (default
#      lt,kevent,ring), KEVENT_PROF_SECONDS (2.0) and KEVENT_PROF_TOP (25
#      report lines) choose what part 3 profiles: e.g. 1000,2000 and
#      lt,kevent for how the profile changes with the number of sockets.
#   5. KEVENT_HOST_PERF=1: before each profiled run, the same run without
#      perf, between "kevent-host-perf: start <tag>" and "kevent-host-perf:
#      stop" written to the console, for bench/sockets/host-profile.sh on
#      the host (it follows guest run --verbose and samples qemu itself).
#      KEVENT_PROF_SWEEP=1 first runs those readers at 100, 1,000, 2,000
#      and 4,000 sockets without perf (3 rounds of 1 s, the N interleaved
#      as scripts/bench runs them), for their costs.
#   6. KEVENT_HOST_SWEEP=1: for the host only (no perf in the guest), AB_PASSES
#      passes of the benchmark (3 rounds of 1 s, the readers interleaved)
#      over KEVENT_PROF_N one N after the other (KEVENT_E2006_SEQUENTIAL=1)
#      in one process, the host's
#      profile switching at each N (a list may repeat N: 1000,2000,1000,2000
#      alternates them), then each N in a fresh process (KEVENT_HOST_FRESH=0:
#      not); the guest's TLB shootdowns (/proc/interrupts) per N beside
#      the costs.  A profile is named p<pass>-<segment>-n<N>.
# E2006 names bench-epoll2006 (it lives in the build dir, which the guest
# mounts at its host path).  Example, from the source tree:
#   tests/vm/guest run --builddir build-bench --backend module --smp 2 \
#     --slub-debug off --filter 'get/max_zero*' \
#     --env E2006=$PWD/build-bench/bench/sockets/bench-epoll2006 \
#     --env KEVENT_AB_KO=$PWD/old/kevent.ko \
#     --extra bench/sockets/guest-profile.sh --extra /usr/bin/perf
# The harness then reports extra/perf as failed (perf without arguments
# exits 1); that line is expected.
[ "$KEVENT_BACKEND" = module ] || { echo "module only: skip"; exit 77; }
[ -x "${E2006:-}" ] || { echo "E2006 must name bench-epoll2006: skip"; exit 77; }
PERF=
for p in /vm/extra/*/perf; do [ -x "$p" ] && PERF=$p; done
# The booted module: the build dir's, as the harness loads it.
NEW=${E2006%/bench/sockets/bench-epoll2006}/kmod/kevent.ko
KQSCALE=${E2006%/bench/sockets/bench-epoll2006}/bench/kqueue/bench-kqueue-scale

load() {
	rmmod kevent || exit 1
	insmod "$1" fault_inject=1 || exit 1
	i=0
	while [ ! -e /dev/kevent ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

# The guest's TLB shootdown interrupts so far, every CPU.
tlb_shootdowns() {
	awk '$1 == "TLB:" { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) s += $i } END { print s + 0 }' \
		/proc/interrupts
}

# host_sweep TAG READERS N...: one process over every N, the host's profile
# (host-profile.sh) named pTAG-<segment>-nN for each; the lines scripts/bench
# reads.
host_sweep() {
	tag=$1 rd=$2 seg=1
	shift 2
	echo "kevent-host-perf: start p$tag-$seg-n$1" >/dev/console
	sleep 2
	echo "== host sweep $tag: N=$*, readers $rd, 3 rounds of 1 s, no guest perf"
	t0=$(tlb_shootdowns)
	KEVENT_E2006_SEQUENTIAL=1 KEVENT_E2006_READERS=$rd "$E2006" 3 1.0 "$@" | while IFS= read -r l; do
		case $l in
		"row "*)
			t=$(tlb_shootdowns)
			echo "tlb-shootdowns N=$1 $((t - t0))"
			t0=$t
			shift
			seg=$((seg + 1))
			if [ $# -gt 0 ]; then
				echo "kevent-host-perf: start p$tag-$seg-n$1" >/dev/console
			else
				echo "kevent-host-perf: stop" >/dev/console
			fi
			;;
		esac
		case $l in
		row* | cpu* | wcpu* | scpu* | ctxt* | calls* | writes* | refused* | events*) echo "$l" ;;
		esac
	done
	sleep 1
}

if [ -n "${KEVENT_AB_KO:-}" ] && [ -n "$NEW" ]; then
	for pass in $(seq "${AB_PASSES:-2}"); do
		for v in other this; do
			if [ $v = other ]; then load "$KEVENT_AB_KO"; else load "$NEW"; fi
			echo "== pass $pass: $v module ($([ $v = other ] && echo "$KEVENT_AB_KO" || echo "$NEW"))"
			if [ "${KEVENT_AB_KQUEUE:-0}" = 1 ]; then
				KEVENT_KQSCALE_READERS=lt,kqueue "$KQSCALE" 3 1.0 2000 | grep -v '^#'
			else
				"$E2006" 3 1.0 2000 | grep -v '^#'
			fi
		done
	done
fi
if [ -n "${KEVENT_AB_LIB:-}" ]; then
	for pass in $(seq "${AB_PASSES:-2}"); do
		for v in other this; do
			echo "== pass $pass: $v library ($([ $v = other ] && echo "$KEVENT_AB_LIB" || echo built))"
			if [ $v = other ]; then
				LD_LIBRARY_PATH=$KEVENT_AB_LIB KEVENT_KQSCALE_READERS=lt,kqueue "$KQSCALE" 3 1.0 2000
			else
				KEVENT_KQSCALE_READERS=lt,kqueue "$KQSCALE" 3 1.0 2000
			fi | grep -E '^kq(row|cpu|usr|round) '
		done
	done
fi
if [ "${KEVENT_KQ_PARTS:-0}" = 1 ]; then
	for pass in $(seq "${AB_PASSES:-2}"); do
		# abi, POLLRDHUP, LEVEL of the get reader: one rule more each time
		for cfg in "1 0 0" "4 0 0" "4 1 0" "4 1 1"; do
			set -- $cfg
			echo "== pass $pass: get reader, revision $1, POLLRDHUP $2, LEVEL $3"
			KEVENT_KQSCALE_GET_ABI=$1 KEVENT_KQSCALE_GET_RDHUP=$2 KEVENT_KQSCALE_GET_LEVEL=$3 \
				KEVENT_KQSCALE_READERS=lt,get "$KQSCALE" 3 1.0 2000 | grep -E '^kq(row|cpu|usr|round) '
		done
		echo "== pass $pass: the front, epoll LT + SIOCINQ"
		KEVENT_KQSCALE_READERS=lt,kqueue,ltcount "$KQSCALE" 3 1.0 2000 | grep -E '^kq(row|cpu|usr|round) '
	done
fi
if [ "${KEVENT_AB_COMMIT:-0}" = 1 ]; then
	for pass in $(seq "${AB_PASSES:-2}"); do
		for each in 1 0; do
			echo "== pass $pass: ring reader, commit after every wait: $each"
			KEVENT_E2006_READERS=lt,ring KEVENT_E2006_COMMIT_EACH=$each "$E2006" 3 1.0 2000 |
				grep -E '^(row|cpu|wcpu|scpu|ctxt|calls|writes|events) '
		done
	done
fi
PROF_N=$(echo "${KEVENT_PROF_N:-2000}" | tr , ' ')
PROF_RD=${KEVENT_PROF_READERS:-lt,kevent,ring}
PROF_READERS=$(echo "$PROF_RD" | tr , ' ')
PROF_S=${KEVENT_PROF_SECONDS:-2.0}
PROF_TOP=${KEVENT_PROF_TOP:-25}
if [ "${KEVENT_PROF_SWEEP:-0}" = 1 ]; then
	echo "== sweep: readers $PROF_READERS, 3 rounds of 1 s, the N interleaved, no perf"
	KEVENT_E2006_READERS=$PROF_RD "$E2006" 3 1.0 100 1000 2000 4000 |
		grep -E '^(row|cpu|wcpu|scpu|ctxt|calls|writes|events) '
fi
if [ "${KEVENT_HOST_SWEEP:-0}" = 1 ]; then
	for pass in $(seq "${AB_PASSES:-2}"); do
		# shellcheck disable=SC2086 # one word per N
		host_sweep "$pass" "$PROF_RD" $PROF_N
		[ "${KEVENT_HOST_FRESH:-1}" = 1 ] || continue
		for n in $PROF_N; do
			host_sweep "$pass-fresh" "$PROF_RD" "$n"
		done
	done
fi
[ -x "$PERF" ] || { echo "no perf given (--extra /usr/bin/perf): no profile"; exit 0; }
# KEVENT_PROF_BOTH=1 with KEVENT_AB_KO: the kevent readers are profiled
# under both modules (the other one first), the booted one last.
MODS=this
if [ "${KEVENT_PROF_BOTH:-0}" = 1 ] && [ -n "${KEVENT_AB_KO:-}" ]; then
	MODS="other this"
fi
for m in $MODS; do
if [ "$MODS" != this ]; then
	if [ $m = other ]; then load "$KEVENT_AB_KO"; else load "$NEW"; fi
fi
for n in $PROF_N; do
for r in $PROF_READERS; do
	[ $m = other ] && [ $r = lt ] && continue
	if [ "${KEVENT_HOST_PERF:-0}" = 1 ]; then
		# The host attaches perf to qemu when it sees the start line.
		echo "kevent-host-perf: start n$n-$r" >/dev/console
		sleep 2
		echo "== host perf: reader $r alone, N=$n, $PROF_S s, no guest perf"
		KEVENT_E2006_READERS=$r "$E2006" 1 "$PROF_S" "$n" |
			grep -E '^(row|cpu|wcpu|scpu|ctxt|calls|writes|events) '
		echo "kevent-host-perf: stop" >/dev/console
		sleep 1
	fi
	echo "== perf: reader $r alone, N=$n, $PROF_S s ($m module)"
	KEVENT_E2006_READERS=$r "$PERF" record -q -a -g -o /tmp/p.data -- "$E2006" 1 "$PROF_S" "$n" |
		grep -E '^(row|cpu|wcpu|scpu|ctxt|calls|writes|events) '
	# All samples (every CPU, idle included): with the events line, a
	# symbol's share gives its samples per event.
	"$PERF" report -i /tmp/p.data --stdio --sort comm -g none 2>/dev/null | grep -m1 '^# Samples'
	for sort in comm dso sym; do
		echo "-- by $sort"
		"$PERF" report -q -i /tmp/p.data --no-children --sort "$sort" -g none 2>/dev/null |
			head -"$PROF_TOP"
	done
	echo "-- the module's own functions (kevent_*, kq_*): share of all samples, top 10"
	"$PERF" report -q -i /tmp/p.data --no-children --sort sym -g none 2>/dev/null |
		awk '$3 ~ /^(kevent_|kq_)/ { sub("%", "", $1); s += $1; if (++n <= 10) print }
		     END { printf "    %.2f%%  in all\n", s }'
	echo "-- wake-ups and the queue's locks (__wake_up*, *spin_lock*, *mutex*): share of all samples"
	"$PERF" report -q -i /tmp/p.data --no-children --sort sym -g none 2>/dev/null |
		awk '$3 ~ /(^__wake_up|spin_lock|spin_unlock|mutex)/ { print }'
	rm -f /tmp/p.data
done
done
done
exit 0
