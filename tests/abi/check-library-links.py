#!/usr/bin/env python3
"""libfeaccel.so.<major> is the library, linked to its dependencies the
ordinary way, so that ldd, dpkg-shlibdeps and rpm see them: its NEEDED
entries name the BLAS meson's -Dblas chose (libopenblas, or the libblas of
Debian's alternatives; libblis; libflexiblas; MKL's libraries), LAPACKE,
libgomp and hwloc, and no CUDA library (its /gpu/cuda backend is the
module libfeaccel-cuda.so, loaded at run time); no RUNPATH or RPATH entry
names a CUDA toolkit. Given the module too, checks that it exports only its
entry point and needs libfeaccel.so.<major>; with --installed, that its run
path names no CUDA toolkit either (in a build tree meson may add the
toolkit's directory to it, and removes it at install).

usage: check-library-links.py [--installed] LIBRARY ABI_MAJOR [MODULE]"""
import re, subprocess, sys

CUDA_LIBRARY = re.compile(r'^lib(cuda|cudart|cublas|cublasLt|cusolver|cusparse|nvJitLink)\b')
# What libfeaccel.so must need, each by one of these names.
REQUIRED = {
    'a BLAS': re.compile(r'^lib(openblas\w*|blas|blis\w*|flexiblas\w*|mkl_\w+)\.so'),
    'LAPACKE': re.compile(r'^liblapacke\.so'),
    'libgomp': re.compile(r'^libgomp\.so'),
    'hwloc': re.compile(r'^libhwloc\.so'),
}
args = sys.argv[1:]
installed = '--installed' in args
lib, major, *module = [a for a in args if a != '--installed']
failed = []


def dynamic(path):
    """The (tag, value) pairs of the dynamic section that matter here."""
    out = subprocess.run(['readelf', '-d', path], capture_output=True, text=True, check=True).stdout
    return re.findall(r'\((NEEDED|RUNPATH|RPATH|SONAME)\)\s+[^\[]*\[(.*?)\]', out)


def check_run_path(path, entries):
    for tag, value in entries:
        if tag in ('RUNPATH', 'RPATH'):
            for entry in value.split(':'):
                if 'cuda' in entry.lower():
                    failed.append('%s has %s entry %s' % (path, tag, entry))


entries = dynamic(lib)
needed = [value for tag, value in entries if tag == 'NEEDED']
print('%s needs %s' % (lib, ', '.join(needed)))
if ('SONAME', 'libfeaccel.so.%s' % major) not in entries:
    failed.append('%s has no soname libfeaccel.so.%s' % (lib, major))
for value in needed:
    if CUDA_LIBRARY.match(value):
        failed.append('%s needs the CUDA library %s: only its module may' % (lib, value))
    if value.startswith('libfeaccel'):
        failed.append('%s needs %s: it is the whole library' % (lib, value))
for what, name in REQUIRED.items():
    if not any(name.match(value) for value in needed):
        failed.append('%s does not need %s (NEEDED: %s)' % (lib, what, ', '.join(needed)))
check_run_path(lib, entries)

if module:
    entries = dynamic(module[0])
    if installed:
        check_run_path(module[0], entries)
    if ('NEEDED', 'libfeaccel.so.%s' % major) not in entries:
        failed.append('%s does not need libfeaccel.so.%s' % (module[0], major))
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
