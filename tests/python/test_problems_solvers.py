"""Problem, Matrix, assembly, the solvers (multifrontal, multigrid,
prehandled, CG over an Operator) and the vectorized callbacks, checked
against exact solutions, convergence orders and the C path."""
import numpy as np
import pytest
from conftest import exact, exact_grad, source

import feaccel as fa


def solve_mf(ctx, p, n, **kw):
    V = fa.Space.bspline(ctx, p, n=(n, n))
    P = fa.Problem(V, source=source, dirichlet=exact, **kw)
    u = P.expand_solution(fa.Solver.multifrontal(P).setup().solve())
    return P.error_norms(u, exact, exact_grad)


def test_multifrontal_orders(ctx):
    p = 2
    (l2a, h1a), (l2b, h1b) = solve_mf(ctx, p, 8), solve_mf(ctx, p, 16)
    assert np.log2(l2a / l2b) == pytest.approx(p + 1, abs=0.25)
    assert np.log2(h1a / h1b) == pytest.approx(p, abs=0.25)


def test_vectorized_equals_c_path(ctx):
    """The element-form path (NumPy) against the library's own integration of
    per-point callbacks: the same quadrature, so the same solution."""
    V = fa.Space.bspline(ctx, 3, n=(8, 8))
    sigma = lambda X: 1 + X[:, 0] ** 2  # noqa: E731
    c = lambda X: 0.5 + X[:, 1]  # noqa: E731
    u = {}
    for pw in (False, True):
        P = fa.Problem(V, sigma=sigma, reaction=c, source=source, dirichlet=exact, pointwise=pw)
        u[pw] = fa.Solver.multifrontal(P).setup().solve()
    np.testing.assert_allclose(u[False], u[True], rtol=1e-12, atol=1e-13)
    # Anisotropic tensor against sigma I.
    T = lambda X: np.einsum("q,ij->qij", sigma(X), np.eye(2))  # noqa: E731
    P = fa.Problem(V, tensor=T, reaction=c, source=source, dirichlet=exact)
    np.testing.assert_allclose(fa.Solver.multifrontal(P).setup().solve(), u[True], rtol=1e-12,
                               atol=1e-13)


def test_callbacks_are_called_on_batches(ctx):
    p, n = 2, 6
    shapes = {"f": [], "g": [], "exact": [], "grad": []}

    def rec(name, fn):
        def wrapped(X):
            shapes[name].append(X.shape)
            return fn(X)
        return wrapped

    V = fa.Space.bspline(ctx, p, n=(n, n))
    P = fa.Problem(V, source=rec("f", source), dirichlet=rec("g", exact))
    u = P.expand_solution(fa.Solver.multifrontal(P).setup().solve())
    P.error_norms(u, rec("exact", exact), rec("grad", exact_grad))
    nq = (p + 1) ** 2
    assert shapes["f"] and all(s == (nq, 2) for s in shapes["f"])
    assert len(shapes["f"]) <= 2 * n * n  # one call per element (per consumer)
    assert len(shapes["g"]) == 1 and shapes["g"][0][0] >= 4 * n  # one call, every boundary DoF
    assert len(shapes["exact"]) == 1 and shapes["exact"][0][0] >= n * n * nq
    assert len(shapes["grad"]) == 1 and shapes["grad"][0][1] == 2


def test_callback_exception_propagates(ctx):
    V = fa.Space.bspline(ctx, 2, n=(4, 4))

    def bad(X):
        raise RuntimeError("boom in f")

    P = fa.Problem(V, source=bad)
    S = fa.Solver.multifrontal(P)
    with pytest.raises(RuntimeError, match="boom in f") as e:
        S.setup()
    assert isinstance(e.value.__cause__, fa.Error)
    # A value the library refuses: sigma not positive, the point named.
    P = fa.Problem(V, sigma=lambda X: -np.ones(len(X)), pointwise=True)
    with pytest.raises(fa.Error) as e:
        fa.Solver.multifrontal(P).setup()
    assert e.value.status == fa.lib.FEA_ERR_INVALID_ARG and "sigma" in e.value.message


def test_neumann_and_robin_fluxes(ctx):
    """u = x + y on the unit square: Neumann h = du/dn = 1 on east, Robin
    alpha u + du/dn on north; p = 1 reproduces u exactly."""
    u_ex = lambda X: X[:, 0] + X[:, 1]  # noqa: E731
    V = fa.Space.bspline(ctx, 1, n=(4, 4))
    sides = {fa.EAST: fa.BC.neumann(1.0),
             fa.NORTH: fa.BC.robin(2.0, lambda X: 2 * (X[:, 0] + X[:, 1]) + 1)}
    P = fa.Problem(V, dirichlet=u_ex, sides=sides)
    u = P.expand_solution(fa.Solver.multifrontal(P).setup().solve())
    l2, _ = P.error_norms(u, u_ex)
    assert l2 < 1e-12


def test_matrix_and_assembly(ctx, tmp_path):
    V = fa.Space.bspline(ctx, 2, n=(5, 5))
    P = fa.Problem(V, source=source, dirichlet=exact)
    A, b = P.assemble_reference()
    n = P.num_free_dofs
    assert A.shape == (n, n) and A.nnz > n
    rp, ci, v = A.csr()
    assert rp[-1] == A.nnz and len(ci) == len(v) == A.nnz
    D = A.to_dense()
    np.testing.assert_allclose(D, D.T, atol=1e-13)
    x = np.random.default_rng(0).random(n)
    np.testing.assert_allclose(A @ x, D @ x, atol=1e-12)
    A2, b2, stats = P.assemble()
    np.testing.assert_allclose(A2.to_dense(), D, atol=1e-12)
    np.testing.assert_allclose(b2, b, atol=1e-12)
    Ad, bd, _ = P.assemble_dense()
    np.testing.assert_allclose(Ad, D, atol=1e-12)
    A.write_mtx(tmp_path / "A.mtx")
    lines = (tmp_path / "A.mtx").read_text().splitlines()
    assert lines[0].startswith("%%MatrixMarket matrix coordinate real general")
    data = [line for line in lines if not line.startswith("%")]
    assert [int(t) for t in data[0].split()] == [n, n, A.nnz]
    fa.write_mtx_array(ctx, b, tmp_path / "b.mtx")
    data = [line for line in (tmp_path / "b.mtx").read_text().splitlines() if not line.startswith("%")]
    assert data[0].split() == [str(n), "1"]
    np.testing.assert_allclose([float(t) for t in data[1:]], b, rtol=1e-15)
    Ke, fe = P.element_system(0)
    assert Ke.shape == (9, 9) and fe.shape == (9,)
    assert P.element_mass(0).sum() == pytest.approx(1 / 25)
    with pytest.raises(fa.Error) as e:
        P.element_system(10 ** 6)
    assert e.value.status == fa.lib.FEA_ERR_INVALID_ARG


def test_operator_and_cg(ctx):
    V = fa.Space.bspline(ctx, 2, n=(8, 8))
    P = fa.Problem(V, source=source, dirichlet=exact)
    A, b = P.assemble_reference()
    x = np.random.default_rng(2).random(P.num_free_dofs)
    for kind in (fa.CSR, fa.MATFREE_ELEMENT_MATRIX, fa.MATFREE_SUMFACT):
        with fa.Operator(P, kind=kind) as op:
            np.testing.assert_allclose(op @ x, A @ x, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(op.rhs(), b, rtol=1e-10, atol=1e-12)
            assert op.info()["rows"] == P.num_free_dofs
    op = fa.Operator(P, kind=fa.CSR)
    del P  # the operator keeps the problem's callbacks alive
    np.testing.assert_allclose(op.diagonal(), np.diag(A.to_dense()), rtol=1e-12)
    lo, hi = op.eigenvalues(50)
    assert 0 < lo < hi
    u, stats = op.cg(rtol=1e-12, history=500)
    assert stats["converged"] == 1 and len(stats["history"]) == stats["iterations"] + 1
    np.testing.assert_allclose(A @ u, b, atol=1e-8)
    with pytest.warns(fa.NotConvergedWarning):
        op.cg(max_iterations=2)


def test_multigrid_orders_and_stats(ctx):
    errs = []
    for n in (8, 16):
        m = fa.Mesh.structured(ctx, (n, n))
        V = fa.Space.lagrange(m, 1)
        P = fa.Problem(V, source=source, dirichlet=exact)
        S = fa.Solver.multigrid(P, paper=True, rtol=1e-11).setup()
        u = P.expand_solution(S.solve())
        assert S.stats()["converged"] == 1
        errs.append(P.error_norms(u, exact, exact_grad))
    assert np.log2(errs[0][0] / errs[1][0]) == pytest.approx(2, abs=0.3)
    assert np.log2(errs[0][1] / errs[1][1]) == pytest.approx(1, abs=0.3)


def test_prehandled_solves_the_system(ctx):
    m = fa.Mesh.structured(ctx, (16, 16))
    V = fa.Space.lagrange(m, 1)
    P = fa.Problem(V, dirichlet=exact)
    A, b = P.assemble_reference()
    S = fa.Solver.prehandled(P).setup()
    u = S.solve(b)
    assert np.linalg.norm(A @ u - b) <= 1e-8 * np.linalg.norm(b)
    assert len(S.stats()) > 1
    # The prehandled solver builds its own blocks and refuses element forms, so
    # a source goes to it through the per-point callbacks (pointwise=True).
    with pytest.raises(fa.Error) as e:
        fa.Solver.prehandled(fa.Problem(V, source=source, dirichlet=exact))
    assert e.value.status == fa.lib.FEA_ERR_UNSUPPORTED and "element form" in e.value.message
    P = fa.Problem(V, source=source, dirichlet=exact, pointwise=True)
    A, b = P.assemble_reference()
    u = fa.Solver.prehandled(P).setup().solve()
    assert np.linalg.norm(A @ u - b) <= 1e-8 * np.linalg.norm(b)


def test_solver_state_error(ctx):
    V = fa.Space.bspline(ctx, 2, n=(4, 4))
    S = fa.Solver.multifrontal(fa.Problem(V))
    with pytest.raises(fa.Error) as e:
        S.solve()
    assert e.value.status == fa.lib.FEA_ERR_STATE
    S.setup()
    st = S.stats()
    assert st["num_levels"] >= 1 and st["flops"] > 0
    assert S.level(0)["nodes"] >= 1 and S.node(0)["level"] == 0
    with pytest.raises(fa.Error):
        S.boundary_schur()
    K = fa.Solver.multifrontal(S.problem, keep_boundary=1).setup()
    dofs, Sc = K.boundary_schur()
    assert Sc.shape == (len(dofs), len(dofs))
    np.testing.assert_allclose(Sc, Sc.T, atol=1e-10)


def test_set_problem_refactors(ctx):
    V = fa.Space.bspline(ctx, 2, n=(6, 6))
    S = fa.Solver.multifrontal(fa.Problem(V, source=1.0)).setup()
    u1 = S.solve()
    S.set_problem(fa.Problem(V, source=2.0))
    with pytest.raises(fa.Error):
        S.solve()
    np.testing.assert_allclose(S.setup().solve(), 2 * u1, rtol=1e-12)


def test_threads_call_callbacks_concurrently():
    with fa.Context("/cpu/threads:threads=2") as c:
        V = fa.Space.bspline(c, 2, n=(12, 12))
        u = {}
        for pw in (False, True):
            P = fa.Problem(V, sigma=lambda X: 1 + X[:, 0], source=source, dirichlet=exact,
                           pointwise=pw)
            u[pw] = fa.Solver.multifrontal(P).setup().solve()
        np.testing.assert_allclose(u[False], u[True], rtol=1e-11, atol=1e-12)


def test_cost_models_and_misc(ctx):
    assert fa.update_strategy_name(0)
    avail, reason = fa.tsx_available()
    assert isinstance(avail, bool) and isinstance(reason, str)
    assert fa.cost_memory_3d_paper(2, 1e6) > 0
    # The exact model counts what the solver's tree does.
    V = fa.Space.bspline(ctx, 2, n=(16, 16))
    S = fa.Solver.multifrontal(fa.Problem(V))
    exact = fa.cost_model_exact(ctx, dim=2, p=2, n=16)
    assert exact["flops"] == pytest.approx(S.stats()["flops"], rel=1e-12)
    paper = fa.cost_model_paper(dim=2, p=2, n=16)
    assert paper["flops"] > 0
    assert fa.cost_model_fits(ctx, 1 << 40, dim=2, p=2, n=16)
    assert not fa.cost_model_fits(ctx, 1, dim=2, p=2, n=16)
    speedup, eff = fa.cost_strong_scaling_paper(dim=2, p=2, n=16, nproc=4)
    assert speedup > 1 and 0 < eff <= 1
    with pytest.raises(fa.Error) as e:
        fa.cost_model_paper(dim=4, p=2, n=16)
    assert e.value.status == fa.lib.FEA_ERR_INVALID_ARG and "4" in e.value.message
