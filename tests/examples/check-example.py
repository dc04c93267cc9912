#!/usr/bin/env python3
"""Run one example program and check what it prints.

    check-example.py SPEC.json EXAMPLE [ARG...]

SPEC is a JSON object:

  "runs":    a list of argument lists; the example runs once per list, in
             order ("{arg0}", "{arg1}", ... in them are replaced by the ARGs
             given here). Without "runs" it runs once with ARG....
  "exit":    the exit status every run must have (default 0). A run that
             exits 77 skips the test (exit 77).
  "checks":  a list of objects:
               "run":     which run's stdout (default 0)
               "pattern": a Python regular expression (re.MULTILINE), searched
                          for; the check fails when it does not match
               "bounds":  {group name: [lo, hi]}: the named group, read as a
                          number, must lie in [lo, hi] (NaN never does).
                          Every named group that reads as a number is kept
                          under its name for "derived"
               "absent":  true: the pattern must NOT match
  "derived": a list of {"expr": ..., "bounds": [lo, hi], "why": ...}: a Python
             expression over the kept values, math's functions (log2, ...), abs,
             min and max: for example a convergence order from the errors
             of two runs.

Output is matched line by line with regular expressions and numeric bounds,
never as exact text: timings and throughputs differ from run to run. Exits 0
when every check passes, 1 otherwise, 77 when the example asked to skip.
"""
import json
import math
import re
import subprocess
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding='utf-8') as f:
        spec = json.load(f)
    exe, extra = argv[2], argv[3:]
    subst = {'arg%d' % i: a for i, a in enumerate(extra)}
    runs = [[a.format(**subst) for a in r] for r in spec['runs']] if 'runs' in spec else [extra]
    want_exit = spec.get('exit', 0)

    outputs = []
    for args in runs:
        cmd = [exe] + args
        print('$ ' + ' '.join(cmd), flush=True)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sys.stdout.write(p.stdout)
        if p.stderr:
            sys.stdout.write('[stderr]\n' + p.stderr)
        if p.returncode == 77:
            print('SKIP: the example exited 77')
            return 77
        if p.returncode != want_exit:
            print('FAIL: exit status %d, expected %d' % (p.returncode, want_exit))
            return 1
        outputs.append(p.stdout)

    failures = 0
    values = {}

    def report(ok, what):
        nonlocal failures
        print('%s: %s' % ('ok  ' if ok else 'FAIL', what))
        if not ok:
            failures += 1

    for c in spec.get('checks', []):
        run = c.get('run', 0)
        m = re.search(c['pattern'], outputs[run], re.MULTILINE)
        if c.get('absent'):
            report(m is None, 'run %d: no /%s/' % (run, c['pattern']))
            continue
        if m is None:
            report(False, 'run %d: /%s/ not found' % (run, c['pattern']))
            continue
        for name, text in m.groupdict().items():  # every number is kept for "derived"
            try:
                values[name] = float(text)
            except (ValueError, TypeError):
                pass
        if not c.get('bounds'):
            report(True, 'run %d: /%s/' % (run, c['pattern']))
        for name, (lo, hi) in c.get('bounds', {}).items():
            try:
                v = float(m.group(name))
            except (IndexError, ValueError, TypeError):
                report(False, 'run %d: %s = %r is not a number' % (run, name, m.group(name)))
                continue
            report(lo <= v <= hi, 'run %d: %s = %.10g in [%.10g, %.10g]' % (run, name, v, lo, hi))

    env = {k: getattr(math, k) for k in dir(math) if not k.startswith('_')}
    env.update(abs=abs, min=min, max=max)
    for d in spec.get('derived', []):
        lo, hi = d['bounds']
        try:
            v = float(eval(d['expr'], {'__builtins__': {}}, dict(env, **values)))
        except Exception as e:  # a value missing because its check failed, 0 / 0, ...
            report(False, '%s: %s' % (d['expr'], e))
            continue
        report(lo <= v <= hi, '%s = %.3f in [%g, %g]%s' % (d['expr'], v, lo, hi,
                                                         ' (' + d['why'] + ')' if 'why' in d else ''))

    if failures:
        print('%d check(s) failed' % failures)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
