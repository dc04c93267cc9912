"""Vector: a fea_vector in its context's memory (host or device); NumPy
arrays move in and out by fea_vector_write and fea_vector_read."""
import numpy as np

from ._core import Handle, call, create, ffi

F64, F32, F16, BF16 = 0, 1, 2, 3
_NP = {F64: np.float64, F32: np.float32, F16: np.float16}


class Vector(Handle):
    _destroy_fn = "fea_vector_destroy"

    def __init__(self, ctx, n, precision=F64, data=None):
        self.ctx = ctx
        self._adopt(create("fea_vector", "fea_vector_create", ctx._ptr, int(n), precision), (ctx,))
        if data is not None:
            self.write(data)

    @classmethod
    def from_array(cls, ctx, a):
        a = np.asarray(a)
        prec = {np.dtype(np.float32): F32, np.dtype(np.float16): F16}.get(a.dtype, F64)
        return cls(ctx, a.size, prec, a)

    def __len__(self):
        n = ffi.new("fea_index *")
        call("fea_vector_get_length", self._ptr, n)
        return n[0]

    @property
    def precision(self):
        p = ffi.new("fea_precision *")
        call("fea_vector_get_precision", self._ptr, p)
        return p[0]

    def write(self, a):
        """Copy `a` (float64, float32 or float16; converted to the vector's
        precision) in; a C-contiguous array is read in place."""
        a = np.asarray(a)
        prec = {np.dtype(np.float32): F32, np.dtype(np.float16): F16}.get(a.dtype, F64)
        arr = np.ascontiguousarray(a, dtype=_NP[prec])
        call("fea_vector_write", self._ptr, arr.size, prec,
             ffi.from_buffer(arr) if arr.size else ffi.NULL)

    def read(self, out=None, dtype=np.float64):
        """The values as a NumPy array (written into `out` when given)."""
        dtype = np.dtype(out.dtype if out is not None else dtype)
        prec = {np.dtype(np.float64): F64, np.dtype(np.float32): F32, np.dtype(np.float16): F16}[dtype]
        n = len(self)
        if out is None:
            out = np.empty(n, dtype=dtype)
        elif not out.flags.c_contiguous or not out.flags.writeable or out.size != n:
            raise ValueError(f"out: must be a writable C-contiguous array of {n} entries")
        call("fea_vector_read", self._ptr, n, prec,
             ffi.from_buffer(out, require_writable=True) if n else ffi.NULL)
        return out

    def numpy(self):
        return self.read()

    def fill(self, alpha):
        call("fea_vector_set_all", self._ptr, float(alpha))

    def copy_from(self, x):
        call("fea_vector_copy", x._ptr, self._ptr)

    def axpy(self, alpha, x):
        """self += alpha x"""
        call("fea_vector_axpy", self._ptr, float(alpha), x._ptr)

    def scale(self, alpha):
        call("fea_vector_scale", self._ptr, float(alpha))

    def dot(self, y):
        r = ffi.new("double *")
        call("fea_vector_dot", self._ptr, y._ptr, r)
        return r[0]

    def norm(self):
        r = ffi.new("double *")
        call("fea_vector_nrm2", self._ptr, r)
        return r[0]
