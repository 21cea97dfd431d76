#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest half of scripts/kmod-coverage (busybox sh, run as an --extra
# program of tests/vm/guest with the module backend up).  The host writes
# two wrappers that call it:
#
#   kmod-coverage-guest.sh start OUT KO   reload KO with the function tracer
#                                         limited to the module, so its load
#                                         is traced too; start the collector
#   kmod-coverage-guest.sh stop OUT KO    unload it (traced), stop the
#                                         collector, leave the files in OUT,
#                                         load KO again for the backend's stop
#
# The collector reads trace_pipe while the workload runs and keeps each
# function name once.  A function seen once is added to set_ftrace_notrace,
# so the tracer goes quiet on the hot paths within seconds and the buffer
# does not overflow under the lockstep fuzzer (the guest has one vCPU).
# Names are resolved by the kernel when the line is read; a function whose
# text is gone by then (the module's init, or anything read after rmmod)
# comes out as an address, which the host maps with the symbols the stop
# saves before rmmod (kallsyms, section bases).
set -u
cmd=$1 out=$2 ko=$3
mod=$(basename "$ko" .ko | tr - _)

tracefs() {
	for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		[ -e "$t/trace_pipe" ] && { echo "$t"; return 0; }
	done
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
	[ -e /sys/kernel/tracing/trace_pipe ] && { echo /sys/kernel/tracing; return 0; }
	return 1
}

wait_for() {
	i=0
	while [ "$i" -lt 250 ]; do
		[ -e "$1" ] && return 0
		usleep 20000
		i=$((i + 1))
	done
	return 1
}

# Every allocation counter back to 0 (as backend-module.sh's stop waits).
wait_idle() {
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		# shellcheck disable=SC2143 # -L lists the counters that are not 0
		[ -z "$(grep -L '^0$' /sys/kernel/debug/"$mod"/* 2>/dev/null)" ] && return 0
		usleep 100000
	done
}

T=$(tracefs) || { echo "no tracefs in this guest"; exit 77; }
[ -e "$T/set_ftrace_filter" ] || { echo "no dynamic ftrace in this guest kernel"; exit 77; }

case $cmd in
start)
	rm -rf "$out/guest"
	mkdir -p "$out/guest"
	echo "$ko" >"$out/guest/ko"
	rmmod "$mod" || exit 1
	echo 0 >"$T/tracing_on"
	echo nop >"$T/current_tracer"
	: >"$T/set_ftrace_notrace"
	# The module is not loaded: ftrace keeps ":mod:" and applies it at
	# insmod.  A kernel function that never runs in the guest stays in the
	# filter, so an empty filter (all functions) cannot happen at rmmod.
	echo ":mod:$mod" >"$T/set_ftrace_filter" || exit 1
	echo __x64_sys_vhangup >>"$T/set_ftrace_filter" 2>/dev/null
	echo 0 >"$T/options/overwrite"
	echo 8192 >"$T/buffer_size_kb"
	: >"$T/trace"
	echo function >"$T/current_tracer" || exit 1
	echo 1 >"$T/tracing_on"
	(
		# shellcheck disable=SC2002 # the stop ends this cat by its command line
		cat "$T/trace_pipe" |
			awk '{ for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {
				f = $(i + 1); if (!(f in seen)) { seen[f] = 1; print f; fflush() }
				break } }' |
			while IFS= read -r f; do
				echo "$f" >>"$out/guest/hits"
				case $f in 0x*) ;; *) echo "$f" >>"$T/set_ftrace_notrace" 2>/dev/null ;; esac
			done
	) </dev/null >/dev/null 2>&1 &
	echo $! >"$out/guest/collector.pid"
	# Test runs load the module with fault injection (backend-module.sh).
	insmod "$ko" fault_inject=1 || exit 1
	wait_for /dev/kevent || { echo "/dev/kevent did not appear"; exit 1; }
	echo "tracing $mod ($T)"
	;;
stop)
	wait_idle
	grep "\[$mod\]\$" "$T/available_filter_functions" | awk '{ print $1 }' | sort -u \
		>"$out/guest/available"
	grep "\[$mod\]\$" /proc/kallsyms | awk '$2 ~ /^[tT]$/ { print $1, $3 }' \
		>"$out/guest/kallsyms"
	for s in .text .init.text .exit.text; do
		[ -r "/sys/module/$mod/sections/$s" ] &&
			echo "$s $(cat "/sys/module/$mod/sections/$s")" >>"$out/guest/sections"
	done
	rmmod "$mod" || echo "rmmod failed"
	sleep 2
	echo 0 >"$T/tracing_on"
	cat "$T/per_cpu/cpu0/stats" >"$out/guest/stats" 2>/dev/null
	# The collector's cat blocks in trace_pipe: end it, then its pipe.
	for p in $(ps -o pid,args 2>/dev/null | awk -v t="$T/trace_pipe" '$3 == t { print $1 }'); do
		kill "$p" 2>/dev/null
	done
	sleep 1
	echo nop >"$T/current_tracer"
	: >"$T/set_ftrace_filter"
	: >"$T/set_ftrace_notrace"
	echo 1 >"$T/options/overwrite"
	echo "collected $(wc -l <"$out/guest/hits" 2>/dev/null || echo 0) names"
	touch "$out/guest/done"
	insmod "$ko" fault_inject=1 || exit 1
	wait_for /dev/kevent || exit 1
	;;
*)
	echo "usage: $0 start|stop OUT KO" >&2
	exit 2
	;;
esac
exit 0
