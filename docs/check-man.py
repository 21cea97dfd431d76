#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks of the man pages in docs/, printed as TAP (suite 'docs').

  check-man.py lint PAGE...            mandoc -Tlint is silent on every page
  check-man.py render PAGE...          each page renders (mandoc -Tascii and
                                       man -l) with the sections it must have,
                                       a matching .TH, a NAME line, and SEE ALSO
                                       references to pages that exist
  check-man.py errors ABI_MD DOCDIR    the ERRORS sections name exactly the
                                       errnos of docs/abi.md section 7
  check-man.py source ABI_MD DOCDIR SRC...
                                       every -Exxx the given sources (the core
                                       dispatcher) can return is in docs/abi.md
                                       section 7 and in some page's ERRORS
  check-man.py runtime ABI_MD DOCDIR REPLAY CORPUS
                                       replay the fuzz corpus through the real
                                       dispatcher (REPLAY, KFUZZ_ERRNO_LOG) and
                                       check that every errno it returned, per
                                       ioctl, is in that ioctl's table of
                                       docs/abi.md section 7 and in its page's
                                       ERRORS
  check-man.py examples ROOT PAGE...   every C block of an EXAMPLES section is
                                       marked '.\\" example: FILE[#REGION]' and
                                       is exactly that file of ROOT (or the
                                       lines between '/* man: REGION */' and
                                       '/* man: end */' in it), roff-escaped
  check-man.py sync-examples ROOT PAGE...
                                       rewrite those blocks from the files

A missing tool is a loud skip (TAP "# SKIP" with the reason), never a pass.
"""
import errno
import os
import re
import shutil
import subprocess
import sys

ERRNO_NAMES = set(errno.errorcode.values())

# Sections every page must have, and the extra ones per manual section.
COMMON = ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'SEE ALSO']
EXTRA = {
    '2': ['RETURN VALUE', 'ERRORS', 'VERSIONS', 'BUGS'],
    '3': ['RETURN VALUE', 'ERRORS'],
    '4': ['ERRORS', 'FILES'],
    '7': ['EXAMPLES'],
    '8': [],
}
# Project pages a SEE ALSO may name; they must exist next to the page.
PROJECT_PAGES = re.compile(r'^(kevent|kevent_ctl|kevent_get_events|libkevent|kevent-cuse)$')


class Tap:
    def __init__(self):
        self.lines = []
        self.n = 0
        self.failed = False

    def ok(self, cond, name, diag=None):
        self.n += 1
        n = self.n
        self.lines.append(f'{"ok" if cond else "not ok"} {n} - {name}')
        if not cond:
            self.failed = True
            for d in (diag or '').splitlines():
                self.lines.append(f'# {d}')

    def skip(self, name, reason):
        self.n += 1
        n = self.n
        self.lines.append(f'ok {n} - {name} # SKIP {reason}')
        print(f'SKIP: {name}: {reason}', file=sys.stderr)

    def done(self):
        print(f'1..{self.n}')
        print('\n'.join(self.lines))
        return 1 if self.failed else 0


def skip_all(reason):
    print(f'1..0 # SKIP {reason}')
    print(f'SKIP: {reason}', file=sys.stderr)
    return 77


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL, timeout=120)
    return p.returncode, p.stdout, p.stderr


def strip_overstrike(text):
    # Renderers may emit bold/underline as c\bc and _\bc.
    return re.sub(r'.\x08', '', text)


def sections(text):
    """Map section heading -> body, from rendered text (headings at column 0)."""
    out, cur = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace() and line.strip() == line.strip().upper() \
                and re.match(r'^[A-Z][A-Z ]+$', line.strip()):
            cur = line.strip()
            out.setdefault(cur, [])
        elif cur is not None:
            out[cur].append(line)
    return {k: '\n'.join(v) for k, v in out.items()}


def th_of(path):
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('.TH '):
                return re.findall(r'"[^"]*"|\S+', line[4:])
    return []


def cmd_lint(pages):
    mandoc = shutil.which('mandoc')
    if not mandoc:
        return skip_all('mandoc is not installed (apt-get install mandoc): man pages not linted')
    t = Tap()
    for page in pages:
        rc, out, err = run([mandoc, '-Tlint', '-Wall', page])
        msgs = (out + err).strip()
        t.ok(rc == 0 and not msgs, f'mandoc -Tlint {os.path.basename(page)}', msgs)
    return t.done()


def render_checks(t, page, renderer, text):
    base = os.path.basename(page)
    name, sect = base.rsplit('.', 1)
    secs = sections(strip_overstrike(text))
    want = COMMON + EXTRA.get(sect[0], [])
    missing = [s for s in want if s not in secs]
    t.ok(not missing, f'{renderer} {base}: sections {", ".join(want)}',
         f'missing: {", ".join(missing)}; found: {", ".join(secs)}')
    name_body = ' '.join(secs.get('NAME', '').split())
    t.ok(re.match(r'^\S.* - \S', name_body) is not None,
         f'{renderer} {base}: NAME line is "name - description"', f'NAME reads: {name_body!r}')
    return secs


def cmd_render(pages):
    t = Tap()
    mandoc = shutil.which('mandoc')
    man = shutil.which('man')
    for page in pages:
        base = os.path.basename(page)
        name, sect = base.rsplit('.', 1)
        th = th_of(page)
        t.ok(len(th) >= 3 and th[0] == name.upper() and th[1] == sect,
             f'{base}: .TH {name.upper()} {sect}', f'.TH reads: {th}')
        secs = None
        if mandoc:
            rc, out, err = run([mandoc, '-Tascii', page])
            t.ok(rc == 0 and out, f'mandoc -Tascii {base} renders', err)
            secs = render_checks(t, page, 'mandoc', out)
        else:
            t.skip(f'mandoc -Tascii {base}', 'mandoc is not installed')
        if man:
            env = dict(os.environ, MANWIDTH='80', MAN_KEEP_FORMATTING='0', LC_ALL='C.UTF-8',
                       MANPAGER='cat', PAGER='cat')
            rc, out, err = run([man, '--warnings', '-l', page], env=env)
            t.ok(rc == 0 and out and not err.strip(), f'man -l {base} renders without warnings', err)
            s2 = render_checks(t, page, 'man -l', out)
            secs = secs or s2
        else:
            t.skip(f'man -l {base}', 'man-db is not installed (apt-get install man-db)')
        if secs is None:
            continue
        refs = re.findall(r'([A-Za-z0-9_.-]+)\((\d)\)', ' '.join(secs.get('SEE ALSO', '').split()))
        here = os.path.dirname(page)
        for ref, rsect in refs:
            if not PROJECT_PAGES.match(ref):
                continue
            target = f'{ref}.{rsect}'
            if os.path.exists(os.path.join(here, target)):
                t.ok(True, f'{base}: SEE ALSO {ref}({rsect}) exists')
            else:
                t.ok(False, f'{base}: SEE ALSO {ref}({rsect}) exists', f'no {target} in {here}')
    return t.done()


def abi_errnos(abi_md):
    """docs/abi.md section 7: {subsection number: set of errno names in table rows}."""
    out, cur = {}, None
    with open(abi_md, encoding='utf-8') as f:
        for line in f:
            m = re.match(r'^### 7\.(\d+)', line)
            if m:
                cur = int(m.group(1))
                out.setdefault(cur, set())
                continue
            if line.startswith('## '):
                cur = None
            if cur is None or not line.startswith('|'):
                continue
            cells = line.split('|')
            # 7.7 has a leading "call" column; the errno column is the one with E-names.
            for cell in cells[1:3]:
                names = {n for n in re.findall(r'`-?(E[A-Z0-9]+)`', cell) if n in ERRNO_NAMES}
                if names:
                    out[cur] |= names
                    break
    return out


def man_errors(page):
    mandoc = shutil.which('mandoc')
    rc, out, err = run([mandoc, '-Tascii', page])
    body = sections(strip_overstrike(out)).get('ERRORS', '')
    return {n for n in re.findall(r'\b(E[A-Z0-9]{2,})\b', body) if n in ERRNO_NAMES}


def cmd_errors(abi_md, docdir):
    if not shutil.which('mandoc'):
        return skip_all('mandoc is not installed: ERRORS sections not compared with docs/abi.md')
    abi = abi_errnos(abi_md)
    t = Tap()
    # 7.4 (INFO) has only the common errors, hence no table of its own.
    tables = (1, 2, 3, 5, 6, 7)
    t.ok(all(abi.get(k) for k in tables) and 4 in abi,
         'docs/abi.md section 7 has subsections 7.1 to 7.7 with errno tables',
         f'found: {[(k, sorted(v)) for k, v in sorted(abi.items())]}')
    # page: (subsections whose errnos the page must name, subsections it may name)
    plan = {
        'kevent_ctl.2': ({1, 2}, {1, 2}),
        'kevent_get_events.2': ({1, 3}, {1, 3}),
        'kevent.4': ({1, 5, 6}, {1, 4, 5, 6, 7}),
        'kevent_init.2': ({8}, {1, 6, 8}),
        'kevent_wait.2': ({9}, {1, 9}),
        'kevent_commit.2': ({10}, {1, 10}),
    }
    for page, (must, may) in plan.items():
        path = os.path.join(docdir, page)
        have = man_errors(path)
        need = set().union(*(abi.get(k, set()) for k in must))
        allowed = set().union(*(abi.get(k, set()) for k in may))
        t.ok(need <= have, f'{page}: ERRORS names every errno of abi.md 7.{",7.".join(map(str, sorted(must)))}',
             f'missing: {" ".join(sorted(need - have))}')
        t.ok(have <= allowed, f'{page}: ERRORS names no errno that abi.md does not define',
             f'not in abi.md: {" ".join(sorted(have - allowed))}')
    return t.done()


def cmd_source(abi_md, docdir, srcs):
    if not shutil.which('mandoc'):
        return skip_all('mandoc is not installed: ERRORS sections not compared with the sources')
    abi = set().union(*abi_errnos(abi_md).values())
    pages = [os.path.join(docdir, p) for p in sorted(os.listdir(docdir))
             if re.match(r'^[a-z_-]+\.[2348]$', p)]
    in_pages = set().union(*(man_errors(p) for p in pages))
    found = {}
    for src in srcs:
        with open(src, encoding='utf-8') as f:
            text = f.read()
        # Comments name errnos too ("no -EINTR"): blank them, keep the lines.
        text = re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)
        for no, line in enumerate(text.splitlines(), 1):
                code = line.split('//', 1)[0]
                for n in re.findall(r'-(E[A-Z0-9]+)\b', code):
                    if n in ERRNO_NAMES:
                        found.setdefault(n, f'{os.path.basename(src)}:{no}')
    t = Tap()
    for n, where in sorted(found.items()):
        t.ok(n in abi, f'{n} (first at {where}) is in docs/abi.md section 7',
             'add it to the errno tables of docs/abi.md with its exact condition')
        t.ok(n in in_pages, f'{n} (first at {where}) is in the ERRORS of a man page',
             'add it to the ERRORS section of the page of that call')
    if not found:
        t.ok(False, 'the sources name at least one errno', ' '.join(srcs))
    return t.done()


# ioctl nr: (its docs/abi.md 7.x tables, the page whose ERRORS must name it)
RUNTIME_PLAN = {
    0: ({1, 4}, 'kevent.4'),
    1: ({1, 2}, 'kevent_ctl.2'),
    2: ({1, 3}, 'kevent_get_events.2'),
    3: ({1, 5}, 'kevent.4'),
    4: ({1, 6}, 'kevent.4'),
    6: ({1, 8}, 'kevent_init.2'),
    7: ({1, 9}, 'kevent_wait.2'),
    8: ({1, 10}, 'kevent_commit.2'),
}
# The fuzzer's test origin fails attach() with EIO, its own code ("an
# origin's own failure", abi.md 7.2); no real origin or the core returns it.
TEST_ORIGIN_ERRNOS = {'EIO'}


def cmd_runtime(abi_md, docdir, replay, corpus):
    if not shutil.which('mandoc'):
        return skip_all('mandoc is not installed: ERRORS sections not read')
    import tempfile
    abi = abi_errnos(abi_md)
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, 'errnos')
        env = dict(os.environ, KFUZZ_ERRNO_LOG=log)
        p = subprocess.run([replay, corpus], capture_output=True, text=True, env=env,
                           stdin=subprocess.DEVNULL, timeout=600)
        seen = {}
        if os.path.exists(log):
            for line in open(log, encoding='utf-8'):
                nr, where, e = line.split()
                name = errno.errorcode.get(int(e), f'errno {e}')
                key = (int(nr) if int(nr) in RUNTIME_PLAN else 99, where, name)
                seen[key] = seen.get(key, 0) + 1
    t = Tap()
    t.ok(p.returncode == 0, f'the corpus replays cleanly ({os.path.basename(replay)})',
         p.stdout[-2000:] + p.stderr[-2000:])
    t.ok(bool(seen), 'the replay returned errnos to compare', 'no KFUZZ_ERRNO_LOG lines')
    pages = {}
    for (nr, where, name), count in sorted(seen.items()):
        tables, page = RUNTIME_PLAN.get(nr, ({1}, 'kevent.4'))
        label = f'ioctl {"nr " + str(nr) if nr in RUNTIME_PLAN else "of an unknown nr"} {where} {name} (seen {count}x)'
        if where == 'entry' and name in TEST_ORIGIN_ERRNOS:
            t.skip(label, 'the test origin\'s own attach() failure, not a backend errno')
            continue
        documented = set().union(*(abi.get(k, set()) for k in tables))
        t.ok(name in documented, f'{label} is in docs/abi.md 7.{",7.".join(map(str, sorted(tables)))}',
             'the dispatcher returns it: add it with its condition')
        if page not in pages:
            pages[page] = man_errors(os.path.join(docdir, page))
        t.ok(name in pages[page], f'{label} is in the ERRORS of {page}',
             'the dispatcher returns it: add it to that page')
    return t.done()



EXAMPLE_MARK = re.compile(r'^\.\\" example: (\S+?)(?:#(\S+))?$')
REGION = re.compile(r'^\s*/\* man: (\S+) \*/$')


def example_text(root, path, region):
    """The program (or one marked region of it) as the page shows it."""
    lines = open(os.path.join(root, path), encoding='utf-8').read().split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    if region:
        marks = [i for i, ln in enumerate(lines) if REGION.match(ln)]
        start = [i for i in marks if REGION.match(lines[i]).group(1) == region]
        if len(start) != 1:
            raise ValueError(f'{path}: no single /* man: {region} */ mark')
        end = [i for i in marks if i > start[0] and REGION.match(lines[i]).group(1) == 'end']
        if not end:
            raise ValueError(f'{path}: /* man: {region} */ has no /* man: end */')
        lines = lines[start[0] + 1:end[0]]
    else:
        lines = [ln for ln in lines if not REGION.match(ln)]
    lines = [ln.expandtabs(4).rstrip() for ln in lines]
    if region:  # a region is shown dedented
        ind = min((len(ln) - len(ln.lstrip()) for ln in lines if ln), default=0)
        lines = [ln[ind:] for ln in lines]
    out = []
    for ln in lines:
        ln = ln.replace('\\', '\\e').replace('-', '\\-')
        if ln.startswith(('.', "'")):
            ln = '\\&' + ln
        out.append(ln)
    return out


def example_blocks(text):
    """(marker match or None, first body line, end line) per .EX block of EXAMPLES."""
    lines = text.split('\n')
    try:
        sec = lines.index('.SH EXAMPLES')
    except ValueError:
        return lines, []
    blocks, mark = [], None
    i = sec + 1
    while i < len(lines) and not lines[i].startswith('.SH '):
        m = EXAMPLE_MARK.match(lines[i])
        if m:
            mark = m
        elif lines[i] == '.EX':
            end = lines.index('.EE', i)
            blocks.append((mark, i + 1, end))
            mark, i = None, end
        i += 1
    return lines, blocks


def cmd_examples(root, pages, sync=False):
    t = Tap()
    for page in pages:
        name = os.path.basename(page)
        lines, blocks = example_blocks(open(page, encoding='utf-8').read())
        changed = False
        for mark, first, end in reversed(blocks):
            body = lines[first:end]
            if not mark:
                t.ok(not any(';' in ln for ln in body), f'{name}: every C example comes from examples/',
                     f'the block at line {first} has no \'.\\" example: FILE\' mark')
                continue
            label = f'{name}: example from {mark.group(1)}' + (f'#{mark.group(2)}' if mark.group(2) else '')
            try:
                want = example_text(root, mark.group(1), mark.group(2))
            except (OSError, ValueError) as e:
                t.ok(False, label, str(e))
                continue
            if sync and body != want:
                lines[first:end] = want
                changed = True
                body = want
            diff = next((k for k, (a, b) in enumerate(zip(body, want)) if a != b),
                        None if len(body) == len(want) else min(len(body), len(want)))
            t.ok(diff is None, label + ' is the program, line for line',
                 None if diff is None else
                 f'first difference at block line {diff + 1}:\n'
                 f'page: {body[diff] if diff < len(body) else "(end)"}\n'
                 f'file: {want[diff] if diff < len(want) else "(end)"}\n'
                 f'refresh: python3 docs/check-man.py sync-examples . docs/*.[0-9]')
        if changed:
            with open(page, 'w', encoding='utf-8') as f:
                f.write('\n'.join(lines))
    return t.done()


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    cmd, args = argv[1], argv[2:]
    if cmd == 'lint':
        return cmd_lint(args)
    if cmd == 'render':
        return cmd_render(args)
    if cmd == 'errors' and len(args) == 2:
        return cmd_errors(*args)
    if cmd == 'source' and len(args) >= 3:
        return cmd_source(args[0], args[1], args[2:])
    if cmd == 'runtime' and len(args) == 4:
        return cmd_runtime(*args)
    if cmd == 'examples' and len(args) >= 2:
        return cmd_examples(args[0], args[1:])
    if cmd == 'sync-examples' and len(args) >= 2:
        return cmd_examples(args[0], args[1:], sync=True)
    sys.exit(__doc__)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
