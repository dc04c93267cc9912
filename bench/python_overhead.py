#!/usr/bin/env python3
"""The Python binding's overhead on a large multifrontal solve (docs/python.md).

Makes the problem of `feaccel-bench iga-direct` without callbacks (the 2D unit
square, B-splines of degree p, n x n elements; f = 0, g = 0, so no Python
function runs inside the library and only the binding is measured), then
times, alternately and in the same process, the same three calls

  C path:      the raw C entry points through cffi (fea_solver_create_multifrontal,
               fea_solver_setup, fea_solver_solve on a preallocated right-hand side),
               what a C program calls;
  Python path: feaccel.Solver.multifrontal(P).setup().solve(b), the Pythonic layer
               (descriptor from the header's defaults, handle, finalizer, checks, NumPy);

and prints the medians of wall and CPU time (process_time, less sensitive to a
shared machine) and the overhead (Python - C) / C, with the library's own phase
timings (factor_s + forward_s + backward_s) for reference, then the binding's
fixed cost per create + setup + solve measured on a tiny problem (200 times). Not a test:
timings belong here, not in tests/python.

  python bench/python_overhead.py [--p 3] [--n 1021] [--reps 3] [--backend /cpu/ref]
"""
import argparse
import statistics
import time

import numpy as np

import feaccel as fa
from feaccel import ffi, lib


def c_path(ctx, V, P, b, x):
    box = ffi.new("fea_solver **")
    d = ffi.new("fea_solver_desc *")
    d.size = ffi.sizeof("fea_solver_desc")  # FEA_SOLVER_DESC_INIT: all other fields 0
    t0, c0 = time.perf_counter(), time.process_time()
    assert lib.fea_solver_create_multifrontal(ctx._ptr, V._ptr, P._ptr, d, box) == 0
    assert lib.fea_solver_setup(box[0]) == 0
    n = b.size
    assert lib.fea_solver_solve(box[0], 1, ffi.from_buffer("double[]", b), n,
                                ffi.from_buffer("double[]", x), n) == 0
    t, c = time.perf_counter() - t0, time.process_time() - c0
    st = ffi.new("fea_solver_stats *")
    st.size = ffi.sizeof("fea_solver_stats")
    assert lib.fea_solver_get_stats(box[0], st) == 0
    inner = st.factor_s + st.forward_s + st.backward_s
    lib.fea_solver_destroy(box)
    return t, c, inner


def py_path(P, b):
    t0, c0 = time.perf_counter(), time.process_time()
    S = fa.Solver.multifrontal(P)
    S.setup()
    x = S.solve(b)
    t, c = time.perf_counter() - t0, time.process_time() - c0
    st = S.stats()
    S.close()
    return t, c, st["factor_s"] + st["forward_s"] + st["backward_s"], x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--p", type=int, default=3)
    ap.add_argument("--n", type=int, default=1021, help="elements per direction (1021: 1.04M unknowns at p = 3)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--backend", default="/cpu/ref")
    a = ap.parse_args()
    with fa.Context(a.backend) as ctx:
        info = ctx.info()
        V = fa.Space.bspline(ctx, a.p, n=(a.n, a.n))
        P = fa.Problem(V)
        n = P.num_free_dofs
        b = np.random.default_rng(0).random(n)
        x = np.empty(n)
        print(f"multifrontal, 2D B-splines p = {a.p}, n = {a.n}: {n} unknowns; {info['backend']}, "
              f"{info['num_threads']} threads; {info['cpu_model']}; BLAS {info['blas']}")
        tc, tp, cc, cp, ic, ip = [], [], [], [], [], []
        for r in range(a.reps):
            t, c, inner = c_path(ctx, V, P, b, x)
            tc.append(t)
            cc.append(c)
            ic.append(inner)
            t, c, inner, xp = py_path(P, b)
            tp.append(t)
            cp.append(c)
            ip.append(inner)
            assert np.array_equal(xp, x), "the two paths must give the same solution"
            print(f"  rep {r}: C path {tc[-1]:.3f} s wall, {cc[-1]:.3f} s CPU (library phases "
                  f"{ic[-1]:.3f} s); Python path {tp[-1]:.3f} s wall, {cp[-1]:.3f} s CPU "
                  f"(library phases {ip[-1]:.3f} s)", flush=True)
        med = statistics.median
        print(f"median wall: C path {med(tc):.3f} s, Python path {med(tp):.3f} s: "
              f"{100 * (med(tp) - med(tc)) / med(tc):+.2f} % of the C time")
        print(f"median CPU:  C path {med(cc):.3f} s, Python path {med(cp):.3f} s: "
              f"{100 * (med(cp) - med(cc)) / med(cc):+.2f} % of the C time")
        # The binding's own cost does not depend on the problem's size: the same
        # calls on a tiny problem, many times, give it without the machine's noise.
        Vs = fa.Space.bspline(ctx, 1, n=(2, 2))
        Ps = fa.Problem(Vs)
        bs, xs = np.ones(Ps.num_free_dofs), np.empty(Ps.num_free_dofs)
        small_c = med([c_path(ctx, Vs, Ps, bs, xs)[0] for _ in range(200)])
        small_p = med([py_path(Ps, bs)[0] for _ in range(200)])
        print(f"binding cost per create + setup + solve (tiny problem, median of 200): "
              f"{1e6 * (small_p - small_c):.0f} us = {100 * (small_p - small_c) / med(tc):.5f} % "
              f"of the C time above")

if __name__ == "__main__":
    main()
