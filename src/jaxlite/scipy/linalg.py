"""jax.scipy.linalg: SciPy's linear-algebra API on the primitives of `lax.linalg`.

SciPy's conventions differ from NumPy's in small ways that are kept here: `cholesky`
returns the upper factor by default and reads one triangle only, `lu` returns a
permutation matrix `p` with `a = p @ l @ u`, `lu_factor`/`lu_solve` and
`cho_factor`/`cho_solve` pass factorisations around, and `solve` takes an `assume_a`
hint. The matrix exponential uses scaling and squaring with Higham's Pade
approximants (orders 3 to 13, chosen by the 1-norm), written in lax operations so it
differentiates to any order, vmaps and jits.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, get_aval
from jaxlite.lax import linalg as lax_linalg
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.numpy import creation, products, ufuncs
from jaxlite.numpy import linalg as np_linalg
from jaxlite.numpy.shape import (
    atleast_1d,
    atleast_2d,
    broadcast_to,
    concatenate,
    flip,
    matrix_transpose,
)
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "circulant",
    "companion",
    "det",
    "eigh",
    "eigh_tridiagonal",
    "expm",
    "expm_frechet",
    "hankel",
    "hessenberg",
    "hilbert",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "polar",
    "qr",
    "solve",
    "solve_triangular",
    "svd",
    "toeplitz",
]


def _inexact(fun_name, *args):
    check_arraylike(fun_name, *args)
    return promote_dtypes_inexact(*args)


def _dtype(x):
    return get_aval(x).dtype


def _is_complex(x):
    return dtypes.issubdtype(_dtype(x), np.complexfloating)


def _H(x):
    x = matrix_transpose(x)
    return ufuncs.conj(x) if _is_complex(x) else x


def _check_solve_shapes(a, b):
    sa, sb = np.shape(a), np.shape(b)
    if not (
        len(sa) >= 2
        and sa[-1] == sa[-2]
        and len(sb) >= 1
        and sb[-1 if len(sb) == len(sa) - 1 else -2] == sa[-1]
    ):
        raise ValueError(
            "The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or "
            f"b=[..., m]; got a={sa} and b={sb}"
        )


# --------------------------------------------------------------------------------------
# Cholesky


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor of a Hermitian positive-definite matrix: upper U with
    `a = U^H U` (default) or lower L with `a = L L^H`; reads only that triangle."""
    (a,) = _inexact("jax.scipy.linalg.cholesky", a)
    factor = lax_linalg.cholesky(a if lower else _H(a), symmetrize_input=False)
    return factor if lower else _H(factor)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """`(c, lower)` for `cho_solve`."""
    return cholesky(a, lower=lower), lower


def _cho_solve(c, b, lower):
    c, b = promote_dtypes_inexact(c, b)
    _check_solve_shapes(c, b)
    # a = L L^H: solve with L, then L^H (or U^H then U for the upper factor).
    b = lax_linalg.triangular_solve(
        c, b, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower
    )
    return lax_linalg.triangular_solve(
        c, b, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower
    )


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve `a x = b` from `cho_factor(a)`. b is (m,) or (..., m, k); its batch axes
    broadcast against c's, as in JAX."""
    c, lower = c_and_lower
    check_arraylike("jax.scipy.linalg.cho_solve", c, b)
    if np.ndim(b) >= 2 and np.ndim(c) > np.ndim(b):
        b = broadcast_to(b, np.shape(c)[:-2] + np.shape(b)[-2:])
    return _cho_solve(c, b, lower)


# --------------------------------------------------------------------------------------
# LU


def _permutation_matrix(perm, m, dtype):
    """`p` with `p[..., i, j] = (perm[..., j] == i)`, so that `a = p @ l @ u`."""
    rows = lax.broadcasted_iota(
        np.int32, (*np.shape(perm)[:-1], m, m), np.ndim(perm) - 1
    )
    cols = lax.expand_dims(perm, (np.ndim(perm) - 1,))
    hit = ufuncs.equal(rows, cols)
    return lax.convert_element_type(hit, dtype)


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """LU decomposition `(p, l, u)` with `a = p @ l @ u`, or `(p @ l, u)` with
    `permute_l=True`."""
    (a,) = _inexact("jax.scipy.linalg.lu", a)
    lu_, _, perm = lax_linalg.lu(a)
    *batch, m, n = np.shape(a)
    k = min(m, n)
    dtype = _dtype(a)
    # p is real even for complex a, as in JAX.
    p = _permutation_matrix(perm, m, np.zeros((), dtype).real.dtype)
    lower = ufuncs.add(
        creation.tril(lu_, -1)[..., :, :k], creation.eye(m, k, dtype=dtype)
    )
    upper = creation.triu(lu_)[..., :k, :]
    if permute_l:
        return products.matmul(p, lower), upper
    return p, lower, upper


def lu_factor(a, overwrite_a=False, check_finite=True):
    """`(lu, piv)`: LAPACK's packed LU factors and 0-based row swaps."""
    (a,) = _inexact("jax.scipy.linalg.lu_factor", a)
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve `a x = b` (trans=0), `a^T x = b` (1) or `a^H x = b` (2) from
    `lu_factor(a)`."""
    lu_, pivots = lu_and_piv
    check_arraylike("jax.scipy.linalg.lu_solve", lu_, b)
    lu_, b = promote_dtypes_inexact(lu_, b)
    m = np.shape(lu_)[-1]
    if np.ndim(lu_) < 2 or np.shape(lu_)[-2] != m:
        raise ValueError(
            "last two dimensions of LU decomposition must be equal, got shape "
            f"{np.shape(lu_)}"
        )
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    vector = np.ndim(b) == 1
    if vector:
        b = b[:, None]
    if np.shape(b)[-2] != m:
        raise ValueError(
            "When LU decomposition matrix and b have the same number of dimensions, "
            f"last axis of LU decomposition matrix (shape {np.shape(lu_)}) and second "
            f"to last axis of b array (shape {np.shape(b)}) must match"
        )
    perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
    lu_, b = _broadcast_batch(lu_, b)
    perm = broadcast_to(perm, np.shape(lu_)[:-1])
    p = _permutation_matrix(perm, m, _dtype(lu_))  # a = p l u
    if trans == 0:
        x = products.matmul(matrix_transpose(p), b)
        x = lax_linalg.triangular_solve(
            lu_, x, left_side=True, lower=True, unit_diagonal=True
        )
        x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=False)
    else:
        conj = trans == 2
        x = lax_linalg.triangular_solve(
            lu_, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj
        )
        x = lax_linalg.triangular_solve(
            lu_,
            x,
            left_side=True,
            lower=True,
            unit_diagonal=True,
            transpose_a=True,
            conjugate_a=conj,
        )
        x = products.matmul(p, x)
    return x[..., 0] if vector else x


def _broadcast_batch(a, b):
    sa, sb = np.shape(a), np.shape(b)
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    return broadcast_to(a, batch + sa[-2:]), broadcast_to(b, batch + sb[-2:])


# --------------------------------------------------------------------------------------
# Solves, inverse, determinant


def _solve_pos_impl(a, b, lower):
    return _cho_solve(cholesky(a, lower=lower), b, lower)


_solve_pos = custom_jvp(_solve_pos_impl, nondiff_argnums=(2,))


@_solve_pos.defjvp
def _solve_pos_jvp(lower, primals, tangents):
    # a x = b  =>  a x' = b' - a' x, reusing the Cholesky factor.
    a, b = primals
    a_dot, b_dot = tangents
    c = cholesky(a, lower=lower)
    x = _cho_solve(c, b, lower)
    return x, _cho_solve(c, ufuncs.subtract(b_dot, products.matmul(a_dot, x)), lower)


def solve(
    a,
    b,
    lower=False,
    overwrite_a=False,
    overwrite_b=False,
    debug=False,
    check_finite=True,
    assume_a="gen",
):
    """Solve `a x = b`; `assume_a="pos"` uses a Cholesky factorisation of the
    triangle named by `lower`."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Unknown assume_a value: {assume_a!r}")
    if assume_a != "pos":
        return np_linalg.solve(a, b)
    a, b = _inexact("jax.scipy.linalg.solve", a, b)
    _check_solve_shapes(a, b)
    vector = np.ndim(b) == np.ndim(a) - 1
    if vector:
        b = b[..., None]
    a, b = _broadcast_batch(a, b)
    x = _solve_pos(a, b, bool(lower))
    return x[..., 0] if vector else x


def solve_triangular(
    a,
    b,
    trans=0,
    lower=False,
    unit_diagonal=False,
    overwrite_b=False,
    debug=None,
    check_finite=True,
):
    """Solve `op(a) x = b` for triangular a; trans 0/"N", 1/"T" or 2/"C".

    As `jnp.vectorize` with signature `(n,n),(n,k)->(n,k)` (`(n,n),(n)->(n)` for a 1-D
    `b`): the batch dimensions of `a` and `b` broadcast against each other. A `b` with
    one dimension less than `a` and `a`'s size last is still read as a batch of
    vectors, with JAX's FutureWarning."""
    if trans in (0, "N"):
        transpose_a, conjugate_a = False, False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = _inexact("jax.scipy.linalg.solve_triangular", a, b)
    a_shape, b_shape = np.shape(a), np.shape(b)
    vector = len(b_shape) == 1
    if len(b_shape) > 1 and len(a_shape) == len(b_shape) + 1:
        vector = a_shape[-1] == b_shape[-1]
        if vector:
            warnings.warn(SOLVE_TRIANGULAR_1D_DEPRECATION, FutureWarning, stacklevel=2)
    if vector:
        b = b[..., None]
    a, b = _broadcast_batch(a, b)
    out = lax_linalg.triangular_solve(
        a,
        b,
        left_side=True,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return out[..., 0] if vector else out


SOLVE_TRIANGULAR_1D_DEPRECATION = (
    "jax.scipy.linalg.solve_triangular: batched 1D solves with b.ndim > 1 are "
    "deprecated, and in the future will be treated as a batched 2D solve. Use "
    "solve_triangular(a, b[..., None]).squeeze(-1) to avoid this warning."
)


def _broadcast_batch(a, b):
    """Matrices `a` and `b` with their batch dimensions (all but the last two)
    broadcast to a common shape."""
    a_shape, b_shape = np.shape(a), np.shape(b)
    batch = np.broadcast_shapes(a_shape[:-2], b_shape[:-2])
    if a_shape[:-2] != batch:
        a = broadcast_to(a, batch + a_shape[-2:])
    if b_shape[:-2] != batch:
        b = broadcast_to(b, batch + b_shape[-2:])
    return a, b


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of square matrices."""
    return np_linalg.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of square matrices."""
    return np_linalg.det(a)


# --------------------------------------------------------------------------------------
# Eigen- and singular value decompositions, QR, Hessenberg, polar, square root


def eigh(
    a,
    b=None,
    lower=True,
    eigvals_only=False,
    overwrite_a=False,
    overwrite_b=False,
    turbo=True,
    eigvals=None,
    type=1,  # noqa: A002
    check_finite=True,
):
    """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix (the standard
    problem only: `b=None`, `type=1`)."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = _inexact("jax.scipy.linalg.eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh_tridiagonal(
    d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None
):
    """Eigenvalues of the symmetric tridiagonal matrix with diagonal d and
    off-diagonal e (eigenvalues only, as in JAX); `select="i"` keeps the indices in
    `select_range` (inclusive)."""
    if not eigvals_only:
        raise NotImplementedError("Calculation of eigenvectors is not implemented")
    d, e = _inexact("jax.scipy.linalg.eigh_tridiagonal", d, e)
    n = np.shape(d)[-1]
    if np.shape(e)[-1] != n - 1:
        raise ValueError(
            f"e must have one element fewer than d, got d of shape {np.shape(d)} and e "
            f"of shape {np.shape(e)}"
        )
    sub = lax.pad(
        e, Array(np.zeros((), _dtype(e))), [(0, 0, 0)] * (np.ndim(e) - 1) + [(1, 0, 0)]
    )
    t = ufuncs.add(
        ufuncs.multiply(d[..., :, None], Array(np.eye(n, dtype=_dtype(d)))),
        ufuncs.multiply(sub[..., :, None], Array(np.eye(n, k=-1, dtype=_dtype(d)))),
    )
    _, w = lax_linalg.eigh(t, lower=True, symmetrize_input=False)
    if select == "a":
        return w
    if select == "i":
        lo, hi = select_range
        return w[..., int(lo) : int(hi) + 1]
    raise NotImplementedError(f"eigh_tridiagonal: select={select!r} is not implemented")


def svd(
    a,
    full_matrices=True,
    compute_uv=True,
    overwrite_a=False,
    check_finite=True,
    lapack_driver="gesdd",
):
    """Singular value decomposition `(u, s, vh)`, or s alone."""
    (a,) = _inexact("jax.scipy.linalg.svd", a)
    if compute_uv:
        return tuple(np_linalg.svd(a, full_matrices=full_matrices))
    return np_linalg.svd(a, full_matrices=full_matrices, compute_uv=False)


def qr(
    a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True
):
    """QR decomposition: `(q, r)` ("full" or "economic"), `(r,)` ("r"), with the
    column permutation appended when `pivoting=True`."""
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _inexact("jax.scipy.linalg.qr", a)
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    if mode == "r":
        return (r, p[0]) if pivoting else (r,)
    return (q, r, p[0]) if pivoting else (q, r)


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """Upper Hessenberg form `h` of a square matrix, and `q` with `a = q h q^H` when
    `calc_q=True`."""
    dtype = dtypes.dtype(a)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise TypeError(
            f"hessenberg does not accept dtype {dtype.name} at position 0. Accepted "
            "dtypes at position 0 are subtypes of floating, complexfloating."
        )
    (a,) = _inexact("jax.scipy.linalg.hessenberg", a)
    n = np.shape(a)[-1]
    if n == 0:
        zeros = creation.zeros_like(a)
        return (zeros, zeros) if calc_q else zeros
    a_out, taus = lax_linalg.hessenberg(a)
    h = creation.triu(a_out, -1)
    if not calc_q:
        return h
    dtype = _dtype(a_out)
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    # q acts on rows 1..n-1; the first basis vector is left alone.
    config = [(0, 0, 0)] * (np.ndim(q) - 2) + [(1, 0, 0), (1, 0, 0)]
    q = lax.pad(q, Array(np.zeros((), dtype)), config)
    corner = np.zeros((n, n), dtype)
    corner[0, 0] = 1
    return h, ufuncs.add(q, Array(corner))


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """Polar decomposition `(u, p)`: `a = u p` (side="right") or `a = p u` ("left"),
    u with orthonormal columns, p Hermitian positive semi-definite (from the SVD)."""
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} is not understood: use 'right' or 'left'.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method!r}.")
    (a,) = _inexact("jax.scipy.linalg.polar", a)
    u_svd, s, vh = np_linalg.svd(a, full_matrices=False)
    unitary = products.matmul(u_svd, vh)
    s = s.astype(_dtype(a))
    if side == "right":
        posdef = products.matmul(ufuncs.multiply(_H(vh), s[..., None, :]), vh)
    else:
        posdef = products.matmul(ufuncs.multiply(u_svd, s[..., None, :]), _H(u_svd))
    return unitary, posdef


# --------------------------------------------------------------------------------------
# Matrix exponential: scaling and squaring with Pade approximants (Higham 2005)

# Numerator coefficients b_0..b_m of the [m/m] Pade approximants of exp.
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (
        17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0,
        2162160.0, 110880.0, 3960.0, 90.0, 1.0,
    ),
    13: (
        64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
        1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
        33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0,
    ),
}  # fmt: skip

# The largest 1-norms for which each approximant is accurate to the unit roundoff of
# single and double precision (Higham's theta_m); the last one bounds the scaling.
_THETAS = {
    "single": (
        (3, 4.258730016922831e-01),
        (5, 1.880152677804762),
        (7, 3.925724783138660),
    ),
    "double": (
        (3, 1.495585217958292e-02),
        (5, 2.539398330063230e-01),
        (7, 9.504178996162932e-01),
        (9, 2.097847961257068),
        (13, 5.371920351148152),
    ),
}


def _pade(a, m):
    """`(u, v)`: the odd and even parts of the [m/m] Pade numerator of exp(a)."""
    b = _PADE[m]
    mm = products.matmul
    eye = creation.eye(np.shape(a)[-1], dtype=_dtype(a))
    a2 = mm(a, a)
    if m == 13:
        a4 = mm(a2, a2)
        a6 = mm(a4, a2)
        u_high = mm(a6, _poly(b[13], a6, b[11], a4, b[9], a2))
        u = mm(a, ufuncs.add(u_high, _poly(b[7], a6, b[5], a4, b[3], a2, b[1], eye)))
        v_high = mm(a6, _poly(b[12], a6, b[10], a4, b[8], a2))
        v = ufuncs.add(v_high, _poly(b[6], a6, b[4], a4, b[2], a2, b[0], eye))
        return u, v
    powers = [eye, a2]
    while len(powers) < (m + 1) // 2:
        powers.append(mm(powers[-1], a2))
    u = mm(a, _poly(*[t for k, p in enumerate(powers) for t in (b[2 * k + 1], p)]))
    v = _poly(*[t for k, p in enumerate(powers) for t in (b[2 * k], p)])
    return u, v


def _poly(*coef_and_terms):
    """`sum(c * t)` over the pairs (c, t)."""
    out = None
    for c, t in zip(coef_and_terms[::2], coef_and_terms[1::2]):
        term = ufuncs.multiply(c, t)
        out = term if out is None else ufuncs.add(out, term)
    return out


def _expm_2d(a, upper_triangular, max_squarings):
    dtype = _dtype(a)
    real = np.finfo(dtype).dtype
    precision = "double" if real == np.float64 else "single"
    thetas = _THETAS[precision]
    norm = lax.stop_gradient(np_linalg.norm(a, 1))
    theta_max = thetas[-1][1]
    squarings = ufuncs.maximum(
        0.0, ufuncs.ceil(ufuncs.log2(ufuncs.divide(norm, theta_max)))
    )
    squarings = ufuncs.where(ufuncs.isfinite(squarings), squarings, 0.0)
    scaled = ufuncs.divide(a, ufuncs.power(2.0, squarings).astype(dtype))
    scaled_norm = ufuncs.divide(norm, ufuncs.power(2.0, squarings))
    index = 0
    for _, theta in thetas[:-1]:
        index = ufuncs.add(index, ufuncs.greater(scaled_norm, theta).astype(np.int32))
    branches = [
        functools.partial(_pade_quotient, m=m, upper=upper_triangular)
        for m, _ in thetas
    ]
    r = lax.switch(index, branches, scaled)
    for i in range(max_squarings):
        r = ufuncs.where(ufuncs.less(i, squarings), products.matmul(r, r), r)
    too_big = ufuncs.logical_or(
        ufuncs.greater(squarings, max_squarings), ufuncs.isnan(norm)
    )
    return ufuncs.where(too_big, Array(np.array(np.nan, dtype)), r)


def _pade_quotient(a, m, upper):
    u, v = _pade(a, m)
    p, q = ufuncs.add(v, u), ufuncs.subtract(v, u)
    if upper:
        return solve_triangular(q, p, lower=False)
    return np_linalg.solve(q, p)


def expm(A, *, upper_triangular=False, max_squarings=16):  # noqa: N803
    """Matrix exponential of square matrices (..., n, n); at most `max_squarings`
    squarings (NaN where more would be needed)."""
    (a,) = _inexact("jax.scipy.linalg.expm", A)
    s = np.shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(
            f"Expected A to be a (batched) square matrix, got A.shape={s}."
        )
    fn = functools.partial(
        _expm_2d, upper_triangular=upper_triangular, max_squarings=max_squarings
    )
    for _ in range(len(s) - 2):
        fn = _vmap(fn)
    return fn(a)


def _vmap(fn):
    from jaxlite.api_vmap import vmap

    return vmap(fn)


def expm_frechet(A, E, *, method=None, compute_expm=True):  # noqa: N803
    """Frechet derivative of expm at A in direction E (`(expm(A), L)` by default),
    from the exponential of the block matrix [[A, E], [0, A]]."""
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"Unknown implementation {method!r}")
    a, e = _inexact("jax.scipy.linalg.expm_frechet", A, E)
    s = np.shape(a)
    if len(s) != 2 or s[0] != s[1] or np.shape(e) != s:
        raise ValueError(
            f"expected A and E to be square matrices of the same shape, got {s} and "
            f"{np.shape(e)}"
        )
    n = s[0]
    zeros = creation.zeros_like(a)
    big = concatenate(
        [concatenate([a, e], axis=1), concatenate([zeros, a], axis=1)],
        axis=0,
    )
    out = expm(big)
    expm_a, frechet = out[:n, :n], out[:n, n:]
    return (expm_a, frechet) if compute_expm else frechet


# --------------------------------------------------------------------------------------
# Special matrices


def block_diag(*arrs):
    """A block-diagonal matrix of the given matrices (scalars and vectors count as one
    row)."""
    if not arrs:
        return creation.zeros((1, 0))
    check_arraylike("jax.scipy.linalg.block_diag", *arrs)
    mats = [atleast_2d(creation.asarray(a)) for a in arrs]
    for m in mats:
        if np.ndim(m) != 2:
            raise ValueError(
                "Arguments to jax.scipy.linalg.block_diag must have at most 2 "
                f"dimensions, got {np.shape(m)}"
            )
    dtype = dtypes.result_type(*mats)
    total = sum(np.shape(m)[1] for m in mats)
    rows, start = [], 0
    for m in mats:
        r, c = np.shape(m)
        cfg = [(0, 0, 0), (start, total - start - c, 0)]
        rows.append(lax.pad(m.astype(dtype), Array(np.zeros((), dtype)), cfg))
        start += c
    return concatenate(rows, axis=0)


def _from_index(v, index):
    """`v[..., index]` for a static integer array `index`."""
    from jaxlite.numpy.indexing import take

    return take(v, Array(index.astype(np.int32)), axis=-1)


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (default conj(c));
    `r[0]` is ignored. Leading axes batch."""
    check_arraylike("toeplitz", c)
    c = atleast_1d(creation.asarray(c))
    if r is None:
        r = ufuncs.conj(c)
    else:
        check_arraylike("toeplitz", r)
        r = atleast_1d(creation.asarray(r))
    c, r = ufuncs.promote_dtypes(c, r)
    n, m = np.shape(c)[-1], np.shape(r)[-1]
    batch = np.broadcast_shapes(np.shape(c)[:-1], np.shape(r)[:-1])
    c = broadcast_to(c, batch + (n,))
    r = broadcast_to(r, batch + (m,))
    v = concatenate([flip(c, -1), r[..., 1:]], axis=-1)
    i, j = np.indices((n, m))
    return _from_index(v, n - 1 - i + j)


def circulant(c):
    """The circulant matrix with first column c (leading axes batch)."""
    check_arraylike("circulant", c)
    c = atleast_1d(creation.asarray(c))
    n = np.shape(c)[-1]
    i, j = np.indices((n, n))
    return _from_index(c, (i - j) % n)


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (zeros by default);
    `r[0]` is ignored."""
    check_arraylike("hankel", c)
    c = atleast_1d(creation.asarray(c))
    r = creation.zeros_like(c) if r is None else atleast_1d(creation.asarray(r))
    c, r = ufuncs.promote_dtypes(c, r)
    n, m = np.shape(c)[-1], np.shape(r)[-1]
    batch = np.broadcast_shapes(np.shape(c)[:-1], np.shape(r)[:-1])
    c = broadcast_to(c, batch + (n,))
    r = broadcast_to(r, batch + (m,))
    v = concatenate([c, r[..., 1:]], axis=-1)
    i, j = np.indices((n, m))
    return _from_index(v, i + j)


def hilbert(n):
    """The n x n Hilbert matrix `1 / (i + j + 1)`."""
    i, j = np.indices((n, n))
    dtype = dtypes.default_float_dtype()
    return creation.asarray((1.0 / (i + j + 1)).astype(dtype))


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest first)."""
    check_arraylike("companion", a)
    (a,) = promote_dtypes_inexact(creation.asarray(a))
    n = np.shape(a)[-1]
    if np.ndim(a) < 1 or n < 2:
        raise ValueError("The length of `a` must be at least 2.")
    first = ufuncs.negative(ufuncs.divide(a[..., 1:], a[..., 0:1]))
    below = creation.eye(n - 2, n - 1, dtype=_dtype(a)) if n > 2 else None
    batch = np.shape(a)[:-1]
    rows = [first[..., None, :]]
    if below is not None:
        rows.append(broadcast_to(below, batch + (n - 2, n - 1)))
    return concatenate(rows, axis=-2)


# The other special matrices and qr_multiply live in their own module (imported last:
# it uses this one).
from jaxlite.scipy.linalg_matrices import *  # noqa: E402, F403
from jaxlite.scipy.linalg_matrices import __all__ as _matrices_all  # noqa: E402
from jaxlite.scipy.linalg_schur import *  # noqa: E402, F403
from jaxlite.scipy.linalg_schur import __all__ as _schur_all  # noqa: E402

__all__ += _matrices_all + _schur_all
