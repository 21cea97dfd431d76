#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Keeps the mutants from rotting.

  check.py SOURCE_DIR BUILD_DIR

Each tests/vm/mutants/*.patch must still apply to the source tree exactly as
`run` applies it (patch -p1, no fuzz) and the file it yields must still
compile: a patch that applies but names a function or a field the code has
since lost is an ERROR of the mutation run, not a result, and that mutant is
silently gone.  The tree is never written: the patched file goes to a
temporary directory and is compiled there with -fsyntax-only, by its own
command from BUILD_DIR/compile_commands.json (with -Wno-error: a one-line
bug may leave a helper unused, as `run` builds with -Dwerror=false).
Prints TAP, one line per patch; a failing line carries the tool's complaint.
"""
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# The arguments that name the output or the input; the rest is the flags.
DROP_WITH_ARG = {'-o', '-MQ', '-MF', '-MT', '-c'}
DROP = {'-MD', '-MMD', '-fdiagnostics-color=always'}


def targets(patch):
    with open(patch) as f:
        return [line.split()[1][2:] for line in f if line.startswith('+++ b/')]


def flags_of(entry):
    args = shlex.split(entry['command']) if 'command' in entry else list(entry['arguments'])
    out, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
        elif a in DROP_WITH_ARG:
            skip = True
        elif a not in DROP and not a.endswith('.c'):
            out.append(a)
    return args[0], out


def commands(build):
    with open(os.path.join(build, 'compile_commands.json')) as f:
        db = json.load(f)
    by_file = {}
    for e in db:
        path = os.path.normpath(os.path.join(e['directory'], e['file']))
        by_file.setdefault(path, e)	# one command per file is enough
    return by_file


def check(src, patch, db, tmp):
    """None when the patch applies and compiles, else the complaint."""
    r = subprocess.run(['patch', '-d', src, '-p1', '--dry-run', '--forward', '--batch',
                        '--fuzz=0', '-i', patch], capture_output=True, text=True)
    if r.returncode:
        return ('no longer applies with --fuzz=0; re-make it against today\'s code '
                '(tests/vm/README.md)', r.stdout + r.stderr)
    for rel in targets(patch):
        if not rel.endswith('.c'):
            continue
        orig = os.path.join(src, rel)
        out = os.path.join(tmp, os.path.basename(rel))
        r = subprocess.run(['patch', '-s', '-p1', '--fuzz=0', '--batch', '-d', src, '-o', out,
                            '-i', patch], capture_output=True, text=True)
        if r.returncode:
            return (f'cannot write the patched {rel}', r.stdout + r.stderr)
        entry = db.get(os.path.normpath(orig))
        if entry is None:
            return (f'{rel} has no compile command in compile_commands.json (not built here)', '')
        cc, flags = flags_of(entry)
        # "foo.h" resolves next to the original, not next to the copy
        r = subprocess.run([cc, *flags, '-Wno-error', '-fsyntax-only', '-iquote',
                            os.path.dirname(orig), out],
                           cwd=entry['directory'], capture_output=True, text=True)
        if r.returncode:
            return (f'applies but {rel} no longer compiles; re-make it against today\'s code '
                    '(tests/vm/README.md)', r.stderr)
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split('\n\n')[1])
    src, build = (os.path.abspath(a) for a in sys.argv[1:])
    if not shutil.which('patch'):
        print('1..0 # SKIP patch(1) is not installed (scripts/install-deps adds it)')
        return 77
    patches = sorted(glob.glob(os.path.join(HERE, '*.patch')))
    if not patches:
        print(f'1..0 # SKIP no mutant patches in {HERE}')
        return 77
    db = commands(build)
    print(f'1..{len(patches)}')
    failed = 0
    with tempfile.TemporaryDirectory(prefix='kevent-mutants-check-') as tmp:
        for i, p in enumerate(patches, 1):
            name = os.path.basename(p)[:-len('.patch')]
            bad = check(src, p, db, tmp)
            if bad is None:
                print(f'ok {i} - {name}')
                continue
            failed += 1
            print(f'not ok {i} - {name}: {bad[0]}')
            for line in bad[1].splitlines()[:20]:
                print(f'# {line}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
