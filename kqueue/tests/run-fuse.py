#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run one program against the build's own kevent-cuse serving DIR/kevent
in a FUSE mount on this host, as the fuse suite does (tests/fuse/native.py).

  run-fuse.py --daemon EXE -- PROG [ARG]...

PROG runs with KEVENT_DEVICE=DIR/kevent and KEVENT_BACKEND=fuse; its
stdout (TAP) and exit status are passed through.  Afterwards the daemon
must still run and must stop with exit 0 on SIGTERM.  Without /dev/fuse,
without root, or where the mount is refused: `1..0 # SKIP reason`, 77.
"""
import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time


def skip(reason):
    print(f'1..0 # SKIP {reason}')
    sys.exit(77)


def mounted(path):
    with open('/proc/self/mountinfo') as f:
        return any(line.split()[4] == path for line in f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--daemon', required=True)
    ap.add_argument('prog', nargs=argparse.REMAINDER)
    args = ap.parse_args()
    prog = [p for p in args.prog if p != '--']
    if not os.path.exists('/dev/fuse'):
        skip('/dev/fuse is missing on this host')
    if os.geteuid() != 0:
        skip('not root: kevent-cuse --fuse mounts with allow_other and reads callers\' memory')
    work = tempfile.mkdtemp(prefix='kqueue-fuse-')
    mnt = os.path.join(work, 'mnt')
    os.mkdir(mnt)
    log = os.path.join(work, 'daemon.log')
    shm = f'/dev/shm/kqueue-fuse-{os.getpid()}'
    d = subprocess.Popen([os.path.abspath(args.daemon), '--foreground', '--fuse', mnt,
                          '--shm-dir', shm], cwd=work, stdin=subprocess.DEVNULL,
                         stdout=open(log, 'w'), stderr=subprocess.STDOUT)
    dev = os.path.join(mnt, 'kevent')
    deadline = time.monotonic() + 10
    while not (mounted(mnt) and os.path.exists(dev)):
        if d.poll() is not None:
            skip(f'kevent-cuse --fuse exited {d.returncode}: {open(log).read().strip()[-200:]}')
        if time.monotonic() > deadline:
            d.kill()
            print(f'1..1\nnot ok 1 - backend/start: {dev} did not appear in 10 s')
            return 1
        time.sleep(0.02)
    env = dict(os.environ, KEVENT_DEVICE=dev, KEVENT_BACKEND='fuse')
    try:
        rc = subprocess.run([os.path.abspath(prog[0])] + prog[1:], env=env).returncode
    except OSError as e:
        print(f'1..1\nnot ok 1 - run: {e}')
        rc = 1
    sys.stdout.flush()
    bad = None
    if d.poll() is not None:
        bad = f'kevent-cuse died during the run ({d.returncode}); log {log}'
    else:
        d.send_signal(signal.SIGTERM)
        try:
            if d.wait(timeout=30) != 0:
                bad = f'kevent-cuse exited {d.returncode} after SIGTERM; log {log}'
        except subprocess.TimeoutExpired:
            d.kill()
            bad = f'kevent-cuse still running 30 s after SIGTERM; log {log}'
    if mounted(mnt):
        subprocess.run(['umount', '-l', mnt], check=False)
    if bad:
        print(f'# {bad}', file=sys.stderr)
        return rc or 1
    subprocess.run(['rm', '-rf', '--one-file-system', work], check=False)
    return rc


if __name__ == '__main__':
    sys.exit(main())
