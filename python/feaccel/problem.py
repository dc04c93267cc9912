"""Problem (Poisson), boundary conditions, Matrix (CSR) and the assembly calls."""
import numpy as np

from . import _callbacks
from ._core import Handle, call, create, ffi, in_array, new_struct, out_array, to_dict
from ._loader import lib

DIRICHLET, NEUMANN, ROBIN = 0, 1, 2


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


def _error_norms(fn, handle, p, dim, exact, exact_grad):
    rep = _callbacks.Replay(exact, dim, exact_grad)
    l2, h1 = ffi.new("double *"), ffi.new("double *")
    g = rep.gradient if exact_grad is not None else ffi.NULL
    h = h1 if exact_grad is not None else ffi.NULL
    call(fn, handle, p, rep.scalar, g, ffi.NULL, l2, h)
    rep.evaluate()
    call(fn, handle, p, rep.scalar, g, ffi.NULL, l2, h)
    return l2[0], (h1[0] if exact_grad is not None else None)
