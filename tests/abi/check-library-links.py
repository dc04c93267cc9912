#!/usr/bin/env python3
"""libfeaccel.so, the front programs link, needs nothing but the C library
(it loads the core on first use), and the core links no CUDA library and
names no CUDA directory: no NEEDED entry on a CUDA library, no RUNPATH or
RPATH entry that names a CUDA toolkit (its /gpu/cuda backend is the module
libfeaccel-cuda.so, loaded at run time). Given the module too, checks that it
exports only its entry point and needs libfeaccel-core.so.<major>; with
--installed, that its run path names no CUDA toolkit either (in a build tree
meson may add the toolkit's directory to it, and removes it at install).

usage: check-library-links.py [--installed] FRONT CORE ABI_MAJOR [MODULE]"""
import re, subprocess, sys

CUDA_LIBRARY = re.compile(r'^lib(cuda|cudart|cublas|cublasLt|cusolver|cusparse|nvJitLink)\b')
args = sys.argv[1:]
installed = '--installed' in args
front, lib, major, *module = [a for a in args if a != '--installed']
failed = []


def dynamic(path):
    """The (tag, value) pairs of the dynamic section that matter here."""
    out = subprocess.run(['readelf', '-d', path], capture_output=True, text=True, check=True).stdout
    return re.findall(r'\((NEEDED|RUNPATH|RPATH)\)\s+[^\[]*\[(.*?)\]', out)


def check_run_path(path, entries):
    for tag, value in entries:
        if tag in ('RUNPATH', 'RPATH'):
            for entry in value.split(':'):
                if 'cuda' in entry.lower():
                    failed.append('%s has %s entry %s' % (path, tag, entry))


# The C library alone (its dynamic loader too, where the toolchain names it;
# the sanitizer builds add their runtime).
for tag, value in dynamic(front):
    if tag == 'NEEDED' and not re.match(r'^(libc|libdl|libpthread|ld-linux[\w-]*|'
                                        r'libasan|libubsan|libtsan|libclang_rt[\w.-]*)\b', value):
        failed.append('%s needs %s: the front must map nothing but libc' % (front, value))
    if tag in ('RUNPATH', 'RPATH'):
        failed.append('%s has %s %s' % (front, tag, value))

entries = dynamic(lib)
for tag, value in entries:
    if tag == 'NEEDED' and CUDA_LIBRARY.match(value):
        failed.append('%s needs %s' % (lib, value))
check_run_path(lib, entries)

if module:
    entries = dynamic(module[0])
    if installed:
        check_run_path(module[0], entries)
    if ('NEEDED', 'libfeaccel-core.so.%s' % major) not in entries:
        failed.append('%s does not need libfeaccel-core.so.%s' % (module[0], major))
    nm = subprocess.run(['nm', '-D', '--defined-only', module[0]], capture_output=True, text=True,
                        check=True).stdout
    exported = {line.split()[-1] for line in nm.splitlines()
                if len(line.split()) == 3 and line.split()[1] in 'TDBRW'}
    if exported != {'fea_cuda_module_backend'}:
        failed.append('%s exports %s, expected only fea_cuda_module_backend' %
                      (module[0], ', '.join(sorted(exported))))

for f in failed:
    print('FAIL ' + f)
print('%d passed, %d failed' % (1 if not failed else 0, 1 if failed else 0))
sys.exit(1 if failed else 0)
