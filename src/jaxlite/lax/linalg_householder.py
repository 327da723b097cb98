"""Householder reflections: `geqrf`, `householder_product` (orgqr), `hessenberg` (gehrd).

`jnp.linalg.qr(a, mode="raw")` returns what LAPACK's `geqrf` computes: R in the upper
triangle of the matrix and, below the diagonal, the Householder vectors whose product
is Q, with their factors `taus`. Libraries that solve with Q without forming it
(lineax's QR solver, through `lax.linalg.ormqr`) ask for this form. As in JAX, the
primitive has no derivative: the JVP trace's error names it. `householder_product`
forms Q from such reflectors (differentiable: its JVP differentiates the same product
written in lax operations), and `hessenberg` reduces a square matrix to upper
Hessenberg form in LAPACK's gehrd layout (no derivative, as in JAX).
"""

from __future__ import annotations

import numpy as np

from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    get_aval,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import elementwise as ew
from jaxlite.lax import linalg_numpy as kernels
from jaxlite.lax.indexing import slice_in_dim
from jaxlite.lax.linalg import (
    _H,
    _bcast,
    _check_inexact,
    _check_rank,
    _const,
    _expand,
    _matmul,
    _move_front_rule,
    _shape,
)
from jaxlite.lax.structural import operand

__all__ = [
    "geqrf",
    "geqrf_p",
    "hessenberg",
    "hessenberg_p",
    "householder_product",
    "householder_product_p",
]


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


# --------------------------------------------------------------------------------------
# householder_product: Q = H_1 ... H_k from Householder vectors and factors (orgqr)


def _householder_product_impl(a, taus):
    return [kernels.householder_product(a, taus)]


def _householder_product_abstract(a, taus):
    _check_rank("householder_product", 0, a.shape)
    _check_rank("householder_product", 1, taus.shape, 1)
    _check_inexact("householder_product", 0, a.dtype)
    *batch, m, n = a.shape
    if m < n:
        raise ValueError(
            "The first argument to householder_product must have at least as many "
            f"rows as columns, got shape {a.shape}"
        )
    if taus.shape[-1] > min(m, n):
        raise ValueError(
            "The second argument to householder_product must not have more rows than "
            "the minimum of the first argument's rows and columns."
        )
    if tuple(batch) != taus.shape[:-1] or a.dtype != taus.dtype:
        raise TypeError(
            "householder_product requires equal batch dimensions and dtypes, got "
            f"{a.str_short()} and {taus.str_short()}."
        )
    return [ShapedArray(a.shape, a.dtype)], no_effects


def _householder_product_lax(a, taus):
    """The same product in lax operations (differentiable): Q = H_1 (H_2 (... I))."""
    *batch, m, n = _shape(a)
    dtype = get_aval(a).dtype
    q = _bcast(_const(np.eye(m, n), a), (*batch, m, n))
    for i in reversed(range(_shape(taus)[-1])):
        below = (np.arange(m) > i).astype(dtype)[:, None]
        unit = (np.arange(m) == i).astype(dtype)[:, None]
        col = slice_in_dim(a, i, i + 1, axis=-1)
        v = ew.add(ew.mul(col, _const(below, a)), _const(unit, a))
        tau = _expand(slice_in_dim(taus, i, i + 1, axis=-1), -1)
        w = _matmul(_H(v), q)
        q = ew.sub(q, _matmul(ew.mul(v, tau), w))
    return q


def _householder_product_jvp(primals, tangents):
    out = householder_product_p.bind(*primals)
    _, (out_dot,) = ad.jvp_flat(
        lambda a, t: [_householder_product_lax(a, t)], list(primals), list(tangents)
    )
    return [out], [out_dot]


householder_product_p = Primitive("householder_product")
impl_rules[householder_product_p] = _householder_product_impl
abstract_eval_rules[householder_product_p] = _householder_product_abstract
ad.jvp_rules[householder_product_p] = _householder_product_jvp
batching.batch_rules[householder_product_p] = _move_front_rule(householder_product_p)


# --------------------------------------------------------------------------------------
# hessenberg: (a, taus) in LAPACK's gehrd layout


def _hessenberg_impl(a):
    return list(kernels.hessenberg(a))


def _hessenberg_abstract(a):
    _check_rank("hessenberg", 0, a.shape)
    _check_inexact("hessenberg", 0, a.dtype)
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(
            "Argument to Hessenberg reduction must have shape [..., n, n], got shape "
            f"{a.shape}"
        )
    taus = ShapedArray((*a.shape[:-2], max(a.shape[-1] - 1, 0)), a.dtype)
    return [ShapedArray(a.shape, a.dtype), taus], no_effects


def _hessenberg_jvp(primals, tangents):
    raise NotImplementedError(
        "Differentiation rule for 'hessenberg' not implemented (as in JAX): the "
        "Householder layout of its outputs has no derivative rule. Differentiate "
        "a computation that does not go through the Hessenberg reduction instead."
    )


hessenberg_p = Primitive("hessenberg", multiple_results=True)
impl_rules[hessenberg_p] = _hessenberg_impl
abstract_eval_rules[hessenberg_p] = _hessenberg_abstract
ad.jvp_rules[hessenberg_p] = _hessenberg_jvp
batching.batch_rules[hessenberg_p] = _move_front_rule(hessenberg_p)


def householder_product(a, taus):
    """The first n columns of the product of the Householder reflectors stored in
    `a` (m, n) below its diagonal with factors `taus` (LAPACK's orgqr)."""
    return householder_product_p.bind(operand(a), operand(taus))


def hessenberg(a):
    """Reduce square matrices to upper Hessenberg form: `(a, taus)` in LAPACK's gehrd
    layout (the reflectors below the first subdiagonal). A list, as JAX returns it."""
    return list(hessenberg_p.bind(operand(a)))
