#!/usr/bin/env python3
"""Every public function says which errors it returns, and says it truly.

usage: check-error-docs.py INCLUDE_DIR [INCLUDE_DIR...] -- SOURCE...

Reads every header feaccel/*.h found in the INCLUDE_DIRs (source tree first,
then the build tree for the generated version.h) and checks:
  1. each declaration returning fea_status has error documentation: its own
     doc comment names FEA_ codes on an @retval or @return line, or the
     header has a block headed `@par Errors common to this header`, which
     covers every fea_status function of that header;
  2. every FEA_ERR_* / FEA_WARN_* name in any header comment is a code of
     the fea_status enum in types.h (a renamed or invented code fails);
  3. every other public function (const char *, ...) has a doc comment, which
     is where it says what it does on bad input;
  4. the codes the interface layer itself raises for a function are a
     subset of those documented for it (its own plus its header's common
     block). The SOURCEs (files, or folders whose *.c files are all read) are
     src/interface plus the internal files whose checks the interface calls
     directly (error.h, struct-copy.c) and public functions defined outside
     it (assemble-reference.c).
     A function's codes are the FEA_ERR_/FEA_WARN_ names in its body and, by
     closure, in the bodies of the functions and macros of those files that
     it names. Codes raised deeper (a backend, a solver family) are not seen
     here; their documentation comes from reading that code.
  5. the status table of docs/architecture.md ("## Errors": rows
     "| `FEA_...` | value | meaning |") lists every code of the enum, each
     once, with its value, and no other.
Prints one line per problem and a closing count; exits 1 on any problem."""
import os
import re
import sys

CODE = re.compile(r'\bFEA_(?:SUCCESS|ERR_\w+|WARN_\w+)\b')
ERR_OR_WARN = re.compile(r'\bFEA_(?:ERR|WARN)_\w+\b')
DECL = re.compile(r'^(FEA_API|FEA_EXPORT)\s+((?:const\s+)?\w+\s*\**)\s*(fea_\w+)\s*\(', re.M)
COMMON_HEAD = '@par Errors common to this header'

args = sys.argv[1:]
split = args.index('--') if '--' in args else len(args)
incdirs, sources = args[:split], []
for src in args[split + 1:]:
    if os.path.isdir(src):
        sources += sorted(os.path.join(src, f) for f in os.listdir(src) if f.endswith('.c'))
    else:
        sources.append(src)

headers = {}
for d in incdirs:
    sub = os.path.join(d, 'feaccel')
    for f in sorted(os.listdir(sub)):
        if f.endswith('.h') and f not in headers:
            headers[f] = os.path.join(sub, f)

problems = []


def comment_text(raw):
    """The text of a /** ... */ comment without its delimiters and leading stars."""
    body = raw[3:-2]
    return '\n'.join(re.sub(r'^\s*\*?\s?', '', line) for line in body.split('\n'))


def doc_before(text, pos):
    """The doc comment that ends right before pos (only blanks between), or None."""
    head = text[:pos].rstrip()
    if not head.endswith('*/'):
        return None
    start = head.rfind('/**')
    if start < 0 or '*/' in head[start:-2]:
        return None
    return comment_text(head[start:])


def documented_codes(doc):
    """Codes named on the @retval/@return lines of a comment and the lines that continue them."""
    codes, inside = set(), False
    for line in doc.split('\n'):
        stripped = line.strip()
        if stripped.startswith('@'):
            inside = stripped.startswith(('@retval', '@return'))
        elif not stripped:
            inside = False
        if inside:
            codes |= set(CODE.findall(line))
    return codes


def common_codes(text):
    """Codes of the header's `@par Errors common to this header` block, or None without one."""
    for raw in re.findall(r'/\*\*.*?\*/', text, flags=re.S):
        doc = comment_text(raw)
        at = doc.find(COMMON_HEAD)
        if at < 0:
            continue
        block = []
        for line in doc[at + len(COMMON_HEAD):].split('\n')[1:]:
            if not line.strip() or line.strip().startswith('@'):
                break
            block.append(line)
        return set(CODE.findall('\n'.join(block)))
    return None


types_text = open(headers['types.h']).read()
enum = re.search(r'typedef enum fea_status \{(.*?)\}', types_text, flags=re.S).group(1)
known = set(re.findall(r'^\s*(FEA_\w+)\s*=', re.sub(r'/\*.*?\*/', '', enum, flags=re.S), re.M))

docs = {}  # function -> (header, documented codes)
for name, path in headers.items():
    text = open(path).read()
    for raw in re.findall(r'/\*.*?\*/', text, flags=re.S):
        for code in ERR_OR_WARN.findall(raw):
            if code not in known:
                problems.append('%s: names %s, which is not a fea_status code in types.h' %
                                (name, code))
    common = common_codes(text)
    for m in DECL.finditer(text):
        ret, func = m.group(2).replace(' ', ''), m.group(3)
        doc = doc_before(text, m.start())
        if doc is None:
            problems.append('%s: %s has no doc comment' % (name, func))
            continue
        if ret != 'fea_status':
            continue
        own = documented_codes(doc)
        if not own and common is None:
            problems.append('%s: %s names no FEA_ code on an @retval/@return line and the header '
                            'has no "%s" block' % (name, func, COMMON_HEAD))
        docs[func] = (name, own | (common or set()))

# Function bodies and macro bodies of the source files, by name.
bodies = {}
for src in sources:
    text = re.sub(r'/\*.*?\*/', ' ', open(src).read(), flags=re.S)
    for m in re.finditer(r'^#define\s+(\w+)(.*?)(?<!\\)$', text, flags=re.M | re.S):
        bodies.setdefault(m.group(1), '')
        bodies[m.group(1)] += m.group(2)
    for m in re.finditer(r'^[A-Za-z_][\w\s\*]*?\b(\w+)\s*\([^;{]*?\)\s*\{', text, flags=re.M):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {'{': 1, '}': -1}.get(text[i], 0)
            i += 1
        bodies.setdefault(m.group(1), '')
        bodies[m.group(1)] += text[m.end():i]


def raised(func):
    """Codes named in func's body and in the bodies it reaches by name."""
    seen, todo, codes = {func}, [func], set()
    while todo:
        body = bodies[todo.pop()]
        # A code compared with (st != FEA_ERR_X) is tested, not raised.
        tested = re.sub(r'[!=]=\s*FEA_\w+|\bFEA_\w+\s*[!=]=', ' ', body)
        codes |= set(ERR_OR_WARN.findall(tested))
        for ident in set(re.findall(r'\b\w+\b', body)):
            if ident in bodies and ident not in seen:
                seen.add(ident)
                todo.append(ident)
    return codes


checked = 0
if sources:
    for func, (name, codes) in sorted(docs.items()):
        if func not in bodies:
            continue
        checked += 1
        missing = raised(func) - codes
        if missing:
            problems.append('%s: %s raises %s in the interface layer but does not document it' %
                            (name, func, ', '.join(sorted(missing))))
    if checked == 0:
        problems.append('no public function was found in the source files')

# 5. The status table of docs/architecture.md against the enum.
values = {}
for name, value in re.findall(r'^\s*(FEA_\w+)\s*=\s*(-?\d+)',
                              re.sub(r'/\*.*?\*/', '', enum, flags=re.S), re.M):
    values[name] = int(value)
arch = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'docs',
                    'architecture.md')
rows = re.findall(r'^\|\s*`(FEA_\w+)`\s*\|\s*([^|]*?)\s*\|', open(arch).read(), re.M)
listed = {}
for name, value in rows:
    if name in listed:
        problems.append('docs/architecture.md: the status table lists %s twice' % name)
    listed[name] = value.replace('\u2212', '-')
for name, value in sorted(values.items()):
    if name not in listed:
        problems.append('docs/architecture.md: the status table does not list %s' % name)
    elif listed[name] != str(value):
        problems.append('docs/architecture.md: the status table gives %s the value %s, types.h %d'
                        % (name, listed[name], value))
for name in sorted(set(listed) - set(values)):
    problems.append('docs/architecture.md: the status table lists %s, not a fea_status code' % name)

for p in problems:
    print('FAIL ' + p)
print('%d fea_status declarations, %d checked against their interface code, %d problems' %
      (len(docs), checked, len(problems)))
sys.exit(1 if problems else 0)
