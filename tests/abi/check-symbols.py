#!/usr/bin/env python3
"""The ABI is exactly what the headers declare: the dynamic symbols of
libfeaccel.so, the version script and the FEA_API/FEA_EXPORT declarations of
the public headers name the same functions, and the soname is libfeaccel.so.<major>.

usage: check-symbols.py LIBRARY MAPFILE ABI_MAJOR HEADER..."""
import re, subprocess, sys

lib, mapfile, major, *headers = sys.argv[1:]
failed = []

nm = subprocess.run(['nm', '-D', '--defined-only', lib], capture_output=True, text=True, check=True)
exported = {line.split()[-1].split('@')[0] for line in nm.stdout.splitlines()
            if len(line.split()) == 3 and line.split()[1] in 'TDBRW'}
exported -= {n for n in exported if re.fullmatch(r'FEACCEL_[0-9.]+', n)}

text = re.sub(r'/\*.*?\*/', '', open(mapfile).read(), flags=re.S)
mapped = set()
for block in re.findall(r'global:(.*?)(?:local:|\})', text, flags=re.S):
    mapped |= {s.strip() for s in block.split(';') if s.strip()}

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

dyn = subprocess.run(['readelf', '-d', lib], capture_output=True, text=True, check=True).stdout
soname = re.search(r'\(SONAME\)\s+Library soname: \[(.*?)\]', dyn)
if not soname or soname.group(1) != 'libfeaccel.so.%s' % major:
    failed.append('soname is %s, expected libfeaccel.so.%s' % (soname and soname.group(1), major))

for f in failed:
    print('FAIL ' + f)
print('%d symbols exported, %d in the version script, %d declared' %
      (len(exported), len(mapped), len(declared)))
print('%d passed, %d failed' % (1 if not failed else 0, 1 if failed else 0))
sys.exit(1 if failed else 0)
