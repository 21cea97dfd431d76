#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/guest (busybox sh).  For each backend in
# $KV_BACKENDS: start it (tests/vm/backend-<name>.sh), run its self-test,
# every client test and every --extra program, stop it, and check the
# kernel log.  Everything the host reports comes from the files written
# here into $KV_RESULTS/<backend>/ through 9p (design.md C3):
#
#   checks      one line per result, tab-separated: pass|fail|skip, name,
#               reason; or "tap", program: "read <program>.tap here"
#   NAME.tap    Criterion's TAP report; NAME.rc its exit status; NAME.log
#               its output
#   done        written last: the backend ran to the end
#
# Exit status: 0 if nothing failed, else the first failure's exit status
# (1 when that is 0 or collides with the host's 124/125 codes).
#
# runner.sh --shell: start the first backend and give an interactive shell.
# The helpers are called from the sourced backend-*.sh files.
# shellcheck disable=SC2317
set -u

# shellcheck source=/dev/null
. /vm/config

FIRST_RC=0
note_fail() {
	[ "$FIRST_RC" = 0 ] || return 0
	case $1 in
	'' | 0 | 12[4-9] | 1[3-9][0-9] | 2[0-9][0-9]) FIRST_RC=1 ;;
	*) FIRST_RC=$1 ;;
	esac
}

DIR=/tmp
check() {
	st=$1 name=$2
	shift 2
	printf '%s\t%s\t%s\n' "$st" "$name" "$*" >>"$DIR/checks"
	[ "$st" != fail ] || note_fail 1
}

# Last non-empty line of a log, short enough for one table row.
last_line() {
	sed -e '/^[[:space:]]*$/d' "$1" 2>/dev/null | tail -n 1 | cut -c1-120
}

# Poll every 20 ms, for up to 5 s, until $1 exists; fail early if the
# process $2 (optional) has died.
wait_for_device() {
	i=0
	while [ "$i" -lt 250 ]; do
		[ -e "$1" ] && return 0
		if [ -n "${2:-}" ] && ! pid_alive "$2"; then
			BACKEND_REASON="process exited before $1 appeared"
			return 1
		fi
		usleep 20000
		i=$((i + 1))
	done
	BACKEND_REASON="$1 did not appear within 5 s"
	return 1
}

# Running and not a zombie (a zombie still answers kill -0).
pid_alive() {
	[ -r "/proc/$1/stat" ] || return 1
	! grep -qs ') Z ' "/proc/$1/stat"
}

# SIGTERM, then up to 5 s for a clean exit; sets STOP_STATUS.
stop_pid() {
	if ! pid_alive "$1"; then
		wait "$1"
		STOP_STATUS=$?
		BACKEND_REASON="had already exited (status $STOP_STATUS) before SIGTERM"
		return 1
	fi
	kill -TERM "$1" 2>/dev/null
	i=0
	while pid_alive "$1" && [ "$i" -lt 250 ]; do
		usleep 20000
		i=$((i + 1))
	done
	if pid_alive "$1"; then
		kill -KILL "$1" 2>/dev/null
		wait "$1" 2>/dev/null
		STOP_STATUS=killed
		BACKEND_REASON="did not exit within 5 s of SIGTERM"
		return 1
	fi
	wait "$1"
	STOP_STATUS=$?
	# A clean stop: exit 0, or death by the SIGTERM itself (128 + 15).
	case $STOP_STATUS in
	0 | 143) return 0 ;;
	esac
	BACKEND_REASON="exit status $STOP_STATUS after SIGTERM (want 0)"
	return 1
}

# Run with the backend's environment: the device path, its name, the
# preload (the mmap shim) if the backend has one, and the run's --env
# settings (K=V words without spaces, checked by the host: split here).
run_env() {
	# shellcheck disable=SC2086
	if [ -n "$BACKEND_PRELOAD" ]; then
		env KEVENT_DEVICE="$BACKEND_DEVICE" KEVENT_BACKEND="$BACKEND" \
			LD_PRELOAD="$BACKEND_PRELOAD" ${KV_ENV:-} "$@"
	else
		env KEVENT_DEVICE="$BACKEND_DEVICE" KEVENT_BACKEND="$BACKEND" ${KV_ENV:-} "$@"
	fi
}

run_criterion() {
	prog=$1
	name=$(basename "$prog")
	echo "$BACKEND $name" >"$KV_RESULTS/current"
	printf 'tap\t%s\t\n' "$name" >>"$DIR/checks"
	echo "@@ $BACKEND $name (uptime $(cut -d' ' -f1 /proc/uptime))"
	if [ -n "$KV_FILTER" ]; then
		run_env "$prog" --tap="$DIR/$name.tap" --filter "$KV_FILTER" </dev/null >"$DIR/$name.log" 2>&1
	else
		run_env "$prog" --tap="$DIR/$name.tap" </dev/null >"$DIR/$name.log" 2>&1
	fi
	rc=$?
	echo "$rc" >"$DIR/$name.rc"
	[ "$rc" = 0 ] || note_fail "$rc"
}

run_extra() {
	prog=$1
	name=$(basename "$prog")
	echo "$BACKEND extra $name" >"$KV_RESULTS/current"
	run_env "$prog" </dev/null >"$DIR/extra-$name.log" 2>&1
	rc=$?
	echo "$rc" >"$DIR/extra-$name.rc"
	case $rc in
	0) check pass "extra/$name" ;;
	77) check skip "extra/$name" "$(last_line "$DIR/extra-$name.log")" ;;
	*)
		# The program's own status first: check() would note a plain 1.
		note_fail "$rc"
		check fail "extra/$name" "exit status $rc: $(last_line "$DIR/extra-$name.log")"
		;;
	esac
}

# D20 at the stop: tests/vm/stop-witness parks two GET_EVENTS calls and
# says "parked"; the stop then has to answer them (it skips off CUSE).
WITNESS_PID=""
start_witness() {
	WITNESS_PID=""
	w=$KV_BUILD/tests/vm/stop-witness
	[ "$BACKEND_EXTRAS" = 1 ] && [ "$ALIVE" = 1 ] && [ -x "$w" ] || return 0
	run_env "$w" </dev/null >"$DIR/stop-witness.log" 2>&1 &
	WITNESS_PID=$!
	i=0
	while ! grep -qs '^parked' "$DIR/stop-witness.log" && pid_alive "$WITNESS_PID" &&
		[ "$i" -lt 750 ]; do
		usleep 20000
		i=$((i + 1))
	done
}

end_witness() {
	[ -n "$WITNESS_PID" ] || return 0
	i=0
	while pid_alive "$WITNESS_PID" && [ "$i" -lt 250 ]; do
		usleep 20000
		i=$((i + 1))
	done
	pid_alive "$WITNESS_PID" && kill -KILL "$WITNESS_PID" 2>/dev/null
	wait "$WITNESS_PID"
	rc=$?
	case $rc in
	0) check pass stop/parked_calls_answered ;;
	77) check skip stop/parked_calls_answered "$(last_line "$DIR/stop-witness.log")" ;;
	*) check fail stop/parked_calls_answered "exit status $rc: $(last_line "$DIR/stop-witness.log")" ;;
	esac
}

# Kernel complaints since the backend started fail it (design.md C6).
DMESG_BAD='BUG[: ]|WARNING:|Oops|general protection|Call Trace|Slab cache still has objects|Poison overwritten|Redzone|Object padding|Freepointer|UBSAN|refcount_t:|double free|list_add corruption|list_del corruption'
check_dmesg() {
	dmesg >"$DIR/dmesg.log" 2>&1
	bad=$(grep -E "$DMESG_BAD" "$DIR/dmesg.log" | head -n 1 | cut -c1-120)
	if [ -n "$bad" ]; then
		check fail backend/dmesg "kernel log: $bad"
	else
		check pass backend/dmesg
	fi
}

# A backend that dies under a client is a failure of its own, named after
# the program that was running, once (the later programs then show it too).
still_alive() {
	[ "$ALIVE" = 1 ] || return 0
	command -v backend_alive >/dev/null 2>&1 || return 0
	BACKEND_REASON=""
	backend_alive && return 0
	ALIVE=0
	check fail backend/alive "backend gone after $(basename "$1"): $BACKEND_REASON"
}

load_backend() {
	BACKEND=$1
	# A fresh set of hooks per backend.
	BACKEND_DEVICE="" BACKEND_PRELOAD="" BACKEND_REASON="" BACKEND_TRIVIAL=0
	BACKEND_CLIENT_TESTS=1 BACKEND_EXTRAS=1 BACKEND_SELFTEST=""
	unset -f backend_start backend_stop backend_selftest backend_alive 2>/dev/null
	# shellcheck source=/dev/null
	. "/vm/backend-$BACKEND.sh"
}

run_backend() {
	load_backend "$1"
	DIR=$KV_RESULTS/$BACKEND
	mkdir -p "$DIR"
	: >"$DIR/checks"
	dmesg -c >/dev/null 2>&1
	echo "$BACKEND start" >"$KV_RESULTS/current"
	echo "@@ backend $BACKEND (uptime $(cut -d' ' -f1 /proc/uptime))"
	if backend_start "$DIR"; then
		[ "$BACKEND_TRIVIAL" = 1 ] || check pass backend/start
		if [ -n "$BACKEND_SELFTEST" ]; then
			echo "$BACKEND $BACKEND_SELFTEST" >"$KV_RESULTS/current"
			BACKEND_REASON=""
			if backend_selftest "$DIR"; then
				check pass "$BACKEND_SELFTEST"
			else
				check fail "$BACKEND_SELFTEST" "$BACKEND_REASON"
			fi
		fi
		ALIVE=1
		if [ "$BACKEND_CLIENT_TESTS" = 1 ]; then
			while IFS= read -r prog; do
				[ -n "$prog" ] || continue
				run_criterion "$prog"
				still_alive "$prog"
			done </vm/client-tests
		fi
		if [ "$BACKEND_EXTRAS" = 1 ]; then
			while IFS= read -r prog; do
				[ -n "$prog" ] || continue
				run_extra "$prog"
				still_alive "extra $prog"
			done </vm/extras
		fi
		echo "$BACKEND stop" >"$KV_RESULTS/current"
		start_witness
		BACKEND_REASON=""
		if backend_stop "$DIR"; then
			[ "$BACKEND_TRIVIAL" = 1 ] || check pass backend/stop
		else
			check fail backend/stop "$BACKEND_REASON"
		fi
		end_witness
	else
		check fail backend/start "$BACKEND_REASON"
	fi
	check_dmesg
	: >"$DIR/done"
}

if [ "${1:-}" = --shell ]; then
	[ -z "$KV_TERM_SIZE" ] || stty rows "${KV_TERM_SIZE% *}" cols "${KV_TERM_SIZE#* }" 2>/dev/null
	b=${KV_BACKENDS%% *}
	if [ -n "$b" ]; then
		load_backend "$b"
		DIR=$KV_RESULTS/$BACKEND
		mkdir -p "$DIR"
		if backend_start "$DIR"; then
			echo "backend $BACKEND is up: $BACKEND_DEVICE (logs in $DIR)"
			export KEVENT_DEVICE="$BACKEND_DEVICE" KEVENT_BACKEND="$BACKEND"
			# shellcheck disable=SC2086
			[ -z "${KV_ENV:-}" ] || export ${KV_ENV}
			[ -z "$BACKEND_PRELOAD" ] || echo "for mmap on this backend: export LD_PRELOAD=$BACKEND_PRELOAD"
		else
			echo "backend $BACKEND failed to start: $BACKEND_REASON"
			b=""
		fi
	fi
	echo "build dir: $KV_BUILD; exit the shell to power off"
	setsid cttyhack /bin/sh -l
	if [ -n "$b" ]; then
		backend_stop "$DIR" || echo "backend $BACKEND stop: $BACKEND_REASON"
	fi
	exit 0
fi

for b in $KV_BACKENDS; do
	run_backend "$b"
done
echo "guest runner: done" >"$KV_RESULTS/current"
exit "$FIRST_RC"
