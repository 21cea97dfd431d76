#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Keeps the counts README.md states true (suite docs, TAP).

  check-readme.py SRCDIR

* "N ABI revisions are served": N = KEVENT_ABI_REVISION -
  KEVENT_ABI_REVISION_LOWEST + 1 of include/uapi/linux/kevent.h;
* "`examples/` holds N small programs": N = the examples/*.c files, and
  README names each of them.

A count is a number word (one to twenty) or digits.  A sentence that is
missing is a failure too: the check must not pass because README changed
its wording.
"""
import os
import re
import sys

WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine',
         'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen',
         'seventeen', 'eighteen', 'nineteen', 'twenty']


def number(word):
    word = word.lower()
    return int(word) if word.isdigit() else WORDS.index(word) if word in WORDS else None


def header_define(text, name):
    m = re.search(rf'^#define\s+{name}\s+(\d+)', text, re.M)
    return int(m.group(1)) if m else None


def main():
    src = sys.argv[1]
    readme = open(os.path.join(src, 'README.md')).read()
    header = open(os.path.join(src, 'include/uapi/linux/kevent.h')).read()
    results = []

    hi = header_define(header, 'KEVENT_ABI_REVISION')
    lo = header_define(header, 'KEVENT_ABI_REVISION_LOWEST')
    m = re.search(r'(\w+)\s+ABI\s+revisions\s+are\s+served', readme)
    if not m or hi is None or lo is None:
        results.append((False, 'revisions', 'README has no "N ABI revisions are served" '
                        'or the header no KEVENT_ABI_REVISION(_LOWEST)'))
    else:
        said, served = number(m.group(1)), hi - lo + 1
        results.append((said == served, 'revisions',
                        f'README says {m.group(1)}, the header serves {lo} to {hi} ({served})'))

    examples = sorted(f for f in os.listdir(os.path.join(src, 'examples')) if f.endswith('.c'))
    m = re.search(r'`examples/`\s+holds\s+(\w+)\s+small\s+programs', readme)
    if not m:
        results.append((False, 'examples', 'README has no "`examples/` holds N small programs"'))
    else:
        said = number(m.group(1))
        results.append((said == len(examples), 'examples',
                        f'README says {m.group(1)}, examples/ has {len(examples)}'))
    for ex in examples:
        results.append((f'`{ex}`' in readme, f'examples/{ex}', 'named in README'
                        if f'`{ex}`' in readme else 'not named in README'))

    print(f'1..{len(results)}')
    for i, (ok, name, why) in enumerate(results, 1):
        print(f'{"ok" if ok else "not ok"} {i} - {name}: {why}')
    return 0 if all(r[0] for r in results) else 1


if __name__ == '__main__':
    sys.exit(main())
