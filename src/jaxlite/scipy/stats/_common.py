"""Shared helpers of the jaxlite.scipy.stats modules: argument promotion (JAX's rules,
weak Python scalars stay weak), scalar constants of an array's dtype, and `where` with
scalar branches."""

from __future__ import annotations

from jaxlite import lax
from jaxlite.numpy import ufuncs
from jaxlite.numpy.ufuncs import promote_args_inexact, promote_dtypes_inexact

__all__ = ["const", "promote_args_inexact", "promote_dtypes_inexact", "where"]


def const(x, value):
    """`value` as a weak scalar of x's dtype."""
    return lax.full_like(x, value, shape=())


def where(cond, on_true, on_false):
    return ufuncs.where(cond, on_true, on_false)
