#!/usr/bin/env python3
"""Every public header compiles on its own, as strict C11 and as C++.

usage: check-headers.py CC CXX INCLUDE_DIR [INCLUDE_DIR...]
The headers are found in the first INCLUDE_DIR (source tree) plus generated
ones (version.h) in the others. Prints one line per check and a closing
'N passed, N failed' line; exits non-zero when any failed."""
import os, subprocess, sys, tempfile

cc, cxx, *incdirs = sys.argv[1:]
headers = sorted({f for d in incdirs for f in os.listdir(os.path.join(d, 'feaccel'))
                  if f.endswith('.h')} | {'../feaccel.h'})
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
print('%d passed, %d failed' % (passed, failed))
sys.exit(1 if failed else 0)
