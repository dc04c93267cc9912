"""Space: B-spline/NURBS patches and Lagrange spaces; Geometry (a NURBS map)
and GeometryFile (G+Smo XML)."""
import numpy as np

from ._callbacks import Replay
from ._core import Handle, call, create, ffi, in_array, new_struct, out_array, string, to_dict

WEST, EAST, SOUTH, NORTH, FRONT, BACK = range(6)
EQUISPACED, GAUSS_LOBATTO = 0, 1


class Geometry:
    """A B-spline or NURBS geometry map (fea_geometry_desc): degrees, knot
    vectors, control points (n x dim, direction 0 fastest), optional weights.
    Keeps the arrays the descriptor points into."""

    def __init__(self, degrees, knots, control_points, weights=None, _parent=None):
        self.degrees = list(degrees)
        self.knots = [np.ascontiguousarray(k, dtype=np.float64) for k in knots]
        self.control_points = np.ascontiguousarray(control_points, dtype=np.float64)
        self.weights = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
        self.dim = len(self.degrees)
        self._parent = _parent
        d = new_struct("fea_geometry_desc")
        for k in range(self.dim):
            d.degree[k] = self.degrees[k]
            d.knots[k] = ffi.from_buffer("double[]", self.knots[k])
            d.num_knots[k] = self.knots[k].size
        d.control_points = ffi.from_buffer("double[]", self.control_points)
        d.num_control_points = self.control_points.size // self.dim
        if self.weights is not None:
            d.weights = ffi.from_buffer("double[]", self.weights)
        self.desc = d


class GeometryFile(Handle):
    """The patches and multipatch topology of a G+Smo XML file."""

    _destroy_fn = "fea_geometry_file_destroy"

    def __init__(self, ctx, path):
        self.ctx = ctx
        self._adopt(create("fea_geometry_file", "fea_geometry_file_read", ctx._ptr,
                           str(path).encode()), (ctx,))

    def __len__(self):
        n = ffi.new("int *")
        call("fea_geometry_file_get_num_patches", self._ptr, n)
        return n[0]

    def patch(self, index):
        """Patch `index` as a Geometry (arrays copied out of the file)."""
        dim = ffi.new("int *")
        d = new_struct("fea_geometry_desc")
        call("fea_geometry_file_get_patch", self._ptr, index, dim, d)
        nd = dim[0]
        knots = [np.frombuffer(ffi.buffer(d.knots[k], d.num_knots[k] * 8)).copy() for k in range(nd)]
        n = d.num_control_points
        cp = np.frombuffer(ffi.buffer(d.control_points, n * nd * 8)).reshape(n, nd).copy()
        w = None if d.weights == ffi.NULL else np.frombuffer(ffi.buffer(d.weights, n * 8)).copy()
        return Geometry([d.degree[k] for k in range(nd)], knots, cp, w)

    def multipatch(self):
        n, p = ffi.new("int *"), ffi.new("const int **")
        call("fea_geometry_file_get_multipatch", self._ptr, n, p)
        return [p[0][i] for i in range(n[0])]

    def interfaces(self):
        n = ffi.new("int *")
        call("fea_geometry_file_get_num_interfaces", self._ptr, n)
        out = []
        for i in range(n[0]):
            s = new_struct("fea_geometry_interface")
            call("fea_geometry_file_get_interface", self._ptr, i, s)
            out.append(to_dict(s))
        return out

    def boundary_sides(self):
        n = ffi.new("int *")
        call("fea_geometry_file_get_num_boundary_sides", self._ptr, n)
        out = []
        for i in range(n[0]):
            p, s, nm = ffi.new("int *"), ffi.new("fea_patch_side *"), ffi.new("const char **")
            call("fea_geometry_file_get_boundary_side", self._ptr, i, p, s, nm)
            out.append((p[0], s[0], string(nm[0])))
        return out


class Space(Handle):
    """A discrete space. Make one with Space.bspline(...) or Space.lagrange(...)."""

    _destroy_fn = "fea_space_destroy"

    def __init__(self, box, ctx, parents=(), keepalive=()):
        self.ctx = ctx
        self._adopt(box, (ctx,) + tuple(parents), keepalive)
        self._info = None

    @classmethod
    def bspline(cls, ctx, degree, n=None, knots=None, lower=None, upper=None, geometry=None,
                dim=None, num_components=1):
        """Tensor-product B-splines: degree (int or per direction), n elements per
        direction (open uniform knots) or full knot vectors, on the box
        [lower, upper] or on a Geometry (NURBS) map; num_components > 1 makes
        it vector-valued (set_num_components)."""
        if dim is None:
            dim = (len(n) if n is not None and np.ndim(n) else len(knots) if knots is not None else
                   geometry.dim if geometry is not None else len(degree))
        deg = [degree] * dim if np.ndim(degree) == 0 else list(degree)
        d = new_struct("fea_bspline_desc", dim=dim)
        keep = []
        for k in range(dim):
            d.degree[k] = int(deg[k])
            if n is not None:
                d.n[k] = int(n if np.ndim(n) == 0 else n[k])
            if knots is not None and knots[k] is not None:
                a, p = in_array(knots[k])
                keep += [a, p]
                d.knots[k] = p
                d.num_knots[k] = a.size
            if lower is not None:
                d.lower[k] = lower[k]
            if upper is not None:
                d.upper[k] = upper[k]
        if geometry is not None:
            d.geometry = geometry.desc
            keep.append(geometry)
        box = create("fea_space", "fea_space_create_bspline", ctx._ptr, d)
        return cls(box, ctx)._components(num_components)

    @classmethod
    def lagrange(cls, mesh, order=1, nodes=EQUISPACED, num_components=1):
        box = create("fea_space", "fea_space_create_lagrange", mesh._ptr, int(order), nodes)
        return cls(box, mesh.ctx, (mesh,))._components(num_components)

    def _components(self, n):
        return self if n == 1 else self.set_num_components(n)

    def insert_knots(self, direction, knots):
        a, p = in_array(knots)
        box = create("fea_space", "fea_space_bspline_insert_knots", self._ptr, direction, a.size, p)
        return Space(box, self.ctx, (self,))

    def elevate_degree(self, direction, t=1):
        box = create("fea_space", "fea_space_bspline_elevate_degree", self._ptr, direction, t)
        return Space(box, self.ctx, (self,))

    def transfer(self, coeffs, fine, out=None):
        """Coefficients of this (coarse) space's function in `fine`."""
        c, cp = in_array(coeffs, shape=(self.num_dofs,), name="coeffs")
        out, op = out_array(out, (fine.num_dofs,))
        call("fea_space_transfer", self._ptr, cp, fine._ptr, op)
        return out

    def info(self):
        if self._info is None:
            p = new_struct("fea_space_info")
            call("fea_space_get_info", self._ptr, p)
            self._info = to_dict(p)
        return self._info

    def set_num_components(self, num_components):
        """Make the space vector-valued (fea_space_set_num_components): n
        components per basis function, DoFs interleaved (DoF c + n i is
        component c of function i). Before anything is built on the space.
        Returns the space."""
        call("fea_space_set_num_components", self._ptr, int(num_components))
        self._info = None
        return self

    @property
    def num_components(self):
        return self.info().get("num_components", 1)

    @num_components.setter
    def num_components(self, n):
        self.set_num_components(n)

    dim = property(lambda self: self.info()["dim"])
    num_dofs = property(lambda self: self.info()["num_dofs"])
    num_elements = property(lambda self: self.info()["num_elements"])

    def element_dofs(self, e):
        out, p = out_array(None, (self.info()["dofs_per_element"],), np.int64)
        call("fea_space_get_element_dofs", self._ptr, int(e), p)
        return out

    def boundary_dofs(self):
        out, p = out_array(None, (self.info()["num_boundary_dofs"],), np.int64)
        call("fea_space_get_boundary_dofs", self._ptr, out.size, p)
        return out

    def knots(self, direction):
        count = ffi.new("fea_index *")
        call("fea_space_bspline_get_knots", self._ptr, direction, 0, ffi.NULL, count)
        out, p = out_array(None, (count[0],))
        call("fea_space_bspline_get_knots", self._ptr, direction, out.size, p, count)
        return out

    def evaluate(self, coeffs, points, gradients=False):
        """Values (and gradients, (npts, dim)) of the function with `coeffs` at
        `points`, an (npts, dim) array of points of the domain (unmapped spaces;
        the library refuses a space mapped by a NURBS geometry)."""
        c, cp = in_array(coeffs, shape=(self.num_dofs,), name="coeffs")
        pts = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, self.dim)
        _, pp = in_array(pts)
        vals, vp = out_array(None, (pts.shape[0],))
        grads, gp = (out_array(None, pts.shape) if gradients else (None, ffi.NULL))
        call("fea_space_evaluate", self._ptr, cp, pts.shape[0], pp, vp, gp)
        return (vals, grads) if gradients else vals

    def interpolate(self, g, out=None):
        """Coefficients of the interpolant of g (vectorized: called once on all
        the interpolation points)."""
        out, op = out_array(out, (self.num_dofs,))
        rep = Replay(g, self.dim)
        call("fea_space_interpolate", self._ptr, rep.scalar, ffi.NULL, op)
        rep.evaluate()
        call("fea_space_interpolate", self._ptr, rep.scalar, ffi.NULL, op)
        return out

    def write_vtu(self, coeffs, path, samples=4):
        """The function with coeffs (interleaved on a vector space) as a .vtu
        file of sampled linear cells (B-spline spaces); Problem.write_vtu adds
        an elasticity solution's stresses."""
        c, cp = in_array(coeffs, shape=(self.num_dofs,), name="coeffs")
        call("fea_space_write_vtu", self._ptr, cp, samples, str(path).encode())

    def color_elements(self, method=0):
        colors, p = out_array(None, (self.num_elements,), np.int64)
        nc = ffi.new("int *")
        call("fea_space_color_elements", self._ptr, method, p, nc)
        return colors, nc[0]

    def check_coloring(self, colors):
        a, p = in_array(colors, np.int64, shape=(self.num_elements,), name="colors")
        call("fea_space_check_coloring", self._ptr, p)
