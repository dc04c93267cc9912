"""Load libfeaccel.so and its cffi declarations (ABI mode: no compiler at install).

The declarations come from _generated.py, which python/gen_cdef.py wrote from
the public headers when the package was built. The library is searched:
FEACCEL_LIBRARY (a path), then the wheel's .feaccel.mesonpy.libs directory
(meson-python moves libdir there), then the libdir of a plain `meson install`
and the build tree, then the dynamic linker's path.
"""
import glob
import os

import cffi

from . import _generated

ffi = cffi.FFI()
ffi.cdef(_generated.CDEF)

SONAME = "libfeaccel.so.0"


def _candidates():
    env = os.environ.get("FEACCEL_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    site = os.path.dirname(here)
    # A wheel holds the library under its full version name (no symbolic links).
    for d in sorted(glob.glob(os.path.join(site, ".feaccel*.mesonpy.libs"))):
        yield from sorted(glob.glob(os.path.join(d, "libfeaccel.so.*")))
    try:
        from . import _paths

        yield os.path.join(_paths.LIBDIR, SONAME)
        yield os.path.join(_paths.BUILD_LIBDIR, SONAME)
    except ImportError:
        pass
    yield SONAME


def _load():
    errors = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("feaccel: cannot load libfeaccel.so: " + "; ".join(errors))


lib, library_path = _load()
