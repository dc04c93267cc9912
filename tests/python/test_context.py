"""Context, backends, versions, errors as exceptions with the library's message."""
import gc

import numpy as np
import pytest

import feaccel as fa


def test_version_matches_headers():
    from feaccel import _generated

    assert fa.version() == _generated.STRINGS["FEA_VERSION_STRING"]
    assert fa.__version__ == fa.version()


def test_backends_lists_the_reference_backend():
    names = {b["prefix"]: b for b in fa.backends()}
    assert names["/cpu/ref"]["built"] == 1 and names["/cpu/ref"]["usable"] == 1


def test_context_info_and_threads(ctx):
    info = ctx.info()
    assert info["backend"] == "/cpu/ref"
    assert info["num_threads"] == ctx.num_threads == 1
    ctx.memory_limit = 1 << 30
    assert 0 < ctx.memory_limit <= 1 << 30


def test_bad_resource_raises_with_library_message():
    with pytest.raises(fa.Error) as e:
        fa.Context("/cpu/nonesuch")
    assert e.value.status < 0
    assert e.value.status_name.startswith("FEA_ERR_")
    assert "nonesuch" in e.value.message
    assert e.value.message == fa.last_error()


def test_error_carries_status_and_message(ctx):
    with pytest.raises(fa.Error) as e:
        ctx.num_threads = 2  # /cpu/ref runs one thread
    assert e.value.status == fa.lib.FEA_ERR_UNSUPPORTED
    assert e.value.status_name == "FEA_ERR_UNSUPPORTED"
    assert "fea_context_set_num_threads" in e.value.message
    assert str(e.value).startswith("FEA_ERR_UNSUPPORTED: ")


def test_status_and_precision_names():
    assert fa.status_string(-2) == "FEA_ERR_DIMENSION"
    assert fa.precision_name(fa.F32) == "f32"
    assert fa.precision_size(fa.F16) == 2
    with pytest.raises(fa.Error):
        fa.precision_size(99)


def test_context_manager_and_close(ctx):
    with fa.Context("/cpu/ref") as c:
        assert not c.closed
    assert c.closed
    with pytest.raises(ValueError, match="closed"):
        c.num_threads
    c.close()  # twice is harmless


def test_child_keeps_parent_alive():
    c = fa.Context("/cpu/ref")
    v = fa.Vector(c, 4, data=np.arange(4.0))
    del c
    gc.collect()
    assert v.ctx.info()["backend"] == "/cpu/ref"
    np.testing.assert_array_equal(v.read(), np.arange(4.0))
    # Closing the parent first is allowed: the C object is reference counted.
    v.ctx.close()
    assert v.norm() == pytest.approx(np.sqrt(14.0))


def test_log_callback_receives_warnings():
    messages = []
    with fa.Context("/cpu/threads:threads=1") as c:
        c.set_log_callback(lambda level, msg: messages.append((level, msg)), fa.LOG_INFO)
        c.num_threads = 1000  # more threads than the machine has: a warning
        c.num_threads = 1
        c.set_log_callback(None)
    assert any(level == fa.LOG_WARN and "1000" in msg for level, msg in messages), messages


def test_raw_api_is_reachable():
    n = fa.ffi.new("int[3]")
    assert fa.lib.fea_version(n, n + 1, n + 2) == 0
    assert ".".join(str(n[i]) for i in range(3)) == fa.version()


@pytest.mark.skipif(not fa._core.has("fea_context_set_progress_callback"),
                    reason="this libfeaccel's headers have no progress callback")
def test_progress_callback_reports_and_cancels():
    with fa.Context("/cpu/ref") as c:
        V = fa.Space.bspline(c, 2, n=(16, 16))
        P = fa.Problem(V)
        seen = []
        c.set_progress_callback(lambda phase, fraction: seen.append((phase, fraction)))
        fa.Solver.multifrontal(P).setup()
        assert seen and all(0 <= f <= 1 for _, f in seen)
        assert any(f == 1 for _, f in seen)
        c.set_progress_callback(lambda phase, fraction: fraction > 0)  # cancel once under way
        S = fa.Solver.multifrontal(P)
        with pytest.raises(fa.Error) as e:
            S.setup()
        assert e.value.status_name == "FEA_ERR_CANCELLED"
        c.set_progress_callback(None)
        S.setup()  # a later setup starts afresh
        S.close()


def test_cuda_module_sits_beside_the_library():
    """In a CUDA build the wheel carries /gpu/cuda's module next to
    libfeaccel.so, where the library looks for it (python/meson.build)."""
    import os

    libdir = os.path.dirname(fa.library_path)
    if not os.path.exists(os.path.join(libdir, "libfeaccel-cuda.so")):
        pytest.skip("built without CUDA (-Dcuda=disabled or no nvcc)")
    cuda = {b["prefix"]: b for b in fa.backends()}["/gpu/cuda"]
    assert cuda["built"] == 1
    assert "cannot load its module" not in cuda["reason"], cuda["reason"]
