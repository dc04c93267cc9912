"""Context: one backend, its threads, memory budget, log (and, where the
headers declare it, progress) callbacks."""
from . import _callbacks
from ._core import Handle, call, create, ffi, has, lib, new_struct, string, to_dict

LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG = 0, 1, 2, 3


class Context(Handle):
    """fea_context. `Context()` takes FEACCEL_BACKEND or the best backend;
    `Context("/cpu/threads:threads=2")` names one. Objects made from it keep
    it alive."""

    _destroy_fn = "fea_context_destroy"

    def __init__(self, resource=None):
        res = ffi.NULL if resource is None else resource.encode()
        self._adopt(create("fea_context", "fea_context_create", res))
        self._log_cb = None
        self._progress_cb = None

    @property
    def num_threads(self):
        n = ffi.new("int *")
        call("fea_context_get_num_threads", self._ptr, n)
        return n[0]

    @num_threads.setter
    def num_threads(self, n):
        call("fea_context_set_num_threads", self._ptr, int(n))

    @property
    def memory_limit(self):
        b = ffi.new("uint64_t *")
        call("fea_context_get_memory_limit", self._ptr, b)
        return b[0]

    @memory_limit.setter
    def memory_limit(self, nbytes):
        call("fea_context_set_memory_limit", self._ptr, int(nbytes))

    def info(self):
        """fea_context_get_info as a dict (backend, threads, cpu, blas, ...)."""
        p = new_struct("fea_context_info")
        call("fea_context_get_info", self._ptr, p)
        return to_dict(p)

    def last_error(self):
        return string(lib.fea_context_last_error(self._ptr))

    def set_log_callback(self, fn, max_level=LOG_WARN):
        """fn(level, message) receives the library's messages up to max_level;
        None removes it. The callback may run on the library's threads."""
        cb = None if fn is None else _callbacks.c_callback("fea_log_fn", fn)
        call("fea_context_set_log_callback", self._ptr, max_level, cb if cb is not None else ffi.NULL,
             ffi.NULL)
        self._log_cb = cb
        self._keepalive.append(cb)

    def set_progress_callback(self, fn, interval_s=0.0):
        """fn(phase, fraction) hears the progress of long work (setups, CG) on
        the calling thread, at most every interval_s seconds within a phase; a
        true return value (or an exception) cancels the running call, which
        raises Error with status FEA_ERR_CANCELLED. None removes it. Only
        where the library's headers declare fea_context_set_progress_callback."""
        if not has("fea_context_set_progress_callback"):
            raise NotImplementedError("this libfeaccel has no progress callback")
        cb = None if fn is None else _callbacks.c_callback("fea_progress_fn", fn)
        call("fea_context_set_progress_callback", self._ptr, cb if cb is not None else ffi.NULL,
             ffi.NULL, float(interval_s))
        self._progress_cb = cb
        self._keepalive.append(cb)


def backends():
    """fea_backend_list: every backend this build knows, as dicts."""
    count = ffi.new("size_t *")
    call("fea_backend_list", ffi.NULL, 0, count)
    n = count[0]
    arr = ffi.new("fea_backend_info[]", n)
    for i in range(n):
        arr[i].size = ffi.sizeof("fea_backend_info")
    call("fea_backend_list", arr, n, count)
    return [to_dict(arr[i]) for i in range(n)]


def version():
    """The library's run-time version string."""
    return string(lib.fea_version_string())


def status_string(status):
    return string(lib.fea_status_string(status))


def precision_name(prec):
    return string(lib.fea_precision_name(prec))


def precision_size(prec):
    b = ffi.new("size_t *")
    call("fea_precision_size", prec, b)
    return b[0]
