"""Python callables behind the C API's callbacks, called on batches of points.

The C API's coefficient callbacks (fea_scalar_fn, fea_gradient_fn,
fea_tensor_fn, fea_vector_fn) take ONE point per call. The binding batches wherever the C
API hands over a batch or a reproducible sequence:

- sigma, the tensor A, the reaction c and the source f go through the
  problem's element form (fea_element_form_fn), which receives an element's
  nq quadrature points at once: the user's function is called once per
  element with an (nq, dim) array, and the element matrix and load are formed
  with NumPy from the basis the library passes (the same quadrature the C
  path uses).
- g (Dirichlet data, an elasticity problem's displacement) and the exact
  solution and gradient of error norms (scalar and vector) are called by the
  library on the calling thread only, in a fixed order: the call runs twice,
  first recording the points, then replaying the values of one vectorized
  call of the user's function on all of them (Replay, VectorReplay).
- Neumann and Robin fluxes h, and an elasticity problem's body force,
  traction, pressure and material functions E(x), nu(x), are called per
  point, from several threads, in no fixed order (the elasticity form has no
  element-form hook to batch through): the user's function gets a (1, dim)
  array per call.

Exceptions raised by a user's function are recorded (_core.record_exception)
and re-raised by the failing call's check, chained to the library's error.
"""
import numpy as np

from ._core import record_exception
from ._loader import ffi

F64 = np.dtype(np.float64)


def _view(ptr, count, shape):
    if count == 0:
        return np.empty(shape)
    return np.frombuffer(ffi.buffer(ptr, count * 8), dtype=F64).reshape(shape)


def _values(fn, x, name):
    v = fn(x) if callable(fn) else fn
    v = np.asarray(v, dtype=F64)
    if v.ndim == 0:
        return np.full(x.shape[0], float(v))
    v = v.reshape(-1)
    if v.shape[0] != x.shape[0]:
        raise ValueError(f"{name}: returned {v.shape[0]} values for {x.shape[0]} points")
    return v


class VolumeForm:
    """sigma (or tensor), reaction and source as one fea_element_form_fn."""

    def __init__(self, sigma=1.0, tensor=None, reaction=0.0, source=None):
        self.sigma, self.tensor, self.reaction, self.source = sigma, tensor, reaction, source
        self.calls = 0
        self.cdata = ffi.callback("fea_element_form_fn", self._form, error=-1, onerror=self._onerror)

    @staticmethod
    def _onerror(exc_type, exc, tb):
        record_exception(exc if exc is not None else exc_type())

    def _form(self, e, Ke_ptr, fe_ptr, user):
        nq, nb, dim = e.nq, e.nb, e.dim
        x = _view(e.x, nq * dim, (nq, dim))
        w = _view(e.w, nq, (nq,))
        phi = _view(e.phi, nq * nb, (nq, nb))
        dphi = _view(e.dphi, nq * nb * dim, (nq, nb, dim))
        Ke = np.frombuffer(ffi.buffer(Ke_ptr, nb * nb * 8), dtype=F64).reshape(nb, nb)
        fe = np.frombuffer(ffi.buffer(fe_ptr, nb * 8), dtype=F64)
        self.calls += 1
        if self.tensor is not None:
            A = np.asarray(self.tensor(x), dtype=F64).reshape(nq, dim, dim)
            Ke[:] = np.einsum("qik,qkl,qjl->ij", dphi, A * w[:, None, None], dphi, optimize=True)
        else:
            s = _values(self.sigma, x, "sigma") * w
            Ke[:] = np.einsum("qik,qjk->ij", dphi * s[:, None, None], dphi, optimize=True)
        if callable(self.reaction) or self.reaction != 0.0:
            c = _values(self.reaction, x, "reaction") * w
            Ke += (phi * c[:, None]).T @ phi
        if self.source is None:
            fe[:] = 0.0
        else:
            fe[:] = phi.T @ (_values(self.source, x, "source") * w)
        return 0


def pointwise_scalar(fn, dim, name):
    """A fea_scalar_fn calling fn on a (1, dim) array per point."""

    def cb(x, user):
        v = fn(np.frombuffer(ffi.buffer(x, dim * 8), dtype=F64).reshape(1, dim).copy())
        return float(np.asarray(v, dtype=F64).reshape(-1)[0])

    return ffi.callback("fea_scalar_fn", cb, error=float("nan"),
                        onerror=lambda t, e, tb: record_exception(e))


def pointwise_tensor(fn, dim):
    def cb(x, A, user):
        v = np.asarray(fn(np.frombuffer(ffi.buffer(x, dim * 8), dtype=F64).reshape(1, dim).copy()),
                       dtype=F64).reshape(dim * dim)
        ffi.buffer(A, dim * dim * 8)[:] = v.tobytes()

    def onerror(t, e, tb):
        record_exception(e)

    return ffi.callback("fea_tensor_fn", cb, onerror=onerror)


def _vector_values(fn, x, shape, name):
    """fn(x) (or the constant fn) as an (npts, prod(shape)) array; shape is
    the per-point shape, (ncomp,) or (ncomp, dim)."""
    m = int(np.prod(shape))
    v = fn(x) if callable(fn) else fn
    v = np.asarray(v, dtype=F64)
    if not callable(fn) or v.shape == tuple(shape):
        v = np.broadcast_to(v.reshape(-1), (x.shape[0], v.size))
    if v.size != x.shape[0] * m:
        raise ValueError(f"{name}: returned shape {v.shape} for {x.shape[0]} points, expected "
                         f"{(x.shape[0],) + tuple(shape)}")
    return np.ascontiguousarray(v.reshape(x.shape[0], m))


def pointwise_vector(fn, dim, shape, name):
    """A fea_vector_fn calling fn on a (1, dim) array per point and writing
    its prod(shape) values. A failing fn records its exception and writes
    NaN, which the library refuses naming the point."""
    m = int(np.prod(shape))

    def cb(x, v, user):
        try:
            p = np.frombuffer(ffi.buffer(x, dim * 8), dtype=F64).reshape(1, dim).copy()
            vals = _vector_values(fn, p, shape, name).reshape(m)
        except BaseException as exc:  # cannot raise through C
            record_exception(exc)
            vals = np.full(m, np.nan)
        ffi.buffer(v, m * 8)[:] = vals.tobytes()

    return ffi.callback("fea_vector_fn", cb)


class VectorReplay:
    """A vector function (fea_vector_fn, prod(shape) values per point) for
    calls the library makes in a fixed order on the calling thread, as Replay
    does for scalars: record the points (writing zeros), evaluate fn once on
    all of them, replay; a point off the recording is evaluated on its own."""

    def __init__(self, fn, dim, shape, name="function"):
        self.fn, self.dim, self.shape, self.name = fn, dim, tuple(shape), name
        self.m = int(np.prod(shape))
        self.recording = True
        self.points = []
        self.i = 0
        self.vectorized_calls = 0
        self.cdata = ffi.callback("fea_vector_fn", self._cb)

    def _cb(self, x, v, user):
        nbytes = self.m * 8
        try:
            key = bytes(ffi.buffer(x, self.dim * 8))
            if self.recording:
                self.points.append(key)
                ffi.buffer(v, nbytes)[:] = bytes(nbytes)
                return
            i = self.i
            self.i += 1
            if i < len(self.points) and self.points[i] == key:
                ffi.buffer(v, nbytes)[:] = self.values[i].tobytes()
                return
            p = np.frombuffer(key, dtype=F64).reshape(1, self.dim)
            vals = _vector_values(self.fn, p, self.shape, self.name).reshape(self.m)
        except BaseException as exc:  # cannot raise through C
            record_exception(exc)
            vals = np.full(self.m, np.nan)
        ffi.buffer(v, nbytes)[:] = vals.tobytes()

    def evaluate(self):
        """End the recording: one call of fn on all the recorded points."""
        self.recording = False
        self.i = 0
        self.values = np.empty((0, self.m))
        if self.points:
            X = np.frombuffer(b"".join(self.points), dtype=F64).reshape(-1, self.dim)
            self.values = _vector_values(self.fn, X, self.shape, self.name)
            self.vectorized_calls += 1


class Replay:
    """A scalar function (and optionally its gradient) for calls the library
    makes in a fixed order on the calling thread: record the points, evaluate
    once vectorized, replay. A point that differs from the recording (it
    should not happen) is evaluated on its own."""

    def __init__(self, fn, dim, grad=None):
        self.fn, self.grad, self.dim = fn, grad, dim
        self.recording = True
        self.points, self.gpoints = [], []
        self.i = self.gi = 0
        self.vectorized_calls = 0
        onerror = lambda t, e, tb: record_exception(e)  # noqa: E731
        self.scalar = ffi.callback("fea_scalar_fn", self._scalar, error=float("nan"), onerror=onerror)
        self.gradient = ffi.callback("fea_gradient_fn", self._gradient, onerror=onerror)

    def _point(self, x):
        return bytes(ffi.buffer(x, self.dim * 8))

    def _scalar(self, x, user):
        key = self._point(x)
        if self.recording:
            self.points.append(key)
            return 0.0
        i = self.i
        self.i += 1
        if i < len(self.points) and self.points[i] == key:
            return self.values[i]
        p = np.frombuffer(key, dtype=F64).reshape(1, self.dim)
        return float(_values(self.fn, p, "function")[0])

    def _gradient(self, x, g, user):
        key = self._point(x)
        if self.recording:
            self.gpoints.append(key)
            ffi.buffer(g, self.dim * 8)[:] = bytes(self.dim * 8)
            return
        i = self.gi
        self.gi += 1
        if i < len(self.gpoints) and self.gpoints[i] == key:
            v = self.gvalues[i]
        else:
            p = np.frombuffer(key, dtype=F64).reshape(1, self.dim)
            v = np.asarray(self.grad(p), dtype=F64).reshape(self.dim)
        ffi.buffer(g, self.dim * 8)[:] = v.tobytes()

    def evaluate(self):
        """End the recording: one call of each function on all points."""
        self.recording = False
        if self.points:
            X = np.frombuffer(b"".join(self.points), dtype=F64).reshape(-1, self.dim)
            self.values = _values(self.fn, X, "function").tolist()
            self.vectorized_calls += 1
        if self.gpoints and self.grad is not None:
            X = np.frombuffer(b"".join(self.gpoints), dtype=F64).reshape(-1, self.dim)
            G = np.asarray(self.grad(X), dtype=F64)
            if G.shape != X.shape:
                raise ValueError(f"gradient: returned shape {G.shape} for {X.shape[0]} points")
            self.gvalues = np.ascontiguousarray(G)
            self.vectorized_calls += 1


def c_callback(ctype, fn):
    """A callback of type `ctype` calling fn with the C arguments, `char *`
    ones as str, the trailing `void *user` dropped. Returns for an int or
    enum result: fn's value (0 when it returns None)."""
    t = ffi.typeof(ctype)
    if t.kind == "pointer":
        t = t.item
    args = t.args
    drop_user = bool(args) and args[-1].kind == "pointer" and args[-1].item.cname == "void"
    has_user_first = bool(args) and args[0].kind == "pointer" and args[0].item.cname == "void"
    returns = t.result.kind != "void"

    def cb(*a):
        vals = []
        for i, (v, at) in enumerate(zip(a, args)):
            if at.kind == "pointer" and at.item.cname == "void" and (i == 0 and has_user_first or
                                                                     i == len(args) - 1 and drop_user):
                continue
            if at.kind == "pointer" and at.item.cname == "char":
                v = ffi.string(v).decode(errors="replace") if v != ffi.NULL else None
            vals.append(v)
        r = fn(*vals)
        if returns:
            return int(r or 0)
        return None

    kw = {"onerror": lambda tp, e, tb: record_exception(e)}
    if returns:
        kw["error"] = -1
    return ffi.callback(t, cb, **kw)
