#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""bench/report.py: bench/results/REPORT.md and its PNG plots (gnuplot) from
the raw logs scripts/bench collected.  Every figure is a ratio against a
baseline measured in the same run; the absolute numbers are shown beside
it for orientation only (design.md C4)."""
import argparse
import os
import platform
import re
import statistics
import subprocess

E2006_REF = {'kevent': 59794, 'lt': 57428, 'et': 78265}
# Writes per event above which the writer outran the reader at the smallest
# N (1.1 to 1.9 on a quiet host, 2.2 to 11 on a loaded one: bench/changes.md).
E2006_OUTRAN = 2.0
TARGETS = {
    'drain64': 0.25, 'mem': 256, 'addrm': 1.5, 'timer': 2.0, 'sock': 0.6,
    'ioctl': 1.2, 'batch': 30, 'e2006': 1.0, 'flat': 1.5, 'ptimer': 3.0,
    'kq': 0.9, 'kqrev1': 1.0,
}
# bench-kqueue-scale's readers, in the column order of its lines.
KQ_READERS = ('epoll LT', 'kqueue', 'kqueue rev 1', 'get_events', 'epoll LT + count')


def read(path):
    try:
        with open(path, encoding='utf-8', errors='replace') as f:
            return f.read()
    except OSError:
        return ''


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ''


def verdict(ok):
    return 'met' if ok else 'missed'


def provenance(text, a):
    """The run this report comes from, stated from scripts/bench's own record."""
    kv = {}
    for line in text.splitlines():
        k, _, v = line.partition('=')
        kv[k.strip()] = v.strip()
    here = run(['git', 'rev-parse', '--short=12', 'HEAD'])
    if not kv:
        return ('**Provenance of this report:** not recorded (report.py run on logs without '
                '`provenance.log`, i.e. not from one `scripts/bench` run): do not quote it.')
    out = [f'**Provenance of this report:** one `scripts/bench` run '
           f'(`{kv.get("args", "none")}`) at commit {kv.get("commit", "?")}, '
           f'{kv.get("started", "?")} to {kv.get("ended", "?")}; every figure below comes from '
           f'the logs of this run, nothing rerun or mixed in.']
    if here and kv.get('commit', '').split()[0] != here:
        out.append(f'This text was generated from those logs by `bench/report.py` of commit {here} '
                   '(a later commit than the run\'s; no figure was measured again).')
    if 'host_start' in kv:
        out.append(f'Host benchmarks {kv["host_start"]} to {kv.get("host_end", "?")}.')
    boots = []
    for b in range(1, a.boots + 1):
        if f'boot{b}_end' not in kv:
            continue
        end, _, rc = kv[f'boot{b}_end'].partition(' rc=')
        others = {kv.get(f'boot{b}_other_qemu_before', '?'), kv.get(f'boot{b}_other_qemu_after', '?')}
        boots.append(f'boot {b}: queued {kv.get(f"boot{b}_queued", "?")}, {kv.get(f"boot{b}_seconds", "?")} s '
                     f'of boot, ended {end}, exit {rc or "?"}, other guests on the machine at its start and '
                     f'end: {" and ".join(sorted(others))}')
    if boots:
        lock = kv.get('vm_lock', '/tmp/kevent-vm.lock')
        shared = lock != '/tmp/kevent-vm.lock'
        out.append('Guest ' + '; '.join(boots) + '. '
                   + (f'The boots took the private lock {lock} instead of the machine-wide guest lock, '
                      'so they may have shared the 2 CPUs with another guest.' if shared else
                      'The boots held the machine-wide guest lock (other guests that take it waited).'))
    return ' '.join(out)


def in_tree(path):
    """path as the source tree names it (build-bench/...), not where this
    checkout happens to live."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rel = os.path.relpath(os.path.abspath(path), root)
    return path if rel.startswith('..') else rel


def versions(build, commit):
    cpu = ''
    for line in read('/proc/cpuinfo').splitlines():
        if line.startswith('model name'):
            cpu = line.split(':', 1)[1].strip()
            break
    mem = ''
    m = re.search(r'MemTotal:\s+(\d+)', read('/proc/meminfo'))
    if m:
        mem = f'{int(m.group(1)) // 1024} MiB'
    return [
        ('machine', f'{cpu}, {os.cpu_count()} CPUs, {mem}'),
        ('host kernel', platform.release()),
        ('guest kernel', run(['tests/vm/guest', 'kver']) or 'n/a'),
        ('qemu', (run(['qemu-system-x86_64', '--version']).splitlines() or ['n/a'])[0]),
        ('libfuse', run(['pkg-config', '--modversion', 'fuse3']) or 'n/a'),
        ('compiler', (run(['cc', '--version']).splitlines() or ['n/a'])[0]),
        ('commit', commit),
        ('build', f'{build} (release, -O2, no sanitizers)'),
    ]


def parse_drain(text):
    rows = {}
    for m in re.finditer(r'^\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+([\d.]+)', text, re.M):
        rows[int(m.group(1))] = (int(m.group(2)), int(m.group(3)), float(m.group(4)))
    return rows


def parse_e2006(text):
    rows = {}
    # lt, et, kevent, ring (0: not measured; older logs have no ring column)
    for m in re.finditer(r'^row (\S+) (\d+) (\d+) (\d+) (\d+)(?: (\d+))?', text, re.M):
        rows[int(m.group(2))] = tuple(int(m.group(i) or 0) for i in (3, 4, 5, 6))
    kind = re.search(r'kevent\s+\d+ \((\w+)\)', text)
    # per-round ratios of the ring (same round, same load), by N
    rnd = {int(n): (float(a), float(b)) for n, a, b in re.findall(
        r'^N=(\d+)\s+\S+\s+ring .*per-round medians: ring/LT ([\d.]+)\s+ring/ET ([\d.]+)', text, re.M)}
    why = re.search(r'^# revision-2 ring not measured on this backend: (.*)$', text, re.M)
    return rows, kind.group(1) if kind else '?', rnd, why.group(1) if why else ''


def parse_e2006_cpu(text, tag='cpu'):
    """Per-event costs {N: (lt, et, kevent, ring)}: tag cpu (the reader
    thread's CPU ns), wcpu (the writer's), scpu (machine busy ns), ctxt
    (context switches), calls (the reader's), writes (the writer's bytes)."""
    num = r'([\d.]+)'
    return {int(n): tuple(float(x) if tag in ('ctxt', 'calls', 'writes') else int(float(x)) for x in v) for n, *v in
            re.findall(rf'^{tag} \S+ (\d+) {num} {num} {num} {num}', text, re.M)}


def lt_growth(rows):
    """[(N, epoll LT's cost per event at N over at the smallest N)] from
    the rates {N: (lt, et, kevent, ring)}."""
    pts = [(n, r[0]) for n, r in sorted(rows.items()) if r[0] > 0]
    return [(n, pts[0][1] / lt) for n, lt in pts]


def rel_growth(rows, col=2):
    """[(N, growth of column col's cost per event over epoll LT's growth)]
    from the rates, both against their own smallest N: the module's share
    of the growth, with what the shared socket path adds under the same
    load taken out."""
    pts = [(n, r[0], r[col]) for n, r in sorted(rows.items()) if r[0] > 0 and r[col] > 0]
    if not pts:
        return []
    _, lt0, kv0 = pts[0]
    return [(n, (kv0 / kv) / (lt0 / lt)) for n, lt, kv in pts]


def rel_growth_cpu(cpu, col=2):
    """The same from the reader CPU ns per event {N: (lt, et, kevent, ring)}."""
    pts = [(n, c[0], c[col]) for n, c in sorted(cpu.items()) if c[0] > 0 and c[col] > 0]
    if not pts:
        return []
    _, lt0, kv0 = pts[0]
    return [(n, (kv / kv0) / (lt / lt0)) for n, lt, kv in pts]


def parse_ioctl(text):
    out = {}
    m = re.search(r'CTL \(1 entry\)\s+kevent\s+([\d.]+) us\s+noop\s+([\d.]+) us\s+ratio ([\d.]+)', text)
    if m:
        out['ctl'] = tuple(float(x) for x in m.groups())
    m = re.search(r'GET_EVENTS \(1\)\s+kevent\s+([\d.]+) us\s+noop\s+([\d.]+) us\s+ratio ([\d.]+)', text)
    if m:
        out['get'] = tuple(float(x) for x in m.groups())
    m = re.search(r'round ratios CTL median ([\d.]+) min ([\d.]+) max ([\d.]+); GET_EVENTS median ([\d.]+) min ([\d.]+) max ([\d.]+)', text)
    if m:
        out['scatter'] = tuple(float(x) for x in m.groups())
    out['batch'] = {int(b): (float(r), float(x)) for b, r, x in
                    re.findall(r'^batch (\d+)\s+(\d+) events/s\s+([\d.]+)x', text, re.M)}
    m = re.search(r'round ratios batch 64 over batch 1 median ([\d.]+) min ([\d.]+) max ([\d.]+)', text)
    if m:
        out['drain_scatter'] = tuple(float(x) for x in m.groups())
    return out


def parse_kq(text):
    """bench-kqueue-scale's lines {tag: {N: (lt, kqueue, rev1, get, ltcount)}}
    for the tags kqrow (events/s), kqcpu (reader ns/event), kqusr (its
    user-space part; absent from older logs), kqcalls
    (waits/event), kqctxt (context switches/event, machine-wide) and kqround
    (per-round medians kqueue/LT, rev1/LT, get/LT, kqueue/rev1,
    kqueue/ltcount).  A log from before the ltcount reader reads 0 there."""
    out = {}
    for tag in ('kqrow', 'kqcpu', 'kqusr', 'kqcalls', 'kqctxt', 'kqround'):
        out[tag] = {int(n): (tuple(float(x) for x in v.split()) + (0.0,))[:5] for n, v in
                    re.findall(rf'^{tag} \S+ (\d+) ((?:[\d.]+ ?){{4,5}})$', text, re.M)}
    return out


def parse_ptimer(text):
    """bench-daemon-ptimer's attempts [(attempt, ptimer p99 µs, timerfd p99 µs)]."""
    return [(int(a), int(p) / 1000, int(t) / 1000) for a, p, t in
            re.findall(r'^(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+$', text, re.M)]


class Plots:
    def __init__(self, out):
        self.out = out
        self.made = []
        self.gnuplot = bool(run(['sh', '-c', 'command -v gnuplot']))

    def plot(self, name, title, xlabel, ylabel, series, logx=False, extra=''):
        """series: [(label, [(x, y), ...])]; a line per series."""
        series = [(label, pts) for label, pts in series if pts]
        if not self.gnuplot or not series:
            return None
        dat = os.path.join(self.out, f'.{name}.dat')
        with open(dat, 'w', encoding='utf-8') as f:
            for label, pts in series:
                f.write(f'# {label}\n')
                for x, y in pts:
                    f.write(f'{x} {y}\n')
                f.write('\n\n')
        plots = ', '.join(f"'{dat}' index {i} with linespoints lw 2 title '{label}'"
                          for i, (label, _) in enumerate(series))
        # noenhanced: an underscore in a label (get_events) is a letter, not a subscript
        script = (f"set terminal png size 900,540 noenhanced\nset output '{self.out}/{name}.png'\n"
                  f"set title '{title}'\nset xlabel '{xlabel}'\nset ylabel '{ylabel}'\n"
                  f"set grid\nset key outside right\n{'set logscale x' if logx else ''}\n"
                  f"{extra}\nplot {plots}\n")
        subprocess.run(['gnuplot'], input=script, text=True, check=False)
        os.unlink(dat)
        self.made.append(name)
        return f'{name}.png'


def module_boots(raw, boots):
    """Per guest boot, the module's ratios at 2,000 sockets that a headline
    row quotes: {key: (by the rates, per round)} for get_events / LT, the
    ring / LT, the kqueue front / LT and the front / its revision-1 path.
    Boot 1 runs every N; the later boots of `scripts/bench --boots` run
    2,000 alone on the module, so these rows take a median over the boots."""
    out = []
    for b in range(1, boots + 1):
        text, r = raw(f'guest{b}-module'), {}
        rows, _, rnd, _ = parse_e2006(text)
        if 2000 in rows:
            lt, _, kv, rg = rows[2000]
            kround = {int(n): float(x) for n, x in re.findall(r'^rounds \S+ (\d+) ([\d.]+)', text, re.M)}
            r['get'] = (kv / lt, kround.get(2000))
            if rg:
                r['ring'] = (rg / lt, rnd[2000][0] if 2000 in rnd else None)
        kq = parse_kq(text)
        if 2000 in kq['kqrow']:
            lt, k, k1, _, _ = kq['kqrow'][2000]
            per = kq['kqround'].get(2000)
            r['kq'] = (k / lt, per[0] if per else None)
            r['kqrev1'] = (k / k1 if k1 else 0, per[3] if per else None)
        out.append(r)
    return out


def over_boots(mb, key):
    """(median by the rates, median per round, boots, the rates' range) of
    `key` over the boots that measured it, or None below two boots."""
    got = [b[key] for b in mb if key in b]
    if len(got) < 2:
        return None
    rates = [g[0] for g in got]
    pers = [g[1] for g in got if g[1] is not None]
    return statistics.median(rates), statistics.median(pers) if pers else None, len(got), (min(rates), max(rates))


def boots_value(mb, key):
    """A headline row's figure and the ratio its verdict judges: boot 1's
    (module_boots() measured it there) alone, or the median over the boots
    where more than one measured it."""
    ob = over_boots(mb, key)
    if not ob:
        rate, per = mb[0][key]
        return (f'{rate:.2f}' + (f', per round {per:.2f}' if per is not None else '')), rate
    med, mper, n, (lo, hi) = ob
    return (f'{med:.2f}, per round {mper:.2f} (medians of {n} boots; by the rates {lo:.2f}–{hi:.2f})'
            if mper is not None else f'{med:.2f} (median of {n} boots, {lo:.2f}–{hi:.2f})'), med


def boots_section(w, mb):
    """The module's headline ratios boot by boot, where more than one boot ran."""
    if sum(1 for b in mb if b) < 2:
        return
    w('## The module\'s headline ratios over boots\n')
    w('Each boot of `scripts/bench --boots N` after the first runs the 2006 comparison and the kqueue '
      'front\'s benchmark on the module at 2,000 sockets alone (the same rounds and seconds as boot 1). '
      'Under TCG on a shared 2-CPU host one boot\'s figure scatters more than most changes move it, '
      'so the headline quotes the median over the boots; each cell is the ratio by the medians of '
      'the rates, then the median of the per-round ratios.\n')
    keys = (('get', 'get_events / epoll LT'), ('ring', 'ring / epoll LT'),
            ('kq', 'kqueue / epoll LT'), ('kqrev1', 'kqueue / its revision 1'))
    w('| boot | ' + ' | '.join(k[1] for k in keys) + ' |')
    w('|---:|' + '---|' * len(keys))
    cell = lambda v: '–' if v is None else (f'{v[0]:.2f}' + (f', {v[1]:.2f}' if v[1] is not None else ''))  # noqa: E731
    for i, b in enumerate(mb, 1):
        w(f'| {i} | ' + ' | '.join(cell(b.get(k)) for k, _ in keys) + ' |')
    meds = []
    for k, _ in keys:
        ob = over_boots(mb, k)
        meds.append('–' if not ob else f'{ob[0]:.2f}' + (f', {ob[1]:.2f}' if ob[1] is not None else ''))
    w('| median | ' + ' | '.join(meds) + ' |\n')


def kq_head(head, rows, rnd, mb):
    """The headline rows of the kqueue front on the module at 2,000 sockets."""
    if 2000 not in rows:
        head.append(('kqueue front on the module vs epoll LT, 2,000 sockets', 'not measured (no guest run)',
                     f'≥ {TARGETS["kq"]}', '—'))
        return
    _, kq, _, _, ltc = rows[2000]
    per = rnd.get(2000, (0,) * 5)
    text, x = boots_value(mb, 'kq')
    head.append(('kqueue front on the module vs epoll LT, 2,000 sockets (events/s)',
                 text, f'≥ {TARGETS["kq"]}', verdict(x >= TARGETS['kq'])))
    text, x = boots_value(mb, 'kqrev1')
    head.append(('kqueue front on the module vs its revision-1 path, 2,000 sockets (events/s)',
                 text, f'> {TARGETS["kqrev1"]}', verdict(x > TARGETS['kqrev1'])))
    if ltc:
        head.append(('kqueue front on the module vs epoll LT with an ioctl(SIOCINQ) per event '
                     '(libkqueue\'s way of filling data on Linux), 2,000 sockets (events/s)',
                     f'{kq / ltc:.2f}, per round {per[4]:.2f}', 'none (context for the row above)', '—'))


def kqueue_section(w, raw, plots, head, mb):
    """The kqueue front against epoll LT from 100 to 4,000 sockets."""
    load = raw('load').strip().replace('\n', '; ')
    w('## The kqueue front against epoll LT\n')
    w('N connected AF_UNIX pairs, one writer writing a byte to a pair chosen at random, the reader '
      'at batch 64 reading each ready socket empty, as in the 2006 comparison; readers: epoll LT '
      '(the baseline), epoll LT with an `ioctl(SIOCINQ)` per delivered event before the drain '
      '(what libkqueue does on Linux to fill an EVFILT_READ event\'s `data`: the same answer the '
      'front\'s `data` carries), `kevent()` of libkqueue-kevent on a kqueue with '
      'EVFILT_READ level-triggered on the highest revision the device serves, the same with '
      '`KQUEUE_KEVENT_REVISION=1` (the front\'s revision-1 path, level triggering done in the '
      'library), and the device without the front (poll kevents on a revision-1 queue through '
      '`kevent_get_events`). Every reader at every N in each round, the readers\' order rotating '
      'and the N going forward and backward in turn; rates are medians over the rounds, "per round" '
      'the median of the ratio taken within each round (`bench/kqueue/kqueue-scale.c`). The module '
      'and CUSE rows ran in the guest boot of the 2006 comparison, against that guest\'s epoll LT. '
      f'The machine is shared: host load average {load or "not recorded"}; the dates and the other '
      'guests seen are in the provenance line at the top.\n')
    sources = [('module', 'guest1-module', 'module in the guest'),
               ('cuse', 'guest1-cuse', 'daemon on CUSE in the guest'),
               ('fuse', 'kqscale-fuse', 'daemon on fuse, natively on the host')]
    w('| backend | N | epoll LT ev/s | kqueue ev/s | rev 1 ev/s | get_events ev/s | LT + count ev/s '
      '| kqueue / LT | per round | rev 1 / LT | per round | kqueue / rev 1 | per round | get_events / LT '
      '| kqueue / LT + count | per round |')
    w('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    series, cpu_rows = [], []
    for be, log, label in sources:
        kq = parse_kq(raw(log))
        rows, rnd = kq['kqrow'], kq['kqround']
        if be == 'module':
            kq_head(head, rows, rnd, mb)
        if not rows:
            w(f'| {label} | – | not measured | | | | | | | | | | | | | |')
            continue
        for n, (lt, k, k1, g, lc) in sorted(rows.items()):
            r = rnd.get(n, (0,) * 5)
            w(f'| {label} | {n:,} | {lt:,.0f} | {k:,.0f} | {k1:,.0f} | {g:,.0f} | {lc:,.0f} | {k / lt:.2f} | '
              f'{r[0]:.2f} | {k1 / lt:.2f} | {r[1]:.2f} | {k / k1 if k1 else 0:.2f} | {r[3]:.2f} | '
              f'{g / lt:.2f} | {k / lc if lc else 0:.2f} | {r[4]:.2f} |')
        # the per-round medians: both readers of a ratio under the same load
        series.append((f'{be} kqueue / epoll LT', [(n, v[0]) for n, v in sorted(rnd.items())]))
        series.append((f'{be} kqueue rev 1 / epoll LT', [(n, v[1]) for n, v in sorted(rnd.items())]))
        if be == 'module':
            series.append(('module kqueue / epoll LT + count',
                           [(n, v[4]) for n, v in sorted(rnd.items()) if v[4]]))
        cpu_rows.append((label, kq['kqcpu'], kq['kqusr'], kq['kqcalls'], kq['kqctxt']))
    w('')
    w('The reader thread\'s CPU per event (its syscalls\' kernel work included; on the daemons the '
      'daemon\'s own CPU is another process\'s and not in it), its waits per event (`epoll_wait`, '
      '`kevent()`, `GET_EVENTS` calls) and the context switches per event, machine-wide (in the guest '
      'nothing else runs; on the host other work counts too), medians over the same rounds; in '
      'parentheses the user-space part of the CPU (`getrusage`: the library\'s and the loop\'s own '
      'instructions), where the log has it:\n')
    w('| backend | N | ' + ' | '.join(f'{r} ns' for r in KQ_READERS) + ' | '
      + ' | '.join(f'{r} waits/event' for r in KQ_READERS) + ' | '
      + ' | '.join(f'{r} switches/event' for r in KQ_READERS) + ' |')
    w('|---|---:|' + '---:|' * 3 * len(KQ_READERS))
    for label, cpu, usr, calls, ctxt in cpu_rows:
        for n, c in sorted(cpu.items()):
            q = calls.get(n, (0,) * len(KQ_READERS))
            u = usr.get(n)
            x = ' | '.join(f'{v:.2f}' for v in ctxt[n]) if n in ctxt else ' | '.join('–' * len(KQ_READERS))
            w(f'| {label} | {n:,} | '
              + ' | '.join(f'{v:,.0f}' + (f' ({u[i]:,.0f})' if u and v else '') for i, v in enumerate(c))
              + ' | '
              + ' | '.join(f'{v:.3f}' for v in q) + f' | {x} |')
    w('')
    png = plots.plot('kqueue-ratio', 'kqueue front events/s over epoll LT events/s, per-round medians',
                     'connected sockets', 'reader / epoll LT',
                     series + [(f'target {TARGETS["kq"]}', [(100, TARGETS['kq']), (4000, TARGETS['kq'])])],
                     logx=True, extra='set xrange [70:6000]\nset yrange [0:*]')
    if png:
        w(f'![kqueue front against epoll LT]({png})\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--raw', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--build', required=True)
    ap.add_argument('--boots', type=int, default=1)
    ap.add_argument('--mode', default='full')
    ap.add_argument('--guest', type=int, default=1)
    ap.add_argument('--commit', default='unknown')
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    raw = lambda n: read(os.path.join(a.raw, f'{n}.log'))  # noqa: E731
    plots = Plots(a.out)
    md = []
    w = md.append

    w('# kevent-cuse benchmark report\n')
    w(f'Generated by `scripts/bench{" --quick" if a.mode == "quick" else ""}`'
      f'{f" --boots {a.boots}" if a.boots > 1 else ""}. Every figure is a ratio against a '
      'baseline measured in the same run (design.md C4); absolute rates are for '
      'orientation only (a shared 2-core virtual host, the guest under qemu TCG).'
      + (' **Quick mode: short runs, a sanity pass, not figures to quote.**' if a.mode == 'quick' else '')
      + ('' if a.guest else ' **No guest boot in this run** (`--quick` leaves it out unless `--guest` is given, '
         'or `--no-guest`): the module and CUSE rows are not measured.') + '\n')
    w(provenance(read(os.path.join(a.raw, 'provenance.log')), a) + '\n')
    w('| | |\n|---|---|')
    for k, v in versions(in_tree(a.build), a.commit):
        w(f'| {k} | {v} |')
    load = raw('load').strip().replace('\n', '; ')
    w(f'| host load average (1, 5, 15 min) | {load or "not recorded"} |')
    w('')

    # Headline table, filled as the sections below compute.
    head = []
    # The module's headline ratios per boot (boot 1 first).
    mb = module_boots(raw, a.boots)

    # --- core drain
    drain = parse_drain(raw('drain'))
    w('## Core drain against a bare ring\n')
    w('4095 ready kevents drained by GET_EVENTS at batch b, next to a bare '
      'single-producer ring of 40-byte records drained in the same batches '
      '(`bench/core/drain.c`).\n')
    if drain:
        w('| batch | core events/s | ring records/s | core / ring |\n|---:|---:|---:|---:|')
        for b, (c, r, x) in sorted(drain.items()):
            w(f'| {b} | {c:,} | {r:,} | {x:.3f} |')
        w('')
        if 64 in drain:
            x = drain[64][2]
            head.append(('core drain, batch 64, vs bare ring', f'{x:.3f}',
                         f'≥ {TARGETS["drain64"]}', verdict(x >= TARGETS['drain64'])))
    else:
        w('not measured (see the raw log)\n')

    # --- scale
    scale = raw('scale')
    w('## Scale\n')
    w('`bench/core/scale.c` (core in process, an origin that keeps no state) and '
      '`bench/daemon/scale.c` (the daemon over fuse) where it ran.\n')
    w('```\n' + (scale.strip() or 'not measured') + '\n```\n')
    m = re.search(r'([\d.]+) bytes per kevent', scale)
    if m:
        head.append(('core memory per kevent at 1 M kevents', f'{float(m.group(1)):.0f} B',
                     f'≤ {TARGETS["mem"]} B', verdict(float(m.group(1)) <= TARGETS['mem'])))
    m = re.search(r'ADD\+REMOVE: .*ratio ([\d.]+)', scale)
    if m:
        head.append(('ADD+REMOVE at 1 M vs 1 k kevents', m.group(1), f'≤ {TARGETS["addrm"]}',
                     verdict(float(m.group(1)) <= TARGETS['addrm'])))
    dscale = raw('scale-fuse')
    if dscale.strip():
        w('The daemon over fuse (`kevent-cuse --fuse`, natively):\n')
        w('```\n' + dscale.strip() + '\n```\n')

    # --- timers
    timer = raw('timer')
    w('## Timer lateness against bare timerfds\n')
    w('N periodic timers, phases spread over one period, as TIMER kevents on the '
      'core and origins in process, next to N bare timerfds with the same period '
      'and phases on one epoll (like for like), interleaved (`bench/origins/bench_timer.c`). '
      'The core\'s per-uid expiry budget is set to twice the offered rate (at least '
      'the default 100,000/s), so no expiry is merged.\n')
    trows = re.findall(r'^(\d+)\s+(\d+)ms\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+(\d+)', timer, re.M)
    if trows:
        w('| timers | period | origin p50 µs | origin p99 µs | timerfd p50 µs | timerfd p99 µs | p99 ratio | offered expiries/s | budget/s |')
        w('|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
        for r in trows:
            w(f'| {int(r[0]):,} | {r[1]} ms | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | {int(r[7]):,} | {int(r[8]):,} |')
        w('')
        for r in trows:
            # A median lateness past a quarter period: the consumer does not
            # keep up, and lateness measures the backlog, not the timer.
            sat = [who for who, p50 in (('timerfds', float(r[4])), ('origin', float(r[2])))
                   if p50 * 1000 > int(r[1]) * 1e6 / 4]
            if sat:
                w(f'At {int(r[0]):,} timers the {" and the ".join(sat)} did not keep up on this machine '
                  f'(median lateness above a quarter period): that row measures a backlog.\n')
            if r[0] == '10000':
                head.append(('timer p99 lateness, 10,000 timers, vs 10,000 timerfds', f'{float(r[6]):.2f}×',
                             f'≤ {TARGETS["timer"]}×', verdict(float(r[6]) <= TARGETS['timer']) +
                             (f' (saturated: {", ".join(sat)})' if sat else '')))
    cdf = {}
    for n, who, qs in re.findall(r'^cdf (\d+) (\w+) (.*)$', timer, re.M):
        cdf[(int(n), who)] = [(float(v), float(q)) for q, v in (p.split(':') for p in qs.split())]
    ns = sorted({n for n, _ in cdf})
    if ns:
        n = 10000 if 10000 in ns else ns[-1]
        png = plots.plot('timer-cdf', f'timer lateness CDF, {n} timers', 'lateness (us)', 'fraction',
                         [(f'{who}', cdf.get((n, who), [])) for who in ('origin', 'timerfd')], logx=True)
        if png:
            w(f'![timer lateness CDF]({png})\n')
    if not trows:
        w('not measured\n')

    # --- POSIX-timer kevents (revision 3) on the daemon over fuse
    ptimer = raw('ptimer-fuse')
    w('## POSIX-timer kevents against timerfds (the daemon over fuse)\n')
    w('Expiries 1.5 ms apart, off any millisecond boundary, each armed twice: as a revision-3 '
      '`KEVENT_POSIX_TIMER` (ABSTIME, CLOCK_MONOTONIC, ONESHOT) and as a bare timerfd, both '
      'waited for by one thread in one epoll; the p99 lateness of each per attempt and their ratio, '
      'the figure the median over the attempts (`bench/daemon/ptimer.c`). The rule itself (never '
      'early, D58, D59) is the client test `ptimer/ns_expiries_never_early`.\n')
    w('```\n' + (ptimer.strip() or 'not measured') + '\n```\n')
    pts = parse_ptimer(ptimer)
    png = plots.plot('ptimer-p99', 'p99 lateness per attempt, POSIX-timer kevents and timerfds, same run',
                     'attempt', 'p99 lateness (us)',
                     [('POSIX-timer kevent', [(a_, p) for a_, p, _ in pts]),
                      ('timerfd', [(a_, t) for a_, _, t in pts])],
                     extra='set yrange [0:*]\nset xtics 1')
    if png:
        w(f'![POSIX-timer kevent lateness against timerfds]({png})\n')
    m = re.search(r'median of \d+ attempts\): ([\d.]+)', ptimer)
    if m:
        head.append(('POSIX-timer kevent p99 lateness vs timerfd, daemon over fuse', f'{float(m.group(1)):.2f}×',
                     f'≤ {TARGETS["ptimer"]}×', verdict(float(m.group(1)) <= TARGETS['ptimer'])))

    # --- socket origin
    sock = raw('sockets')
    w('## Socket origin against epoll ET (in process)\n')
    w('```\n' + (sock.strip() or 'not measured') + '\n```\n')
    m = re.search(r'ratio origins/epoll\s+([\d.]+)', sock)
    if m:
        head.append(('socket origin vs epoll ET, 2,000 pairs (in process)', m.group(1),
                     f'≥ {TARGETS["sock"]}', verdict(float(m.group(1)) >= TARGETS['sock'])))
    m = re.search(r'cpu ratio epoll/origins\s+([\d.]+)', sock)
    if m:
        head.append(('socket origin: epoll ET CPU/event over origin CPU/event', m.group(1),
                     f'≥ {TARGETS["sock"]} (same target, steadier figure)',
                     verdict(float(m.group(1)) >= TARGETS['sock'])))

    # --- 2006 comparison
    w('## The 2006 epoll comparison\n')
    w('N connected AF_UNIX pairs, one writer choosing a pair at random, the reader '
      'on epoll LT, epoll ET, kevent through `kevent_get_events` and kevent through the '
      'revision-2 ring (`kevent_init`, then `kevent_wait` + `kevent_commit`, a ring of 256 '
      'slots committed once half of it is read, as take26\'s ring lets a consumer do), every reader at batch 64, interleaved with the order rotating each round, '
      'the N interleaved too (each round goes through every N, forward and backward in turn, so a drift of the host\'s load '
      'does not show as a growth with N; logs from before that change ran one N after the other), '
      'in one run per backend (`bench/sockets/epoll2006.c`). The 2006 thread\'s figures '
      f'(its own machine, for reference only): kevent {E2006_REF["kevent"]:,}, epoll LT '
      f'{E2006_REF["lt"]:,}, epoll ET {E2006_REF["et"]:,} events/s, i.e. kevent/LT '
      f'{E2006_REF["kevent"] / E2006_REF["lt"]:.2f} and kevent/ET {E2006_REF["kevent"] / E2006_REF["et"]:.2f}. '
      'Rates are medians over the rounds; a "per round" ratio is the median of '
      'kevent / epoll LT taken within each round (the same load on both sides).\n')
    sources = [('module', 'guest1-module', 'module in the guest'),
               ('cuse', 'guest1-cuse', 'daemon on CUSE in the guest'),
               ('fuse', 'e2006-fuse', 'daemon on fuse, natively on the host')]
    series_et, series_lt, series_cost, series_ring = [], [], [], []
    ref2006 = f'{E2006_REF["kevent"] / E2006_REF["lt"]:.2f}, {E2006_REF["kevent"] / E2006_REF["et"]:.2f}'
    w('| backend | N | epoll LT ev/s | epoll ET ev/s | get_events ev/s | ring ev/s | get_events / LT | get_events / ET '
      '| ring / LT | ring / ET | ring / LT per round | ns/event vs N=smallest | epoll LT ns/event vs N=smallest '
      '| get_events growth / LT growth | 2006: kevent/LT, kevent/ET |')
    w('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|')
    notes = []
    for be, log, label in sources:
        rows, kind, rnd, why = parse_e2006(raw(log))
        if not rows:
            w(f'| {label} | – | not measured | | | | | | | | | | | | |')
            continue
        if why:
            notes.append(f'{label}: the revision-2 ring was not measured ({why}).')
        base = None
        pts_et, pts_lt, pts_cost, pts_ring = [], [], [], []
        lt_pts = lt_growth(rows)
        ltg, relg = dict(lt_pts), dict(rel_growth(rows))
        for n, (lt, et, kv, rg) in sorted(rows.items()):
            if kv <= 0:
                continue
            base = base or 1e9 / kv
            cost = 1e9 / kv / base
            pts_et.append((n, kv / et))
            pts_lt.append((n, kv / lt))
            pts_cost.append((n, cost))
            ring_cells = (f'{rg:,} | {kv / lt:.2f} | {kv / et:.2f} | {rg / lt:.2f} | {rg / et:.2f} | '
                          f'{rnd[n][0]:.2f}' if rg and n in rnd else
                          f'– | {kv / lt:.2f} | {kv / et:.2f} | – | – | –')
            if rg:
                pts_ring.append((n, rg / lt))
            grow = (f'{ltg[n]:.2f} | {relg[n]:.2f}' if n in ltg and n in relg else '– | –')
            w(f'| {label} ({kind}) | {n:,} | {lt:,} | {et:,} | {kv:,} | {ring_cells} | {cost:.2f} | {grow} | {ref2006} |')
        series_et.append((f'{be} get_events / epoll ET', pts_et))
        series_lt.append((f'{be} get_events / epoll LT', pts_lt))
        series_ring.append((f'{be} ring / epoll LT', pts_ring))
        series_cost.append((be, pts_cost))
        if be == 'module':
            # the same run's epoll LT: what the shared socket path does by itself
            series_cost.append(('epoll LT (module run)', lt_pts))
        if be == 'module' and 2000 in rows:
            rg = rows[2000][3]
            text, x = boots_value(mb, 'get')
            head.append(('module kevent (get_events) vs epoll LT, 2,000 sockets', text,
                         f'≥ {TARGETS["e2006"]}', verdict(x >= TARGETS['e2006'])))
            if rg:
                text, x = boots_value(mb, 'ring')
                head.append(('module kevent through the revision-2 ring vs epoll LT, 2,000 sockets',
                             text, f'≥ {TARGETS["e2006"]}', verdict(x >= TARGETS['e2006'])))
            worst = max(c for _, c in pts_cost)
            lt_worst = max(g for _, g in lt_pts)
            head.append(('module cost per event, 100..4,000 sockets (max / smallest N)',
                         f'{worst:.2f} (epoll LT {lt_worst:.2f})',
                         f'≤ {TARGETS["flat"]}', verdict(worst <= TARGETS['flat'])))
            rel = max(r for _, r in rel_growth(rows))
            cpu_rel = rel_growth_cpu(parse_e2006_cpu(raw(log)))
            cpu_txt = f'; reader CPU {max(r for _, r in cpu_rel):.2f}' if cpu_rel else ''
            # A baseline where the writer outran a reader (several bytes per
            # event) costs more per event for that reader alone: the growth
            # against it is not comparable (bench/changes.md).
            n0, wpe = min(rows), parse_e2006_cpu(raw(log), 'writes')
            outran = n0 in wpe and max(wpe[n0][0], wpe[n0][2]) > E2006_OUTRAN
            if outran:
                cpu_txt += (f' (at {n0:,} sockets the writer outran the readers: {wpe[n0][0]:.2f} writes per '
                            f'event through epoll LT, {wpe[n0][2]:.2f} through get_events)')
            head.append(('module cost growth over epoll LT\'s growth in the same run, 100..4,000 sockets '
                         '(max over N; events/s, and the reader\'s CPU)',
                         f'{rel:.2f}{cpu_txt}', f'≤ {TARGETS["flat"]} (the flat target against the '
                         'same run\'s epoll LT; the absolute row above stays the target)',
                         'not comparable' if outran else verdict(rel <= TARGETS['flat'])))
    if not any(h[0].startswith('module kevent through the revision-2 ring') for h in head):
        head.append(('module kevent through the revision-2 ring vs epoll LT, 2,000 sockets',
                     'not measured (no guest run)', f'≥ {TARGETS["e2006"]}', '—'))
    w('')
    for note in notes:
        w(note + '\n')
    if any(h[0].startswith('module cost growth over epoll LT') for h in head):
        w('The last two columns before the 2006 figures set each N against the smallest: epoll LT\'s own '
          'cost per event, and the module\'s growth divided by epoll LT\'s, both from this run. The '
          'headline quotes that ratio beside the absolute growth, which keeps its target: every reader '
          'here runs the same AF_UNIX path per event (the writer\'s `write()`, the reader\'s two '
          '`read()` calls), and under qemu TCG on a shared 2-CPU host its cost per event moves with the '
          'host\'s load and with how far the writer outruns the reader (writes per event, in the '
          'whole-cost table), whichever reader is on it; at the smallest N a writer that outran the '
          f'readers (more than {E2006_OUTRAN:g} writes per event) makes the ratio not comparable. '
          'Where that growth comes from, measured apart from this run (alternated N, guest and host '
          'profiles): bench/changes.md, "Where the 2006 comparison\'s growth with N comes from".\n')
    cpu_rows = [(label, be, parse_e2006_cpu(raw(log))) for be, log, label in sources]
    if any(c for _, _, c in cpu_rows):
        w('The reader thread\'s CPU time per event (its syscalls\' kernel work included; medians '
          'over the same rounds). Events/s also follows how the writer thread happens to be '
          'scheduled, most of all under TCG; CPU per event does not. It leaves out what runs in '
          'the writer (a wake-up callback runs inside its write()) and in other threads (a kworker): '
          'the machine-wide table below has those. On the daemons the daemon\'s own CPU is not in '
          'it (another process), so their rows are shown, not compared.\n')
        w('| backend | N | epoll LT ns | epoll ET ns | get_events ns | ring ns | epoll LT / get_events | epoll LT / ring '
          '| get_events growth / LT growth |')
        w('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
        for label, be, c in cpu_rows:
            relc = dict(rel_growth_cpu(c)) if be == 'module' else {}
            for n, (lt, et, kv, rg) in sorted(c.items()):
                kr = f'{lt / kv:.2f}' if kv and be == 'module' else '–'
                rr = f'{lt / rg:.2f}' if rg and be == 'module' else '–'
                gr = f'{relc[n]:.2f}' if n in relc else '–'
                w(f'| {label} | {n:,} | {lt:,} | {et:,} | {kv:,} | {rg:,} | {kr} | {rr} | {gr} |')
                if be == 'module' and n == 2000 and rg:
                    head.append(('module reader CPU per event, epoll LT over the revision-2 ring, 2,000 sockets',
                                 f'{lt / rg:.2f}', f'≥ {TARGETS["e2006"]} (steadier companion figure)',
                                 verdict(lt / rg >= TARGETS['e2006'])))
        w('')
    mod = raw('guest1-module')
    wcpu, scpu, ctxt, calls, wpe = (parse_e2006_cpu(mod, tag) for tag in ('wcpu', 'scpu', 'ctxt', 'calls', 'writes'))
    if scpu:
        w('On the module, the whole cost of an event: the writer thread\'s CPU per event (the '
          'wake-up callbacks run in its write()), every CPU\'s busy time per event from the '
          'guest\'s /proc/stat (readers, writer, kworkers, interrupts: nothing else runs in the '
          'guest), context switches per event, machine-wide, and the reader\'s calls per event '
          '(epoll_wait; GET_EVENTS; WAIT and COMMIT), and the writer\'s one-byte writes per event '
          '(the bytes one event\'s drain takes: above 1 when the writer outruns the reader, and '
          'every byte costs the writer a write() and the reader an skb; older logs have none). '
          'epoll / kevent above 1 means kevent is cheaper.\n')
        w('| N | writer ns: LT | get_events | ring | busy ns: LT | ET | get_events | ring | '
          'LT / get_events | LT / ring | switches/event: LT | get_events | ring | calls/event: LT | get_events | ring '
          '| writes/event: LT | get_events | ring |')
        w('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
        for n, (lt, et, kv, rg) in sorted(scpu.items()):
            wl, _, wk, wr = wcpu.get(n, (0, 0, 0, 0))
            cl, _, ck, cr = ctxt.get(n, (0, 0, 0, 0))
            ql, _, qk, qr = calls.get(n, (0, 0, 0, 0))
            bl, _, bk, br = wpe.get(n, (0, 0, 0, 0))
            wcells = f'{bl:.2f} | {bk:.2f} | {br:.2f}' if n in wpe else '– | – | –'
            kr = f'{lt / kv:.2f}' if kv else '–'
            rr = f'{lt / rg:.2f}' if rg else '–'
            w(f'| {n:,} | {wl:,.0f} | {wk:,.0f} | {wr:,.0f} | {lt:,.0f} | {et:,.0f} | {kv:,.0f} | {rg:,.0f} | '
              f'{kr} | {rr} | {cl:.2f} | {ck:.2f} | {cr:.2f} | {ql:.2f} | {qk:.2f} | {qr:.2f} | {wcells} |')
            if n == 2000 and kv and rg:
                head.append(('module machine CPU per event, epoll LT over get_events / over the ring, 2,000 sockets',
                             f'{lt / kv:.2f} / {lt / rg:.2f}', f'≥ {TARGETS["e2006"]} (the whole cost)',
                             verdict(min(lt / kv, lt / rg) >= TARGETS['e2006'])))
        w('')
    ref = [('2006: kevent / epoll LT', [(100, E2006_REF['kevent'] / E2006_REF['lt']), (4000, E2006_REF['kevent'] / E2006_REF['lt'])]),
           ('2006: kevent / epoll ET', [(100, E2006_REF['kevent'] / E2006_REF['et']), (4000, E2006_REF['kevent'] / E2006_REF['et'])])]
    png = plots.plot('e2006-ratio', 'kevent events/s over epoll events/s, same run',
                     'connected sockets', 'kevent / epoll', series_lt + series_et + series_ring + ref, logx=True,
                     extra='set xrange [70:6000]\nset yrange [0:*]')
    if png:
        w(f'![events/s against sockets]({png})\n')
    png = plots.plot('e2006-cost', 'ns/event against sockets, relative to the smallest N',
                     'connected sockets', 'ns/event / ns/event at smallest N', series_cost, logx=True,
                     extra='set xrange [70:6000]\nset yrange [0:*]')
    if png:
        w(f'![cost per event against sockets]({png})\n')

    kqueue_section(w, raw, plots, head, mb)
    boots_section(w, mb)

    # --- daemon per-ioctl on fuse, natively (one run)
    fi = parse_ioctl(raw('ioctl-fuse'))
    if 'ctl' in fi:
        w('## Daemon per-ioctl cost against the no-op FUSE floor (host)\n')
        w('`bench/daemon/ioctl.c` on `kevent-cuse --fuse`, natively, next to `bench/fuse/noop-fuse.c` '
          '(a one-file FUSE filesystem whose ioctl handler makes the same process-memory transfers '
          'and answers at once), the two alternating call by call, a round\'s figure its median call, '
          'the client pinned to one CPU: the ratio of the medians over the rounds, and the range of '
          'the per-round ratios.\n')
        sc = fi.get('scatter', (0,) * 6)
        w('| call | kevent µs | noop µs | ratio | round scatter |\n|---|---:|---:|---:|---|')
        w(f'| CTL (1 entry) | {fi["ctl"][0]} | {fi["ctl"][1]} | {fi["ctl"][2]:.2f} | {sc[1]:.2f}–{sc[2]:.2f} |')
        w(f'| GET_EVENTS (1 event) | {fi["get"][0]} | {fi["get"][1]} | {fi["get"][2]:.2f} | {sc[4]:.2f}–{sc[5]:.2f} |')
        w('')
        head.append(('daemon CTL vs no-op FUSE floor (host, one run)', f'{fi["ctl"][2]:.2f}×',
                     f'≤ {TARGETS["ioctl"]}×', verdict(fi['ctl'][2] <= TARGETS['ioctl'])))
        head.append(('daemon GET_EVENTS vs no-op FUSE floor (host, one run)', f'{fi["get"][2]:.2f}×',
                     f'≤ {TARGETS["ioctl"]}×', verdict(fi['get'][2] <= TARGETS['ioctl'])))

    # --- daemon per-ioctl, over boots
    w('## Daemon per-ioctl cost against the no-op CUSE floor (guest)\n')
    w('`bench/daemon/ioctl.c`: kevent-cuse next to noop-cuse (a CUSE server making the '
      'same transfers and nothing else), the two alternating call by call, a round\'s '
      'figure its median call, the client pinned to one vCPU; per boot the ratio of the '
      'medians over the rounds, and the range of the per-round ratios (the scatter within '
      'the boot).\n')
    boots = [parse_ioctl(raw(f'guest{b}-cuse')) for b in range(1, a.boots + 1)] if a.guest else []
    boots = [b for b in boots if 'ctl' in b]
    if boots:
        w('| boot | CTL kevent µs | CTL noop µs | CTL ratio | GET kevent µs | GET noop µs | GET ratio | round scatter CTL | round scatter GET |')
        w('|---:|---:|---:|---:|---:|---:|---:|---|---|')
        for i, b in enumerate(boots, 1):
            sc = b.get('scatter', (0,) * 6)
            w(f'| {i} | {b["ctl"][0]} | {b["ctl"][1]} | {b["ctl"][2]:.2f} | {b["get"][0]} | {b["get"][1]} | '
              f'{b["get"][2]:.2f} | {sc[1]:.2f}–{sc[2]:.2f} | {sc[4]:.2f}–{sc[5]:.2f} |')
        ctl = [b['ctl'][2] for b in boots]
        get = [b['get'][2] for b in boots]
        mc, mg = statistics.median(ctl), statistics.median(get)
        w(f'\nMedian over {len(boots)} boot(s): CTL {mc:.2f} (scatter {min(ctl):.2f}–{max(ctl):.2f}), '
          f'GET_EVENTS {mg:.2f} (scatter {min(get):.2f}–{max(get):.2f}).'
          + ('' if len(boots) >= 5 else ' Fewer than 5 boots: run `scripts/bench --boots 5` for the target\'s median.') + '\n')
        head.append((f'daemon CTL vs no-op CUSE floor (median of {len(boots)} boot(s))', f'{mc:.2f}×',
                     f'≤ {TARGETS["ioctl"]}× (5 boots)', verdict(mc <= TARGETS['ioctl']) + ('' if len(boots) >= 5 else ', too few boots')))
        head.append((f'daemon GET_EVENTS vs no-op CUSE floor (median of {len(boots)} boot(s))', f'{mg:.2f}×',
                     f'≤ {TARGETS["ioctl"]}× (5 boots)', verdict(mg <= TARGETS['ioctl']) + ('' if len(boots) >= 5 else ', too few boots')))
        png = plots.plot('ioctl-floor', 'daemon per-ioctl cost over the no-op CUSE floor, per boot', 'boot',
                         'kevent-cuse / noop-cuse',
                         [('CTL (1 entry)', list(enumerate(ctl, 1))), ('GET_EVENTS (1)', list(enumerate(get, 1)))],
                         extra='set yrange [0:*]\nset xtics 1')
        if png:
            w(f'![per-ioctl cost against the floor]({png})\n')
        drains = [(i, b) for i, b in enumerate(boots, 1) if 64 in b.get('batch', {})]
        if drains:
            w('Drain of 4095 ready kevents through the daemon, per boot: the three batch sizes '
              'interleaved in every round, events/s the median over the rounds, the ratio to '
              'batch 1 the median of the per-round ratios and their range:\n')
            w('| boot | batch 1 events/s | batch 64 events/s | batch 4095 events/s | 64 vs 1 | 4095 vs 1 | round scatter 64 vs 1 |')
            w('|---:|---:|---:|---:|---:|---:|---|')
            for i, b in drains:
                bt = b['batch']
                sc = b.get('drain_scatter')
                w(f'| {i} | {bt[1][0]:,.0f} | {bt[64][0]:,.0f} | {bt.get(4095, (0, 0))[0]:,.0f} | '
                  f'{bt[64][1]:.1f}× | {bt.get(4095, (0, 0))[1]:.1f}× | '
                  + (f'{sc[1]:.1f}–{sc[2]:.1f} |' if sc else '– |'))
            x64 = [b['batch'][64][1] for _, b in drains]
            mx = statistics.median(x64)
            w(f'\nMedian over {len(drains)} boot(s): batch 64 delivers {mx:.1f}× batch 1 '
              f'(boots {min(x64):.1f}–{max(x64):.1f}).\n')
            head.append((f'daemon drain batch 64 vs batch 1 (guest, median of {len(drains)} boot(s))',
                         f'{mx:.1f}×', f'≥ {TARGETS["batch"]}×', verdict(mx >= TARGETS['batch'])))
    else:
        w('not measured (no guest run)\n')
    series = []
    if drain:
        series.append(('core / bare ring (host)', [(b, x) for b, (_, _, x) in sorted(drain.items())]))
    if boots and boots[0].get('batch'):
        b1 = boots[0]['batch'].get(1, (1, 1))[0]
        series.append(('daemon on CUSE / its batch 1 (guest), /100',
                       [(b, r / b1 / 100) for b, (r, _) in sorted(boots[0]['batch'].items())]))
    png = plots.plot('drain-batch', 'drain rate against batch size', 'batch', 'ratio', series, logx=True)
    if png:
        md.insert(md.index('## Scale\n'), f'![drain rate against batch size]({png})\n')

    # Headline first.
    hl = ['## Headline\n', '| figure | this run | target | |', '|---|---:|---|---|']
    hl += [f'| {a_} | {b_} | {c_} | {d_} |' for a_, b_, c_, d_ in head]
    hl.append('')
    pos = md.index('') + 1 if '' in md else len(md)
    md[pos:pos] = hl
    prof = [(n, raw(f'perf-{n}')) for n in ('drain', 'sockets', 'timer')]
    if any(t.strip() for _, t in prof):
        md.append('## Where the time goes (perf, host)\n')
        md.append('`perf record -g` of each host benchmark after the measured runs, self time by '
                  'thread, object and symbol, the top 15.\n')
        for n, t in prof:
            if t.strip():
                md.append(f'{n}:\n\n```\n{t.rstrip()}\n```\n')
    changes = read(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'changes.md'))
    if changes.strip():
        md.append(changes.rstrip() + '\n')
    md.append('## Raw logs\n')
    md.append(f'`{in_tree(a.raw)}/` (not committed): one log per program and backend.\n')
    with open(os.path.join(a.out, 'REPORT.md'), 'w', encoding='utf-8') as f:
        f.write('\n'.join(md))
    for stale in os.listdir(a.out):
        if stale.endswith('.png') and stale[:-4] not in plots.made:
            os.unlink(os.path.join(a.out, stale))


if __name__ == '__main__':
    main()
