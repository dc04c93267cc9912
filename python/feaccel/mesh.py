"""Mesh: structured boxes (optionally mapped), meshes from NumPy arrays,
Gmsh files, uniform refinement, VTU output."""
import numpy as np

from . import _callbacks
from ._core import Handle, call, create, ffi, in_array, new_struct, out_array, string
from ._loader import lib

INTERVAL, TRIANGLE, QUAD, TETRAHEDRON, HEXAHEDRON = 1, 2, 3, 4, 5
_NODES = {INTERVAL: 2, TRIANGLE: 3, QUAD: 4, TETRAHEDRON: 4, HEXAHEDRON: 8}


class Mesh(Handle):
    _destroy_fn = "fea_mesh_destroy"

    def __init__(self, box, ctx, parents=(), keepalive=()):
        self.ctx = ctx
        self._adopt(box, (ctx,) + tuple(parents), keepalive)

    @classmethod
    def structured(cls, ctx, n, lower=None, upper=None, simplices=False, map=None):
        """A box of n[k] cells per direction (len(n) = dim). map(xi) -> x, called
        vectorized on an (npts, dim) array of all nodes at once."""
        dim = len(n)
        d = new_struct("fea_mesh_desc", dim=dim, simplices=int(bool(simplices)))
        for k in range(dim):
            d.n[k] = int(n[k])
            if lower is not None:
                d.lower[k] = lower[k]
            if upper is not None:
                d.upper[k] = upper[k]
        keep = []
        if map is not None:
            # The mesh calls the map once per node, in node order, on this thread.
            rep = _MapReplay(map, dim)
            d.map = rep.cdata
            keep.append(rep)
            box = create("fea_mesh", "fea_mesh_create_structured", ctx._ptr, d)
            lib.fea_mesh_destroy(box)
            rep.evaluate()
            box = create("fea_mesh", "fea_mesh_create_structured", ctx._ptr, d)
        else:
            box = create("fea_mesh", "fea_mesh_create_structured", ctx._ptr, d)
        return cls(box, ctx, keepalive=keep)

    @classmethod
    def from_arrays(cls, ctx, coords, cells, cell_type):
        coords = np.asarray(coords, dtype=np.float64)
        cells = np.asarray(cells, dtype=np.int64)
        dim = coords.shape[1]
        c, cp = in_array(coords)
        e, ep = in_array(cells, np.int64)
        box = create("fea_mesh", "fea_mesh_create_from_arrays", ctx._ptr, dim, cell_type,
                     coords.shape[0], cp, cells.shape[0], ep)
        return cls(box, ctx)

    @classmethod
    def read_gmsh(cls, ctx, path):
        return cls(create("fea_mesh", "fea_mesh_read_gmsh", ctx._ptr, str(path).encode()), ctx)

    def refine(self):
        return Mesh(create("fea_mesh", "fea_mesh_refine_uniform", self._ptr), self.ctx, (self,))

    def info(self):
        dim, t = ffi.new("int *"), ffi.new("fea_cell_type *")
        nn, nc = ffi.new("fea_index *"), ffi.new("fea_index *")
        call("fea_mesh_get_info", self._ptr, dim, t, nn, nc)
        return {"dim": dim[0], "cell_type": t[0], "num_nodes": nn[0], "num_cells": nc[0]}

    @property
    def coordinates(self):
        i = self.info()
        out, p = out_array(None, (i["num_nodes"], i["dim"]))
        call("fea_mesh_get_coordinates", self._ptr, out.size, p)
        return out

    @property
    def cells(self):
        i = self.info()
        k = _NODES[i["cell_type"]]
        out, p = out_array(None, (i["num_cells"], k), np.int64)
        call("fea_mesh_get_cells", self._ptr, out.size, p)
        return out

    def parents(self):
        i = self.info()
        out, p = out_array(None, (i["num_cells"],), np.int64)
        call("fea_mesh_get_parents", self._ptr, out.size, p)
        return out

    def boundary_groups(self):
        """{physical tag: (name or None, number of facets)} of a Gmsh mesh."""
        count = ffi.new("int *")
        call("fea_mesh_get_boundary_groups", self._ptr, 0, ffi.NULL, ffi.NULL, count)
        n = count[0]
        tags, nf = ffi.new("int[]", max(n, 1)), ffi.new("fea_index[]", max(n, 1))
        call("fea_mesh_get_boundary_groups", self._ptr, n, tags, nf, count)
        out = {}
        for i in range(n):
            name = ffi.new("const char **")
            call("fea_mesh_get_boundary_group_name", self._ptr, tags[i], name)
            out[tags[i]] = (string(name[0]), nf[i])
        return out

    def write_vtu(self, path, node_fields=None, cell_fields=None):
        """Write the mesh with named float64 fields ({name: array})."""
        fields = [(k, 0, v) for k, v in (node_fields or {}).items()]
        fields += [(k, 1, v) for k, v in (cell_fields or {}).items()]
        info = self.info()
        arr = ffi.new("fea_field[]", max(len(fields), 1))
        keep = []
        for i, (name, loc, vals) in enumerate(fields):
            a, p = in_array(vals)
            nm = ffi.new("char[]", name.encode())
            keep += [a, p, nm]
            count = info["num_nodes"] if loc == 0 else info["num_cells"]
            arr[i].name = nm
            arr[i].location = loc
            arr[i].components = a.size // max(count, 1)
            arr[i].values = p
        call("fea_mesh_write_vtu", self._ptr, str(path).encode(), len(fields), arr)


class _MapReplay(_callbacks.Replay):
    def __init__(self, fn, dim):
        self.map_fn = fn
        super().__init__(lambda X: np.zeros(len(X)), dim)
        self.cdata = ffi.callback("fea_point_map_fn", self._map,
                                  onerror=lambda t, e, tb: _callbacks.record_exception(e))

    def _map(self, xi, x, user):
        key = bytes(ffi.buffer(xi, self.dim * 8))
        if self.recording:
            self.points.append(key)
            ffi.buffer(x, self.dim * 8)[:] = key
            return
        i = self.i
        self.i += 1
        if i < len(self.points) and self.points[i] == key:
            v = self.mapped[i]
        else:
            v = np.asarray(self.map_fn(np.frombuffer(key).reshape(1, self.dim)), dtype=np.float64)
        ffi.buffer(x, self.dim * 8)[:] = np.ascontiguousarray(v, dtype=np.float64).tobytes()

    def evaluate(self):
        self.recording = False
        X = np.frombuffer(b"".join(self.points), dtype=np.float64).reshape(-1, self.dim)
        M = np.asarray(self.map_fn(X), dtype=np.float64)
        if M.shape != X.shape:
            raise ValueError(f"map: returned shape {M.shape} for {X.shape[0]} points")
        self.mapped = np.ascontiguousarray(M)
        self.vectorized_calls += 1
