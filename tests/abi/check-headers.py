#!/usr/bin/env python3
"""Every public header compiles on its own, as strict C11 and as C++; and
the warn-unused-result attribute sits where it should.

usage: check-headers.py CC CXX INCLUDE_DIR [INCLUDE_DIR...]
The headers are found in the first INCLUDE_DIR (source tree) plus generated
ones (version.h) in the others.

GCC's warn_unused_result cannot be silenced by a (void) cast, so a function
that callers may rightly ignore (every fea_*_destroy, called on cleanup
paths, and fea_version, which cannot fail) must not carry it: a snippet
calling each of them as a plain statement and with (void) must compile with
CC under -Wall -Wextra -Werror, as C11 and as C++11. The other side is
checked too: ignoring the status of a creator (fea_vector_create) or a solve
(fea_solver_solve) must fail to compile there, so the attribute is kept
where ignoring the status is a bug.

Every FEA_*_INIT macro expands to designated initializers in C99 and later
and to positional ones in C++ (and C90): a program that prints the bytes of
each initialized struct (static, so padding is zero) is built and run as C11,
C++11 and C++20 (where CXX knows it), and the three must print the same bytes,
so the two forms cannot drift apart.

Prints one line per check and a closing 'N passed, N failed' line; exits
non-zero when any failed."""
import os, re, subprocess, sys, tempfile

cc, cxx, *incdirs = sys.argv[1:]
# petsc.h needs PETSc's headers: the PETSc library's own tests compile it
# (tests/mpi/), and it is installed only with that library.
headers = sorted({f for d in incdirs for f in os.listdir(os.path.join(d, 'feaccel'))
                  if f.endswith('.h') and f != 'petsc.h'} | {'../feaccel.h'})
flags_c = ['-std=c11', '-pedantic', '-Wall', '-Wextra', '-Werror', '-fsyntax-only']
flags_cxx = ['-std=c++11', '-pedantic', '-Wall', '-Wextra', '-Werror', '-fsyntax-only']
passed = failed = 0
with tempfile.TemporaryDirectory() as tmp:
    for h in headers:
        name = 'feaccel.h' if h == '../feaccel.h' else 'feaccel/' + h
        for lang, comp, flags, ext in (('C11', cc, flags_c, 'c'), ('C++11', cxx, flags_cxx, 'cpp')):
            src = os.path.join(tmp, 'tu.' + ext)
            with open(src, 'w') as f:
                # Included twice: the include guard must hold.
                f.write('#include <%s>\n#include <%s>\ntypedef int header_check_nonempty;\n' % (name, name))
            cmd = [comp] + flags + ['-I' + d for d in incdirs] + [src]
            r = subprocess.run(cmd, capture_output=True, text=True)
            ok = r.returncode == 0
            passed += ok
            failed += not ok
            print('%s %s alone as %s' % ('ok  ' if ok else 'FAIL', name, lang))
            if not ok:
                print(r.stderr)

    # The functions callers may ignore, read from the headers so that a new
    # destroy function is covered without editing this script.
    decl = re.compile(r'^(FEA_API|FEA_EXPORT)\s+fea_status\s+(fea_\w+)\s*\(', re.M)
    ignorable = {}
    for d in incdirs:
        sub = os.path.join(d, 'feaccel')
        for f in sorted(os.listdir(sub)):
            if f.endswith('.h') and f in headers:
                for m in decl.finditer(open(os.path.join(sub, f)).read()):
                    if m.group(2).endswith('_destroy') or m.group(2) == 'fea_version':
                        ignorable[m.group(2)] = m.group(1)
    ok = len(ignorable) >= 9 and 'fea_version' in ignorable
    passed += ok
    failed += not ok
    print('%s found %d destroy functions and fea_version: %s' %
          ('ok  ' if ok else 'FAIL', len(ignorable) - ('fea_version' in ignorable),
           ', '.join(sorted(ignorable))))
    calls = []
    for fn in sorted(ignorable):
        # Each destroy function takes the address of a NULL handle, which it accepts.
        arg = 'NULL, NULL, NULL' if fn == 'fea_version' else '&h_%s' % fn
        if fn != 'fea_version':
            handle = fn[len('fea_'):-len('_destroy')]
            calls.append('  fea_%s *h_%s = NULL;' % (handle, fn))
        calls.append('  %s(%s);' % (fn, arg))
        calls.append('  (void)%s(%s);' % (fn, arg))
    ignored = '#include <feaccel.h>\n#include <stddef.h>\nint main(void) {\n%s\n  return 0;\n}\n' % '\n'.join(calls)
    must_warn = {
        'fea_vector_create': 'fea_vector *v = NULL;\n  fea_vector_create(NULL, 1, FEA_F64, &v);',
        'fea_solver_solve': 'fea_solver_solve(NULL, 0, NULL, 1, NULL, 1);',
    }
    # Compiled to an object: -fsyntax-only stops before GCC's unused-result
    # check runs, and would pass whatever the attribute.
    strict = ['-Wall', '-Wextra', '-Werror', '-c', '-o', os.path.join(tmp, 'ignore.o')]
    for lang, comp, std, ext in (('C11', cc, '-std=c11', 'c'), ('C++11', cxx, '-std=c++11', 'cpp')):
        src = os.path.join(tmp, 'ignore.' + ext)
        with open(src, 'w') as f:
            f.write(ignored)
        r = subprocess.run([comp, std] + strict + ['-I' + d for d in incdirs] + [src],
                           capture_output=True, text=True)
        ok = r.returncode == 0
        passed += ok
        failed += not ok
        print('%s destroy functions and fea_version may be ignored, plain and (void), as %s' %
              ('ok  ' if ok else 'FAIL', lang))
        if not ok:
            print(r.stderr)
        for fn, body in sorted(must_warn.items()):
            with open(src, 'w') as f:
                f.write('#include <feaccel.h>\n#include <stddef.h>\nint main(void) {\n  %s\n  return 0;\n}\n' % body)
            r = subprocess.run([comp, std] + strict + ['-I' + d for d in incdirs] + [src],
                               capture_output=True, text=True)
            ok = r.returncode != 0 and 'unused' in r.stderr
            passed += ok
            failed += not ok
            print('%s ignoring the status of %s is refused as %s' %
                  ('ok  ' if ok else 'FAIL', fn, lang))
            if not ok:
                print(r.returncode, r.stderr)

    # The _INIT macros and their structs, read from the headers (as the
    # destroy functions are) so that a new one is covered without editing this.
    init_def = re.compile(
        r'^#define\s+(FEA_\w+_INIT)[\s\\]*\{[\s\\]*(?:\.size\s*=\s*)?sizeof\((\w+)\)', re.M)
    inits = {}
    for d in incdirs:
        sub = os.path.join(d, 'feaccel')
        for f in sorted(os.listdir(sub)):
            if f.endswith('.h') and f in headers:
                for m in init_def.finditer(open(os.path.join(sub, f)).read()):
                    inits[m.group(1)] = m.group(2)
    ok = len(inits) >= 20
    passed += ok
    failed += not ok
    print('%s found %d FEA_*_INIT macros' % ('ok  ' if ok else 'FAIL', len(inits)))
    lines = ['#include <stdio.h>', '#include <feaccel.h>',
             'static void dump(const char *name, const void *p, size_t n) {',
             '  const unsigned char *b = (const unsigned char *)p;', '  size_t i;',
             '  printf("%s %lu ", name, (unsigned long)n);',
             '  for (i = 0; i < n; i++) printf("%02x", b[i]);', '  printf("\\n");', '}']
    calls = []
    for name, typ in sorted(inits.items()):
        lines.append('static const %s v_%s = %s;' % (typ, name, name))
        calls.append('  dump("%s", &v_%s, sizeof v_%s);' % (name, name, name))
    program = '\n'.join(lines + ['int main(void) {'] + calls + ['  return 0;', '}']) + '\n'
    warn = ['-pedantic', '-Wall', '-Wextra', '-Werror']
    variants = [('C11 (designated)', cc, '-std=c11', 'c'),
                ('C++11 (positional)', cxx, '-std=c++11', 'cpp')]
    probe = os.path.join(tmp, 'probe.cpp')
    with open(probe, 'w') as f:
        f.write('int main() { return 0; }\n')
    if subprocess.run([cxx, '-std=c++20', '-fsyntax-only', probe],
                      capture_output=True).returncode == 0:
        variants.append(('C++20 (positional)', cxx, '-std=c++20', 'cpp'))
    else:
        print('skip C++20: %s does not take -std=c++20' % cxx)
    dumps = {}
    for lang, comp, std, ext in variants:
        src = os.path.join(tmp, 'inits.' + ext)
        exe = os.path.join(tmp, 'inits-' + ext + std[-2:])
        with open(src, 'w') as f:
            f.write(program)
        r = subprocess.run([comp, std] + warn + ['-I' + d for d in incdirs] + [src, '-o', exe],
                           capture_output=True, text=True)
        if r.returncode == 0:
            r = subprocess.run([exe], capture_output=True, text=True)
        ok = r.returncode == 0
        passed += ok
        failed += not ok
        print('%s every FEA_*_INIT compiles and runs as %s' % ('ok  ' if ok else 'FAIL', lang))
        if not ok:
            print(r.stderr)
        else:
            dumps[lang] = dict(line.split(' ', 1) for line in r.stdout.splitlines())
    ref = variants[0][0]
    for lang in [v[0] for v in variants[1:]]:
        if ref in dumps and lang in dumps:
            differ = sorted(n for n in inits if dumps[ref].get(n) != dumps[lang].get(n))
            ok = not differ
            passed += ok
            failed += not ok
            print('%s %s and %s give the same bytes for every FEA_*_INIT%s' %
                  ('ok  ' if ok else 'FAIL', ref, lang,
                   '' if ok else '; not for ' + ', '.join(differ)))
print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
