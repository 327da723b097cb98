"""Special matrices of `jax.scipy.linalg` beyond Toeplitz and Hankel, and `qr_multiply`.

The matrices with static entries (Hadamard, Helmert, Pascal and their inverses, the
inverse Hilbert matrix, the DFT matrix) are built in NumPy (Python integers for the
exact ones) and returned as arrays; those made from an array argument (convolution,
Fiedler, Leslie matrices) gather or scatter its entries with static index arrays, so
they trace, batch and differentiate. `qr_multiply` is a product with the Q of `qr`.
"""

from __future__ import annotations

import math

import numpy as np

from jaxlite import dtypes
from jaxlite.numpy import creation, products, ufuncs
from jaxlite.numpy.shape import concatenate
from jaxlite.numpy.ufuncs import check_arraylike
from jaxlite.scipy.linalg import qr, toeplitz

__all__ = [
    "convolution_matrix",
    "dft",
    "fiedler",
    "fiedler_companion",
    "hadamard",
    "helmert",
    "invhilbert",
    "invpascal",
    "leslie",
    "pascal",
    "qr_multiply",
]


def convolution_matrix(a, n, mode="full"):
    """The Toeplitz matrix A with `A @ v == jnp.convolve(a, v, mode)` for v of size n."""
    check_arraylike("convolution_matrix", a)
    a = creation.asarray(a)
    if np.ndim(a) != 1:
        raise ValueError("convolution_matrix expects a one-dimensional array as input")
    m = np.shape(a)[0]
    if n <= 0 or m == 0:
        raise ValueError(
            f"convolution_matrix needs len(a) > 0 and n > 0, got {m} and {n}."
        )
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode={mode!r} is not one of 'full', 'same' or 'valid'.")
    zeros = creation.zeros(n - 1, dtype=a.dtype)
    col = concatenate([a, zeros])
    row = concatenate([a[:1], zeros])
    full = toeplitz(col, row)
    trim = min(n, m) - 1
    if mode == "same":
        start = trim // 2
        return full[start : start + max(m, n)]
    if mode == "valid":
        return full[trim : m + n - 1 - trim]
    return full


def dft(n, scale=None, *, dtype=None):
    """The n x n discrete Fourier transform matrix `exp(-2 pi i j k / n)`, scaled by
    1/sqrt(n) (`scale='sqrtn'`) or 1/n (`scale='n'`)."""
    if scale not in (None, "sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn' or 'n', got {scale!r}.")
    dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_complex_dtype())
    j = np.arange(n)
    m = np.exp(-2j * np.pi * np.outer(j, j) / n)
    if scale == "sqrtn":
        m = m / math.sqrt(n)
    elif scale == "n":
        m = m / n
    return creation.asarray(m.astype(dtype))


def fiedler(a):
    """The symmetric Fiedler matrix `|a[i] - a[j]|`."""
    check_arraylike("fiedler", a)
    a = creation.asarray(a)
    return ufuncs.abs(ufuncs.subtract(a[..., :, None], a[..., None, :]))


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients a (highest
    first): pentadiagonal, with the polynomial's roots as eigenvalues."""
    check_arraylike("fiedler_companion", a)
    a = creation.asarray(a)
    if np.ndim(a) != 1:
        raise ValueError("Input 'a' must be a 1-D array.")
    size = np.shape(a)[0]
    if size <= 2:
        if size == 2:
            return ufuncs.negative(a[1:] / a[0]).reshape(1, 1)
        return creation.zeros((0, 0), dtype=dtypes.dtype(a))
    if a.dtype == np.bool_ or dtypes.issubdtype(a.dtype, np.integer):
        a = a.astype(dtypes.default_float_dtype())
    a = ufuncs.divide(a, a[0])
    n = size - 1
    c = creation.zeros((n, n), dtype=a.dtype)
    c = c.at[np.arange(3, n, 2), np.arange(1, n - 2, 2)].set(1)
    c = c.at[np.arange(2, n, 2), np.arange(1, n - 1, 2)].set(-a[3::2])
    c = c.at[np.arange(0, n - 2, 2), np.arange(2, n, 2)].set(1)
    c = c.at[np.arange(0, n - 1, 2), np.arange(1, n, 2)].set(-a[2::2])
    c = c.at[0, 0].set(-a[1])
    return c.at[1, 0].set(1)


def hadamard(n, dtype=int):
    """The n x n Hadamard matrix of Sylvester's construction (n a power of 2)."""
    if n < 1 or n & (n - 1):
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = np.ones((1, 1), np.int64)
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return creation.asarray(h, dtype=dtypes.canonicalize_dtype(dtype))


def helmert(n, full=False):
    """The Helmert matrix of order n (its first row dropped unless `full`)."""
    h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
    d = np.arange(n) * np.arange(1, n + 1)
    h[0] = 1
    d[0] = n
    h = h / np.sqrt(d)[:, np.newaxis]
    out = h if full else h[1:]
    return creation.asarray(out.astype(dtypes.default_float_dtype()))


def invhilbert(n):
    """The exact inverse of the n x n Hilbert matrix, in the default float dtype."""
    out = np.empty((n, n), dtype=object)
    for i in range(n):
        for j in range(n):
            sign = -1 if (i + j) % 2 else 1
            out[i, j] = (
                sign
                * (i + j + 1)
                * math.comb(n + i, n - j - 1)
                * math.comb(n + j, n - i - 1)
                * math.comb(i + j, i) ** 2
            )
    return creation.asarray(out.astype(np.float64).astype(dtypes.default_float_dtype()))


def _pascal_lower(n):
    return [[math.comb(i, j) for j in range(n)] for i in range(n)]


def _as_matrix(rows):
    """Exact integers as a matrix of the default float dtype (as JAX returns them)."""
    values = np.array(rows, dtype=np.int64).astype(np.float64)
    return creation.asarray(values.astype(dtypes.default_float_dtype()))


def _check_kind(kind):
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"Kind must be 'symmetric', 'lower' or 'upper', got {kind!r}.")


def pascal(n, kind=None):
    """The Pascal matrix: binomial coefficients C(i + j, i) (symmetric), C(i, j)
    (lower) or C(j, i) (upper)."""
    kind = "symmetric" if kind is None else kind
    _check_kind(kind)
    if kind == "symmetric":
        rows = [[math.comb(i + j, i) for j in range(n)] for i in range(n)]
    else:
        rows = _pascal_lower(n)
        if kind == "upper":
            rows = [list(r) for r in zip(*rows)]
    return _as_matrix(rows)


def invpascal(n, kind=None):
    """The exact inverse of `pascal(n, kind)`."""
    kind = "symmetric" if kind is None else kind
    _check_kind(kind)
    lower = [[(-1) ** (i + j) * math.comb(i, j) for j in range(n)] for i in range(n)]
    if kind == "lower":
        return _as_matrix(lower)
    upper = [list(r) for r in zip(*lower)]
    if kind == "upper":
        return _as_matrix(upper)
    # pascal = L L^T, so its inverse is L^-T L^-1.
    prod = [
        [sum(upper[i][k] * lower[k][j] for k in range(n)) for j in range(n)]
        for i in range(n)
    ]
    return _as_matrix(prod)


def leslie(f, s):
    """The Leslie matrix: fecundities f in the first row, survival rates s on the
    subdiagonal."""
    check_arraylike("leslie", f, s)
    f, s = ufuncs.promote_dtypes(creation.asarray(f), creation.asarray(s))
    n = np.shape(f)[-1]
    if np.shape(s)[-1] != n - 1:
        raise ValueError(
            f"Incorrect lengths for f and s: len(s) must be len(f) - 1, got {n} and "
            f"{np.shape(s)[-1]}."
        )
    batch = np.broadcast_shapes(np.shape(f)[:-1], np.shape(s)[:-1])
    out = creation.zeros((*batch, n, n), dtype=f.dtype)
    out = out.at[..., 0, :].set(f)
    return out.at[..., np.arange(1, n), np.arange(n - 1)].set(s)


def qr_multiply(
    a,
    c,
    mode="right",
    pivoting=False,
    conjugate=False,
    overwrite_a=False,
    overwrite_c=False,
):
    """`(c @ Q, R)` (mode 'right') or `(Q @ c, R)` (mode 'left') for the economic QR
    decomposition of a, with `P` appended when `pivoting`; `conjugate` uses conj(Q)."""
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}.")
    check_arraylike("qr_multiply", a, c)
    a, c = creation.asarray(a), creation.asarray(c)
    outs = qr(a, mode="economic", pivoting=pivoting)
    q = ufuncs.conj(outs[0]) if conjugate else outs[0]
    m = np.shape(q)[-2]
    if mode == "right":
        if np.shape(c)[-1] != m:
            raise ValueError(
                f"Array shapes are not compatible for c @ Q operation: a has shape "
                f"{np.shape(a)} so Q has {m} rows, but c has {np.shape(c)[-1]} columns "
                f"(expected {m})."
            )
        cq = products.matmul(c, q)
    else:
        k = np.shape(q)[-1]
        rows = np.shape(c)[0] if np.ndim(c) else 0
        if rows != k:
            raise ValueError(
                f"Array shapes are not compatible for Q @ c operation: Q has {k} "
                f"columns, but c has {rows} rows (expected {k})."
            )
        cq = products.matmul(q, c)
    return (cq, *outs[1:])
