#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every rule of docs/abi.md names the tests that pin it (prints TAP).

The rules are the decisions of docs/abi.md: the D-numbers of section 1's
table and the A-numbers of section 3 (design.md's B and C rules, abi.md's
O-numbers and section numbers are not decisions).  Section 1.1 of abi.md
is a table with one row per rule: the rule, the tests that pin it (each in
backticks, a trailing `*` is a glob), and where no test can pin it (a
backend, or every backend) and why.  This script fails when

  * a rule has no row, or its row names no test and gives no reason;
  * a row names a rule that abi.md does not define, or one rule twice;
  * a row names a test that does not exist (a glob that matches none);
  * a test source names a rule (`D43`, `A9`, `abi.md D58`, a test called
    `D19_enomem_...`) that abi.md does not define.

Test names, by kind:

  suite/name            a client test, KTEST/KTEST_REVS/Test in
                        client-tests/client-*.c (instances suite/name__revN)
  m32/name              a test of the 32-bit client, client-tests/client-m32.c
  fuse/name             a Criterion test of tests/fuse/fuse-file.c
  native/group/name     a result row of tests/fuse/native.py (the fuse tier)
  core/suite/name       a unit test of core/tests (CORE_TEST or Test)
  origins/suite/name    a unit test of origins/tests
  daemon/suite/name     a unit test of cuse-daemon/tests
  path/to/file          a file of the tree: a corpus reproducer
                        (fuzz/corpus/lockstep-...), a test program of its own
                        (tests/vm/stop-witness.c, tests/abi/layout.c)

usage: check-rule-tests.py SRCDIR
"""
import fnmatch
import os
import re
import sys

MATRIX_HEADING = re.compile(r'^### 1\.1 ')
RULE = re.compile(r'^[AD][0-9]+$')
# A rule named in a test: D43, abi.md D58, CORE_TEST(ctl, D19_enomem...), but
# not a hex digit run (0xD20, \xA1) or a word (ND20, A1B2).
MENTION = re.compile(r'(?<![A-Za-z0-9])([AD])([0-9]+)(?![A-Za-z0-9])')
SCAN_DIRS = ['client-tests', 'tests', 'core/tests', 'origins/tests', 'cuse-daemon/tests',
             'kmod/tests', 'lib/tests', 'fuzz', 'kqueue/tests']
SCAN_EXTS = ('.c', '.h', '.cc', '.py', '.sh', '.patch', '.md')
SKIP_DIRS = {'.git', '__pycache__', 'corpus'}
UNIT_DIRS = {'core': 'core/tests', 'origins': 'origins/tests', 'daemon': 'cuse-daemon/tests'}
TEST_DECL = re.compile(r'^\s*(?:KTEST|KTEST_REVS|Test|CORE_TEST)\s*\(\s*(\w+)\s*,\s*(\w+)', re.M)


def read(path):
    with open(path, errors='replace') as f:
        return f.read()


def rule_key(rule):
    return ('DA'.index(rule[0]), int(rule[1:]))


def cells(line):
    """The cells of a markdown table row; `\\|` stays inside a cell."""
    parts = re.split(r'(?<!\\)\|', line.strip())
    return [p.strip() for p in parts[1:-1]]


def defined_rules(text):
    """D-numbers of section 1's decision table, A-numbers of section 3."""
    rules, section = [], ''
    for line in text.splitlines():
        if line.startswith('## ') or line.startswith('### '):
            section = line
            continue
        if section.startswith('## 1.'):
            m = re.match(r'^\|\s*(D[0-9]+)\s*\|', line)
            if m:
                rules.append(m.group(1))
        elif section.startswith('## 3.'):
            m = re.match(r'^\*\*(A[0-9]+)\.', line)
            if m:
                rules.append(m.group(1))
    return rules


def matrix_rows(text):
    """(line number, cells) of the rule -> test table of section 1.1."""
    rows, inside, seen_header = [], False, False
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith('#'):
            if inside and not MATRIX_HEADING.match(line):
                break
            inside = bool(MATRIX_HEADING.match(line))
            continue
        if not inside or not line.startswith('|'):
            continue
        if not seen_header:
            seen_header = True	# the column titles
            continue
        if re.match(r'^\|[\s|:-]+\|$', line):
            continue		# the separator
        rows.append((n, cells(line)))
    return rows if seen_header else None


def strip_rev(name):
    return re.sub(r'__rev[0-9]+$', '', name)


def test_index(root):
    """Every nameable test, as the matrix names it."""
    ids = set()
    cdir = os.path.join(root, 'client-tests')
    for f in sorted(os.listdir(cdir)):
        if not (f.startswith('client-') and f.endswith('.c')):
            continue
        text = read(os.path.join(cdir, f))
        if f == 'client-m32.c':
            ids.update('m32/' + strip_rev(n) for n in re.findall(r'\{\s*"(\w+)"\s*,\s*t_\w+\s*\}', text))
            continue
        ids.update(f'{s}/{strip_rev(n)}' for s, n in TEST_DECL.findall(text))
    text = read(os.path.join(root, 'tests/fuse/fuse-file.c'))
    ids.update(f'fuse/{n}' for s, n in TEST_DECL.findall(text) if s == 'fuse')
    text = read(os.path.join(root, 'tests/fuse/native.py'))
    ids.update('native/' + n for n in re.findall(r"""['"]([a-z]+/[a-z0-9_]+)['"]""", text))
    for kind, d in UNIT_DIRS.items():
        for f in sorted(os.listdir(os.path.join(root, d))):
            if f.endswith('.c'):
                text = read(os.path.join(root, d, f))
                ids.update(f'{kind}/{s}/{n}' for s, n in TEST_DECL.findall(text))
    return ids


def resolve(root, ids, name):
    """The tests a matrix entry stands for ([] when none)."""
    if name.endswith('*') and '*' not in name[:-1]:
        return sorted(fnmatch.filter(ids, name))
    if '*' in name or '..' in name.split('/'):
        return []
    if name in ids:
        return [name]
    if '/' in name and os.path.isfile(os.path.join(root, name)):
        return [name]
    return []


def is_client(root, name):
    """A test of the client suite (m32 included), run against every backend."""
    head = name.split('/')[0]
    return head not in ('fuse', 'native', *UNIT_DIRS) and not os.path.isfile(os.path.join(root, name))


def tests_of(cell):
    """The backticked names of a tests cell, or None when it holds other text."""
    names = re.findall(r'`([^`]+)`', cell)
    rest = re.sub(r'`[^`]+`', '', cell)
    if re.sub(r'[\s,—-]', '', rest):
        return None
    return names


def mentions(root, defined):
    """(file:line, rule) for every rule a test source names that is not defined."""
    bad, files, count = [], 0, 0
    for d in SCAN_DIRS:
        for dp, dn, fn in os.walk(os.path.join(root, d)):
            dn[:] = sorted(x for x in dn if x not in SKIP_DIRS and not x.startswith('build'))
            for f in sorted(fn):
                if not f.endswith(SCAN_EXTS):
                    continue
                path = os.path.join(dp, f)
                files += 1
                for n, line in enumerate(read(path).splitlines(), 1):
                    for m in MENTION.finditer(line):
                        count += 1
                        if m.group(0) not in defined:
                            bad.append((f'{os.path.relpath(path, root)}:{n}', m.group(0)))
    return bad, files, count


def main():
    root = sys.argv[1]
    text = read(os.path.join(root, 'docs/abi.md'))
    rules = defined_rules(text)
    defined = set(rules)
    rows = matrix_rows(text)
    out = []

    if not rules or rows is None:
        print('1..1\nnot ok 1 - docs/abi.md: no decisions, or no section "### 1.1" with the rule table')
        return 1
    ids = test_index(root)
    by_rule, problems, unclient = {}, [], []
    for n, c in rows:
        where = f'docs/abi.md:{n}'
        if len(c) != 3:
            problems.append(f'{where}: {len(c)} cells, want 3 (rule, tests, no test where and why)')
            continue
        rule, names, why = c[0].strip('*'), tests_of(c[1]), c[2]
        if not RULE.match(rule):
            problems.append(f'{where}: "{c[0]}" is not a rule (D<n> or A<n>)')
        elif rule not in defined:
            problems.append(f'{where}: row for {rule}, which docs/abi.md does not define')
        elif rule in by_rule:
            problems.append(f'{where}: a second row for {rule}')
        elif names is None:
            problems.append(f'{where}: {rule}: the tests cell holds text besides `names`')
        else:
            by_rule[rule] = (where, names, why)

    for rule in sorted(rules, key=rule_key):
        if rule not in by_rule:
            out.append((False, f'{rule}: no row in section 1.1 of docs/abi.md'))
            continue
        where, names, why = by_rule[rule]
        found, missing = [], []
        for name in names:
            got = resolve(root, ids, name)
            found += got
            if not got:
                missing.append(name)
        if missing:
            out.append((False, f'{rule}: {where} names what is no test: {", ".join(missing)}'))
        elif not names and not why.strip('— '):
            out.append((False, f'{rule}: {where} names no test and gives no reason'))
        elif not names:
            out.append((True, f'{rule}: 0 tests (why: {why})'))
        else:
            found = set(found)
            client = sum(1 for t in found if is_client(root, t))
            which = '' if client == len(found) else f' ({client} of them client tests)'
            out.append((True, f'{rule}: {len(found)} test{"s" if len(found) != 1 else ""}{which}'))
            if not client:
                unclient.append(rule)
    for p in problems:
        out.append((False, p))

    bad, nfiles, nment = mentions(root, defined)
    for where, rule in bad:
        out.append((False, f'{where} names {rule}, which docs/abi.md does not define'))
    if not bad:
        out.append((True, f'{nment} rule names in {nfiles} test sources, each one defined'))

    print(f'1..{len(out)}')
    for i, (ok, what) in enumerate(out, 1):
        print(f'{"ok" if ok else "not ok"} {i} - {what}')
    pinned = sum(1 for r in rules if r in by_rule and by_rule[r][1])
    reasons = sum(1 for r in rules if r in by_rule and not by_rule[r][1] and by_rule[r][2].strip('— '))
    refs = sum(len(by_rule[r][1]) for r in by_rule)
    print(f'# {len(rules)} rules ({sum(r[0] == "D" for r in rules)} D, '
          f'{sum(r[0] == "A" for r in rules)} A): {pinned} pinned by tests, '
          f'{reasons} with only a reason, {len(rules) - pinned - reasons} with neither; '
          f'{refs} test names in the table, {len(ids)} tests known')
    if unclient:
        print(f'# pinned by no client test: {", ".join(unclient)}')
    return 0 if all(ok for ok, _ in out) else 1


if __name__ == '__main__':
    sys.exit(main())
