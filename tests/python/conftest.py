"""Shared fixtures of the feaccel Python tests (docs/python.md): a context on
the serial reference backend, and a smooth exact solution of Poisson's
equation on the unit square with its gradient and load."""
import numpy as np
import pytest

import feaccel as fa


@pytest.fixture
def ctx():
    with fa.Context("/cpu/ref") as c:
        yield c


def exact(X):
    return np.sin(np.pi * X[:, 0]) * np.sin(np.pi * X[:, 1]) + X[:, 0]


def exact_grad(X):
    return np.stack([np.pi * np.cos(np.pi * X[:, 0]) * np.sin(np.pi * X[:, 1]) + 1,
                     np.pi * np.sin(np.pi * X[:, 0]) * np.cos(np.pi * X[:, 1])], axis=1)


def source(X):
    return 2 * np.pi ** 2 * np.sin(np.pi * X[:, 0]) * np.sin(np.pi * X[:, 1])
