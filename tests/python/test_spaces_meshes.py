"""Mesh, Space (B-spline, NURBS, Lagrange), Geometry and GeometryFile."""
import os

import numpy as np
import pytest

import feaccel as fa

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_structured_mesh_arrays(ctx):
    m = fa.Mesh.structured(ctx, (3, 2), upper=(3.0, 2.0))
    info = m.info()
    assert info == {"dim": 2, "cell_type": fa.QUAD, "num_nodes": 12, "num_cells": 6}
    X = m.coordinates
    assert X.shape == (12, 2) and X.max(axis=0).tolist() == [3.0, 2.0]
    assert m.cells.shape == (6, 4) and m.cells.max() == 11
    fine = m.refine()
    assert fine.info()["num_cells"] == 24
    assert fine.parents().max() == 5


def test_mapped_mesh_map_is_called_once_vectorized(ctx):
    calls = []

    def shear(X):
        calls.append(X.shape)
        return np.stack([X[:, 0] + 0.5 * X[:, 1], X[:, 1]], axis=1)

    m = fa.Mesh.structured(ctx, (4, 4), map=shear)
    assert calls == [(25, 2)]
    X = m.coordinates
    assert X[:, 0].max() == pytest.approx(1.5)


def test_mesh_from_arrays_and_vtu(ctx, tmp_path):
    coords = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=float)
    cells = np.array([[0, 1, 2], [1, 3, 2]])
    m = fa.Mesh.from_arrays(ctx, coords, cells, fa.TRIANGLE)
    assert m.info()["num_cells"] == 2
    m.write_vtu(tmp_path / "m.vtu", node_fields={"x": coords[:, 0]}, cell_fields={"id": [0.0, 1.0]})
    assert "UnstructuredGrid" in (tmp_path / "m.vtu").read_text()
    with pytest.raises(fa.Error) as e:
        fa.Mesh.from_arrays(ctx, coords, np.array([[0, 1, 7]]), fa.TRIANGLE)
    assert e.value.status == fa.lib.FEA_ERR_INVALID_ARG and "7" in e.value.message


def test_gmsh_mesh(ctx):
    m = fa.Mesh.read_gmsh(ctx, os.path.join(ROOT, "tests", "data", "square-sides-tri.msh"))
    info = m.info()
    assert info["dim"] == 2 and info["cell_type"] == fa.TRIANGLE and info["num_cells"] > 0
    groups = m.boundary_groups()
    assert groups[1] == ("west", 10) and groups[4][0] == "north"
    # P1 on it: u = x + y is reproduced exactly.
    V = fa.Space.lagrange(m, 1)
    u_ex = lambda X: X[:, 0] + X[:, 1]  # noqa: E731
    P = fa.Problem(V, dirichlet=u_ex)
    A, b = P.assemble_reference()
    u = P.expand_solution(np.linalg.solve(A.to_dense(), b))
    assert P.error_norms(u, u_ex)[0] < 1e-12


def test_bspline_space(ctx, tmp_path):
    V = fa.Space.bspline(ctx, 3, n=(4, 5))
    info = V.info()
    assert info["is_bspline"] == 1 and info["degree"][:2] == [3, 3]
    assert V.num_dofs == 7 * 8 and V.num_elements == 20
    assert V.knots(0).tolist() == [0, 0, 0, 0, 0.25, 0.5, 0.75, 1, 1, 1, 1]
    assert len(V.element_dofs(0)) == 16
    assert len(V.boundary_dofs()) == info["num_boundary_dofs"]
    # Interpolation is exact for a polynomial of degree <= 3, and evaluate reproduces it.
    f = lambda X: X[:, 0] ** 3 - 2 * X[:, 0] * X[:, 1] ** 2  # noqa: E731
    c = V.interpolate(f)
    pts = np.random.default_rng(1).random((10, 2))
    vals, grads = V.evaluate(c, pts, gradients=True)
    np.testing.assert_allclose(vals, f(pts), atol=1e-12)
    np.testing.assert_allclose(grads[:, 0], 3 * pts[:, 0] ** 2 - 2 * pts[:, 1] ** 2, atol=1e-10)
    # Refinement keeps the function.
    W = V.insert_knots(0, [0.1, 0.6])
    assert W.num_dofs == 9 * 8
    np.testing.assert_allclose(W.evaluate(V.transfer(c, W), pts), f(pts), atol=1e-12)
    E = V.elevate_degree(1, 1)
    assert E.info()["degree"][1] == 4
    V.write_vtu(c, tmp_path / "u.vtu", samples=2)
    assert 'Name="u"' in (tmp_path / "u.vtu").read_text()
    colors, n = V.color_elements()
    assert n >= 1
    V.check_coloring(colors)


def test_bad_degree_raises(ctx):
    with pytest.raises(fa.Error) as e:
        fa.Space.bspline(ctx, 11, n=(4, 4))
    assert e.value.status == fa.lib.FEA_ERR_INVALID_ARG
    assert "11" in e.value.message


def test_lagrange_space(ctx):
    m = fa.Mesh.structured(ctx, (4, 4))
    V = fa.Space.lagrange(m, 2)
    assert V.num_dofs == 9 * 9
    del m  # the space keeps its mesh
    assert V.info()["dofs_per_element"] == 9


def test_geometry_file_matches_arrays(ctx):
    path = os.path.join(ROOT, "examples", "data", "quarter_annulus.xml")
    with fa.GeometryFile(ctx, path) as f:
        assert len(f) == 1
        g = f.patch(0)
        assert g.degrees == [1, 2]
        assert g.control_points.shape == (6, 2)
        np.testing.assert_allclose(g.weights[2], np.sqrt(0.5))
        assert isinstance(f.interfaces(), list) and isinstance(f.boundary_sides(), list)
        assert isinstance(f.multipatch(), list)
    with pytest.raises(fa.Error) as e:
        fa.GeometryFile(ctx, "/nonexistent.xml")
    assert e.value.status == fa.lib.FEA_ERR_IO and "nonexistent" in e.value.message
