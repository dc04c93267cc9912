"""The cost models (cost.h) and the assembly helpers without an object."""
from ._core import call, ffi, new_struct, string, to_dict
from ._loader import lib


def cost_model_exact(ctx, **query):
    q = new_struct("fea_cost_query", **query)
    out = new_struct("fea_cost")
    call("fea_cost_model_exact", ctx._ptr, q, out)
    return to_dict(out)


def cost_model_paper(**query):
    q = new_struct("fea_cost_query", **query)
    out = new_struct("fea_cost")
    call("fea_cost_model_paper", q, out)
    return to_dict(out)


def cost_model_fits(ctx, nbytes, **query):
    q = new_struct("fea_cost_query", **query)
    fits = ffi.new("int *")
    call("fea_cost_model_fits", ctx._ptr, q, int(nbytes), fits)
    return bool(fits[0])


def cost_memory_3d_paper(p, N):
    b = ffi.new("double *")
    call("fea_cost_memory_3d_paper", int(p), float(N), b)
    return b[0]


def cost_strong_scaling_paper(**query):
    q = new_struct("fea_cost_query", **query)
    s, e = ffi.new("double *"), ffi.new("double *")
    call("fea_cost_strong_scaling_paper", q, s, e)
    return s[0], e[0]


def update_strategy_name(strategy):
    return string(lib.fea_update_strategy_name(strategy))


def tsx_available():
    """(available, reason)"""
    a = ffi.new("int *")
    r = ffi.new("char[]", 256)
    call("fea_tsx_available", a, r, 256)
    return bool(a[0]), ffi.string(r).decode()
