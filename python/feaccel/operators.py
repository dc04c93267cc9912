"""Operator (y = A x, assembled or matrix-free) and CG over it."""
import warnings

from ._core import Handle, NotConvergedWarning, call, create, ffi, new_struct, out_array, to_dict
from .vector import Vector

CSR, MATFREE_ELEMENT_MATRIX, MATFREE_SUMFACT = 0, 1, 2


class Operator(Handle):
    """The reduced operator of a problem; apply() takes Vectors or NumPy arrays."""

    _destroy_fn = "fea_operator_destroy"

    def __init__(self, problem, ctx=None, kind=MATFREE_SUMFACT, **options):
        self.ctx = ctx or problem.ctx
        self.problem = problem
        d = new_struct("fea_operator_desc", kind=kind, **options)
        box = create("fea_operator", "fea_operator_create", self.ctx._ptr, problem._ptr, d)
        # The operator keeps the problem's callbacks (not the problem): keep them.
        self._adopt(box, (self.ctx, problem), problem._callbacks)
        self.n = problem.num_free_dofs

    def _vec(self, x):
        return x if isinstance(x, Vector) else Vector(self.ctx, self.n, data=x)

    def apply(self, x, y=None, add=False):
        """y = A x (y += A x with add). NumPy in: NumPy out; Vector in: Vector out."""
        numpy_in = not isinstance(x, Vector)
        xv = self._vec(x)
        yv = y if isinstance(y, Vector) else Vector(self.ctx, self.n)
        if add and y is not None and not isinstance(y, Vector):
            yv.write(y)
        call("fea_operator_apply_add" if add else "fea_operator_apply", self._ptr, xv._ptr, yv._ptr)
        if numpy_in or (y is not None and not isinstance(y, Vector)):
            out = yv.read(y if y is not None and not isinstance(y, Vector) else None)
            return out
        return yv

    def __matmul__(self, x):
        return self.apply(x)

    def diagonal(self):
        d = Vector(self.ctx, self.n)
        call("fea_operator_get_diagonal", self._ptr, d._ptr)
        return d.read()

    def rhs(self):
        b = Vector(self.ctx, self.n)
        call("fea_operator_get_rhs", self._ptr, b._ptr)
        return b.read()

    def info(self):
        p = new_struct("fea_operator_info")
        call("fea_operator_get_info", self._ptr, p)
        return to_dict(p)

    def eigenvalues(self, steps=100, jacobi=False):
        lo, hi = ffi.new("double *"), ffi.new("double *")
        call("fea_operator_estimate_eigenvalues", self._ptr, int(steps), int(bool(jacobi)), lo, hi)
        return lo[0], hi[0]

    def cg(self, b=None, x0=None, history=0, **options):
        """Solve A x = b by (Jacobi-preconditioned) CG; b None: the problem's
        rhs. Returns (x as NumPy array, stats dict with 'history' when asked)."""
        bv = Vector(self.ctx, self.n)
        if b is None:
            call("fea_operator_get_rhs", self._ptr, bv._ptr)
        else:
            bv.write(b)
        xv = Vector(self.ctx, self.n, data=x0) if x0 is not None else Vector(self.ctx, self.n)
        hist, hp = out_array(None, (history,)) if history else (None, ffi.NULL)
        d = new_struct("fea_cg_desc", history_capacity=history, history=hp, **options)
        st = new_struct("fea_cg_stats")
        s = call("fea_cg_solve", self._ptr, bv._ptr, xv._ptr, d, st)
        stats = to_dict(st)
        if hist is not None:
            stats["history"] = hist[: min(history, stats["iterations"] + 1)]
        if s == 1:
            warnings.warn("CG: not converged", NotConvergedWarning, stacklevel=2)
        return xv.read(), stats
