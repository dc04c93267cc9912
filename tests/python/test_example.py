"""examples/python/quarter_annulus.py prints what examples/quarter_annulus.c
prints: the same errors to the printed digits and the same orders, which are
the expected p + 1 and p."""
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "python", "quarter_annulus.py")


def c_example():
    """The C example as the main build made it (FEACCEL_C_EXAMPLES names its directory)."""
    for d in (os.environ.get("FEACCEL_C_EXAMPLES"), os.path.join(ROOT, "build", "examples")):
        if d and os.access(os.path.join(d, "quarter_annulus"), os.X_OK):
            return os.path.join(d, "quarter_annulus")
    return None


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True,
                          env=dict(os.environ, FEACCEL_BACKEND="/cpu/ref")).stdout


@pytest.mark.parametrize("p", [2, 3])
def test_python_example_orders(p, tmp_path):
    out = run([sys.executable, EXAMPLE, str(p)], tmp_path)
    m = re.search(r"orders: L2 (\S+) \(expected (\d+)\), H1 (\S+) \(expected (\d+)\)", out)
    assert m, out
    assert abs(float(m.group(1)) - (p + 1)) < 0.25 and int(m.group(2)) == p + 1
    assert abs(float(m.group(3)) - p) < 0.25 and int(m.group(4)) == p
    assert len(re.findall(r"n = +\d+: +\d+ unknowns", out)) == 3


def test_python_example_prints_what_the_c_example_prints(tmp_path):
    exe = c_example()
    if exe is None:
        pytest.skip("the C example is not built (meson compile -C build, or FEACCEL_C_EXAMPLES)")
    c_out = run([exe, "3"], tmp_path)
    py_out = run([sys.executable, EXAMPLE, "3"], tmp_path)
    py_lines = [line for line in py_out.splitlines() if not line.startswith("  picture")]
    assert py_lines == c_out.splitlines()
