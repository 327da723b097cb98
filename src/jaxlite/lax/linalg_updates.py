"""The `jax.lax.linalg` functions that are compositions of the factorisation
primitives: `tridiagonal` (LAPACK's sytrd/hetrd layout), `ormqr` (multiply by the Q of
Householder reflectors) and `cholesky_update` (rank-one update of a Cholesky factor).

A Hermitian matrix reduced to upper Hessenberg form is tridiagonal, with the same
Householder reflectors LAPACK's `sytrd` chooses for the lower triangle, so
`tridiagonal(lower=True)` is `hessenberg` with the result stored as `sytrd` stores it
(the strict upper triangle keeps the input). The upper variant reduces from the last
column instead: it is the lower reduction of the matrix with rows and columns reversed,
read backwards. `ormqr` builds the full Q by padding the reflectors with trivial ones
(tau = 0). `cholesky_update` refactors `R^H R + w w^H`, which costs O(n^3) instead of
LAPACK-style O(n^2) rotations but is exact to rounding and differentiable for free.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.core import get_aval
from jaxlite.lax import elementwise as ew
from jaxlite.lax.linalg import (
    _H,
    _diagonal,
    _is_complex,
    _matmul,
    _ndim,
    _shape,
    _tril,
    _triu,
    cholesky,
    hessenberg,
    householder_product,
)
from jaxlite.lax.structural import operand, pad, rev

__all__ = ["cholesky_update", "ormqr", "tridiagonal"]


def _subdiagonal(x):
    """x[..., i + 1, i] for i < n - 1."""
    return _diagonal(x[..., 1:, :-1])


def _real(x):
    return ew.real(x) if _is_complex(x) else x


def tridiagonal(a, *, lower=True):
    """Reduce Hermitian matrices to real symmetric tridiagonal form `Q^H a Q`:
    `[arr, d, e, taus]` as LAPACK's sytrd/hetrd returns them (d the diagonal, e the
    off-diagonal, the reflectors and taus describing Q in arr and taus)."""
    a = operand(a)
    if _ndim(a) < 2 or _shape(a)[-1] != _shape(a)[-2]:
        raise ValueError(
            f"tridiagonal requires square matrices (..., n, n), got shape {_shape(a)}."
        )
    if not dtypes.issubdtype(get_aval(a).dtype, np.inexact):
        raise TypeError(
            f"tridiagonal does not accept dtype {get_aval(a).dtype.name}. Accepted "
            "dtypes are subtypes of floating, complexfloating."
        )
    nd = _ndim(a)
    flip = (nd - 2, nd - 1)
    work = a if lower else rev(a, flip)
    h, taus = hessenberg(work)
    d = _real(_diagonal(h))
    e = _real(_subdiagonal(h))
    if lower:
        return [ew.add(_tril(h), _triu(a, 1)), d, e, taus]
    arr = ew.add(rev(_tril(h), flip), _tril(a, -1))
    return [arr, rev(d, (nd - 2,)), rev(e, (nd - 2,)), rev(taus, (nd - 2,))]


def ormqr(a, taus, c, *, left=True, transpose=False):
    """`Q c`, `Q^H c`, `c Q` or `c Q^H` for the Q (m x m) of the Householder
    reflectors stored in `a` (m, k) below its diagonal with factors `taus` (k,)."""
    a, taus, c = operand(a), operand(taus), operand(c)
    m, k = _shape(a)[-2:]
    if _shape(taus)[-1] != min(m, k) and _shape(taus)[-1] > m:
        raise ValueError(
            f"ormqr got {_shape(taus)[-1]} taus for a of shape {_shape(a)}"
        )
    zero = ew.convert_element_type(0, get_aval(a).dtype)
    batch_pad = [(0, 0, 0)] * (_ndim(a) - 2)
    if k < m:
        a = pad(a, zero, batch_pad + [(0, 0, 0), (0, m - k, 0)])
    else:
        a = a[..., :m]
    t = _shape(taus)[-1]
    if t < m:
        taus = pad(taus, zero, batch_pad + [(0, m - t, 0)])
    q = householder_product(a, taus)
    if transpose:
        q = _H(q)
    return _matmul(q, c) if left else _matmul(c, q)


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor R' with `R'^H R' = R^H R + w w^H`, given the upper
    factor R (n, n) and a vector w (n,)."""
    r, w = operand(r_matrix), operand(w_vector)
    if _ndim(r) != 2 or _shape(r)[0] != _shape(r)[1] or _shape(w) != _shape(r)[:1]:
        raise ValueError(
            "cholesky_update requires a square matrix (n, n) and a vector (n,), got "
            f"shapes {_shape(r)} and {_shape(w)}."
        )
    col = w[:, None]
    gram = ew.add(_matmul(_H(_triu(r)), _triu(r)), _matmul(col, _H(col)))
    return _H(cholesky(gram, symmetrize_input=False))
