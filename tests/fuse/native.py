#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The native fuse tier (suite 'fuse'): the build's own kevent-cuse serves
DIR/kevent in a FUSE mount on this host, and every client test runs
against it.

  native.py --daemon EXE --clients DIR [--criterion PROG]... [--extra PROG]...
            [--fuzz PROG] [--lockstep PROG] [--witness PROG]

First the start checks: a missing DIR and a busy DIR are refused, a
daemon started with --mode 0600 lets root open the file and refuses
another uid (EACCES, the daemon's own check), and a
stale mount that a SIGKILLed daemon left on MNT is detached by the next
start.  That next start is `kevent-cuse --foreground --fuse MNT
--fault-inject --link WORK/kevent-alias` (MNT relative to its cwd; a
stale symlink already at the alias is replaced) on the killed run's ring
directory.  Against it run each DIR/client-* and each --criterion program
(tests/fuse/fuse-file: what only fuse does) with --tap
(KEVENT_DEVICE=MNT/kevent, KEVENT_BACKEND=fuse, KEVENT_FUSE_LINK=the
alias), each --extra program
(exit 0 pass, 77 skip) and the device fuzzer's short deterministic run
(-p the daemon, so it checks the daemon's fd count too) and a bounded
lockstep run (kevent-lockstep with its defaults: the seeds and reproducers,
then mutations, for a fixed time, every operation compared with the model);
after each the daemon must be alive.  Then SIGTERM, while a file is held open and the
stop witness (tests/vm/stop-witness, D20) has two GET_EVENTS calls parked:
those must be answered, the daemon must exit 0 (under ASan a leak or an
error is a non-zero exit), the held file must fail ENOTCONN (abi.md
section 9), a child that kept the ring mapped across the stop must get
SIGBUS when it touches a page it evicted (abi.md section 9), the mount
must be gone and the ring directory removed.  Last, a new daemon starts on
MNT while a client of the old one still holds its file and mapping
(restart/while_mapped).

Prints TAP on stdout (one line per test, counted by tests/summary) and the
table `<backend>  <suite>/<test>  pass|fail|skip [reason]` (design.md C3)
on stderr.  Without /dev/fuse, without root, or where the mount itself is
refused, it prints `1..0 # SKIP reason` and exits 77.
"""
import argparse
import errno
import fcntl
import mmap
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

BACKEND = 'fuse'
CLIENT_TIMEOUT = 300	# seconds for one client program (a hang is a failure)
KEVENT_IOC_INFO = (2 << 30) | (152 << 16) | (0xBE << 8) | 0	# _IOR(0xBE, 0, 152 bytes)
# kevent-cuse's exit statuses that mean "this host cannot serve FUSE".
UNAVAILABLE = {69: 'mount refused or /dev/fuse unusable', 77: 'no privilege'}


class Rows:
    def __init__(self):
        self.rows = []

    def add(self, name, status, reason=''):
        self.rows.append((name, status, ' '.join(reason.split())))

    def print(self):
        print(f'1..{len(self.rows)}')
        for i, (name, st, reason) in enumerate(self.rows, 1):
            if st == 'fail':
                print(f'not ok {i} - {BACKEND} {name}' + (f' # {reason}' if reason else ''))
            elif st == 'skip':
                print(f'ok {i} - {BACKEND} {name} # SKIP {reason}')
            else:
                print(f'ok {i} - {BACKEND} {name}')
        width = max([len(r[0]) for r in self.rows] + [20])
        counts = {s: sum(1 for r in self.rows if r[1] == s) for s in ('pass', 'fail', 'skip')}
        for name, st, reason in self.rows:
            print(f'{BACKEND}  {name:<{width}}  {st}' + (f' {reason}' if reason else ''),
                  file=sys.stderr)
        for name, st, reason in self.rows:
            if st == 'fail':
                print(f'FAILED {BACKEND} {name}: {reason or "no reason recorded"}', file=sys.stderr)
        print(f'{BACKEND}  total: {counts["pass"]} passed, {counts["fail"]} failed, '
              f'{counts["skip"]} skipped', file=sys.stderr)


def skip_all(reason):
    print(f'1..0 # SKIP {reason}')
    print(f'{BACKEND}  backend/start  skip {reason}', file=sys.stderr)
    sys.exit(77)


def last_line(path):
    try:
        lines = [l for l in open(path, errors='replace').read().splitlines() if l.strip()]
    except OSError:
        return ''
    return lines[-1] if lines else ''


def sanitizer_report(path):
    """The first line a sanitizer wrote to a program's log, or ''."""
    try:
        for line in open(path, errors='replace'):
            if re.search(r'ERROR: \w+Sanitizer|SUMMARY: \w+Sanitizer|runtime error:', line):
                return line.strip()
    except OSError:
        pass
    return ''


def mounted(path):
    with open('/proc/self/mountinfo') as f:
        return any(line.split()[4] == path for line in f)


def parse_criterion(prog, tap_path, rc, rows, log=''):
    """Criterion's TAP ('ok - suite::test ...') -> rows suite/test."""
    plan = count = fails = 0
    pending = None
    try:
        lines = open(tap_path, errors='replace').read().splitlines()
    except OSError:
        rows.add(f'{prog}/run', 'fail', f'no TAP report (exit status {rc})')
        return
    for line in lines:
        m = re.match(r'^1\.\.(\d+)', line)
        if m:
            plan = int(m.group(1))
            continue
        m = re.match(r'^(not ok|ok)\b(?: \d+)?(?: -)? (\S+)(.*)$', line)
        if m:
            count += 1
            name = m.group(2).replace('::', '/', 1)
            rest = m.group(3).strip()
            pending = None
            if m.group(1) == 'not ok':
                fails += 1
                rows.add(name, 'fail', re.sub(r'\s*\([0-9.]+s\)$', '', rest))
                pending = len(rows.rows) - 1
            elif '# SKIP' in rest:
                rows.add(name, 'skip', rest.split('# SKIP', 1)[1])
            else:
                rows.add(name, 'pass')
            continue
        # The first assertion message of a failure's YAML block.
        if pending is not None and re.match(r'^ {6}\S', line):
            n, st, r = rows.rows[pending]
            rows.rows[pending] = (n, st, (r + ' ' + line.strip()).strip())
            pending = None
    if plan != count:
        rows.add(f'{prog}/run', 'fail', f'incomplete TAP: {count} of {plan} results (exit status {rc})')
    elif rc != 0 and fails == 0:
        why = sanitizer_report(log)
        rows.add(f'{prog}/run', 'fail',
                 f'exit status {rc} with no failing test' + (f': {why}' if why else ''))


class Daemon:
    def __init__(self, exe, work, mnt, tag='daemon', relative=False, extra=(), shm='',
                 link=None):
        self.mnt = mnt
        self.link = link
        if link:
            extra = (*extra, '--link', link)
        # One ring directory for every start: the start after the SIGKILL
        # also removes the killed daemon's leftovers.
        self.shm = f'/dev/shm/kevent-fuse-{os.getpid()}{shm}'
        self.log = os.path.join(work, tag + '.log')
        # relative: DIR given relative to the daemon's cwd (it resolves it).
        arg = os.path.relpath(mnt, work) if relative else mnt
        self.proc = subprocess.Popen(
            [exe, '--foreground', '--fuse', arg, '--fault-inject', '--shm-dir', self.shm,
             *extra],
            cwd=work, stdin=subprocess.DEVNULL, stdout=open(self.log, 'w'),
            stderr=subprocess.STDOUT)
        self.device = os.path.join(self.mnt, 'kevent')

    def wait_up(self):
        """None when DIR/kevent answers; else (exit status or None, reason)."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            rc = self.proc.poll()
            if rc is not None:
                return rc, f'exit status {rc}: {last_line(self.log)}'
            try:
                if mounted(self.mnt) and os.path.exists(self.device):
                    return None
            except OSError:
                pass
            time.sleep(0.02)
        return None, f'{self.device} did not appear in 10 s: {last_line(self.log)}'

    def alive(self):
        if self.proc.poll() is not None:
            return f'kevent-cuse exited ({self.proc.returncode}): {last_line(self.log)}'
        if not os.path.exists(self.device):
            return f'{self.device} disappeared'
        return None

    def stop(self, rows, witness=None):
        held = None
        wit = start_witness(witness, self, rows) if witness else None
        try:
            held = os.open(self.device, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            pass
        mapped = MappedChild(self.device)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            rows.add('backend/stop', 'fail', f'still running 30 s after SIGTERM: {last_line(self.log)}')
            return
        if rc == 0:
            rows.add('backend/stop', 'pass')
        else:
            rows.add('backend/stop', 'fail', f'exit status {rc} after SIGTERM (want 0): '
                     f'{last_line(self.log)} (log: {self.log})')
        if held is not None:
            rows.add(*held_file_after_stop(held))
            os.close(held)
        rows.add(*mapped.after_stop())
        if self.link:
            if os.path.lexists(self.link):
                rows.add('stop/link_removed', 'fail', f'{self.link} left behind')
            else:
                rows.add('stop/link_removed', 'pass')
        if wit:
            end_witness(wit, rows)
        if mounted(self.mnt):
            rows.add('backend/unmounted', 'fail', f'{self.mnt} still mounted after the stop')
            subprocess.run(['umount', '-l', self.mnt], check=False)
        else:
            rows.add('backend/unmounted', 'pass')
        if os.path.exists(self.shm):
            rows.add('backend/rings_removed', 'fail', f'{self.shm} left behind')
        else:
            rows.add('backend/rings_removed', 'pass')


def start_witness(prog, d, rows):
    """Start the D20 witness; returns (process, log) once it says 'parked'."""
    log = os.path.join(os.path.dirname(d.log), 'stop-witness.log')
    env = dict(os.environ, KEVENT_DEVICE=d.device)
    p = subprocess.Popen([prog], env=env, stdin=subprocess.DEVNULL, stdout=open(log, 'w'),
                         stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and p.poll() is None:
        if 'parked' in open(log, errors='replace').read().split():
            return p, log
        time.sleep(0.02)
    if p.poll() is None:
        p.kill()
    rc = p.wait()
    if rc == 77:
        rows.add('stop/parked_calls_answered', 'skip', last_line(log))
    else:
        rows.add('stop/parked_calls_answered', 'fail', f'never parked (exit status {rc}): {last_line(log)}')
    return None


def end_witness(wit, rows):
    p, log = wit
    try:
        rc = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
        rows.add('stop/parked_calls_answered', 'fail', 'parked calls not answered 10 s after the stop')
        return
    if rc == 0:
        rows.add('stop/parked_calls_answered', 'pass')
    else:
        rows.add('stop/parked_calls_answered', 'fail', f'exit status {rc}: {last_line(log)}')


class MappedChild:
    """A child holding the ring mapped across the stop (abi.md 9): once the
    daemon is gone, a page evicted and touched again raises SIGBUS."""

    def __init__(self, device):
        self.pid = None
        rd, self.go = os.pipe()
        ready, wr = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(self.go)
            os.close(ready)
            try:
                fd = os.open(device, os.O_RDONLY)
                m = mmap.mmap(fd, 69632, mmap.MAP_SHARED, mmap.PROT_READ)
                m[0]	# page 0 in the page cache and mapped
                os.write(wr, b'r')
                os.read(rd, 1)
                m.madvise(mmap.MADV_DONTNEED)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                m[0]	# a READ to a dead daemon: SIGBUS
                os._exit(0)
            except BaseException:
                os._exit(3)
        os.close(rd)
        os.close(wr)
        if os.read(ready, 1) == b'r':
            self.pid = pid
        else:
            os.waitpid(pid, 0)
        os.close(ready)

    def after_stop(self):
        name = 'stop/mapped_page_sigbus'
        if self.pid is None:
            os.close(self.go)
            return (name, 'fail', 'the child could not map the ring before the stop')
        os.write(self.go, b'g')
        os.close(self.go)
        _, st = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(st) and os.WTERMSIG(st) == signal.SIGBUS:
            return (name, 'pass')
        if os.WIFSIGNALED(st):
            return (name, 'fail', f'child killed by signal {os.WTERMSIG(st)}, want SIGBUS')
        return (name, 'fail', f'child exit status {os.WEXITSTATUS(st)}: the evicted page '
                'read back after the daemon was gone' if os.WEXITSTATUS(st) == 0 else
                f'child exit status {os.WEXITSTATUS(st)}')


def map_before_stop(device):
    """A client with the ring mapped (page 0 touched) across the stop."""
    try:
        fd = os.open(device, os.O_RDWR | os.O_CLOEXEC)
        m = mmap.mmap(fd, 69632, mmap.MAP_SHARED, mmap.PROT_READ)
        m[0]
        return fd, m
    except OSError:
        return None


def restart_check(d, fd, m):
    """The restarted daemon serves; the old file and mapping stay the old ones."""
    up = d.wait_up()
    if up is not None:
        return f'restart refused: {up[1]}'
    new = os.open(d.device, os.O_RDWR | os.O_CLOEXEC)
    try:
        fcntl.ioctl(new, KEVENT_IOC_INFO, bytearray(152))
    finally:
        os.close(new)
    try:
        fcntl.ioctl(fd, KEVENT_IOC_INFO, bytearray(152))
        return 'the old file answered through the new daemon'
    except OSError as e:
        if e.errno != errno.ENOTCONN:
            return f'old file: {e.strerror}, want ENOTCONN'
    if m[0:4] != b'\0\0\0\0':
        return 'the old mapping changed'
    return ''


def restart_while_mapped(exe, work, mnt, held):
    """A new daemon starts on MNT while a client of the old one still has
    its file open and its ring mapped: it mounts and serves, the old file
    stays dead (ENOTCONN), its resident page still reads, and the new
    daemon stops cleanly."""
    name = 'restart/while_mapped'
    if held is None:
        return (name, 'fail', 'could not map the ring before the stop')
    fd, m = held
    d = Daemon(exe, work, mnt, tag='restart', shm='-restart')
    try:
        why = restart_check(d, fd, m)
    except OSError as e:
        why = e.strerror
    m.close()
    os.close(fd)
    if d.proc.poll() is None:
        d.proc.send_signal(signal.SIGTERM)
    try:
        rc = d.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        d.proc.kill()
        rc = d.proc.wait()
    if not why and rc != 0:
        why = f'the restarted daemon exited {rc} at SIGTERM: {last_line(d.log)}'
    if not why and mounted(mnt):
        why = f'{mnt} still mounted after the restarted daemon stopped'
    return (name, 'fail', why) if why else (name, 'pass')


def held_file_after_stop(fd):
    """A file open across the stop: its calls fail ENOTCONN (abi.md 9)."""
    try:
        fcntl.ioctl(fd, KEVENT_IOC_INFO, bytearray(152))
    except OSError as e:
        if e.errno == errno.ENOTCONN:
            return ('stop/held_file_enotconn', 'pass')
        return ('stop/held_file_enotconn', 'fail', f'INFO after the stop: {e.strerror} (want ENOTCONN)')
    return ('stop/held_file_enotconn', 'fail', 'INFO still answered after the stop')


def refused_start(exe, work, mnt, tag, want_words):
    """A start that must fail 69 and say why: (row name, status, reason)."""
    # A ring directory of its own: the live daemon's would refuse it first.
    d = Daemon(exe, work, mnt, tag, shm='-' + tag)
    try:
        rc = d.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        d.stop(Rows())
        return (f'start/{tag}', 'fail', f'{mnt}: the daemon started')
    line = last_line(d.log)
    if rc != 69 or not all(w in line for w in want_words):
        return (f'start/{tag}', 'fail', f'exit status {rc} (want 69): {line}')
    return (f'start/{tag}', 'pass')


def open_as(uid, path):
    """open(path, O_RDWR) in a child with uid and gid uid: 0 or the errno."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.close(os.open(path, os.O_RDWR))
            os._exit(0)
        except OSError as e:
            os._exit(e.errno if e.errno < 256 else 255)
        os._exit(254)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def mode_checked_at_open(exe, work):
    """--mode 0600: root opens, another uid gets EACCES from the daemon."""
    mnt = os.path.join(work, 'mnt-0600')
    os.mkdir(mnt)
    d = Daemon(exe, work, mnt, 'mode-0600', extra=['--mode', '0600'], shm='-mode')
    up = d.wait_up()
    if up is not None:
        return ('start/mode_checked_at_open', 'fail', f'no daemon with --mode 0600: {up[1]}')
    got = (open_as(0, d.device), open_as(65534, d.device))
    stop = Rows()
    d.stop(stop)
    bad = [f'{n}: {r}' for n, st, r in stop.rows if st == 'fail']
    if got != (0, errno.EACCES):
        return ('start/mode_checked_at_open', 'fail', f'open as root, as 65534 (want 0, EACCES): {got}')
    if bad:
        return ('start/mode_checked_at_open', 'fail', '; '.join(bad))
    return ('start/mode_checked_at_open', 'pass')


def leave_stale_mount(exe, work, mnt):
    """A daemon killed with SIGKILL leaves a dead mount: '' or why not."""
    d = Daemon(exe, work, mnt, 'killed')
    up = d.wait_up()
    if up is not None:
        return up[1]
    d.proc.kill()
    d.proc.wait()
    try:
        os.stat(mnt)
    except OSError as e:
        if e.errno == errno.ENOTCONN:
            return ''
        return f'stat after SIGKILL: {e.strerror}'
    return 'no stale mount after SIGKILL'


def run_program(cmd, device, log, link=None):
    env = dict(os.environ, KEVENT_DEVICE=device, KEVENT_BACKEND=BACKEND)
    if link:
        env['KEVENT_FUSE_LINK'] = link	# the daemon's --link alias (fuse-file)
    env.pop('LD_PRELOAD', None)	# no shim: a FUSE file is no CUSE device (design.md B6)
    # In an ASan build the clients are instrumented too; some check that a
    # write to the read-only ring dies of SIGSEGV, which ASan would turn
    # into its own report and an abort.  The daemon keeps the options as given.
    env['ASAN_OPTIONS'] = ':'.join(filter(None, [env.get('ASAN_OPTIONS', ''), 'handle_segv=0']))
    try:
        with open(log, 'w') as out:
            return subprocess.run(cmd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=CLIENT_TIMEOUT).returncode
    except subprocess.TimeoutExpired:
        return None
    except OSError as e:
        return e


def run_clients(d, clients, work, rows):
    for prog in clients:
        name = os.path.basename(prog)
        tap = os.path.join(work, name + '.tap')
        # Criterion's parallel jobs: the tests that fill a per-uid cap run
        # as a uid of their own (kt_own_uid(), client-tests/ktest.h).
        cmd = [prog, f'--tap={tap}']
        log = os.path.join(work, name + '.log')
        rc = run_program(cmd, d.device, log, d.link)
        if isinstance(rc, OSError):
            # The static -m32 client on a host without 32-bit execution.
            rows.add(f'{name}/run', 'skip', f'cannot execute here: {rc.strerror}')
            continue
        if rc is None:
            rows.add(f'{name}/run', 'fail', f'no exit within {CLIENT_TIMEOUT} s')
        parse_criterion(name, tap, -1 if rc is None else rc, rows, log)
        gone = d.alive()
        if gone:
            rows.add('backend/alive', 'fail', f'after {name}: {gone}')
            return False
    return True


def run_extras(d, extras, work, rows):
    for cmd in extras:
        name = os.path.basename(cmd[0])
        log = os.path.join(work, 'extra-' + name + '.log')
        rc = run_program(cmd, d.device, log)
        if rc == 0:
            rows.add(f'extra/{name}', 'pass')
        elif rc == 77:
            rows.add(f'extra/{name}', 'skip', last_line(log))
        else:
            rows.add(f'extra/{name}', 'fail', f'exit status {rc}: {last_line(log)}')
        gone = d.alive()
        if gone:
            rows.add('backend/alive', 'fail', f'after {name}: {gone}')
            return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--daemon', required=True)
    ap.add_argument('--clients', required=True)
    ap.add_argument('--criterion', action='append', default=[])
    ap.add_argument('--extra', action='append', default=[])
    ap.add_argument('--fuzz', help='kevent-device-fuzz')
    ap.add_argument('--lockstep', help='kevent-lockstep (fuzz/lockstep.c)')
    ap.add_argument('--witness', help='stop-witness (D20 at the stop)')
    ap.add_argument('--keep', action='store_true', help='keep the work directory')
    args = ap.parse_args()
    # The daemon runs in the work directory: every program by absolute path.
    args.daemon = os.path.abspath(args.daemon)

    if not os.path.exists('/dev/fuse'):
        skip_all('/dev/fuse is missing on this host')
    if os.geteuid() != 0:
        skip_all('not root: kevent-cuse --fuse mounts with allow_other and reads callers\' memory')
    clients = sorted(os.path.join(args.clients, f) for f in os.listdir(args.clients)
                     if f.startswith('client-') and not f.endswith('.p')
                     and os.access(os.path.join(args.clients, f), os.X_OK))
    if not clients:
        print('1..1\nnot ok 1 - fuse client-tests/none: no client-* programs built')
        return 1
    work = tempfile.mkdtemp(prefix='kevent-fuse-')
    # Traversable (not listable) by other uids: the tests that open the
    # file as uid nobody must meet the daemon's checks, not this directory's.
    os.chmod(work, 0o711)
    mnt = os.path.join(work, 'mnt')
    os.mkdir(mnt)
    rows = Rows()
    stale = leave_stale_mount(args.daemon, work, mnt)
    # A stale symlink of a killed run where --link points: replaced at start.
    link = os.path.join(work, 'kevent-alias')
    os.symlink(os.path.join(work, 'gone', 'kevent'), link)
    d = Daemon(args.daemon, work, mnt, relative=True, link=link)
    up = d.wait_up()
    if up is not None:
        rc, reason = up
        if rc in UNAVAILABLE and stale:
            skip_all(f'{UNAVAILABLE[rc]}: {reason}')
        rows.add('backend/start', 'fail', reason)
        d.stop(rows)
    else:
        rows.add('backend/start', 'pass')
        if stale:
            rows.add('start/stale_mount_detached', 'fail', f'no stale mount to start on: {stale}')
        else:
            rows.add('start/stale_mount_detached', 'pass')
        rows.add(*refused_start(args.daemon, work, mnt, 'busy_dir_refused', ['busy']))
        rows.add(*refused_start(args.daemon, work, os.path.join(work, 'nodir'),
                                'missing_dir_refused', ['No such file']))
        rows.add(*mode_checked_at_open(args.daemon, work))
        if run_clients(d, clients + args.criterion, work, rows):
            extras = [[e] for e in args.extra]
            if args.fuzz:
                extras.append([args.fuzz, '-p', str(d.proc.pid)])
            if args.lockstep:
                extras.append([args.lockstep, '-t', '30'])
            run_extras(d, extras, work, rows)
        held = map_before_stop(d.device)
        d.stop(rows, args.witness)
        rows.add(*restart_while_mapped(args.daemon, work, mnt, held))
    rows.print()
    failed = any(st == 'fail' for _, st, _ in rows.rows)
    if args.keep or failed:
        print(f'# logs in {work}')
    else:
        subprocess.run(['rm', '-rf', '--one-file-system', work], check=False)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
