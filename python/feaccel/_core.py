"""What every wrapper shares: the Error exception, status checks, handles
freed by finalizers, descriptor structs filled with the headers' defaults,
and NumPy arrays passed to C without copies where their layout allows."""
import threading
import weakref

import numpy as np

from . import _generated
from ._loader import ffi, lib


class Error(Exception):
    """A failed libfeaccel call: .status (the fea_status value), .status_name
    ("FEA_ERR_DIMENSION") and .message (fea_context_last_error's text)."""

    def __init__(self, status, message, call=None):
        self.status = int(status)
        self.status_name = ffi.string(lib.fea_status_string(status)).decode()
        self.message = message
        self.call = call
        super().__init__(f"{self.status_name}: {message}")


class NotConvergedWarning(UserWarning):
    """An iterative solve stopped at its limit (FEA_WARN_NOT_CONVERGED)."""


# Exceptions raised inside Python callbacks while C was running them. A
# callback cannot raise through C: it records the exception and returns a
# value the library refuses (NaN, an error status), and the call's check
# raises the recorded exception with the library's error chained.
_pending = []
_pending_lock = threading.Lock()


def record_exception(exc):
    with _pending_lock:
        if len(_pending) < 16:
            _pending.append(exc)


def last_error():
    """The calling thread's last error message (fea_context_last_error(NULL))."""
    return ffi.string(lib.fea_context_last_error(ffi.NULL)).decode(errors="replace")


def check(status, call=None):
    """Raise Error for a negative status; return the status otherwise."""
    with _pending_lock:
        pending = _pending[:]
        _pending.clear()
    if status < 0:
        err = Error(status, last_error(), call)
        if pending:
            raise pending[0] from err
        raise err
    if pending:
        raise pending[0]
    return status


def call(name, *args):
    """lib.name(*args), raising Error on failure."""
    return check(getattr(lib, name)(*args), name)


def has(name):
    """Whether this build's headers declare the function (optional API)."""
    try:
        getattr(lib, name)
        return True
    except AttributeError:
        return False


def _init_value(v, keep):
    if isinstance(v, dict):
        if v.get("__sizeof__"):
            return None
        if "__string__" in v:
            return v["__string__"].encode()
        return {k: _init_value(x, keep) for k, x in v.items() if not (isinstance(x, dict) and x.get("__sizeof__"))}
    if isinstance(v, list):
        return [_init_value(x, keep) for x in v]
    if v is None:
        return ffi.NULL
    if isinstance(v, str):  # an enumerator
        return getattr(lib, v)
    return v


def new_struct(ctype, init=None, **fields):
    """A fresh `ctype` filled with the header's FEA_*_INIT defaults (init names
    the macro; default: the type's name upper-cased plus _INIT), .size set,
    then `fields` applied. Returns a `ctype *` cdata."""
    macro = init or ctype.upper() + "_INIT"
    p = ffi.new(ctype + " *")
    spec = _generated.INITS.get(macro)
    if spec is not None:
        for k, v in _init_value(spec["fields"], None).items():
            _assign(p, k, v)
    if "size" in {f for f, _ in ffi.typeof(ctype).fields}:
        p.size = ffi.sizeof(ctype)
    for k, v in fields.items():
        _assign(p, k, v)
    return p


def _assign(p, k, v):
    cur = getattr(p, k)
    if isinstance(v, dict) and isinstance(cur, ffi.CData):
        for kk, vv in v.items():
            _assign(cur, kk, vv)
    elif isinstance(v, (list, tuple)) and isinstance(cur, ffi.CData) and ffi.typeof(cur).kind == "array":
        for i, x in enumerate(v):
            if isinstance(x, dict):
                for kk, vv in x.items():
                    _assign(cur[i], kk, vv)
            else:
                cur[i] = x
    else:
        setattr(p, k, v)


def to_dict(p):
    """A struct (cdata pointer or value) as a dict of Python values; char
    arrays become str, other arrays lists, enums their integer."""
    if ffi.typeof(p).kind == "pointer":
        p = p[0]
    out = {}
    for name, field in ffi.typeof(p).fields:
        v = getattr(p, name)
        t = field.type
        if t.kind == "array" and t.item.cname == "char":
            out[name] = ffi.string(v).decode(errors="replace")
        elif t.kind == "array":
            out[name] = [v[i] for i in range(t.length)]
        elif t.kind == "struct":
            out[name] = to_dict(v)
        elif t.kind == "pointer":
            continue
        else:
            out[name] = v
    return out


def string(cstr):
    return None if cstr == ffi.NULL else ffi.string(cstr).decode(errors="replace")


def in_array(a, dtype=np.float64, shape=None, name="array"):
    """(array, pointer) for reading: the caller's array itself when it is
    C-contiguous of `dtype` (no copy), else a converted copy."""
    arr = np.ascontiguousarray(a, dtype=dtype)
    if shape is not None and arr.size != int(np.prod(shape)):
        raise ValueError(f"{name}: {arr.size} values, expected {int(np.prod(shape))} (shape {shape})")
    ctype = "double[]" if dtype == np.float64 else ("int64_t[]" if dtype == np.int64 else "int[]")
    return arr, (ffi.from_buffer(ctype, arr) if arr.size else ffi.NULL)


def out_array(out, shape, dtype=np.float64, name="out"):
    """(array, pointer) to write into: `out` itself when given (it must be
    C-contiguous, writable, of `dtype` and the right size: no copy is made),
    else a new array."""
    if out is None:
        out = np.empty(shape, dtype=dtype)
    else:
        if not isinstance(out, np.ndarray) or out.dtype != dtype or not out.flags.c_contiguous \
                or not out.flags.writeable:
            raise ValueError(f"{name}: must be a writable C-contiguous {np.dtype(dtype).name} array")
        if out.size != int(np.prod(shape)):
            raise ValueError(f"{name}: {out.size} entries, expected {int(np.prod(shape))}")
    ctype = "double[]" if dtype == np.float64 else ("int64_t[]" if dtype == np.int64 else "int[]")
    return out, (ffi.from_buffer(ctype, out, require_writable=True) if out.size else ffi.NULL)


def _destroy(fn, ptr_box, keepalive):
    # Runs from the garbage collector, possibly while cffi holds its parser
    # lock (inside ffi.new): so nothing here may look up a name in lib or
    # parse a type. fn was looked up when the object was made.
    fn(ptr_box)


class Handle:
    """An owned C object. `close()` (or leaving a `with` block, or garbage
    collection) calls its destroy function once. The wrapper keeps its
    parents (and the callbacks the C object may call) alive until then;
    the C library holds its own references, so parents may be closed first."""

    _ctype = None
    _destroy_fn = None

    def _adopt(self, box, parents=(), keepalive=()):
        """Own the object in `box` (a `T **` the create call filled)."""
        self._box = box
        self._parents = tuple(parents)
        self._keepalive = list(keepalive)
        self._finalizer = weakref.finalize(self, _destroy, getattr(lib, self._destroy_fn), box,
                                           self._keepalive)

    @property
    def _ptr(self):
        box = getattr(self, "_box", None)
        if box is None or box[0] == ffi.NULL:
            raise ValueError(f"{type(self).__name__} is closed")
        return box[0]

    @property
    def closed(self):
        box = getattr(self, "_box", None)
        return box is None or box[0] == ffi.NULL

    def close(self):
        if getattr(self, "_finalizer", None) is not None:
            self._finalizer()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __repr__(self):
        return f"<feaccel.{type(self).__name__}{' (closed)' if self.closed else ''}>"


def create(ctype, fn_name, *args):
    """Call a create function whose last argument is `ctype **out`; return the box."""
    box = ffi.new(ctype + " **")
    call(fn_name, *args, box)
    return box
