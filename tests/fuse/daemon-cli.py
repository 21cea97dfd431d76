#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""kevent-cuse as an operator meets it (suite 'fuse'): the command line
and --trace, on this host.

  daemon-cli.py --daemon EXE

The command line: --help and --version print and exit 0; an unknown
option, a bad value, --link without --fuse and a --max-running that does
not fit --workers exit 64 and say which option; --no-process-vm with --fuse
exits 64 (a FUSE file has no retry path); a daemon started by another uid
exits 77 ("must run as root"); a --shm-dir that is not on tmpfs exits 71;
--fuse on a file, --link on a file that is no symlink or in a missing
directory exit 69 and leave no mount; with --syslog nothing reaches stderr;
a log line longer than 1 KiB is cut and still ends with a newline.

--trace: a daemon with `--fuse MNT --trace` on a ring directory holding a
stale ring object (removed at the start, other files kept) serves one
client (this script, through ioctl(2) on MNT/kevent): INFO, a CTL ADD of a
POLL kevent on an empty pipe, GET_EVENTS that returns it once the pipe has
data, a CTL with an unknown command (EINVAL), and a GET_EVENTS that parks
and whose caller is killed.  The daemon's log must name each ioctl with its
decoded fields, the ukevents going in and out, each result (the errno by
name), the park and the interrupt.  The mount holds one file: readdir,
lookup, chmod and an ioctl on the directory are checked too.
--fuse-debug dumps libfuse's requests (LOOKUP, OPEN) and no trace lines.
Without --foreground the command returns once the file is served, and an
unmount ends the daemon (its ring directory removed).

The default ring directory (no --shm-dir) is one per instance: two fuse
daemons side by side each keep their rings when the other starts and
stops, and a daemon restarted on the mount of a SIGKILLed one sweeps the
objects that one left.

Prints TAP.  Without /dev/fuse or root it prints `1..0 # SKIP reason` and
exits 77 (the option checks need no mount but share the daemon's start).
"""
import argparse
import ctypes
import errno
import fcntl
import mmap
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time

MAGIC = 0xBE
UKEVENT = struct.Struct('=IIIIIIII II')	# id.raw[2] type event req ret data[2] user[2]
KEVENT_POLL = 3
POLLIN = 0x1


def iow(nr, size):
    return (1 << 30) | (size << 16) | (MAGIC << 8) | nr


def ior(nr, size):
    return (2 << 30) | (size << 16) | (MAGIC << 8) | nr


IOC_INFO = ior(0, 152)
IOC_CTL = iow(1, 16)
IOC_GET_EVENTS = iow(2, 48)
IOC_RING_SHM = ior(3, 128)
SHM_PARENT = '/dev/shm/kevent-cuse'


class Tap:
    def __init__(self):
        self.rows = []

    def check(self, name, ok, why=''):
        self.rows.append((name, bool(ok), why))

    def skip(self, name, why):
        self.rows.append((name, None, why))

    def print(self):
        print(f'1..{len(self.rows)}')
        for i, (name, ok, why) in enumerate(self.rows, 1):
            if ok is None:
                print(f'ok {i} - fuse daemon-cli/{name} # SKIP {why}')
                continue
            print(f'{"ok" if ok else "not ok"} {i} - fuse daemon-cli/{name}'
                  + ('' if ok else f' # {why}'))
        return 0 if all(ok is not False for _, ok, _ in self.rows) else 1


def run(exe, *args, uid=None):
    pre = None
    if uid is not None:
        def pre():
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
    p = subprocess.run([exe, *args], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=30, preexec_fn=pre)
    return p.returncode, p.stdout, p.stderr


def command_line(exe, t):
    rc, out, err = run(exe, '--help')
    t.check('help', rc == 0 and out.startswith('Usage: ') and '--trace' in out
            and '--max-parked=N' in out and err == '', f'rc {rc}, stderr {err!r}')
    rc, out, err = run(exe, '--version')
    t.check('version', rc == 0 and re.match(r'kevent-cuse \S+ \(kevent ABI revisions \d+-\d+ served, header revision \d+', out),
            f'rc {rc}, {out!r}')
    for name, args, words in (
            ('unknown_option', ['--bogus'], ["unknown option '--bogus'", '--help']),
            ('missing_argument', ['--name'], ["missing argument to option '--name'"]),
            ('bad_value', ['--workers=1'], ["invalid value '1' for option '--workers=1'"]),
            ('stray_argument', ['stray'], ["unexpected argument 'stray'"]),
            ('link_needs_fuse', ['--link=/dev/kevent'], ['--link needs --fuse']),
            ('running_below_workers', ['--workers=4', '--max-running=4'],
             ['--max-running must be between 1 and --workers - 1 (3)'])):
        rc, out, err = run(exe, *args)
        t.check(name, rc == 64 and all(w in err for w in words) and out == '',
                f'rc {rc} (want 64), stderr {err!r}')


def start_checks(exe, work, t):
    rc, _, err = run(exe, '--foreground', '--fuse', work, '--no-process-vm')
    t.check('no_process_vm_with_fuse', rc == 64 and 'no ioctl retry path' in err,
            f'rc {rc} (want 64), stderr {err!r}')
    regular = os.path.join(work, 'regular')
    open(regular, 'w').close()
    rc, _, err = run(exe, '--foreground', '--fuse', regular)
    t.check('fuse_dir_not_a_directory', rc == 69 and 'not a directory' in err,
            f'rc {rc} (want 69), stderr {err!r}')
    rc, out, err = run(exe, '--foreground', '--syslog', '--fuse', regular)
    t.check('syslog_not_stderr', rc == 69 and out == '' and err == '',
            f'rc {rc} (want 69 and nothing on stdout or stderr), stderr {err!r}')
    # A log line longer than the daemon's 1 KiB buffer is cut, still one line.
    rc, _, err = run(exe, '--foreground', '--fuse', os.path.join(work, 'x' * 1500))
    t.check('long_log_line_cut', rc == 69 and len(err) == 1023 and err.endswith('x\n')
            and err.count('\n') == 1, f'rc {rc} (want 69), {len(err)} bytes: {err[:60]!r}...')
    mnt = os.path.join(work, 'mnt-link')
    os.mkdir(mnt)
    rc, _, err = run(exe, '--foreground', '--fuse', mnt, '--link', regular)
    t.check('link_not_a_symlink', rc == 69 and 'exists and is no symlink' in err
            and not os.path.ismount(mnt) and os.path.isfile(regular),
            f'rc {rc} (want 69, the file kept, no mount left), stderr {err!r}')
    rc, _, err = run(exe, '--foreground', '--fuse', mnt, '--link', os.path.join(work, 'no', 'kv'))
    t.check('link_dir_missing', rc == 69 and 'No such file' in err and not os.path.ismount(mnt),
            f'rc {rc} (want 69, no mount left), stderr {err!r}')
    try:
        rc, _, err = run(exe, '--foreground', '--fuse', work, uid=65534)
        t.check('not_root', rc == 77 and 'must run as root' in err,
                f'rc {rc} (want 77), stderr {err!r}')
    except (OSError, subprocess.SubprocessError) as e:
        t.skip('not_root', f'uid 65534 cannot run {exe} here: {e}')
    # A directory on the work dir's file system: tmpfs would be accepted.
    notmp = os.path.join(work, 'rings')
    fs = subprocess.run(['stat', '-f', '-c', '%T', work], capture_output=True, text=True).stdout
    if fs.strip() == 'tmpfs':
        print(f'# shm_dir_not_tmpfs not checked: {work} is on tmpfs')
        return
    rc, _, err = run(exe, '--foreground', '--fuse', work, '--shm-dir', notmp)
    t.check('shm_dir_not_tmpfs', rc == 71 and f'ring directory {notmp}' in err,
            f'rc {rc} (want 71), stderr {err!r}')


STARTED = []	# every daemon started, stopped at the end whatever happened


class Traced:
    def __init__(self, exe, work, shm, tag='trace', flag='--trace'):
        """shm None: the default ring directory; flag None: none."""
        self.mnt = os.path.join(work, 'mnt-' + tag)
        try:
            os.mkdir(self.mnt)
        except FileExistsError:
            pass	# a restart on the same (maybe dead) mount
        self.log = os.path.join(work, tag + '.log')
        self.proc = subprocess.Popen(
            [exe, '--foreground', '--fuse', self.mnt, *([flag] if flag else []),
             *(['--shm-dir', shm] if shm else [])],
            stdin=subprocess.DEVNULL, stdout=open(self.log, 'a'), stderr=subprocess.STDOUT)
        self.device = os.path.join(self.mnt, 'kevent')
        STARTED.append(self)

    def up(self):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and self.proc.poll() is None:
            if os.path.ismount(self.mnt) and os.path.exists(self.device):
                return True
            time.sleep(0.02)
        return False

    def text(self):
        return open(self.log, errors='replace').read()

    def wait_for(self, pattern, seconds=20):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            m = re.search(pattern, self.text(), re.M)
            if m:
                return m
            time.sleep(0.02)
        return None

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def ctl(fd, cmd, evs):
    arr = ctypes.create_string_buffer(b''.join(evs) or b'\0', max(1, len(evs)) * UKEVENT.size)
    arg = struct.pack('=IIQ', cmd, len(evs), ctypes.addressof(arr))
    return fcntl.ioctl(fd, IOC_CTL, bytearray(arg))


def get_events(fd, max_nr, timeout_ns):
    arr = ctypes.create_string_buffer(max_nr * UKEVENT.size)
    arg = struct.pack('=IIQQII16x', 1, max_nr, timeout_ns, ctypes.addressof(arr), 0, 0)
    n = fcntl.ioctl(fd, IOC_GET_EVENTS, bytearray(arg))
    return n, [UKEVENT.unpack_from(arr.raw, i * UKEVENT.size) for i in range(n)]


# The parked caller: a child that blocks in GET_EVENTS until it is killed.
PARKER = '''
import ctypes, fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
arr = ctypes.create_string_buffer(40)
arg = struct.pack('=IIQQII16x', 1, 1, (1 << 64) - 1, ctypes.addressof(arr), 0, 0)
fcntl.ioctl(fd, %d, arg)
''' % IOC_GET_EVENTS


def errno_of(f, *args):
    try:
        f(*args)
    except OSError as e:
        return e.errno
    return 0


def file_system(d, t):
    """The mount holds one file; nothing about it can be changed."""
    t.check('fs/readdir', os.listdir(d.mnt) == ['kevent'], f'{os.listdir(d.mnt)}')
    t.check('fs/lookup_enoent', errno_of(os.stat, os.path.join(d.mnt, 'other')) == errno.ENOENT)
    t.check('fs/chmod_eperm', errno_of(os.chmod, d.device, 0o600) == errno.EPERM)
    dfd = os.open(d.mnt, os.O_RDONLY | os.O_DIRECTORY)
    t.check('fs/dir_ioctl_enotty', errno_of(fcntl.ioctl, dfd, IOC_INFO, bytearray(152))
            == errno.ENOTTY, 'INFO on the mount\'s directory')
    os.close(dfd)


def fuse_debug(exe, work, t):
    """--fuse-debug: libfuse's dump of each request (and no --trace lines)."""
    d = Traced(exe, work, f'/dev/shm/kevent-cli-{os.getpid()}-d', 'fuse-debug', '--fuse-debug')
    if not d.up():
        t.check('fuse_debug', False, f'no {d.device}: {d.text()[-300:]!r}')
        d.stop()
        return
    os.close(os.open(d.device, os.O_RDWR))
    rc = d.stop()
    log = d.text()
    t.check('fuse_debug', rc == 0 and re.search(r'opcode: OPEN \(14\)', log)
            and re.search(r'opcode: LOOKUP \(1\)', log) and 'trace #' not in log,
            f'exit status {rc}, no OPEN and LOOKUP dumped or a trace line in {d.log}')


def background(exe, work, t):
    """Without --foreground the command returns once DIR/kevent is served;
    unmounting DIR ends the daemon, which removes its ring directory."""
    mnt = os.path.join(work, 'mnt-bg')
    os.mkdir(mnt)
    shm = f'/dev/shm/kevent-cli-{os.getpid()}-bg'
    rc, out, err = run(exe, '--fuse', mnt, '--shm-dir', shm)
    served = rc == 0 and os.path.ismount(mnt) and os.path.isdir(shm)
    info = None
    if served:
        fd = os.open(os.path.join(mnt, 'kevent'), os.O_RDWR)
        info = errno_of(fcntl.ioctl, fd, IOC_INFO, bytearray(152))
        os.close(fd)
        subprocess.run(['umount', mnt], check=False)
    deadline = time.monotonic() + 20
    while os.path.exists(shm) and time.monotonic() < deadline:
        time.sleep(0.05)
    t.check('background', served and info == 0 and not os.path.ismount(mnt)
            and not os.path.exists(shm),
            f'rc {rc}, served {served}, INFO {info}, ring directory left {os.path.exists(shm)}, '
            f'stderr {err!r}')


def trace(exe, work, t):
    # A ring object a killed daemon left is removed at the start; other files stay.
    shm = f'/dev/shm/kevent-cli-{os.getpid()}'
    os.mkdir(shm, 0o711)
    open(os.path.join(shm, 'ring-00000000000000000007'), 'w').close()
    open(os.path.join(shm, 'not-a-ring'), 'w').close()
    d = Traced(exe, work, shm)
    if not d.up():
        t.check('trace/start', False, f'no {d.device}: {d.text()[-300:]!r}')
        d.stop()
        return
    t.check('start/stale_rings_removed', 'removed 1 stale ring object\n' in d.text()
            and os.listdir(shm) == ['not-a-ring'], f'{os.listdir(shm)}, log {d.log}')
    file_system(d, t)
    fd = os.open(d.device, os.O_RDWR)
    r, w = os.pipe()
    fcntl.ioctl(fd, IOC_INFO, bytearray(152))
    ev = UKEVENT.pack(r, 0, KEVENT_POLL, POLLIN, 0, 0, 0, 0, 0xab, 0xcd)
    added = ctl(fd, 0, [ev])	# nothing to read yet: queued, 0 completed at once
    os.write(w, b'x')
    n, got = get_events(fd, 4, 10 * 10**9)
    try:
        ctl(fd, 7, [ev])
        bad = 'no error'
    except OSError as e:
        bad = e.errno
    parker = subprocess.Popen([sys.executable, '-c', PARKER, d.device])
    call = d.wait_for(rf'trace #(\d+) uid=0 pid={parker.pid} GET_EVENTS ')
    parked = call and d.wait_for(rf'trace #{call.group(1)} parked$')
    parker.kill()
    parker.wait()
    interrupted = parked and d.wait_for(rf'trace #{call.group(1)} interrupted$')
    os.close(fd)
    rc = d.stop()
    log = d.text()
    t.check('trace/start_stop', rc == 0, f'exit status {rc} after SIGTERM')
    t.check('trace/calls_returned', added == 0 and n == 1 and got[0][2] == KEVENT_POLL
            and got[0][8:] == (0xab, 0xcd) and bad == 22,
            f'ADD {added}, GET_EVENTS {n} {got}, bad CTL {bad}')

    def has(name, pattern):
        t.check(name, re.search(pattern, log, re.M), f'no line /{pattern}/ in {d.log}')
    pid = os.getpid()
    has('trace/info', rf'trace #\d+ uid=0 pid={pid} INFO size=152 path=process-vm')
    has('trace/ctl_add', rf'trace #(\d+) uid=0 pid={pid} CTL ADD\(0\) num=1 events=0x[0-9a-f]+ '
        r'path=process-vm')
    has('trace/ukevent_in', rf'trace #\d+ in\[0\] id={r}:0 type=POLL\(3\) event=0x1 .*user=0xab:0xcd')
    has('trace/get_events', r'GET_EVENTS min_nr=1 max_nr=4 timeout_ns=10000000000 ')
    has('trace/ukevent_out', rf'trace #\d+ out\[0\] id={r}:0 type=POLL\(3\) event=0x1 req=0x0 '
        r'ret=0x[0-9a-f]+ .*user=0xab:0xcd')
    has('trace/result_count', r'trace #\d+ result 1$')
    has('trace/bad_ctl', r'CTL \?\(7\) num=1')
    has('trace/result_errno', r'trace #\d+ result -EINVAL$')
    t.check('trace/parked', parked, f'no "parked" line for the blocked caller in {d.log}')
    t.check('trace/interrupted', interrupted, f'no "interrupted" line for the killed caller in {d.log}')
    os.close(r)
    os.close(w)
    subprocess.run(['rm', '-rf', shm], check=False)


def ring_shm(fd):
    """RING_SHM: the ring object's path and length."""
    buf = bytearray(128)
    fcntl.ioctl(fd, IOC_RING_SHM, buf)
    length = struct.unpack_from('=IIQ', buf)[2]
    return bytes(buf[16:]).split(b'\0')[0].decode(), length


def ring_index(m):
    return struct.unpack_from('=I', m, 0)[0]


def wait_index(m, want):
    deadline = time.monotonic() + 10
    while ring_index(m) < want and time.monotonic() < deadline:
        time.sleep(0.01)
    return ring_index(m)


def default_ring_dirs(exe, work, t):
    """Without --shm-dir each daemon has a ring directory of its own under
    /dev/shm/kevent-cuse (design.md section 4): a second fuse daemon's start
    and the first one's stop leave the second one's rings alone, and a
    restart on the same mount sweeps what its killed predecessor left."""
    a = Traced(exe, work, None, 'shm-a', None)
    b = Traced(exe, work, None, 'shm-b', None)
    if not a.up() or not b.up():
        t.check('default_shm/start', False, f'logs {a.log} {b.log}')
        return
    try:
        two_daemons(exe, work, t, a, b)
    except OSError as e:
        t.check('default_shm/two_daemons', False, f'{e} (logs {a.log} {b.log})')


def two_daemons(exe, work, t, a, b):
    fa = os.open(a.device, os.O_RDWR)
    pa, _ = ring_shm(fa)
    fb = os.open(b.device, os.O_RDWR)
    pb, length = ring_shm(fb)
    da, db = os.path.dirname(pa), os.path.dirname(pb)
    t.check('default_shm/per_instance', da != db and os.path.dirname(da) == SHM_PARENT
            and os.path.dirname(db) == SHM_PARENT and os.path.exists(pa),
            f'rings {pa} and {pb}: one directory each under {SHM_PARENT}, '
            'the first kept by the second start')
    ob = os.open(pb, os.O_RDONLY)
    mb = mmap.mmap(ob, length, prot=mmap.PROT_READ)
    os.close(ob)
    pipes = [os.pipe() for _ in range(2)]
    for i, (r, _) in enumerate(pipes):
        ctl(fb, 0, [UKEVENT.pack(r, 0, KEVENT_POLL, POLLIN, 0, 0, 0, 0, i, 0)])
    os.write(pipes[0][1], b'x')
    first = wait_index(mb, 1)
    os.close(fa)
    rc = a.stop()
    os.write(pipes[1][1], b'x')
    second = wait_index(mb, 2)
    try:
        fb2 = os.open(b.device, os.O_RDWR)
        pb2, _ = ring_shm(fb2)
        opened = os.path.exists(pb2)
    except OSError as e:
        fb2, opened = None, e.strerror
    t.check('default_shm/other_stop_keeps_rings', rc == 0 and not os.path.exists(da)
            and os.path.exists(pb) and first == 1 and second == 2 and opened is True,
            f'a stopped {rc}, its directory left {os.path.exists(da)}, b\'s ring '
            f'{os.path.exists(pb)}, index {first} then {second}, a new queue on b: {opened}')
    mb.close()
    b.proc.kill()	# leaves its ring objects and a dead mount
    b.proc.wait()
    left = sorted(os.listdir(db))
    c = Traced(exe, work, None, 'shm-b', None)	# the same mount again
    up = c.up()
    swept = c.wait_for(r'removed 2 stale ring objects$', 5)
    rc = c.stop()
    t.check('default_shm/restart_sweeps_its_own', up and swept and len(left) == 2
            and rc == 0 and not os.path.exists(db),
            f'up {up}, left by the kill {left}, log {c.log}, stop {rc}, '
            f'directory left {os.path.exists(db)}')
    for fd in (fb, fb2, *[x for p in pipes for x in p]):
        if fd is not None:
            errno_of(os.close, fd)	# b's were held across its kill: ENOTCONN


def shared_ring_dir_refused(exe, work, t):
    """A ring directory serves one daemon (design.md section 4): a second
    daemon given a live one's --shm-dir (another mount) exits 69 before it
    sweeps anything, the first one's ring object stays, and once the first
    has stopped the directory takes a new daemon."""
    shm = f'/dev/shm/kevent-cli-lock-{os.getpid()}'
    a = Traced(exe, work, shm, 'lock-a', None)
    if not a.up():
        t.check('shared_shm/refused', False, f'first daemon did not start: {a.log}')
        return
    fa = os.open(a.device, os.O_RDWR)
    pa, length = ring_shm(fa)
    b = Traced(exe, work, shm, 'lock-b', None)
    try:
        rc = b.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
    said = b.wait_for(r'ring directory .*: busy, another kevent-cuse serves from it$', 1)
    oa = os.open(pa, os.O_RDONLY) if os.path.exists(pa) else None
    index = None
    if oa is not None:
        m = mmap.mmap(oa, length, prot=mmap.PROT_READ)
        os.close(oa)
        r, w = os.pipe()
        ctl(fa, 0, [UKEVENT.pack(r, 0, KEVENT_POLL, POLLIN, 0, 0, 0, 0, 0, 0)])
        os.write(w, b'x')
        index = wait_index(m, 1)
        m.close()
        os.close(r)
        os.close(w)
    t.check('shared_shm/second_daemon_refused', rc == 69 and said is not None and index == 1,
            f'second daemon exit {rc} (want 69), its log {b.log}; the first one\'s ring '
            f'{pa} kept: {oa is not None}, index after one event {index} (want 1)')
    os.close(fa)
    rc_a = a.stop()
    c = Traced(exe, work, shm, 'lock-c', None)
    up = c.up()
    rc_c = c.stop()
    t.check('shared_shm/free_after_stop', rc_a == 0 and up and rc_c == 0,
            f'first stop {rc_a}, a new daemon on the directory up {up} ({c.log}), stop {rc_c}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--daemon', required=True)
    exe = os.path.abspath(ap.parse_args().daemon)
    if not os.path.exists('/dev/fuse'):
        print('1..0 # SKIP /dev/fuse is missing on this host')
        return 77
    if os.geteuid() != 0:
        print('1..0 # SKIP not root: kevent-cuse --fuse mounts with allow_other')
        return 77
    t = Tap()
    work = tempfile.mkdtemp(prefix='kevent-cli-')
    os.chmod(work, 0o755)
    try:
        command_line(exe, t)
        start_checks(exe, work, t)
        trace(exe, work, t)
        fuse_debug(exe, work, t)
        background(exe, work, t)
        default_ring_dirs(exe, work, t)
        shared_ring_dir_refused(exe, work, t)
    finally:
        for d in STARTED:
            if d.proc.poll() is None:
                d.proc.kill()
                d.proc.wait()
                subprocess.run(['umount', '-l', d.mnt], check=False)
    rc = t.print()
    if rc == 0:
        subprocess.run(['rm', '-rf', '--one-file-system', work], check=False)
    else:
        print(f'# logs in {work}')
    return rc


if __name__ == '__main__':
    sys.exit(main())
