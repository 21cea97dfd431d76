#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The later revisions' rules of the client suite, as a --filter alternation.

A rule that a later revision added, ended or changed is a test whose range
is not [1, open): KTEST_REVS(suite, name, first, last) with first above 1
or a last (ktest.h).  Prints `suite/name__rev*|...` for every such test of
client-tests/client-*.c, for the guest boots that run every revision-1
instance and the later rules on each of their revisions
(`--filter '@(*__rev1|OUTPUT)'`, tests/vm/meson.build).

usage: later-rules.py [CLIENT_TESTS_DIR]
"""
import os
import re
import sys

DECL = re.compile(r'^KTEST_REVS\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)', re.M)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    out = []
    for f in sorted(os.listdir(d)):
        if f.startswith('client-') and f.endswith('.c'):
            with open(os.path.join(d, f)) as src:
                for suite, name, first, last in DECL.findall(src.read()):
                    if first != '1' or last not in ('KTEST_OPEN', '0'):
                        out.append(f'{suite}/{name}__rev*')
    if not out:
        print('later-rules.py: no KTEST_REVS with a later range in ' + d, file=sys.stderr)
        return 1
    print('|'.join(out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
