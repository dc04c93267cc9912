"""examples/quarter_annulus.c in Python: -Laplace u = f on the NURBS quarter annulus,
B-splines of degree p (argv[1], default 3), multifrontal solver; prints the same errors
and orders as the C example, writes quarter_annulus.vtu, and draws the n = 32 solution
into quarter_annulus.png when matplotlib is there."""
import sys

import numpy as np

import feaccel as fa

p = int(sys.argv[1]) if len(sys.argv) > 1 else 3
exact = lambda X: np.exp(X[:, 0] / 2) * np.sin(0.7 * X[:, 1]) + X[:, 0] * X[:, 1]
grad = lambda X: np.stack([0.5 * np.exp(X[:, 0] / 2) * np.sin(0.7 * X[:, 1]) + X[:, 1],
                           0.7 * np.exp(X[:, 0] / 2) * np.cos(0.7 * X[:, 1]) + X[:, 0]], axis=1)
source = lambda X: 0.24 * np.exp(X[:, 0] / 2) * np.sin(0.7 * X[:, 1])
s = np.sqrt(0.5)  # radial degree 1, circular arcs of degree 2 (weights 1, 1/sqrt(2), 1)
annulus = fa.Geometry([1, 2], [[0, 0, 1, 1], [0, 0, 0, 1, 1, 1]],
                      [[1, 0], [2, 0], [1, 1], [2, 2], [0, 1], [0, 2]], [1, 1, s, s, 1, 1])
print(f"quarter annulus, NURBS geometry, B-splines of degree {p}, multifrontal solver")
errors = []
with fa.Context() as ctx:
    for n in (8, 16, 32):
        V = fa.Space.bspline(ctx, p, n=(n, n), geometry=annulus)
        P = fa.Problem(V, source=source, dirichlet=exact)
        u_free = fa.Solver.multifrontal(P).setup().solve()
        u = P.expand_solution(u_free)
        errors.append(P.error_norms(u, exact, grad))
        if n == 32:  # for ParaView, as the C example: 4 x 4 samples per element
            V.write_vtu(u, "quarter_annulus.vtu")
        print(f"  n = {n:3d}: {u_free.size:7d} unknowns, L2 error {errors[-1][0]:.3e}, "
              f"H1 error {errors[-1][1]:.3e}")
    (l2a, h1a), (l2b, h1b) = errors[1:]
    print(f"  orders: L2 {np.log2(l2a / l2b):.2f} (expected {p + 1}), "
          f"H1 {np.log2(h1a / h1b):.2f} (expected {p})")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.exit(0)  # no picture without matplotlib
    # The n = 32 solution as the library's VTU writer sampled it on the annulus, read
    # back (fea_space_evaluate does not invert the NURBS map).
    import xml.etree.ElementTree as ET
    arrays = [np.array(a.text.split(), float) for a in ET.parse("quarter_annulus.vtu").iter("DataArray")]
    values, points, quads = arrays[0], arrays[1].reshape(-1, 3), arrays[2].astype(int).reshape(-1, 4)
    triangles = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
    plt.tripcolor(points[:, 0], points[:, 1], triangles, values, shading="gouraud")
    plt.gca().set_aspect("equal")
    plt.colorbar()
    plt.title(f"u_h on the quarter annulus (p = {p}, n = 32)")
    plt.savefig("quarter_annulus.png", dpi=120)
