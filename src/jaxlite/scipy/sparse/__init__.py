"""jax.scipy.sparse: iterative solvers for linear systems given as matrices or
linear functions (`jaxlite.scipy.sparse.linalg`)."""

from jaxlite.scipy.sparse import linalg

__all__ = ["linalg"]
