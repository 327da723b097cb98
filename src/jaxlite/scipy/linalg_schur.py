"""The Schur-based functions of jax.scipy.linalg: `schur`, `rsf2csf`, `sqrtm`, `funm`
and `solve_sylvester`.

Each reduces a problem on a general matrix to one on its triangular Schur form
`T = Z^H A Z`, where it can be solved entry by entry, and maps the answer back with Z:
- `sqrtm` (Bjorck and Hammarling): the square root U of a triangular T is triangular
  with `U_ii = sqrt(T_ii)` and, for i < j,
  `U_ij = (T_ij - sum_{i<k<j} U_ik U_kj) / (U_ii + U_jj)`;
- `funm` (Parlett's recurrence, Golub and Van Loan 11.1.1): `F_ii = f(T_ii)` and
  `F_ij = (T_ij (F_jj - F_ii) + sum_{i<k<j} (T_ik F_kj - F_ik T_kj)) / (T_jj - T_ii)`;
- `solve_sylvester` (Bartels and Stewart): `A X + X B = C` becomes `R Y + Y S = F`
  with R upper and S lower triangular, solved from the bottom-right corner.
An entry of superdiagonal d needs only entries of lower superdiagonals, and the sums
are exactly the (i, j) entries of `U @ U` (or `T F - F T`) while the superdiagonals
from d up are still zero. So the recurrences run one superdiagonal (for Sylvester, one
anti-diagonal of the m x n solution) at a time with whole-matrix products: O(n) steps
of lax operations, no dynamic indexing, and they trace, batch and differentiate.

`rsf2csf` turns a real quasi-triangular Schur form into a complex triangular one with
one Givens rotation per 2 x 2 block, from the bottom up, each putting the eigenvalue
with positive imaginary part first (as LAPACK orders conjugate pairs).
"""

from __future__ import annotations

import functools

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.lax import linalg as lax_linalg
from jaxlite.numpy import creation, products, reductions, ufuncs
from jaxlite.numpy import linalg as np_linalg
from jaxlite.numpy.shape import stack
from jaxlite.numpy.ufuncs import promote_dtypes_inexact
from jaxlite.numpy.vectorize import vectorize

__all__ = ["funm", "rsf2csf", "schur", "solve_sylvester", "sqrtm"]


def _complex_dtype(dtype):
    """The complex dtype holding values of `dtype` (complex64 for float32 and ints)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return dtype
    if dtype == np.float64:
        return np.dtype(np.complex128)
    return dtypes.canonicalize_dtype(np.complex128)


def _H(x):
    return ufuncs.conj(creation.asarray(x).mT)


def _mask(shape, fn):
    """A static boolean mask of `shape` from fn(i, j) on index grids."""
    i, j = np.indices(shape)
    return creation.asarray(fn(i, j))


def schur(a, output="real"):
    """Schur decomposition `(t, z)` with `a = z t z^H`: real quasi-triangular `t` for
    real input ("real"), or complex triangular `t` ("complex")."""
    if output not in ("real", "complex"):
        raise ValueError(
            f"Expected 'output' to be either 'real' or 'complex', got {output=}."
        )
    a = creation.asarray(a)
    if output == "complex":
        a = a.astype(_complex_dtype(a.dtype))
    t, z = lax_linalg.schur(a)
    return t, z


# --------------------------------------------------------------------------------------
# rsf2csf


def _rsf2csf_2d(t, z):
    dtype = _complex_dtype(np.result_type(t.dtype, z.dtype))
    t, z = t.astype(dtype), z.astype(dtype)
    n = t.shape[0]
    eps = float(dtypes.finfo(dtype).eps)
    for m in range(n - 1, 0, -1):
        a, b = t[m - 1, m - 1], t[m - 1, m]
        c, d = t[m, m - 1], t[m, m]
        coupled = ufuncs.abs(c) > eps * (ufuncs.abs(a) + ufuncs.abs(d))
        # mu: the block's eigenvalue with positive imaginary part, less d.
        half = (a - d) / 2
        mu = half + ufuncs.sqrt(half * half + b * c)
        r = ufuncs.sqrt(ufuncs.abs(mu) ** 2 + ufuncs.abs(c) ** 2).astype(dtype)
        r = ufuncs.where(coupled, r, 1)
        cs, sn = mu / r, c / r
        g = stack([stack([ufuncs.conj(cs), sn]), stack([-sn, cs])])
        rows = t[m - 1 : m + 1]
        rotated = ufuncs.where(
            _mask((2, n), lambda i, j, m=m: j >= m - 1), products.matmul(g, rows), rows
        )
        new_t = t.at[m - 1 : m + 1].set(rotated)
        cols = new_t[:, m - 1 : m + 1]
        rotated = ufuncs.where(
            _mask((n, 2), lambda i, j, m=m: i < m + 1),
            products.matmul(cols, _H(g)),
            cols,
        )
        new_t = new_t.at[:, m - 1 : m + 1].set(rotated)
        new_z = z.at[:, m - 1 : m + 1].set(products.matmul(z[:, m - 1 : m + 1], _H(g)))
        t = ufuncs.where(coupled, new_t, t).at[m, m - 1].set(0)
        z = ufuncs.where(coupled, new_z, z)
    return t, z


def rsf2csf(T, Z, check_finite=True):  # noqa: N803  (SciPy's names)
    """Convert a real Schur form `(T, Z)` to the complex Schur form (triangular T)."""
    del check_finite  # unused, as in JAX
    t, z = creation.asarray(T), creation.asarray(Z)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(
            f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}"
        )
    return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


# --------------------------------------------------------------------------------------
# Triangular recurrences, one superdiagonal at a time


def _set_superdiagonal(x, d, values):
    """x with its d-th superdiagonal replaced by `values` (length n - d)."""
    return ufuncs.add(x, creation.diag(values, k=d))


def _sqrtm_triu(t):
    """The upper-triangular square root of an upper-triangular matrix."""
    n = t.shape[-1]
    root = ufuncs.sqrt(creation.diagonal(t))
    u = creation.diag(root)
    for d in range(1, n):
        target = creation.diagonal(t, offset=d)
        partial = creation.diagonal(products.matmul(u, u), offset=d)
        same = target == partial  # 0 / 0 for repeated zero eigenvalues: the entry is 0
        den = ufuncs.where(same, 1, root[:-d] + root[d:])
        u = _set_superdiagonal(u, d, ufuncs.where(same, 0, (target - partial) / den))
    return u


def sqrtm(A, blocksize=1):  # noqa: N803  (SciPy's name)
    """Principal square root of a square matrix (complex result), by the Schur method:
    it works for matrices that are not diagonalisable too."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    t, z = schur(A, output="complex")
    root = vectorize(_sqrtm_triu, signature="(n,n)->(n,n)")(t)
    return products.matmul(products.matmul(z, root), _H(z))


def _parlett(f, t):
    """Parlett's recurrence: F = f(T) for triangular T given F's diagonal f, and the
    smallest |T_jj - T_ii| it divided by (|T_00| if smaller)."""
    n = t.shape[-1]
    diag_t = creation.diagonal(t)
    fm = creation.diag(f)
    minden = ufuncs.abs(t[0, 0])
    for d in range(1, n):
        commutator = products.matmul(t, fm) - products.matmul(fm, t)
        s = creation.diagonal(commutator, offset=d)
        den = diag_t[d:] - diag_t[:-d]
        safe = ufuncs.where(den != 0, den, 1)
        fm = _set_superdiagonal(fm, d, ufuncs.where(den != 0, s / safe, s))
        minden = ufuncs.minimum(minden, reductions.min(ufuncs.abs(den)))
    return fm, minden


def funm(A, func, disp=True):  # noqa: N803  (SciPy's name)
    """Evaluate the matrix function `func` (applied to the eigenvalues) at A, through
    the complex Schur form and Parlett's recurrence; with `disp=False` also an
    estimate of the relative error."""
    a = creation.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = rsf2csf(*schur(a))
    f = func(creation.diagonal(t)).astype(t.dtype)
    fm, minden = _parlett(f, t)
    fm = products.matmul(products.matmul(z, fm), _H(z))
    if disp:
        return fm
    # JAX's tolerance: float32's eps for single precision, else float64's.
    single = np.dtype(fm.dtype).char.lower() == "f"
    tol = float(np.finfo(np.float32 if single else np.float64).eps)
    minden = ufuncs.where(minden == 0.0, tol, minden)
    spread = np_linalg.norm(creation.triu(t, 1), 1)
    err = ufuncs.minimum(1, ufuncs.maximum(tol, (tol / minden) * spread))
    err = ufuncs.where(reductions.any(ufuncs.isinf(fm)), np.inf, err)
    return fm, err


# --------------------------------------------------------------------------------------
# Sylvester equations


def _solve_triangular_sylvester(r, s, f):
    """Y with `r Y + Y s = f`, r (m, m) upper and s (n, n) lower triangular: entry
    (i, j) needs the entries below it and to its right, so the anti-diagonals are
    solved from the bottom-right corner."""
    m, n = f.shape
    strict_r = creation.triu(r, 1)
    strict_s = creation.tril(s, -1)
    den = creation.diagonal(r)[:, None] + creation.diagonal(s)[None, :]
    level = (m - 1 - np.arange(m))[:, None] + (n - 1 - np.arange(n))[None, :]
    y = creation.zeros_like(f)
    for k in range(m + n - 1):
        rest = products.matmul(strict_r, y) + products.matmul(y, strict_s)
        y = ufuncs.where(creation.asarray(level == k), (f - rest) / den, y)
    return y


def _solve_sylvester_2d(a, b, c, *, method, tol):
    m, n = c.shape
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(_H(b), output="complex")
        f = products.matmul(products.matmul(_H(u), c.astype(r.dtype)), v)
        y = _solve_triangular_sylvester(r, _H(s), f)
        x = products.matmul(products.matmul(u, y), _H(v))
    elif method == "eigen":
        wa, ua = np_linalg.eig(a)
        wb, ub = np_linalg.eig(b)
        f = np_linalg.solve(ua, products.matmul(c.astype(wa.dtype), ub))
        y = f / (wa[:, None] + wb[None, :])
        x = products.matmul(products.matmul(ua[:m, :m], y[:m, :n]), np_linalg.inv(ub))
    else:
        raise ValueError(
            f'Unrecognized method {method}. The two valid methods are either "schur" '
            'or "eigen".'
        )
    if not dtypes.issubdtype(c.dtype, np.complexfloating):
        x = ufuncs.real(x)
    sums = np_linalg.eigvals(a)[:, None] + np_linalg.eigvals(b)[None, :]
    singular = reductions.any(ufuncs.abs(sums) < tol)
    return ufuncs.where(singular, lax.full_like(x, np.nan), x)


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):  # noqa: N803
    """Solve `A X + X B = C` (Bartels-Stewart through Schur forms, or through
    eigendecompositions with method="eigen"); NaNs when A and -B share an
    eigenvalue (to `tol`)."""
    a, b, c = promote_dtypes_inexact(
        creation.asarray(A), creation.asarray(B), creation.asarray(C)
    )
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(
            f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\nB: "
            f"{b.shape}\nC: {c.shape}"
        )
    solve = functools.partial(_solve_sylvester_2d, method=method, tol=tol)
    return vectorize(solve, signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
