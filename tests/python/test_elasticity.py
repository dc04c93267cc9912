"""Linear elasticity from Python (docs/python.md, docs/problems.md "Linear
elasticity"): Lame's thick-walled cylinder on the exact NURBS quarter annulus
(plane strain, rollers, inner pressure) converging at orders p + 1 (L2) and p
(H1) with the multifrontal solver; uniaxial tension solved exactly, with its
stresses and von Mises stress in closed form; Lame parameters against E and
nu; the vectorized displacement and exact solutions; the VTU file's
displacement against the exact field; and the refusals (a pure traction
problem naming the rigid-body modes, a callback's exception)."""
import math
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import feaccel as fa

S = math.sqrt(0.5)
ANNULUS = fa.Geometry([1, 2], [[0, 0, 1, 1], [0, 0, 0, 1, 1, 1]],
                      [[1, 0], [2, 0], [1, 1], [2, 2], [0, 1], [0, 2]], [1, 1, S, S, 1, 1])

# Lame's cylinder, inner radius 1, outer 2, inner pressure P: u_r = A r + B / r.
E_L, NU_L, P_L = 1000.0, 0.3, 10.0
_K = P_L / (E_L * 3.0)
A_L, B_L = (1 + NU_L) * (1 - 2 * NU_L) * _K, (1 + NU_L) * 4.0 * _K


def lame_u(X):
    r2 = (X ** 2).sum(axis=1)
    return (A_L + B_L / r2)[:, None] * X


def lame_grad(X):
    r2 = (X ** 2).sum(axis=1)
    s = A_L + B_L / r2
    return s[:, None, None] * np.eye(2) - 2 * B_L * X[:, :, None] * X[:, None, :] / (r2 ** 2)[:, None, None]


# West: the inner arc, east: the outer arc, south: y = 0, north: x = 0.
LAME_SIDES = {fa.WEST: fa.Elastic.pressure(P_L), fa.EAST: fa.Elastic.free(),
              fa.SOUTH: fa.Elastic.displacement(components="y"),
              fa.NORTH: fa.Elastic.displacement(components="x")}


def lame_errors(ctx, p, n, sides=LAME_SIDES, **material):
    V = fa.Space.bspline(ctx, p, n=(n, n), geometry=ANNULUS)
    V.set_num_components(2)
    P = fa.Problem.elasticity(V, sides=sides, **(material or {"E": E_L, "nu": NU_L}))
    u = P.expand_solution(fa.Solver.multifrontal(P).setup().solve())
    calls = []

    def exact(X):
        calls.append(X.shape)
        return lame_u(X)

    l2, h1 = P.error_norms_vector(u, exact, lame_grad)
    # One vectorized call on every quadrature point, not one per point.
    assert len(calls) == 1 and calls[0][0] > n * n
    return l2, h1, P, u


def test_lame_cylinder_orders(ctx):
    p = 2
    l2a, h1a, _, _ = lame_errors(ctx, p, 8)
    l2b, h1b, P, u = lame_errors(ctx, p, 16)
    assert l2a.shape == (3,) and h1a.shape == (3,)
    ol2, oh1 = math.log2(l2a[2] / l2b[2]), math.log2(h1a[2] / h1b[2])
    assert abs(ol2 - (p + 1)) <= 0.15, ol2
    assert abs(oh1 - p) <= 0.15, oh1
    # Together is the root of the sum of the squares; the problem is
    # symmetric about the diagonal, so both components err alike.
    assert l2b[2] == pytest.approx(math.hypot(l2b[0], l2b[1]), rel=1e-12)
    assert h1b[2] == pytest.approx(math.hypot(h1b[0], h1b[1]), rel=1e-12)
    assert l2b[0] == pytest.approx(l2b[1], rel=1e-3)
    # The stresses at r = 1.5 on the diagonal (the patch's parameters (0.5,
    # 0.5)): sigma_rr = c (1 - 4 / r^2), sigma_tt = c (1 + 4 / r^2), c = P / 3,
    # so sigma_xx = sigma_yy = c, sigma_xy = -4 c / r^2, sigma_zz = 2 nu c.
    x, disp, stress, vm = P.evaluate_stress(u, [[0.5, 0.5]], full=True)
    np.testing.assert_allclose(x, [[1.5 * S, 1.5 * S]], atol=1e-12)
    np.testing.assert_allclose(disp, lame_u(x), rtol=1e-5)
    c = P_L / 3
    expect = [c, c, 2 * NU_L * c, 0, 0, -4 * c / 1.5 ** 2]
    # O(h^p) at a knot: 0.2 % here.
    np.testing.assert_allclose(stress[0], expect, rtol=0, atol=5e-3 * c)
    s = expect
    vm_exact = math.sqrt(((s[0] - s[1]) ** 2 + (s[1] - s[2]) ** 2 + (s[2] - s[0]) ** 2) / 2
                         + 3 * s[5] ** 2)
    assert vm[0] == pytest.approx(vm_exact, rel=5e-3)


def test_lame_parameters_and_pressure_function_match(ctx):
    """The Lame parameters of E and nu and a pressure given as a function
    give the constant E, nu, p solution's errors."""
    ref_l2, ref_h1, _, _ = lame_errors(ctx, 2, 4)
    mu = E_L / (2 * (1 + NU_L))
    lam = E_L * NU_L / ((1 + NU_L) * (1 - 2 * NU_L))
    l2, h1, _, _ = lame_errors(ctx, 2, 4, lam=lam, mu=mu)
    np.testing.assert_allclose(l2, ref_l2, rtol=1e-9)
    np.testing.assert_allclose(h1, ref_h1, rtol=1e-9)
    sides = dict(LAME_SIDES)
    sides[fa.WEST] = fa.Elastic.pressure(lambda X: np.full(len(X), P_L))
    l2, h1, _, _ = lame_errors(ctx, 2, 4, sides=sides, E=lambda X: np.full(len(X), E_L), nu=NU_L)
    np.testing.assert_allclose(l2, ref_l2, rtol=1e-9)
    np.testing.assert_allclose(h1, ref_h1, rtol=1e-9)


def test_pure_traction_refused_naming_rigid_modes(ctx):
    V = fa.Space.bspline(ctx, 2, n=(3, 3), num_components=2)
    sides = {s: fa.Elastic.traction() for s in (fa.WEST, fa.EAST, fa.SOUTH, fa.NORTH)}
    with pytest.raises(fa.Error) as e:
        fa.Problem.elasticity(V, E=200.0, nu=0.25, sides=sides)
    assert e.value.status_name == "FEA_ERR_INVALID_ARG"
    assert "translation in x, translation in y, rotation about z" in e.value.message
    # Rollers on two parallel sides leave the translation along them free.
    sides[fa.WEST] = sides[fa.EAST] = fa.Elastic.displacement("x")
    with pytest.raises(fa.Error, match=r"\(translation in y\)"):
        fa.Problem.elasticity(V, sides=sides)


def test_refusals(ctx):
    V = fa.Space.bspline(ctx, 2, n=(3, 3))
    with pytest.raises(fa.Error, match="components"):  # a scalar space
        fa.Problem.elasticity(V)
    with pytest.raises(fa.Error) as e:
        V.set_num_components(9)
    assert e.value.status_name == "FEA_ERR_INVALID_ARG"
    assert V.num_components == 1
    V.num_components = 2
    assert V.num_components == 2 and V.num_dofs == 2 * 25
    P = fa.Problem.elasticity(V)  # every side clamped (P holds V)
    with pytest.raises(fa.Error) as e:  # something is built on it now
        V.set_num_components(3)
    assert e.value.status_name == "FEA_ERR_STATE"
    assert P.num_free_dofs == 2 * 9
    with pytest.raises(ValueError, match="model"):
        fa.Problem.elasticity(V, model="plain_strain")
    with pytest.raises(ValueError, match="component"):
        fa.Elastic.displacement("w")
    with pytest.raises(fa.Error, match="nu"):
        fa.Problem.elasticity(V, nu=0.5)


def tension(ctx, model, h, dim=2):
    """A box [0, 2] x [0, 1] (x [0, 1]) pulled on its east side by the
    traction h (a constant vector or a function), rollers on west, south
    (and front): u_k = s_k x_k with the model's strains, exact in the space."""
    V = fa.Space.bspline(ctx, 2, n=(3,) * dim, lower=(0,) * dim, upper=(2,) + (1,) * (dim - 1),
                         num_components=dim)
    sides = {fa.WEST: fa.Elastic.displacement("x"), fa.SOUTH: fa.Elastic.displacement("y"),
             fa.EAST: fa.Elastic.traction(h), fa.NORTH: fa.Elastic.free()}
    if dim == 3:
        sides.update({fa.FRONT: fa.Elastic.displacement("z"), fa.BACK: fa.Elastic.free()})
    P = fa.Problem.elasticity(V, E=200.0, nu=0.25, model=model, sides=sides)
    return V, P, P.expand_solution(fa.Solver.multifrontal(P).setup().solve())


@pytest.mark.parametrize("model", ["plane_strain", "plane_stress", "3d"])
def test_uniaxial_tension_stresses_exact(ctx, model):
    E, nu, sigma = 200.0, 0.25, 3.0
    dim = 3 if model == "3d" else 2
    if model == "plane_strain":  # eps_zz = 0 makes sigma_zz = nu sigma
        s = np.array([sigma * (1 - nu * nu) / E, -sigma * nu * (1 + nu) / E])
        szz = nu * sigma
    else:
        s = np.array([sigma / E] + [-nu * sigma / E] * (dim - 1))
        szz = 0.0
    h = lambda X: np.tile([sigma] + [0.0] * (dim - 1), (len(X), 1))  # noqa: E731
    V, P, u = tension(ctx, "plane_strain" if dim == 3 else model, h, dim)
    l2, h1 = P.error_norms_vector(u, lambda X: X * s, lambda X: np.tile(np.diag(s), (len(X), 1, 1)))
    assert l2.shape == (dim + 1,)
    assert l2[dim] <= 1e-10 * sigma / E and h1[dim] <= 1e-9 * sigma / E, (l2, h1)
    rng = np.random.default_rng(1)
    pts = rng.random((7, dim)) * ([2.0] + [1.0] * (dim - 1))
    stress, vm = P.evaluate_stress(u, pts)
    assert stress.shape == (7, 6) and vm.shape == (7,)
    expect = np.zeros(6)
    expect[0] = sigma
    expect[2] = szz if dim == 2 else 0.0
    np.testing.assert_allclose(stress, np.tile(expect, (7, 1)), atol=1e-9 * sigma)
    sz = expect[2]
    vm_exact = math.sqrt(((sigma - 0) ** 2 + (0 - sz) ** 2 + (sz - sigma) ** 2) / 2)
    np.testing.assert_allclose(vm, vm_exact, rtol=1e-9)
    x, disp, stress2, _ = P.evaluate_stress(u, pts, full=True)
    np.testing.assert_allclose(x, pts, rtol=0, atol=1e-14)  # an unmapped box
    np.testing.assert_allclose(disp, pts * s, atol=1e-11 * sigma / E)
    np.testing.assert_array_equal(stress2, stress)
    # A constant traction vector gives the same solution.
    _, _, u2 = tension(ctx, "plane_strain" if dim == 3 else model, [sigma] + [0.0] * (dim - 1), dim)
    np.testing.assert_allclose(u2, u, atol=1e-12 * sigma / E)


def test_displacement_data_vectorized(ctx):
    """Every side clamped to g = a linear field and no load: the solution is
    g itself; g is called once, on every point the library asks for."""
    V = fa.Space.bspline(ctx, 2, n=(4, 4), num_components=2)
    Gm = np.array([[1e-3, 2e-3], [-5e-4, 3e-3]])
    calls = []

    def g(X):
        calls.append(len(X))
        return X @ Gm.T + [1e-3, -2e-3]

    P = fa.Problem.elasticity(V, E=10.0, nu=0.2, displacement=g)
    assert len(calls) == 1 and calls[0] > 1
    u = P.expand_solution(fa.Solver.multifrontal(P).setup().solve())
    l2, h1 = P.error_norms_vector(u, lambda X: X @ Gm.T + [1e-3, -2e-3],
                                  lambda X: np.broadcast_to(Gm, (len(X), 2, 2)))
    assert l2[2] < 1e-13 and h1[2] < 1e-12, (l2, h1)


def test_callback_exception_raised(ctx):
    V = fa.Space.bspline(ctx, 2, n=(3, 3), num_components=2)

    def f(X):
        raise RuntimeError("body force failed")

    P = fa.Problem.elasticity(V, body_force=f)
    with pytest.raises(RuntimeError, match="body force failed") as e:
        fa.Solver.multifrontal(P).setup()
    assert isinstance(e.value.__cause__, fa.Error)


def test_body_force_function_matches_constant(ctx):
    V = fa.Space.bspline(ctx, 2, n=(4, 4), num_components=2)
    sols = []
    for f in ([0.5, -1.0], lambda X: np.tile([0.5, -1.0], (len(X), 1))):
        P = fa.Problem.elasticity(V, E=3.0, nu=0.3, body_force=f)
        sols.append(P.expand_solution(fa.Solver.multifrontal(P).setup().solve()))
    assert np.abs(sols[0]).max() > 1e-3
    np.testing.assert_allclose(sols[1], sols[0], rtol=1e-12, atol=0)


def test_write_vtu_displacement(ctx, tmp_path):
    E, nu, sigma = 200.0, 0.25, 3.0
    _, P, u = tension(ctx, "plane_stress", [sigma, 0.0])
    path = tmp_path / "tension.vtu"
    P.write_vtu(u, path, samples=3)
    root = ET.parse(path).getroot()
    arrays = {a.get("Name"): a for a in root.iter("DataArray")}
    disp = arrays["displacement"]
    assert disp.get("NumberOfComponents") == "3"
    assert arrays["stress"].get("NumberOfComponents") == "6"
    pts = next(a for a in root.iter("Points")).find("DataArray")
    X = np.array(pts.text.split(), dtype=float).reshape(-1, 3)
    D = np.array(disp.text.split(), dtype=float).reshape(-1, 3)
    assert len(X) == 9 * 9  # 3 x 3 elements, 3 x 3 samples each
    s = np.array([sigma / E, -nu * sigma / E, 0.0])
    np.testing.assert_allclose(D, X * s, atol=1e-10 * sigma / E)
    with pytest.raises(fa.Error) as e:
        P.write_vtu(u, path, samples=1)
    assert e.value.status_name == "FEA_ERR_INVALID_ARG"


@pytest.mark.parametrize("file", ["square-sides-quad.msh", "square-sides-tri.msh"])
def test_gmsh_parts_tension_exact(ctx, file):
    """The unit square's groups (west 1, east 2, south 3, north 4): rollers on
    west (by name) and south (by tag), a pull as a pressure -sigma on east,
    north free; Q2 and P2 hold the plane strain solution exactly (CG on the
    CSR operator)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mesh = fa.Mesh.read_gmsh(ctx, os.path.join(root, "tests", "data", file))
    V = fa.Space.lagrange(mesh, 2, num_components=2)
    E, nu, sigma = 50.0, 0.3, 2.0
    parts = {"west": fa.Elastic.displacement("x"), 3: fa.Elastic.displacement("y"),
             "east": fa.Elastic.pressure(-sigma), "north": fa.Elastic.free()}
    P = fa.Problem.elasticity(V, E=E, nu=nu, parts=parts)
    u_free, stats = fa.Operator(P, kind=fa.CSR).cg(rtol=1e-13, max_iterations=20000, jacobi=1)
    u = P.expand_solution(u_free)
    s = np.array([sigma * (1 - nu * nu) / E, -sigma * nu * (1 + nu) / E])
    l2, h1 = P.error_norms_vector(u, lambda X: X * s, lambda X: np.tile(np.diag(s), (len(X), 1, 1)))
    assert l2[2] <= 1e-10 * sigma / E and h1[2] <= 1e-9 * sigma / E, (l2, h1)
    parts["west"] = fa.Elastic.free()
    with pytest.raises(fa.Error, match=r"\(translation in x\)"):
        fa.Problem.elasticity(V, E=E, nu=nu, parts=parts)
    parts["west"] = fa.Elastic.displacement("x")
    del parts[3]
    parts[42] = fa.Elastic.displacement("y")
    with pytest.raises(fa.Error, match="physical tag 42"):
        fa.Problem.elasticity(V, E=E, nu=nu, parts=parts)


def test_isotropic_tensor_as_C_matches_E_nu(ctx):
    """C given as the plane-strain isotropic Voigt tensor (a constant and a
    function) solves what E and nu solve."""
    mu = E_L / (2 * (1 + NU_L))
    lam = E_L * NU_L / ((1 + NU_L) * (1 - 2 * NU_L))
    C = np.array([[lam + 2 * mu, lam, 0], [lam, lam + 2 * mu, 0], [0, 0, mu]])
    ref_l2, ref_h1, _, ref_u = lame_errors(ctx, 2, 4)
    for c in (C, lambda X: np.broadcast_to(C, (len(X), 3, 3))):
        l2, h1, _, u = lame_errors(ctx, 2, 4, C=c)
        np.testing.assert_allclose(u, ref_u, rtol=0, atol=1e-12 * np.abs(ref_u).max())
        np.testing.assert_allclose(l2, ref_l2, rtol=1e-9)


def test_springs_hold_a_free_body(ctx):
    """Springs k on every side and a body force: no side is fixed, the
    springs remove the rigid-body modes; a stiffer spring moves the body
    less, and k = 0 is refused naming the modes."""
    V = fa.Space.bspline(ctx, 2, n=(4, 4), num_components=2)
    peak = []
    for k in (1.0, 100.0, lambda X: np.full(len(X), 100.0)):
        sides = {s: fa.Elastic.spring(k) for s in (fa.WEST, fa.EAST, fa.SOUTH, fa.NORTH)}
        P = fa.Problem.elasticity(V, E=10.0, nu=0.3, body_force=[1.0, 0.5], sides=sides)
        u = P.expand_solution(fa.Solver.multifrontal(P).setup().solve())
        peak.append(np.abs(u).max())
    assert peak[1] < peak[0] and peak[2] == pytest.approx(peak[1], rel=1e-12)
    sides = {s: fa.Elastic.spring(0.0) for s in (fa.WEST, fa.EAST, fa.SOUTH, fa.NORTH)}
    with pytest.raises(fa.Error, match="rigid"):
        fa.Problem.elasticity(V, sides=sides)
    assert "spring" in repr(fa.Elastic.spring(1.0))
