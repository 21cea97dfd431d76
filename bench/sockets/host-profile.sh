#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The host's half of bench/sockets/guest-profile.sh (KEVENT_HOST_PERF=1 or
# KEVENT_HOST_SWEEP=1): where qemu itself spends the guest's time at each
# number of sockets.  Follows LOG (the stderr of `tests/vm/guest run
# --verbose`, which copies the serial console there); on "kevent-host-perf:
# start TAG" it samples the qemu process that serves BUILDDIR (its 9p share
# names the dir) with `perf record -g -F $PERF_FREQ` (250 by default) into
# OUT/TAG.data, until the next start line or "kevent-host-perf: stop".
# Stop it with SIGTERM once the guest run has returned.  Then
# `host-profile.sh --report OUT` prints, per TAG, qemu's samples and where
# they went (below); samples over the guest's events at that N (the
# benchmark's "events" line) give qemu's CPU per event.  Example (N=1,000
# and 2,000 alternated in one process, as bench/changes.md reports):
#   tests/vm/guest run --builddir build-bench --backend module --smp 2 \
#     --slub-debug off --filter 'get/max_zero*' --verbose \
#     --env E2006=$PWD/build-bench/bench/sockets/bench-epoll2006 \
#     --env KEVENT_HOST_SWEEP=1 --env KEVENT_HOST_FRESH=0 --env AB_PASSES=1 \
#     --env KEVENT_PROF_N=1000,2000,1000,2000,1000,2000,1000,2000 \
#     --env KEVENT_PROF_READERS=lt,kevent \
#     --extra bench/sockets/guest-profile.sh 2>/tmp/g.log &
#   PERF_FREQ=500 bench/sockets/host-profile.sh /tmp/g.log /tmp/hp $PWD/build-bench
#   bench/sockets/host-profile.sh --report /tmp/hp
set -u

# --report: per profile, qemu's samples (PERF_FREQ per second of its CPU
# time) in five parts, by where the host's CPU went (qemu 7.2, TCG):
#   jit        the guest's code as qemu translated it (perf: [JIT])
#   softmmu    the soft-MMU's slow path: the *_mmu load/store helpers, the
#              TLB fill and page walk (x86_cpu_tlb_fill), the refill
#              (tlb_set_page*), the atomic ops' TLB lookup, RAM lookups
#   tb_lookup  finding the next translated block (helper_lookup_tb_ptr,
#              cpu_exec, qht_lookup_custom)
#   atomic     the guest's locked instructions (helper_atomic_*)
#   other      the rest of qemu, the host kernel and libraries
# Debian's qemu has only its exported symbols: a static function's samples
# show as an address, named here after the exported symbol before it; the
# statics that matter here were identified from the disassembly (what
# calls them and what they call), as the table in the script says.
report() {
	OUT=$1 python3 - <<'PY'
import bisect, collections, glob, os, re, subprocess
qemu = os.path.realpath('/usr/bin/qemu-system-x86_64')
syms = sorted((int(a, 16), n) for a, t, n in
              (l.split() for l in subprocess.run(['nm', '-D', '--defined-only', qemu],
               capture_output=True, text=True).stdout.splitlines() if len(l.split()) == 3)
              if t in 'Tt')
addrs = [a for a, _ in syms]
# static code after these exported symbols (qemu 7.2.22, Debian's build)
STATIC = {'curr_cflags': 'tb_lookup',        # helper_lookup_tb_ptr
          'cpu_stq_le_data': 'atomic',       # helper_atomic_*
          'tlb_set_dirty': 'softmmu',        # atomic_mmu_lookup
          'plugin_gen_tb_end': 'softmmu',    # cputlb.c's load helpers called from C
          'do_smm_enter': 'softmmu',         # target/i386 page walk statics
          'host_cpu_max_instance_init': 'softmmu'}
SOFT = re.compile(r'^(helper_(le|be|ret)_(ld|st)[a-z]*_mmu|cpu_(ld|st)[a-z_]*|x86_cpu_tlb_fill|'
                  r'tlb_[a-z_]*|probe_access[a-z_]*|get_page_addr_code[a-z_]*|address_space_[a-z_]*|'
                  r'flatview_translate|iotlb_to_section|memory_region_section_get_iotlb|'
                  r'qemu_ram_[a-z_]*|get_pg_mode|cpu_atomic_[a-z0-9_]*)$')
LOOKUP = {'cpu_exec', 'qht_lookup_custom', 'cpu_get_tb_cpu_state', 'tb_htable_lookup'}
def part(dso, sym):
    if dso.startswith('[JIT]'):
        return 'jit'
    if os.path.basename(dso) != 'qemu-system-x86_64':
        return 'other'
    if sym.startswith('0x'):
        base = syms[bisect.bisect_right(addrs, int(sym, 16)) - 1][1]
        if base in STATIC:
            return STATIC[base]
        sym = base
    return 'softmmu' if SOFT.match(sym) else 'tb_lookup' if sym in LOOKUP else 'other'
parts = ['jit', 'softmmu', 'tb_lookup', 'atomic', 'other']
print(f'{"profile":18s} {"samples":>8s} ' + ' '.join(f'{p:>9s}' for p in parts))
for d in sorted(glob.glob(os.path.join(os.environ['OUT'], '*.data')), key=os.path.getmtime):
    out = subprocess.run(['perf', 'report', '-i', d, '--no-children', '-q', '--sort', 'dso,sym',
                          '-F', 'sample,dso,sym', '-g', 'none'], capture_output=True, text=True).stdout
    c = collections.Counter()
    for l in out.splitlines():
        m = re.match(r'\s*(\d+)\s+(\S+(?: tid \d+)?)\s+\[.\]\s+(\S+)', l)
        if m:
            c[part(m.group(2), m.group(3))] += int(m.group(1))
    tot = sum(c.values()) or 1
    print(f'{os.path.basename(d)[:-5]:18s} {tot:8d} ' + ' '.join(f'{100 * c[p] / tot:8.1f}%' for p in parts))
PY
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
