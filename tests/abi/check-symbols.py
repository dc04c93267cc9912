#!/usr/bin/env python3
"""The ABI is exactly what the headers declare: the dynamic symbols of
libfeaccel.so in the public version nodes, those nodes of the version script
and the FEA_API/FEA_EXPORT declarations of the public headers name the same
functions, and the soname is libfeaccel.so.<major>.

Beside them the library exports exactly the list of the private node
FEACCEL_PRIVATE_0 (what its /gpu/cuda module and the PETSc library call), in
that node, and no public header declares those.

usage: check-symbols.py LIBRARY MAPFILE ABI_MAJOR HEADER..."""
import re, subprocess, sys

lib, mapfile, major, *headers = sys.argv[1:]
soname_stem = 'libfeaccel.so'
failed = []

PRIVATE_NODE = 'FEACCEL_PRIVATE_0'

nm = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True, text=True, check=True)
exported, exported_private = set(), set()
for line in nm.stdout.splitlines():
    fields = line.split()
    if len(fields) != 3 or fields[1] not in 'TDBRW':
        continue
    name, _, node = fields[2].partition('@')
    (exported_private if node.lstrip('@') == PRIVATE_NODE else exported).add(name)

text = re.sub(r'/\*.*?\*/', '', open(mapfile).read(), flags=re.S)
mapped, mapped_private = set(), set()
for node, body in re.findall(r'([A-Za-z_][\w.]*)\s*\{(.*?)\}', text, flags=re.S):
    names = set()
    for block in re.findall(r'global:(.*?)(?:local:|$)', body, flags=re.S):
        names |= {s.strip() for s in block.split(';') if s.strip()}
    if node == PRIVATE_NODE:
        mapped_private |= names
    else:
        mapped |= names

declared = set()
for h in headers:
    src = open(h).read()
    declared |= set(re.findall(r'FEA_(?:API|EXPORT)\s+[\w\s\*]*?\b(fea_\w+)\s*\(', src))

def compare(a_name, a, b_name, b):
    for s in sorted(a - b):
        failed.append('%s is in %s but not in %s' % (s, a_name, b_name))

compare('the library', exported, 'the version script', mapped)
compare('the version script', mapped, 'the library', exported)
compare('the headers', declared, 'the version script', mapped)
compare('the version script', mapped, 'the headers', declared)
compare('the library\'s private node', exported_private, 'the script\'s ' + PRIVATE_NODE,
        mapped_private)
compare('the script\'s ' + PRIVATE_NODE, mapped_private, 'the library\'s private node',
        exported_private)
for s in sorted(mapped_private & (declared | mapped)):
    failed.append('%s is both private (%s) and public' % (s, PRIVATE_NODE))

dyn = subprocess.run(['readelf', '-d', lib], capture_output=True, text=True, check=True).stdout
soname = re.search(r'\(SONAME\)\s+Library soname: \[(.*?)\]', dyn)
if not soname or soname.group(1) != '%s.%s' % (soname_stem, major):
    failed.append('soname is %s, expected %s.%s' % (soname and soname.group(1), soname_stem, major))

for f in failed:
    print('FAIL ' + f)
print('%d symbols exported, %d in the version script, %d declared; %d private' %
      (len(exported), len(mapped), len(declared), len(exported_private)))
print('%d passed, %d failed' % (1 if not failed else 0, 1 if failed else 0))
sys.exit(1 if failed else 0)
