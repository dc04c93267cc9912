"""Vector and NumPy round trips, with and without copies."""
import numpy as np
import pytest

import feaccel as fa


def test_vector_round_trip_and_blas(ctx):
    a = np.linspace(0, 1, 7)
    x = fa.Vector(ctx, 7, data=a)
    y = fa.Vector.from_array(ctx, np.ones(7))
    assert len(x) == 7 and x.precision == fa.F64
    np.testing.assert_array_equal(x.read(), a)
    y.axpy(2.0, x)
    np.testing.assert_allclose(y.read(), 1 + 2 * a)
    y.scale(0.5)
    assert y.dot(x) == pytest.approx(np.dot(0.5 + a, a))
    assert x.norm() == pytest.approx(np.linalg.norm(a))
    z = fa.Vector(ctx, 7)
    z.copy_from(x)
    np.testing.assert_array_equal(z.read(), a)
    z.fill(3.0)
    assert (z.read() == 3.0).all()


def test_read_into_caller_array_without_copy(ctx):
    x = fa.Vector(ctx, 5, data=np.arange(5.0))
    out = np.empty(5)
    got = x.read(out)
    assert got is out
    np.testing.assert_array_equal(out, np.arange(5.0))


def test_precisions_convert(ctx):
    x = fa.Vector(ctx, 3, fa.F32, data=np.array([1.0, 2.5, -3.0]))
    assert x.precision == fa.F32
    np.testing.assert_array_equal(x.read(dtype=np.float32), np.float32([1.0, 2.5, -3.0]))
    h = fa.Vector.from_array(ctx, np.float16([0.5, 1.5]))
    assert h.precision == fa.F16
    np.testing.assert_array_equal(h.read(), [0.5, 1.5])


def test_vector_errors_carry_the_message(ctx):
    x, y = fa.Vector(ctx, 3), fa.Vector(ctx, 4)
    with pytest.raises(fa.Error) as e:
        y.axpy(1.0, x)
    assert e.value.status == fa.lib.FEA_ERR_DIMENSION
    assert "fea_vector_axpy" in e.value.message
    with pytest.raises(fa.Error) as e:
        x.write(np.zeros(5))
    assert e.value.status == fa.lib.FEA_ERR_DIMENSION
    with pytest.raises(ValueError):
        x.read(np.empty(4))


def test_solver_solve_writes_into_out_without_copy(ctx):
    V = fa.Space.bspline(ctx, 2, n=(6, 6))
    P = fa.Problem(V)
    S = fa.Solver.multifrontal(P).setup()
    A, b = P.assemble_reference()
    n = P.num_free_dofs
    out = np.empty(n)
    x = S.solve(b, out=out)
    assert x is out and np.shares_memory(x, out)
    np.testing.assert_allclose(A @ x, b, atol=1e-12)
    # Several right-hand sides in one call, columns contiguous (Fortran order).
    B = np.asfortranarray(np.stack([b, 2 * b, -b], axis=1))
    X = np.empty_like(B)
    got = S.solve(B, out=X)
    assert got is X
    np.testing.assert_allclose(X[:, 1], 2 * x, rtol=1e-12, atol=1e-14)
    # In place: x may be b.
    bb = b.copy()
    S.solve(bb, out=np.asfortranarray(bb))
    np.testing.assert_allclose(bb, x, rtol=1e-12, atol=1e-14)


def test_inputs_are_passed_without_copy(ctx):
    """A C-contiguous float64 input reaches C as the same memory."""
    from feaccel._core import in_array

    a = np.arange(6.0)
    arr, ptr = in_array(a)
    assert arr is a
    assert int(fa.ffi.cast("uintptr_t", ptr)) == a.ctypes.data
    b = np.arange(12.0)[::2]  # strided: converted
    arr, ptr = in_array(b)
    assert arr is not b and not np.shares_memory(arr, b)


def test_expand_solution_out(ctx):
    V = fa.Space.bspline(ctx, 2, n=(4, 4))
    P = fa.Problem(V, dirichlet=1.0)
    u = np.empty(V.num_dofs)
    got = P.expand_solution(np.zeros(P.num_free_dofs), out=u)
    assert got is u
    np.testing.assert_allclose(u[V.boundary_dofs()], 1.0)
