"""feaccel: Python bindings of libfeaccel (docs/python.md).

The C API through cffi in ABI mode (declarations generated from the public
headers when the package was built), with a thin layer of Python objects
that free their handles, raise feaccel.Error with the library's message,
take and give NumPy arrays without copies where the layout allows, and call
Python coefficient functions on batches of points.

    import feaccel as fa
    with fa.Context() as ctx:
        V = fa.Space.bspline(ctx, degree=3, n=(32, 32))
        P = fa.Problem(V, source=lambda X: 1 + 0 * X[:, 0])
        u = fa.Solver.multifrontal(P).setup().solve()

`feaccel.ffi` and `feaccel.lib` give the raw C API for anything the layer
does not wrap.
"""
from ._core import Error, NotConvergedWarning, last_error
from ._loader import ffi, lib, library_path
from .context import LOG_DEBUG, LOG_ERROR, LOG_INFO, LOG_WARN, Context, backends, precision_name, \
    precision_size, status_string, version
from .mesh import HEXAHEDRON, INTERVAL, QUAD, TETRAHEDRON, TRIANGLE, Mesh
from .misc import cost_memory_3d_paper, cost_model_exact, cost_model_fits, cost_model_paper, \
    cost_strong_scaling_paper, tsx_available, update_strategy_name
from .multipatch import Multipatch, MultipatchProblem
from .operators import CSR, MATFREE_ELEMENT_MATRIX, MATFREE_SUMFACT, Operator
from .problem import BC, DIRICHLET, ELASTIC_DISPLACEMENT, ELASTIC_PRESSURE, ELASTIC_SPRING, \
    ELASTIC_TRACTION, NEUMANN, PLANE_STRAIN, PLANE_STRESS, ROBIN, Elastic, Matrix, Problem, write_mtx_array
from .solver import MERGE_AUTO, MERGE_PAIRWISE, MERGE_TENSOR, Solver
from .space import BACK, EAST, FRONT, NORTH, SOUTH, WEST, Geometry, GeometryFile, Space
from .vector import BF16, F16, F32, F64, Vector

__version__ = version()
__all__ = [n for n in dir() if not n.startswith("_")]
