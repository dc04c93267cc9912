"""Multipatch: B-spline patches joined into one domain, its Poisson problem
and the multipatch direct solver."""
import numpy as np

from . import problem as _problem
from ._core import Handle, call, create, ffi, in_array, new_struct, out_array, to_dict
from ._loader import lib
from .solver import Solver


class Multipatch(Handle):
    _destroy_fn = "fea_multipatch_destroy"

    def __init__(self, ctx, patches, **options):
        self.ctx = ctx
        self.patches = list(patches)
        arr = ffi.new("fea_space *[]", [p._ptr for p in self.patches])
        d = new_struct("fea_multipatch_desc", **options)
        box = create("fea_multipatch", "fea_multipatch_create", ctx._ptr, len(self.patches), arr, d)
        self._adopt(box, (ctx, *self.patches))

    def info(self):
        p = new_struct("fea_multipatch_info")
        call("fea_multipatch_get_info", self._ptr, p)
        return to_dict(p)

    def interfaces(self):
        out = []
        for i in range(self.info()["num_interfaces"]):
            p = new_struct("fea_multipatch_interface")
            call("fea_multipatch_get_interface", self._ptr, i, p)
            out.append(to_dict(p))
        return out

    def boundary_sides(self):
        out = []
        for i in range(self.info()["num_boundary_sides"]):
            pa, s = ffi.new("int *"), ffi.new("fea_patch_side *")
            call("fea_multipatch_get_boundary_side", self._ptr, i, pa, s)
            out.append((pa[0], s[0]))
        return out

    def patch_dofs(self, patch):
        out, p = out_array(None, (self.patches[patch].num_dofs,), np.int64)
        call("fea_multipatch_get_patch_dofs", self._ptr, int(patch), out.size, p)
        return out


class MultipatchProblem(Handle):
    """The Poisson problem on every patch; bcs: {(patch, side): BC}."""

    _destroy_fn = "fea_multipatch_problem_destroy"

    def __init__(self, mp, sigma=1.0, source=None, dirichlet=None, reaction=0.0, tensor=None,
                 bcs=None, quad_points=0, pointwise=False):
        self.mp, self.ctx = mp, mp.ctx
        dim = mp.info()["dim"]
        self.dim = dim
        keep = []
        d, rep = _problem._desc(dim, sigma, tensor, reaction, source, dirichlet, quad_points, None,
                                pointwise, None, keep)
        bcs = bcs or {}
        arr = ffi.new("fea_multipatch_bc[]", max(len(bcs), 1))
        for i, ((patch, side), bc) in enumerate(bcs.items()):
            arr[i].patch = patch
            arr[i].side = side
            bc.fill(arr[i].bc, dim, keep)
        self._callbacks = keep
        args = (mp._ptr, d, len(bcs), arr if bcs else ffi.NULL)
        if rep is not None:
            box = create("fea_multipatch_problem", "fea_multipatch_problem_create_poisson", *args)
            lib.fea_multipatch_problem_destroy(box)
            rep.evaluate()
        box = create("fea_multipatch_problem", "fea_multipatch_problem_create_poisson", *args)
        self._adopt(box, (mp,), keep)

    @property
    def num_free_dofs(self):
        n = ffi.new("fea_index *")
        call("fea_multipatch_problem_get_num_free_dofs", self._ptr, n)
        return n[0]

    def assemble_reference(self):
        b, bp = out_array(None, (self.num_free_dofs,))
        box = ffi.new("fea_matrix **")
        call("fea_multipatch_problem_assemble_reference", self._ptr, bp, box)
        return _problem.Matrix(box, (self,)), b

    def expand_solution(self, u_free, out=None):
        a, p = in_array(u_free, shape=(self.num_free_dofs,), name="u_free")
        out, op = out_array(out, (self.mp.info()["num_dofs"],))
        call("fea_multipatch_problem_expand_solution", self._ptr, p, op)
        return out

    def error_norms(self, u_full, exact, exact_grad=None):
        a, p = in_array(u_full, shape=(self.mp.info()["num_dofs"],), name="u_full")
        return _problem._error_norms("fea_multipatch_problem_error_norms", self._ptr, p, self.dim,
                                     exact, exact_grad)

    def solver(self, ctx=None, **options):
        """The multipatch direct solver (fea_solver_create_multipatch)."""
        ctx = ctx or self.ctx
        d = new_struct("fea_solver_desc", **options)
        box = create("fea_solver", "fea_solver_create_multipatch", ctx._ptr, self._ptr, d)
        return Solver(box, ctx, self, (ctx, self), "multipatch")

    def multigrid(self, ctx=None, paper=False, **options):
        """B-spline multigrid over the patches (fea_solver_create_multipatch_multigrid);
        options: fea_multigrid_desc fields, paper=True starts from FEA_MULTIGRID_DESC_PAPER."""
        ctx = ctx or self.ctx
        d = new_struct("fea_multigrid_desc", "FEA_MULTIGRID_DESC_PAPER" if paper else None,
                       **options)
        box = create("fea_solver", "fea_solver_create_multipatch_multigrid", ctx._ptr, self._ptr,
                     d)
        return Solver(box, ctx, self, (ctx, self), "multigrid")
