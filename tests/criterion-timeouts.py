#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""One test timeout per Criterion program (prints TAP).

Criterion 2.4.1 (Debian 12) keeps the running tests' deadlines in a sorted
list; a deadline earlier than the list's head replaces the head without
linking the rest, so the other running tests' deadlines are dropped (never
enforced) and leaked.  With --jobs >= 2 that happens whenever a test with a
shorter .timeout starts while one with a longer timeout runs, and the ASan
tier's leak check then aborts the runner ("exit status -6 with no failing
test").  Equal timeouts keep the deadlines in start order.  Every Criterion
program of this tree is one source file (plus helpers with no tests), so
the check is per file: every `.timeout = X` in a file that declares tests
names the same X.

usage: criterion-timeouts.py SRCDIR
"""
import os
import re
import sys

SKIP_DIRS = {'.git', 'kmod'}


def sources(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith('build')]
        for f in sorted(files):
            if f.endswith('.c'):
                yield os.path.join(d, f)


def main():
    root = sys.argv[1]
    rows = []
    for path in sources(root):
        text = open(path, errors='replace').read()
        if not re.search(r'^\s*(Test|TestSuite|KTEST\w*|KQT)\s*\(', text, re.M):
            continue
        values = set(re.findall(r'\.timeout\s*=\s*([\w.]+)', text))
        # the wrappers' own timeout (client-tests/ktest.h, kqueue/tests/kqt.h)
        if re.search(r'^\s*KTEST\w*\s*\(', text, re.M):
            values.add('KTEST_TIMEOUT')
        if re.search(r'^\s*KQT\s*\(', text, re.M):
            values.add('KQT_TIMEOUT')
        values = sorted(values)
        rel = os.path.relpath(path, root)
        rows.append((rel, len(values) <= 1, values))
    if not rows:
        print('1..1\nnot ok 1 - no Criterion test source found under ' + root)
        return 1
    print(f'1..{len(rows)}')
    for i, (rel, ok, values) in enumerate(rows, 1):
        why = '' if ok else f' # timeouts {", ".join(values)}: use one value per program'
        print(f'{"ok" if ok else "not ok"} {i} - {rel}{why}')
    return 0 if all(ok for _, ok, _ in rows) else 1


if __name__ == '__main__':
    sys.exit(main())
