"""Solver: the multifrontal (IGA direct), multigrid, prehandled and
multipatch solvers behind fea_solver, with NumPy right-hand sides."""
import warnings

import numpy as np

from ._core import Handle, NotConvergedWarning, call, create, ffi, new_struct, out_array, \
    to_dict

MERGE_AUTO, MERGE_TENSOR, MERGE_PAIRWISE = 0, 1, 2


class Solver(Handle):
    """Make one with Solver.multifrontal, .multigrid, .prehandled or
    Multipatch's solver(); then setup() and solve(b) as often as needed."""

    _destroy_fn = "fea_solver_destroy"

    def __init__(self, box, ctx, problem, parents, kind):
        self.ctx, self.problem, self.kind = ctx, problem, kind
        self._adopt(box, parents)
        self._set_up = False

    @classmethod
    def multifrontal(cls, problem, ctx=None, **options):
        """options: fea_solver_desc fields (merge, keep_boundary,
        memory_limit_bytes, check_residual, estimate_condition)."""
        ctx = ctx or problem.ctx
        d = new_struct("fea_solver_desc", **options)
        box = create("fea_solver", "fea_solver_create_multifrontal", ctx._ptr, problem.space._ptr,
                     problem._ptr, d)
        return cls(box, ctx, problem, (ctx, problem), "multifrontal")

    @classmethod
    def multigrid(cls, problem, ctx=None, paper=False, **options):
        """options: fea_multigrid_desc fields; paper=True starts from
        FEA_MULTIGRID_DESC_PAPER."""
        ctx = ctx or problem.ctx
        d = new_struct("fea_multigrid_desc", "FEA_MULTIGRID_DESC_PAPER" if paper else None, **options)
        box = create("fea_solver", "fea_solver_create_multigrid", ctx._ptr, problem._ptr, d)
        return cls(box, ctx, problem, (ctx, problem), "multigrid")

    @classmethod
    def prehandled(cls, problem, ctx=None, **options):
        """options: fea_prehandled_desc fields."""
        ctx = ctx or problem.ctx
        d = new_struct("fea_prehandled_desc", **options)
        box = create("fea_solver", "fea_solver_create_prehandled", ctx._ptr, problem._ptr, d)
        return cls(box, ctx, problem, (ctx, problem), "prehandled")

    def set_problem(self, problem):
        call("fea_solver_set_problem", self._ptr, problem._ptr)
        self.problem = problem
        self._parents += (problem,)
        self._keepalive.append(problem)
        self._set_up = False

    def setup(self):
        call("fea_solver_setup", self._ptr)
        self._set_up = True
        return self

    @property
    def num_free(self):
        return self.problem.num_free_dofs

    def solve(self, b=None, out=None):
        """Solve A x = b. b: None (the problem's own load, Dirichlet lifting
        included), a vector of num_free entries, or (num_free, nrhs) /
        Fortran-ordered columns. Without copies when b (and out) are float64
        with contiguous columns: x is `out` itself when given."""
        n = self.num_free
        if b is None:
            out, op = out_array(out, (n,))
            st = call("fea_solver_solve", self._ptr, 1, ffi.NULL, 0, op, max(n, 1))
        else:
            b = np.asarray(b, dtype=np.float64)
            nrhs = 1 if b.ndim == 1 else b.shape[1]
            if b.shape[0] != n:
                raise ValueError(f"b: {b.shape[0]} rows, the problem has {n} free DoFs")
            bf = np.asfortranarray(b)
            if out is None:
                out = np.empty_like(bf, order="F")
            elif out.shape != b.shape or out.dtype != np.float64 or not out.flags.f_contiguous \
                    or not out.flags.writeable:
                raise ValueError("out: must be a writable float64 array with b's shape and "
                                 "contiguous columns")
            # ravel("K") of an array with contiguous columns is a view: no copy.
            bp = ffi.from_buffer("double[]", bf.ravel("K")) if bf.size else ffi.NULL
            op = (ffi.from_buffer("double[]", out.ravel("K"), require_writable=True) if out.size
                  else ffi.NULL)
            st = call("fea_solver_solve", self._ptr, nrhs, bp, max(n, 1), op, max(n, 1))
        if st == 1:
            warnings.warn(f"{self.kind} solve: not converged", NotConvergedWarning, stacklevel=2)
        return out

    def stats(self):
        """The kind's fea_solver_get_*stats as a dict."""
        fn, ctype = {
            "multifrontal": ("fea_solver_get_stats", "fea_solver_stats"),
            "multigrid": ("fea_solver_get_multigrid_stats", "fea_multigrid_stats"),
            "prehandled": ("fea_solver_get_prehandled_stats", "fea_prehandled_stats"),
            "multipatch": ("fea_solver_get_multipatch_stats", "fea_multipatch_stats"),
        }[self.kind]
        p = new_struct(ctype)
        call(fn, self._ptr, p)
        return to_dict(p)

    def level(self, level):
        p = new_struct("fea_solver_level")
        call("fea_solver_get_level", self._ptr, int(level), p)
        return to_dict(p)

    def node(self, node):
        p = new_struct("fea_solver_node")
        call("fea_solver_get_node", self._ptr, int(node), p)
        return to_dict(p)

    def boundary_schur(self):
        """(dofs, S) of a multifrontal solver made with keep_boundary=1."""
        n = ffi.new("fea_index *")
        call("fea_solver_get_boundary_schur", self._ptr, 0, ffi.NULL, ffi.NULL, n)
        m = n[0]
        dofs, dp = out_array(None, (m,), np.int64)
        S = np.empty((m, m), order="F")
        sp = ffi.from_buffer("double[]", S.ravel("K"), require_writable=True) if m else ffi.NULL
        call("fea_solver_get_boundary_schur", self._ptr, m, dp, sp, n)
        return dofs, S

    def prehandled_condition(self, which, steps=100):
        k = ffi.new("double *")
        call("fea_solver_prehandled_condition", self._ptr, which, int(steps), k)
        return k[0]
