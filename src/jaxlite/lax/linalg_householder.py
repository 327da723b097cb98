"""`geqrf`: the QR decomposition in LAPACK's compact layout.

`jnp.linalg.qr(a, mode="raw")` returns what LAPACK's `geqrf` computes: R in the upper
triangle of the matrix and, below the diagonal, the Householder vectors whose product
is Q, with their factors `taus`. Libraries that solve with Q without forming it
(lineax's QR solver, through `lax.linalg.ormqr`) ask for this form. As in JAX, the
primitive has no derivative: the JVP trace's error names it.
"""

from __future__ import annotations

from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import batching
from jaxlite.lax import linalg_numpy as kernels
from jaxlite.lax.linalg import _check_inexact, _check_rank, _move_front_rule
from jaxlite.lax.structural import operand

__all__ = ["geqrf", "geqrf_p"]


def _geqrf_impl(a):
    return kernels.geqrf(a)


def _geqrf_abstract(a):
    _check_rank("geqrf", 0, a.shape)
    _check_inexact("geqrf", 0, a.dtype)
    *batch, m, n = a.shape
    taus = ShapedArray((*batch, min(m, n)), a.dtype)
    return [ShapedArray(a.shape, a.dtype), taus], no_effects


geqrf_p = Primitive("geqrf", multiple_results=True)
impl_rules[geqrf_p] = _geqrf_impl
abstract_eval_rules[geqrf_p] = _geqrf_abstract
batching.batch_rules[geqrf_p] = _move_front_rule(geqrf_p)


def geqrf(a):
    """`(a, taus)`: the QR decomposition of `a` (..., m, n) in LAPACK's geqrf layout."""
    return list(geqrf_p.bind(operand(a)))
