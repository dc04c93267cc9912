"""Multipatch domains, their problems and the multipatch solver."""
import numpy as np
import pytest
from conftest import exact, exact_grad, source

import feaccel as fa


def test_two_patches_match_one(ctx):
    left = fa.Space.bspline(ctx, 2, n=(4, 8), lower=(0, 0), upper=(0.5, 1))
    right = fa.Space.bspline(ctx, 2, n=(4, 8), lower=(0.5, 0), upper=(1, 1))
    with fa.Multipatch(ctx, [left, right]) as mp:
        info = mp.info()
        assert info["num_patches"] == 2 and info["num_interfaces"] == 1
        assert info["num_boundary_sides"] == 6
        assert mp.interfaces()[0]["side"] == [fa.EAST, fa.WEST]
        assert len(mp.boundary_sides()) == 6
        assert mp.patch_dofs(0).max() < info["num_dofs"]
        P = fa.MultipatchProblem(mp, source=source, dirichlet=exact)
        S = P.solver().setup()
        u = P.expand_solution(S.solve())
        A, b = P.assemble_reference()
        np.testing.assert_allclose(A @ S.solve(b), b, atol=1e-10)
        l2, h1 = P.error_norms(u, exact, exact_grad)
        assert l2 < 1e-3 and h1 < 1e-1
        assert S.stats()["num_patches"] == 2


def test_multigrid_matches_the_direct_solver(ctx):
    left = fa.Space.bspline(ctx, 3, n=(8, 16), lower=(0, 0), upper=(0.5, 1))
    right = fa.Space.bspline(ctx, 3, n=(8, 16), lower=(0.5, 0), upper=(1, 1))
    with fa.Multipatch(ctx, [left, right]) as mp:
        P = fa.MultipatchProblem(mp, source=source, dirichlet=exact)
        direct = P.solver().setup().solve()
        mg = P.multigrid(rtol=1e-12, smoother=fa.lib.FEA_MG_SMOOTHER_SCHWARZ).setup()
        np.testing.assert_allclose(mg.solve(), direct, rtol=0, atol=1e-9 * np.abs(direct).max())
        st = mg.stats()
        assert 0 < st["iterations"] <= 20 and st["num_levels"] >= 3


def test_overlapping_patches_refused(ctx):
    a = fa.Space.bspline(ctx, 2, n=(4, 4))
    b = fa.Space.bspline(ctx, 2, n=(4, 4))
    with pytest.raises(fa.Error) as e:
        fa.Multipatch(ctx, [a, b])
    assert e.value.status == fa.lib.FEA_ERR_INVALID_ARG
