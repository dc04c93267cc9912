"""Problem (Poisson and linear elasticity), boundary conditions (BC, Elastic),
Matrix (CSR) and the assembly calls."""
import numpy as np

from . import _callbacks
from ._core import Handle, call, create, ffi, in_array, new_struct, out_array, to_dict
from ._loader import lib

DIRICHLET, NEUMANN, ROBIN = 0, 1, 2
ELASTIC_DISPLACEMENT, ELASTIC_TRACTION, ELASTIC_PRESSURE, ELASTIC_SPRING = 0, 1, 2, 3
PLANE_STRAIN, PLANE_STRESS = 0, 1
_MODELS = {"plane_strain": PLANE_STRAIN, "plane_stress": PLANE_STRESS}


class BC:
    """A boundary condition: BC.neumann(h), BC.robin(alpha, h), BC.dirichlet().
    h(x) is a constant or a function of an (npts, dim) array; the C API calls
    it one point at a time, from several threads (see _callbacks)."""

    def __init__(self, type=DIRICHLET, alpha=0.0, flux=None):
        self.type, self.alpha, self.flux = type, alpha, flux

    @classmethod
    def dirichlet(cls):
        return cls(DIRICHLET)

    @classmethod
    def neumann(cls, flux=None):
        return cls(NEUMANN, 0.0, flux)

    @classmethod
    def robin(cls, alpha, flux=None):
        return cls(ROBIN, alpha, flux)

    def fill(self, c, dim, keep):
        c.type = self.type
        c.alpha = self.alpha
        if self.flux is not None:
            fn = self.flux if callable(self.flux) else (lambda X, v=float(self.flux): np.full(len(X), v))
            cb = _callbacks.pointwise_scalar(fn, dim, "flux")
            keep.append(cb)
            c.flux = cb


def _component_mask(components):
    """A fea_elastic_condition.components mask from None (every component),
    an int mask, "x" / "xy" / "z" or an iterable of component numbers."""
    if components is None:
        return 0
    if isinstance(components, (int, np.integer)):
        return int(components)
    mask = 0
    for c in components:
        if isinstance(c, str):
            if c not in "xyz" or len(c) != 1:
                raise ValueError(f"components: unknown component {c!r} (x, y or z)")
            c = "xyz".index(c)
        mask |= 1 << int(c)
    return mask


class Elastic:
    """What holds on one side (or part) of an elasticity problem:
    Elastic.displacement(components=None): u_c = g_c (the problem's
    displacement, 0 by default) on the given components (None: all, clamped;
    "x": a roller on a side normal to x), the others traction-free;
    Elastic.traction(h=None): sigma n = h(x), a constant vector or a function
    of an (npts, dim) array returning (npts, dim) (None: a free side);
    Elastic.pressure(p): sigma n = -p n, p a constant or a function returning
    (npts,); Elastic.spring(k, h=None): an elastic support sigma n + k u = h,
    k >= 0 a constant or a function returning (npts,). The C API calls h, p
    and k one point at a time, from several threads (see _callbacks)."""

    def __init__(self, type=ELASTIC_DISPLACEMENT, components=None, traction=None, pressure=0.0):
        self.type, self.components = type, _component_mask(components)
        self.traction_value, self.pressure_value = traction, pressure

    @classmethod
    def displacement(cls, components=None):
        return cls(ELASTIC_DISPLACEMENT, components)

    @classmethod
    def traction(cls, h=None):
        return cls(ELASTIC_TRACTION, traction=h)

    @classmethod
    def free(cls):
        return cls(ELASTIC_TRACTION)

    @classmethod
    def pressure(cls, p):
        return cls(ELASTIC_PRESSURE, pressure=p)

    @classmethod
    def spring(cls, k, h=None):
        # The C condition keeps k in its pressure fields (docs/problems.md).
        return cls(ELASTIC_SPRING, traction=h, pressure=k)

    def fill(self, c, dim, keep):
        c.type = self.type
        c.components = self.components
        if self.traction_value is not None:
            cb = _callbacks.pointwise_vector(self.traction_value, dim, (dim,), "traction")
            keep.append(cb)
            c.traction = cb
        if callable(self.pressure_value):
            cb = _callbacks.pointwise_scalar(
                self.pressure_value, dim, "spring k" if self.type == ELASTIC_SPRING else "pressure")
            keep.append(cb)
            c.pressure_fn = cb
        else:
            c.pressure = float(self.pressure_value)

    def __repr__(self):
        kind = ("displacement", "traction", "pressure", "spring")[self.type] \
            if self.type in (0, 1, 2, 3) else self.type
        return f"<feaccel.Elastic {kind}>"


def _elastic_parts(parts, dim, keep):
    """(fea_elastic_part[] or NULL, count) from {name or tag: Elastic} or
    [(name or tag, Elastic), ...]."""
    items = list(parts.items()) if isinstance(parts, dict) else list(parts or ())
    if not items:
        return ffi.NULL, 0
    arr = ffi.new("fea_elastic_part[]", len(items))
    keep.append(arr)
    for i, (group, cond) in enumerate(items):
        if isinstance(group, str):
            name = ffi.new("char[]", group.encode())
            keep.append(name)
            arr[i].name = name
        else:
            arr[i].physical_tag = int(group)
            arr[i].name = ffi.NULL
        cond.fill(arr[i].bc, dim, keep)
    return arr, len(items)


class Matrix(Handle):
    """A CSR matrix (fea_matrix) on the host."""

    _destroy_fn = "fea_matrix_destroy"

    def __init__(self, box, parents=()):
        self._adopt(box, parents)

    @property
    def shape(self):
        r, c, z = ffi.new("fea_index *"), ffi.new("fea_index *"), ffi.new("fea_index *")
        call("fea_matrix_get_size", self._ptr, r, c, z)
        return (r[0], c[0])

    @property
    def nnz(self):
        z = ffi.new("fea_index *")
        call("fea_matrix_get_size", self._ptr, ffi.NULL, ffi.NULL, z)
        return z[0]

    def csr(self):
        """(row_ptr, col_idx, values) as new NumPy arrays."""
        rows, _ = self.shape
        rp, rpp = out_array(None, (rows + 1,), np.int64)
        ci, cip = out_array(None, (self.nnz,), np.int64)
        v, vp = out_array(None, (self.nnz,))
        call("fea_matrix_get_csr", self._ptr, rpp, cip, vp)
        return rp, ci, v

    def to_scipy(self):
        import scipy.sparse

        rp, ci, v = self.csr()
        return scipy.sparse.csr_matrix((v, ci, rp), shape=self.shape)

    def to_dense(self):
        rp, ci, v = self.csr()
        A = np.zeros(self.shape)
        for i in range(len(rp) - 1):
            A[i, ci[rp[i]:rp[i + 1]]] = v[rp[i]:rp[i + 1]]
        return A

    def __matmul__(self, x):
        return self.multiply(x)

    def multiply(self, x, out=None):
        rows, cols = self.shape
        xa, xp = in_array(x, shape=(cols,), name="x")
        out, op = out_array(out, (rows,))
        call("fea_matrix_multiply", self._ptr, xp, op)
        return out

    def write_mtx(self, path):
        call("fea_matrix_write_mtx", self._ptr, str(path).encode())


def write_mtx_array(ctx, values, path):
    a, p = in_array(values)
    call("fea_array_write_mtx", ctx._ptr, a.size, p, str(path).encode())


def _desc(dim, sigma, tensor, reaction, source, dirichlet, quad_points, sides, pointwise,
          element_form, keep):
    """A fea_problem_desc for the coefficients; returns (desc, dirichlet Replay or None)."""
    d = new_struct("fea_problem_desc", quad_points=int(quad_points))
    variable = callable(sigma) or tensor is not None or callable(reaction) or source is not None
    if element_form is not None:
        form = _UserForm(element_form)
        keep.append(form)
        d.element_form = form.cdata
    elif variable and not pointwise:
        form = _callbacks.VolumeForm(sigma, tensor, reaction, source)
        keep.append(form)
        d.element_form = form.cdata
    else:
        if callable(sigma):
            cb = _callbacks.pointwise_scalar(sigma, dim, "sigma")
            keep.append(cb)
            d.sigma_fn = cb
        else:
            d.sigma = float(sigma)
        if tensor is not None:
            cb = _callbacks.pointwise_tensor(tensor, dim)
            keep.append(cb)
            d.sigma_tensor = cb
        if callable(reaction):
            cb = _callbacks.pointwise_scalar(reaction, dim, "reaction")
            keep.append(cb)
            d.reaction_fn = cb
        else:
            d.reaction = float(reaction)
        if source is not None:
            fn = source if callable(source) else (lambda X, v=float(source): np.full(len(X), v))
            cb = _callbacks.pointwise_scalar(fn, dim, "source")
            keep.append(cb)
            d.source = cb
    rep = None
    if dirichlet is not None:
        fn = dirichlet if callable(dirichlet) else (lambda X, v=float(dirichlet): np.full(len(X), v))
        if pointwise:
            cb = _callbacks.pointwise_scalar(fn, dim, "dirichlet")
            keep.append(cb)
            d.dirichlet = cb
        else:
            rep = _callbacks.Replay(fn, dim)
            keep.append(rep)
            d.dirichlet = rep.scalar
    for side, bc in (sides or {}).items():
        bc.fill(d.sides[side], dim, keep)
    return d, rep


class _UserForm:
    """The user's own element form: fn(element) -> (Ke, fe), element a dict of
    NumPy views (x, w, phi, dphi; valid during the call)."""

    def __init__(self, fn):
        self.fn = fn
        self.cdata = ffi.callback("fea_element_form_fn", self._form, error=-1,
                                  onerror=lambda t, e, tb: _callbacks.record_exception(e))

    def _form(self, e, Ke_ptr, fe_ptr, user):
        nq, nb, dim = e.nq, e.nb, e.dim
        v = _callbacks._view
        el = {"element": e.element, "x": v(e.x, nq * dim, (nq, dim)), "w": v(e.w, nq, (nq,)),
              "phi": v(e.phi, nq * nb, (nq, nb)), "dphi": v(e.dphi, nq * nb * dim, (nq, nb, dim))}
        Ke, fe = self.fn(el)
        ffi.buffer(Ke_ptr, nb * nb * 8)[:] = np.ascontiguousarray(Ke, dtype=np.float64).tobytes()
        ffi.buffer(fe_ptr, nb * 8)[:] = np.ascontiguousarray(fe, dtype=np.float64).tobytes()
        return 0


class Problem(Handle):
    """-div(sigma grad u) + c u = f on a Space, u = g on Dirichlet sides.

    sigma, reaction (c): constants or functions; tensor: a function returning
    (npts, dim, dim); source (f), dirichlet (g): constants, functions or None
    (zero). Functions take an (npts, dim) array of points and return (npts,)
    values. sides: {side: BC} for B-spline patches and structured meshes.
    pointwise=True hands the functions to the C API's own per-point
    callbacks instead of the vectorized element form (slower; for checks and
    for solvers that take no element form)."""

    _destroy_fn = "fea_problem_destroy"

    def __init__(self, space, sigma=1.0, source=None, dirichlet=None, reaction=0.0, tensor=None,
                 sides=None, quad_points=0, pointwise=False, element_form=None):
        self.space = space
        self.ctx = space.ctx
        keep = []
        d, rep = _desc(space.dim, sigma, tensor, reaction, source, dirichlet, quad_points, sides,
                       pointwise, element_form, keep)
        self._callbacks = keep
        if rep is not None:
            # g is called in order on this thread when the problem is made:
            # record its points, evaluate once, make the problem again.
            box = create("fea_problem", "fea_problem_create_poisson", space._ptr, d)
            lib.fea_problem_destroy(box)
            rep.evaluate()
        box = create("fea_problem", "fea_problem_create_poisson", space._ptr, d)
        self._adopt(box, (space,), keep)

    @classmethod
    def elasticity(cls, space, E=1.0, nu=0.3, lam=None, mu=None, model="plane_strain",
                   body_force=None, displacement=None, sides=None, parts=None, quad_points=0,
                   C=None):
        """Linear elasticity -div sigma(u) = f (fea_problem_create_elasticity) on
        a space with dim components (Space.set_num_components). E, nu:
        constants or functions of an (npts, dim) array returning (npts,); or
        the Lame parameters lam and mu (mu > 0) in their place; or C, a general
        elasticity tensor in Voigt notation (a constant 6 x 6 in 3D, 3 x 3 in
        2D, or a function returning (npts, 6, 6) / (npts, 3, 3)). model:
        "plane_strain" or "plane_stress" (2D). body_force f and displacement g
        (the data of the fixed components): constant vectors or functions
        returning (npts, dim), or None (zero). sides: {side: Elastic} (the
        others stay clamped); parts: {group name or physical tag: Elastic} on
        a mesh read from Gmsh. g is evaluated vectorized once (the library
        calls it in order when the problem is made); f, E(x), nu(x) and the
        sides' h and p point by point (see _callbacks)."""
        dim = space.dim
        keep = []
        m = _MODELS.get(model, model) if isinstance(model, str) else int(model)
        if isinstance(m, str):
            raise ValueError(f"model: {model!r} is not 'plane_strain' or 'plane_stress'")
        # FEA_ELASTICITY_DESC_INIT has no designated-initializer branch for
        # gen_cdef.py to read, so new_struct zero-fills: the macro's defaults
        # except E and nu, which are always set below.
        d = new_struct("fea_elasticity_desc", model=m, quad_points=int(quad_points))
        if mu is not None:
            d.mu = float(mu)
            setattr(d, "lambda", float(0.0 if lam is None else lam))
        elif lam is not None:
            raise ValueError("lam: the Lame parameters need mu as well")
        for name, v in (("E", E), ("nu", nu)):
            if callable(v):
                cb = _callbacks.pointwise_scalar(v, dim, name)
                keep.append(cb)
                setattr(d, name + "_fn", cb)
            else:
                setattr(d, name, float(v))
        if C is not None:
            v = 6 if dim == 3 else 3
            cb = _callbacks.pointwise_vector(C, dim, (v, v), "C")
            keep.append(cb)
            d.C_fn = cb
        if body_force is not None:
            cb = _callbacks.pointwise_vector(body_force, dim, (dim,), "body_force")
            keep.append(cb)
            d.body_force = cb
        rep = None
        if displacement is not None:
            rep = _callbacks.VectorReplay(displacement, dim, (dim,), "displacement")
            keep.append(rep)
            d.displacement = rep.cdata
        for side, cond in (sides or {}).items():
            cond.fill(d.sides[side], dim, keep)
        d.parts, d.num_parts = _elastic_parts(parts, dim, keep)
        if rep is not None:
            # g is called in order on this thread when the problem is made:
            # record its points, evaluate once, make the problem again.
            box = create("fea_problem", "fea_problem_create_elasticity", space._ptr, d)
            lib.fea_problem_destroy(box)
            rep.evaluate()
        box = create("fea_problem", "fea_problem_create_elasticity", space._ptr, d)
        self = cls.__new__(cls)
        self.space, self.ctx, self._callbacks = space, space.ctx, keep
        self._adopt(box, (space,), keep)
        return self

    @property
    def num_free_dofs(self):
        n = ffi.new("fea_index *")
        call("fea_problem_get_num_free_dofs", self._ptr, n)
        return n[0]

    def element_system(self, e):
        nb = self.space.info()["dofs_per_element"]
        Ke, kp = out_array(None, (nb, nb))
        fe, fp = out_array(None, (nb,))
        call("fea_problem_element_system", self._ptr, int(e), kp, fp)
        return Ke, fe

    def element_mass(self, e):
        nb = self.space.info()["dofs_per_element"]
        Me, mp = out_array(None, (nb, nb))
        call("fea_problem_element_mass", self._ptr, int(e), mp)
        return Me

    def assemble_reference(self):
        """(A, b): the reduced system, serial reference assembly."""
        b, bp = out_array(None, (self.num_free_dofs,))
        box = ffi.new("fea_matrix **")
        call("fea_problem_assemble_reference", self._ptr, bp, box)
        return Matrix(box, (self,)), b

    def create_pattern(self):
        box = ffi.new("fea_matrix **")
        call("fea_matrix_create_pattern", self._ptr, box)
        return Matrix(box, (self,))

    def assemble(self, A=None, strategy=0, **desc):
        """Concurrent assembly (fea_problem_assemble) into A (a pattern from
        create_pattern(), made when None) and b; returns (A, b, stats)."""
        if A is None:
            A = self.create_pattern()
        b, bp = out_array(None, (self.num_free_dofs,))
        d = new_struct("fea_assembly_desc", strategy=strategy, **desc)
        st = new_struct("fea_assembly_stats")
        call("fea_problem_assemble", self._ptr, A._ptr, bp, d, st)
        return A, b, to_dict(st)

    def assemble_dense(self, strategy=0, **desc):
        n = self.num_free_dofs
        A, ap = out_array(None, (n, n))
        b, bp = out_array(None, (n,))
        d = new_struct("fea_assembly_desc", strategy=strategy, **desc)
        st = new_struct("fea_assembly_stats")
        call("fea_problem_assemble_dense", self._ptr, ap, n, bp, d, st)
        return A, b, to_dict(st)

    def expand_solution(self, u_free, out=None):
        a, p = in_array(u_free, shape=(self.num_free_dofs,), name="u_free")
        out, op = out_array(out, (self.space.num_dofs,))
        call("fea_problem_expand_solution", self._ptr, p, op)
        return out

    def error_norms(self, u_full, exact, exact_grad=None):
        """(L2 error, H1 seminorm error or None) of u_full against exact(X)
        (and exact_grad(X) -> (npts, dim)), each called once, vectorized."""
        a, p = in_array(u_full, shape=(self.space.num_dofs,), name="u_full")
        return _error_norms("fea_problem_error_norms", self._ptr, p, self.space.dim, exact,
                            exact_grad)


    def error_norms_vector(self, u_full, exact, exact_grad=None):
        """(l2, h1) of a vector u_full (interleaved) against exact(X) ->
        (npts, ncomp) and exact_grad(X) -> (npts, ncomp, dim), each called
        once, vectorized: NumPy arrays of ncomp + 1 entries, per component
        then together (h1 None without exact_grad)."""
        nc, dim = self.space.num_components, self.space.dim
        a, p = in_array(u_full, shape=(self.space.num_dofs,), name="u_full")
        ex = _callbacks.VectorReplay(exact, dim, (nc,), "exact")
        gr = None if exact_grad is None else _callbacks.VectorReplay(exact_grad, dim, (nc, dim),
                                                                   "exact_grad")
        l2, lp = out_array(None, (nc + 1,))
        h1, hp = (None, ffi.NULL) if gr is None else out_array(None, (nc + 1,))
        g = ffi.NULL if gr is None else gr.cdata
        call("fea_problem_error_norms_vector", self._ptr, p, ex.cdata, g, ffi.NULL, lp, hp)
        ex.evaluate()
        if gr is not None:
            gr.evaluate()
        call("fea_problem_error_norms_vector", self._ptr, p, ex.cdata, g, ffi.NULL, lp, hp)
        return l2, h1

    def evaluate_stress(self, u_full, points, full=False):
        """Stresses of an elasticity solution u_full at points (npts, dim):
        B-spline parameters (the patch's parameter box; the physical points
        on an unmapped box) or a Lagrange mesh's coordinates. Returns
        (stress (npts, 6) in Voigt order xx, yy, zz, yz, xz, xy, von_mises
        (npts,)); full=True returns (x, u, stress, von_mises) with the
        physical points and displacements (npts, dim)."""
        dim = self.space.dim
        a, p = in_array(u_full, shape=(self.space.num_dofs,), name="u_full")
        pts = np.ascontiguousarray(points, dtype=np.float64)
        if pts.size % dim:
            raise ValueError(f"points: {pts.size} values are not points of dimension {dim}")
        pts = pts.reshape(-1, dim)
        n = pts.shape[0]
        _, pp = in_array(pts)
        x, xp = out_array(None, (n, dim)) if full else (None, ffi.NULL)
        u, up = out_array(None, (n, dim)) if full else (None, ffi.NULL)
        st, sp = out_array(None, (n, 6))
        vm, vp = out_array(None, (n,))
        call("fea_problem_evaluate_stress", self._ptr, p, n, pp, xp, up, sp, vp)
        return (x, u, st, vm) if full else (st, vm)

    def write_vtu(self, u_full, path, samples=4):
        """An elasticity solution as a .vtu file for ParaView: node fields
        "displacement" (3 components), "stress" (6) and "von_mises"."""
        a, p = in_array(u_full, shape=(self.space.num_dofs,), name="u_full")
        call("fea_problem_write_vtu", self._ptr, p, int(samples), str(path).encode())


def _error_norms(fn, handle, p, dim, exact, exact_grad):
    rep = _callbacks.Replay(exact, dim, exact_grad)
    l2, h1 = ffi.new("double *"), ffi.new("double *")
    g = rep.gradient if exact_grad is not None else ffi.NULL
    h = h1 if exact_grad is not None else ffi.NULL
    call(fn, handle, p, rep.scalar, g, ffi.NULL, l2, h)
    rep.evaluate()
    call(fn, handle, p, rep.scalar, g, ffi.NULL, l2, h)
    return l2[0], (h1[0] if exact_grad is not None else None)
