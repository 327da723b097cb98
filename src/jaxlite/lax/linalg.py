"""jax.lax.linalg: the matrix factorisations as primitives.

Each decomposition (Cholesky, symmetric and general eigendecompositions, LU, QR, SVD,
Hessenberg) and each structured solve (triangular, tridiagonal) is one primitive that
works on stacks of matrices: the last two axes are the matrix, any leading axes are a
batch, so vmap only moves the batch axis to the front. The implementations are NumPy's
LAPACK bindings where NumPy has them and the kernels of `linalg_numpy` where it does not.

The derivative rules are the standard matrix-calculus ones, written with the primitives
themselves (triangular solves, products), so they differentiate again and transpose:
`triangular_solve` and `tridiagonal_solve` are linear in their right-hand side and have
transpose rules; every other tangent is built from linear operations on the tangents.
Primitive names, parameters and output orders are JAX's (`eigh` returns `(v, w)`, `svd`
returns `(s, u, vt)`), so jaxprs read alike; the public functions reorder the results
as JAX's do.
"""

from __future__ import annotations

import enum

import numpy as np

from jaxlite import dtypes
from jaxlite.core import (
    Array,
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
from jaxlite.lax.dot import dot_general
from jaxlite.lax.indexing import slice_in_dim
from jaxlite.lax.reductions import reduce_sum
from jaxlite.lax.structural import (
    broadcast_in_dim,
    broadcasted_iota,
    concatenate,
    operand,
    pad,
    reshape,
    squeeze,
    transpose,
)

__all__ = [
    "EigImplementation",
    "EighImplementation",
    "SvdAlgorithm",
    "cholesky",
    "cholesky_p",
    "cholesky_update",
    "eig",
    "eig_p",
    "eigh",
    "eigh_p",
    "hessenberg",
    "hessenberg_p",
    "householder_product",
    "householder_product_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "ormqr",
    "qdwh",
    "qr",
    "qr_p",
    "schur",
    "schur_p",
    "svd",
    "svd_p",
    "symmetric_product",
    "triangular_solve",
    "triangular_solve_p",
    "tridiagonal",
    "tridiagonal_solve",
    "tridiagonal_solve_p",
]


class EigImplementation(enum.Enum):
    """Which algorithm `eig` uses (jaxlite always uses LAPACK through NumPy)."""

    LAPACK = "lapack"
    MAGMA = "magma"
    CUSOLVER = "cusolver"


class EighImplementation(enum.Enum):
    """Which algorithm `eigh` uses (jaxlite always uses LAPACK through NumPy)."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which algorithm `svd` uses (jaxlite always uses LAPACK's gesdd through NumPy)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# --------------------------------------------------------------------------------------
# Shared checks and lax-level helpers of the derivative rules


def _check_rank(name, i, shape, rank=2):
    if len(shape) < rank:
        raise TypeError(
            f"Input {i} to {name} must have rank at least {rank}, but got shape={shape}"
        )


def _check_inexact(name, i, dtype):
    if not (
        dtypes.issubdtype(dtype, np.floating)
        or dtypes.issubdtype(dtype, np.complexfloating)
    ):
        raise TypeError(
            f"{name} does not accept dtype {np.dtype(dtype).name} at position {i}. "
            f"Accepted dtypes at position {i} are subtypes of floating, complexfloating."
        )


def _real_dtype(dtype):
    return (
        np.finfo(dtype).dtype if dtypes.issubdtype(dtype, np.complexfloating) else dtype
    )


def _is_complex(x):
    return dtypes.issubdtype(get_aval(x).dtype, np.complexfloating)


def _ndim(x):
    return len(get_aval(x).shape)


def _shape(x):
    return get_aval(x).shape


def _batch_front(vals, dims, axis_size):
    return [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]


def _T(x):
    nd = _ndim(x)
    return transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def _H(x):
    x = _T(x)
    return ew.conj(x) if _is_complex(x) else x


def _conj(x):
    return ew.conj(x) if _is_complex(x) else x


def _matmul(a, b):
    """Batched matrix product of (..., m, k) and (..., k, n) with equal batch axes."""
    nd = _ndim(a)
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _const(value, like, dtype=None):
    """A NumPy constant with leading size-1 axes up to the rank of `like`."""
    value = np.asarray(value, dtype if dtype is not None else get_aval(like).dtype)
    shape = (1,) * (_ndim(like) - value.ndim) + value.shape
    return Array(value.reshape(shape))


def _full_like(x, value):
    return Array(np.full(_shape(x), value, get_aval(x).dtype))


def _tri(x, k):
    """The mask `row + k >= col` over x's matrices, built as JAX's `jnp.tri` is (iotas
    and a comparison, broadcast over batch axes), so jaxprs read as JAX's."""
    m, n = _shape(x)[-2:]
    rows = ew.add(broadcasted_iota(np.int32, (m, n), 0), int(k))
    mask = ew.ge(rows, broadcasted_iota(np.int32, (m, n), 1))
    nd = _ndim(x)
    if nd > 2:
        mask = broadcast_in_dim(mask, _shape(x), (nd - 2, nd - 1))
    return mask


def _zeros(x):
    return broadcast_in_dim(
        ew.convert_element_type(0, get_aval(x).dtype), _shape(x), ()
    )


def _tril(x, k=0):
    """x's lower triangle (diagonal k and below), zero elsewhere: `jnp.tril`."""
    return ew.select_n(_tri(x, k), _zeros(x), x)


def _triu(x, k=0):
    """x's upper triangle (diagonal k and above), zero elsewhere: `jnp.triu`."""
    return ew.select_n(_tri(x, k - 1), x, _zeros(x))


def _eye(n, like):
    return _const(np.eye(n), like)


def _diagonal(x):
    """The diagonal of square matrices (..., n, n) -> (..., n)."""
    n = _shape(x)[-1]
    return reduce_sum(ew.mul(x, _eye(n, x)), (_ndim(x) - 1,))


def _expand(x, axis):
    """Insert a size-1 axis at `axis` (negative counts from the end of the result)."""
    shape = list(_shape(x))
    axis = axis % (len(shape) + 1)
    kept = tuple(i for i in range(len(shape) + 1) if i != axis)
    shape.insert(axis, 1)
    return broadcast_in_dim(x, tuple(shape), kept)


def _bcast(x, shape):
    """Broadcast `x` (same rank, size-1 axes) to `shape`."""
    if _shape(x) == tuple(shape):
        return x
    return broadcast_in_dim(x, tuple(shape), tuple(range(len(shape))))


def _astype(x, dtype):
    return x if get_aval(x).dtype == dtype else ew.convert_element_type(x, dtype)


def _one_hot_rows(perm, n, dtype):
    """`P` with `P[..., i, j] = (perm[..., i] == j)`: `P @ x == x[..., perm, :]`."""
    rows = _expand(perm, -1)
    cols = np.arange(n, dtype=get_aval(perm).dtype).reshape((1,) * (_ndim(perm)) + (n,))
    shape = (*_shape(perm), n)
    hit = ew.eq(_bcast(rows, shape), _bcast(Array(cols), shape))
    return ew.convert_element_type(hit, dtype)


def _zero_tangent(x):
    return ad.Zero(ad.tangent_aval(get_aval(x)))


def _lu_solve(lu_, perm, b):
    """`a^{-1} b` from `lu(a)`: permute, then two triangular solves."""
    m = _shape(lu_)[-1]
    pb = _matmul(_one_hot_rows(perm, m, get_aval(b).dtype), b)
    y = triangular_solve(lu_, pb, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu_, y, left_side=True, lower=False)


def _solve(a, b):
    lu_, _, perm = lu_p.bind(a)
    return _lu_solve(lu_, perm, b)


def _move_front_rule(prim):
    """Batching by moving every batch axis to the front: the primitive already works
    on stacks of matrices."""

    def rule(axis_size, vals, dims, **params):
        outs = prim.bind(*_batch_front(vals, dims, axis_size), **params)
        outs = outs if prim.multiple_results else [outs]
        return outs, [0] * len(outs)

    return rule


# --------------------------------------------------------------------------------------
# cholesky


def _cholesky_impl(x):
    return [kernels.cholesky(x)]


def _cholesky_abstract(x):
    _check_rank("cholesky", 0, x.shape)
    _check_inexact("cholesky", 0, x.dtype)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"The input to cholesky must be a square matrix. Got shape {x.shape[-2:]}."
        )
    return [ShapedArray(x.shape, x.dtype)], no_effects


def _cholesky_jvp(primals, tangents):
    # L' = L phi(L^-1 X' L^-H), phi: the lower triangle with half the diagonal.
    (x,), (x_dot,) = primals, tangents
    chol = cholesky_p.bind(x)
    n = _shape(x)[-1]
    tmp = triangular_solve(
        chol, x_dot, left_side=False, lower=True, transpose_a=True, conjugate_a=True
    )
    tmp = triangular_solve(chol, tmp, left_side=True, lower=True)
    phi = _const(np.tril(np.ones((n, n)), -1) + 0.5 * np.eye(n), x)
    return [chol], [_matmul(chol, ew.mul(tmp, phi))]


cholesky_p = Primitive("cholesky")
impl_rules[cholesky_p] = _cholesky_impl
abstract_eval_rules[cholesky_p] = _cholesky_abstract
ad.jvp_rules[cholesky_p] = _cholesky_jvp
batching.batch_rules[cholesky_p] = _move_front_rule(cholesky_p)


# --------------------------------------------------------------------------------------
# eigh: (v, w) with ascending real eigenvalues w and orthonormal eigenvector columns v


def _eigh_impl(x, *, algorithm, lower, sort_eigenvalues, subset_by_index):
    return kernels.eigh(x, lower, subset_by_index)


def _eigh_abstract(x, *, algorithm, lower, sort_eigenvalues, subset_by_index):
    _check_rank("eigh", 0, x.shape)
    _check_inexact("eigh", 0, x.dtype)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(
            "Argument to symmetric eigendecomposition must have shape [..., n, n], "
            f"got shape {x.shape}"
        )
    n = x.shape[-1]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    batch = x.shape[:-2]
    v = ShapedArray((*batch, n, d), x.dtype)
    w = ShapedArray((*batch, d), _real_dtype(x.dtype))
    return [v, w], no_effects


def _eigh_jvp(primals, tangents, **params):
    # w' = diag(V^H X' V); V' = V (F * (V^H X' V)), F[i, j] = 1 / (w[j] - w[i]).
    (x,), (x_dot,) = primals, tangents
    if params["subset_by_index"] is not None:
        raise NotImplementedError(
            "Derivatives not defined for partial eigen decomposition."
        )
    v, w = eigh_p.bind(x, **params)
    n = _shape(x)[-1]
    eye_real = _const(np.eye(n), v, _real_dtype(get_aval(v).dtype))
    diffs = ew.sub(_expand(w, -2), _expand(w, -1))
    f = ew.sub(ew.div(_const(1.0, diffs), ew.add(diffs, eye_real)), eye_real)
    vhxv = _matmul(_matmul(_H(v), x_dot), v)
    v_dot = _matmul(v, ew.mul(_astype(f, get_aval(v).dtype), vhxv))
    w_dot = _diagonal(vhxv)
    if _is_complex(w_dot):
        w_dot = ew.real(w_dot)
    return [v, w], [v_dot, w_dot]


eigh_p = Primitive("eigh", multiple_results=True)
impl_rules[eigh_p] = _eigh_impl
abstract_eval_rules[eigh_p] = _eigh_abstract
ad.jvp_rules[eigh_p] = _eigh_jvp
batching.batch_rules[eigh_p] = _move_front_rule(eigh_p)


# --------------------------------------------------------------------------------------
# lu: (lu, pivots, permutation) with x[..., permutation, :] = L @ U


def _lu_impl(x):
    return list(kernels.lu(x))


def _lu_abstract(x):
    _check_rank("lu", 0, x.shape)
    _check_inexact("lu", 0, x.dtype)
    *batch, m, n = x.shape
    k = min(m, n)
    return [
        ShapedArray(x.shape, x.dtype),
        ShapedArray((*batch, k), np.dtype(np.int32)),
        ShapedArray((*batch, m), np.dtype(np.int32)),
    ], no_effects


def _lu_jvp(primals, tangents):
    # With P x = L U: L^-1 P x' U^-1 = L^-1 L' + U' U^-1, a strictly lower plus an upper
    # triangular matrix; non-square inputs pad L and U to square with an identity.
    (x,), (x_dot,) = primals, tangents
    lu_, pivots, perm = lu_p.bind(x)
    *batch, m, n = _shape(x)
    k = min(m, n)
    dtype = get_aval(x).dtype
    px_dot = _matmul(_one_hot_rows(perm, m, dtype), x_dot)
    lower = _tril(slice_in_dim(lu_, 0, k, axis=-1), -1)
    if m > k:
        lower = concatenate(
            [lower, Array(np.zeros((*batch, m, m - k), dtype))], len(batch) + 1
        )
    lower = ew.add(lower, _eye(m, lower))
    upper = _triu(slice_in_dim(lu_, 0, k, axis=-2))
    if n > k:
        upper = concatenate(
            [upper, Array(np.zeros((*batch, n - k, n), dtype))], len(batch)
        )
        upper = ew.add(upper, _const(np.diag((np.arange(n) >= k).astype(dtype)), upper))
    la = triangular_solve(lower, px_dot, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(upper, la, left_side=False, lower=False)
    lu_dot = ew.add(_matmul(lower, _tril(lau, -1)), _matmul(_triu(lau), upper))
    return [lu_, pivots, perm], [lu_dot, _zero_tangent(pivots), _zero_tangent(perm)]


lu_p = Primitive("lu", multiple_results=True)
impl_rules[lu_p] = _lu_impl
abstract_eval_rules[lu_p] = _lu_abstract
ad.jvp_rules[lu_p] = _lu_jvp
batching.batch_rules[lu_p] = _move_front_rule(lu_p)


# --------------------------------------------------------------------------------------
# lu_pivots_to_permutation


def _lu_pivots_to_permutation_impl(pivots, *, permutation_size):
    return [kernels.lu_pivots_to_permutation(pivots, permutation_size)]


def _lu_pivots_to_permutation_abstract(pivots, *, permutation_size):
    _check_rank("lu_pivots_to_permutation", 0, pivots.shape, 1)
    if pivots.dtype != np.int32:
        raise TypeError(
            "lu_pivots_to_permutation does not accept dtype "
            f"{np.dtype(pivots.dtype).name} at position 0. Accepted dtypes at position "
            "0 are subtypes of int32."
        )
    if permutation_size < pivots.shape[-1]:
        raise ValueError(
            f"Output permutation size {permutation_size} has to exceed the trailing "
            f"dimension of the pivots. Got pivots size {pivots.shape[-1]}"
        )
    shape = (*pivots.shape[:-1], permutation_size)
    return [ShapedArray(shape, np.dtype(np.int32))], no_effects


def _integer_jvp(prim):
    """Integer outputs: the tangent is a symbolic zero (float0)."""

    def rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return [out], [_zero_tangent(out)]

    return rule


lu_pivots_to_permutation_p = Primitive("lu_pivots_to_permutation")
impl_rules[lu_pivots_to_permutation_p] = _lu_pivots_to_permutation_impl
abstract_eval_rules[lu_pivots_to_permutation_p] = _lu_pivots_to_permutation_abstract
ad.jvp_rules[lu_pivots_to_permutation_p] = _integer_jvp(lu_pivots_to_permutation_p)
batching.batch_rules[lu_pivots_to_permutation_p] = _move_front_rule(
    lu_pivots_to_permutation_p
)


# --------------------------------------------------------------------------------------
# qr: (q, r), or (q, r, p) with column pivoting: x[..., :, p] = q @ r


def _qr_impl(x, *, full_matrices, pivoting, use_magma):
    return kernels.qr(x, full_matrices, pivoting)


def _qr_abstract(x, *, full_matrices, pivoting, use_magma):
    _check_rank("qr", 0, x.shape)
    _check_inexact("qr", 0, x.dtype)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    outs = [ShapedArray((*batch, m, k), x.dtype), ShapedArray((*batch, k, n), x.dtype)]
    if pivoting:
        outs.append(ShapedArray((*batch, n), np.dtype(np.int32)))
    return outs, no_effects


def _qr_square_jvp(q, r, dx):
    """Tangents of the reduced QR of a tall or square x (m >= n)."""
    dx_rinv = triangular_solve(r, dx)  # right side, upper: dx R^-1
    qh_dx_rinv = _matmul(_H(q), dx_rinv)
    low = _tril(qh_dx_rinv, -1)
    omega = ew.sub(low, _H(low))  # skew-Hermitian
    if _is_complex(qh_dx_rinv):
        diag_imag = ew.sub(qh_dx_rinv, _astype(ew.real(qh_dx_rinv), get_aval(q).dtype))
        omega = ew.add(omega, ew.mul(diag_imag, _eye(_shape(r)[-1], omega)))
    dq = ew.add(_matmul(q, ew.sub(omega, qh_dx_rinv)), dx_rinv)
    dr = _matmul(ew.sub(qh_dx_rinv, omega), r)
    return dq, dr


def _qr_jvp(primals, tangents, *, full_matrices, pivoting, use_magma):
    (x,), (dx,) = primals, tangents
    *_, m, n = _shape(x)
    if full_matrices and m > n:
        raise NotImplementedError(
            "Unimplemented case of QR decomposition derivative: full_matrices=True "
            f"for a tall matrix of shape {_shape(x)} (use full_matrices=False)."
        )
    outs = qr_p.bind(
        x, full_matrices=full_matrices, pivoting=pivoting, use_magma=use_magma
    )
    q, r = outs[:2]
    if pivoting:
        p = outs[2]
        dx = _matmul(dx, _T(_one_hot_rows(p, n, get_aval(dx).dtype)))
        x = _matmul(x, _T(_one_hot_rows(p, n, get_aval(x).dtype)))
    if m >= n:
        dq, dr = _qr_square_jvp(q, r, dx)
    else:
        # Wide: x = [x1 x2] with square x1 = q r1, and r2 = q^H x2.
        dq, dr1 = _qr_square_jvp(
            q, slice_in_dim(r, 0, m, axis=-1), slice_in_dim(dx, 0, m, axis=-1)
        )
        x2, dx2 = slice_in_dim(x, m, n, axis=-1), slice_in_dim(dx, m, n, axis=-1)
        dr2 = ew.add(_matmul(_H(dq), x2), _matmul(_H(q), dx2))
        dr = concatenate([dr1, dr2], _ndim(r) - 1)
    tangents_out = [dq, dr]
    if pivoting:
        tangents_out.append(_zero_tangent(outs[2]))
    return outs, tangents_out


qr_p = Primitive("qr", multiple_results=True)
impl_rules[qr_p] = _qr_impl
abstract_eval_rules[qr_p] = _qr_abstract
ad.jvp_rules[qr_p] = _qr_jvp
batching.batch_rules[qr_p] = _move_front_rule(qr_p)


# --------------------------------------------------------------------------------------
# svd: (s, u, vt) with descending singular values, or (s,) without vectors


def _svd_impl(x, *, algorithm, compute_uv, full_matrices, subset_by_index):
    return kernels.svd(x, full_matrices, compute_uv, subset_by_index)


def _svd_abstract(x, *, algorithm, compute_uv, full_matrices, subset_by_index):
    _check_rank("svd", 0, x.shape)
    _check_inexact("svd", 0, x.dtype)
    *batch, m, n = x.shape
    k = min(m, n)
    if subset_by_index is not None:
        if full_matrices:
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        lo, hi = subset_by_index
        if not 0 <= lo <= hi <= k:
            raise ValueError(
                f"svd: subset_by_index must satisfy 0 <= start <= end <= {k}, got "
                f"{subset_by_index}"
            )
        k = hi - lo
    s = ShapedArray((*batch, k), _real_dtype(x.dtype))
    if not compute_uv:
        return [s], no_effects
    ku, kv = (m, n) if full_matrices else (k, k)
    u = ShapedArray((*batch, m, ku), x.dtype)
    vt = ShapedArray((*batch, kv, n), x.dtype)
    return [s, u, vt], no_effects


def _svd_jvp(
    primals, tangents, *, algorithm, compute_uv, full_matrices, subset_by_index
):
    (a,), (da,) = primals, tangents
    *_, m, n = _shape(a)
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices"
        )
    s, u, vt = svd_p.bind(
        a,
        algorithm=algorithm,
        compute_uv=True,
        full_matrices=False,
        subset_by_index=subset_by_index,
    )
    dtype = get_aval(a).dtype
    ut, v = _H(u), _H(vt)
    ds_mat = _matmul(_matmul(ut, da), v)
    ds = _diagonal(ds_mat)
    if _is_complex(ds):
        ds = ew.real(ds)
    if not compute_uv:
        return [s], [ds]
    k = _shape(s)[-1]
    s_row = _expand(s, -2)  # (..., 1, k)
    s_col = _expand(s, -1)  # (..., k, 1)
    eye = _const(np.eye(k), s_row)
    # F[i, j] = 1 / (s[j]^2 - s[i]^2) off the diagonal, 0 on it.
    s_diffs = ew.mul(ew.add(s_row, s_col), ew.sub(s_row, s_col))
    f = ew.sub(ew.div(_const(1.0, s_diffs), ew.add(s_diffs, eye)), eye)
    f = _astype(f, dtype)
    ds_s = ew.mul(_astype(s_row, dtype), ds_mat)
    s_ds = ew.mul(_astype(s_col, dtype), ds_mat)
    zero = ew.eq(s, _full_like(s, 0))
    safe_s = ew.select_n(zero, s, _full_like(s, 1))
    s_inv = ew.select_n(zero, ew.div(_full_like(s, 1), safe_s), _full_like(s, 0))
    s_inv_mat = _astype(ew.mul(_expand(s_inv, -2), eye), dtype)
    skew = ew.mul(ew.sub(ds_mat, _H(ds_mat)), _const(0.5, ds_mat))
    du_dv_diag = ew.mul(skew, s_inv_mat)
    du = _matmul(u, ew.add(ew.mul(f, ew.add(ds_s, _H(ds_s))), du_dv_diag))
    dv = _matmul(v, ew.mul(f, ew.add(s_ds, _H(s_ds))))
    if m > n:
        dav = _matmul(da, v)
        proj = ew.sub(dav, _matmul(u, _matmul(ut, dav)))
        du = ew.add(du, ew.div(proj, _astype(s_row, dtype)))
    if n > m:
        dahu = _matmul(_H(da), u)
        proj = ew.sub(dahu, _matmul(v, _matmul(vt, dahu)))
        dv = ew.add(dv, ew.div(proj, _astype(s_row, dtype)))
    return [s, u, vt], [ds, du, _H(dv)]


svd_p = Primitive("svd", multiple_results=True)
impl_rules[svd_p] = _svd_impl
abstract_eval_rules[svd_p] = _svd_abstract
ad.jvp_rules[svd_p] = _svd_jvp
batching.batch_rules[svd_p] = _move_front_rule(svd_p)


# --------------------------------------------------------------------------------------
# triangular_solve: op(a) @ x = b (left side) or x @ op(a) = b; linear in b


def _triangular_solve_impl(a, b, **params):
    return [kernels.triangular_solve(a, b, **params)]


def _triangular_solve_abstract(a, b, **params):
    _check_rank("triangular_solve", 0, a.shape)
    _check_rank("triangular_solve", 1, b.shape)
    _check_inexact("triangular_solve", 0, a.dtype)
    _check_inexact("triangular_solve", 1, b.dtype)
    if a.dtype != b.dtype:
        raise TypeError(
            "triangular_solve requires arguments to have the same dtypes, got "
            f"{a.dtype.name}, {b.dtype.name}."
        )
    if len(a.shape) != len(b.shape):
        raise TypeError(
            "All inputs to triangular_solve must have the same number of batch "
            f"dimensions, but got {[len(a.shape) - 2, len(b.shape) - 2]} batch "
            "dimensions for the inputs."
        )
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(
            "The first input to triangular_solve must be a square matrix. Got shape "
            f"{a.shape[-2:]}."
        )
    common = b.shape[-2] if params["left_side"] else b.shape[-1]
    if a.shape[-1] != common or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(
            "Incompatible shapes for arguments to triangular_solve: "
            f"{a.shape} and {b.shape}."
        )
    return [ShapedArray(b.shape, b.dtype)], no_effects


def _triangular_solve_jvp_a(
    a_dot, ans, a, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    # op(A) X = B  =>  X' = -op(A)^-1 op(A') X  (left)  or  -X op(A') op(A)^-1 (right).
    k = 1 if unit_diagonal else 0
    g = _tril(a_dot, -k) if lower else _triu(a_dot, k)
    g = ew.neg(g)
    if transpose_a:
        g = _T(g)
    if conjugate_a:
        g = _conj(g)
    params = dict(
        conjugate_a=conjugate_a,
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        unit_diagonal=unit_diagonal,
    )
    m, n = _shape(ans)[-2:]
    if left_side:
        if m > n:
            return triangular_solve_p.bind(a, _matmul(g, ans), **params)
        return _matmul(triangular_solve_p.bind(a, g, **params), ans)
    if m < n:
        return triangular_solve_p.bind(a, _matmul(ans, g), **params)
    return _matmul(ans, triangular_solve_p.bind(a, g, **params))


def _triangular_solve_jvp(primals, tangents, **params):
    (a, b), (a_dot, b_dot) = primals, tangents
    ans = triangular_solve_p.bind(a, b, **params)
    out = _zero_tangent(ans)
    if type(b_dot) is not ad.Zero:
        out = triangular_solve_p.bind(a, b_dot, **params)
    if type(a_dot) is not ad.Zero:
        out = ad.add_tangents(out, _triangular_solve_jvp_a(a_dot, ans, a, **params))
    return [ans], [out]


def _triangular_solve_transpose(ct, a, b, **params):
    if ad.is_undefined(a):
        raise NotImplementedError(
            "triangular_solve is linear only in its right-hand side b: it cannot be "
            "transposed with respect to the triangular matrix a."
        )
    if type(ct) is ad.Zero:
        return [None, None]
    params = dict(params, transpose_a=not params["transpose_a"])
    return [None, triangular_solve_p.bind(a, ct, **params)]


def _triangular_solve_batch(axis_size, vals, dims, **params):
    (a, b), (ad_, bd) = vals, dims
    if ad_ is batching.not_mapped:
        # Only b is batched: fold its batch axis into the columns (left side) or the
        # rows (right side) of b, so a is never broadcast.
        nd = _ndim(b)
        dst = nd - 1 if params["left_side"] else nd - 3
        b = batching.moveaxis(b, bd, dst)
        shape = _shape(b)
        if params["left_side"]:
            folded = (*shape[:-2], shape[-2] * shape[-1])
        else:
            folded = (*shape[:-3], shape[-3] * shape[-2], shape[-1])
        x = triangular_solve_p.bind(a, reshape(b, folded), **params)
        return [reshape(x, shape)], [dst]
    a, b = _batch_front(vals, dims, axis_size)
    return [triangular_solve_p.bind(a, b, **params)], [0]


triangular_solve_p = Primitive("triangular_solve")
impl_rules[triangular_solve_p] = _triangular_solve_impl
abstract_eval_rules[triangular_solve_p] = _triangular_solve_abstract
ad.jvp_rules[triangular_solve_p] = _triangular_solve_jvp
ad.transpose_rules[triangular_solve_p] = _triangular_solve_transpose
batching.batch_rules[triangular_solve_p] = _triangular_solve_batch


# --------------------------------------------------------------------------------------
# eig: eigenvalues and left/right eigenvectors of a general square matrix (complex)


def _eig_impl(
    x,
    *,
    compute_left_eigenvectors,
    compute_right_eigenvectors,
    enable_eigvec_derivs,
    implementation,
):
    outs = kernels.eig(x, compute_left_eigenvectors, compute_right_eigenvectors)
    dtype = _complex_dtype(np.asarray(x).dtype)
    return [o.astype(dtype) for o in outs]


def _complex_dtype(dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        return np.dtype(dtype)
    return np.dtype(np.complex128 if dtype == np.float64 else np.complex64)


def _eig_abstract(
    x,
    *,
    compute_left_eigenvectors,
    compute_right_eigenvectors,
    enable_eigvec_derivs,
    implementation,
):
    _check_rank("eig", 0, x.shape)
    _check_inexact("eig", 0, x.dtype)
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(
            f"The input to eig must be a square matrix. Got shape {x.shape[-2:]}."
        )
    dtype = _complex_dtype(x.dtype)
    outs = [ShapedArray(x.shape[:-1], dtype)]
    outs += [ShapedArray(x.shape, dtype)] * compute_left_eigenvectors
    outs += [ShapedArray(x.shape, dtype)] * compute_right_eigenvectors
    return outs, no_effects


def _eig_vectors_jvp(w, v, da):
    """Tangents of eigenvalues w and unit-norm eigenvectors v (columns) of A for A'."""
    c = _solve(v, _matmul(da, v))  # V^-1 A' V
    dw = _diagonal(c)
    n = _shape(w)[-1]
    eye = _const(np.eye(n), v)
    diffs = ew.sub(_expand(w, -2), _expand(w, -1))
    f = ew.sub(ew.div(_const(1.0, diffs), ew.add(diffs, eye)), eye)
    dv = _matmul(v, ew.mul(f, c))
    # Keep each column at unit norm: remove the part of dv that changes |v|.
    along = ew.real(reduce_sum(ew.mul(ew.conj(v), dv), (_ndim(v) - 2,)))
    dv = ew.sub(dv, ew.mul(v, _astype(_expand(along, -2), get_aval(v).dtype)))
    return dw, dv


def _eig_jvp(
    primals,
    tangents,
    *,
    compute_left_eigenvectors,
    compute_right_eigenvectors,
    enable_eigvec_derivs,
    implementation,
):
    (a,), (da,) = primals, tangents
    vectors = compute_left_eigenvectors or compute_right_eigenvectors
    if vectors and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under "
            "assumptions on the input that JAX cannot check (see the "
            "enable_eigvec_derivs argument to jax.lax.linalg.eig). Pass "
            "enable_eigvec_derivs=True to jax.lax.linalg.eig to opt in."
        )
    outs = eig_p.bind(
        a,
        compute_left_eigenvectors=compute_left_eigenvectors,
        compute_right_eigenvectors=True,
        # The eigenvalue tangents use the eigenvectors, so higher derivatives of the
        # eigenvalues differentiate them (valid for distinct eigenvalues).
        enable_eigvec_derivs=True,
        implementation=implementation,
    )
    w, vr = outs[0], outs[-1]
    da = _astype(da, get_aval(vr).dtype)
    dw, dvr = _eig_vectors_jvp(w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if compute_left_eigenvectors:
        # Left eigenvectors are the right eigenvectors of A^H, eigenvalues conj(w).
        _, dvl = _eig_vectors_jvp(ew.conj(w), outs[1], _H(da))
        primal_out.append(outs[1])
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


eig_p = Primitive("eig", multiple_results=True)
impl_rules[eig_p] = _eig_impl
abstract_eval_rules[eig_p] = _eig_abstract
ad.jvp_rules[eig_p] = _eig_jvp
batching.batch_rules[eig_p] = _move_front_rule(eig_p)


# --------------------------------------------------------------------------------------
# tridiagonal_solve: T x = b with T given by its three diagonals; linear in b


def _tridiagonal_solve_impl(dl, d, du, b, *, perturb_singular):
    return [kernels.tridiagonal_solve(dl, d, du, b)]


def _tridiagonal_solve_abstract(dl, d, du, b, *, perturb_singular):
    for i, x in enumerate((dl, d, du)):
        _check_rank("tridiagonal_solve", i, x.shape, 1)
    _check_rank("tridiagonal_solve", 3, b.shape, 2)
    _check_inexact("tridiagonal_solve", 0, dl.dtype)
    if not dl.shape == d.shape == du.shape:
        raise TypeError(
            "tridiagonal_solve requires that all diagonal arguments have the same "
            f"shape, got {dl.shape}, {d.shape} and {du.shape}."
        )
    if b.shape[:-1] != d.shape:
        raise TypeError(
            "tridiagonal_solve requires that the leading ndim-1 dimensions of b "
            f"equal the dimensions of the diagonal arguments, got b of shape {b.shape} "
            f"and diagonals of shape {d.shape}."
        )
    if not dl.dtype == d.dtype == du.dtype == b.dtype:
        raise TypeError(
            "tridiagonal_solve requires arguments to have the same dtypes, got "
            f"{dl.dtype.name}, {d.dtype.name}, {du.dtype.name}, {b.dtype.name}."
        )
    return [ShapedArray(b.shape, b.dtype)], no_effects


def _shift_rows(x, offset):
    """`y[..., i, :] = x[..., i - offset, :]` with zeros shifted in (offset +-1)."""
    config = [(0, 0, 0)] * _ndim(x)
    config[-2] = (offset, -offset, 0)
    return pad(x, Array(np.zeros((), get_aval(x).dtype)), config)


def _shift(x, offset):
    """`y[..., i] = x[..., i - offset]` along the last axis, zeros shifted in."""
    config = [(0, 0, 0)] * _ndim(x)
    config[-1] = (offset, -offset, 0)
    return pad(x, Array(np.zeros((), get_aval(x).dtype)), config)


def _tridiagonal_product(dl, d, du, x):
    """`T @ x` for the tridiagonal T with diagonals dl, d, du."""
    y = ew.mul(_expand(d, -1), x)
    y = ew.add(y, ew.mul(_expand(dl, -1), _shift_rows(x, 1)))
    return ew.add(y, ew.mul(_expand(du, -1), _shift_rows(x, -1)))


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    # T x = b  =>  T x' = b' - T' x.
    *diags, b = primals
    *diag_dots, b_dot = tangents
    ans = tridiagonal_solve_p.bind(*diags, b, perturb_singular=perturb_singular)
    rhs = b_dot
    if any(type(t) is not ad.Zero for t in diag_dots):
        t_dots = [ad.instantiate(t) for t in diag_dots]
        matvec = ew.neg(_tridiagonal_product(*t_dots, ans))
        rhs = ad.add_tangents(rhs, matvec)
    if type(rhs) is ad.Zero:
        return [ans], [rhs]
    rhs = ad.instantiate(rhs)
    return [ans], [
        tridiagonal_solve_p.bind(*diags, rhs, perturb_singular=perturb_singular)
    ]


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    if any(ad.is_undefined(x) for x in (dl, d, du)):
        raise NotImplementedError(
            "tridiagonal_solve is linear only in its right-hand side b: it cannot be "
            "transposed with respect to the diagonals."
        )
    if type(ct) is ad.Zero:
        return [None] * 4
    # T^T has sub-diagonal du shifted down one and super-diagonal dl shifted up one.
    dl_t, du_t = _shift(du, 1), _shift(dl, -1)
    x = tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)
    return [None, None, None, x]


tridiagonal_solve_p = Primitive("tridiagonal_solve")
impl_rules[tridiagonal_solve_p] = _tridiagonal_solve_impl
abstract_eval_rules[tridiagonal_solve_p] = _tridiagonal_solve_abstract
ad.jvp_rules[tridiagonal_solve_p] = _tridiagonal_solve_jvp
ad.transpose_rules[tridiagonal_solve_p] = _tridiagonal_solve_transpose
batching.batch_rules[tridiagonal_solve_p] = _move_front_rule(tridiagonal_solve_p)


# --------------------------------------------------------------------------------------
# Public functions


def _symmetrize(x):
    """`(x + x^H) / 2`, a true division: integer matrices become float, as in JAX."""
    total = ew.add(x, _H(x))
    if not dtypes.issubdtype(get_aval(total).dtype, np.inexact):
        total = ew.convert_element_type(total, dtypes.default_float_dtype())
    return ew.div(total, Array(np.asarray(2, get_aval(total).dtype)))


def cholesky(x, *, symmetrize_input=True):
    """Lower Cholesky factor of Hermitian positive-definite matrices (..., n, n).

    Only the lower triangle is read (after symmetrising the input by default); a matrix
    that is not positive definite gives NaNs."""
    x = operand(x)
    if symmetrize_input:
        x = _symmetrize(x)
    return _tril(cholesky_p.bind(x))


def eigh(
    x,
    *,
    lower=True,
    symmetrize_input=True,
    sort_eigenvalues=True,
    subset_by_index=None,
    implementation=None,
):
    """`(v, w)`: eigenvectors (columns of v) and ascending eigenvalues w of Hermitian
    matrices; `subset_by_index=(lo, hi)` keeps eigenvalues lo..hi-1."""
    x = operand(x)
    if symmetrize_input:
        x = _symmetrize(x)
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
    v, w = eigh_p.bind(
        x,
        algorithm=implementation,
        lower=bool(lower),
        sort_eigenvalues=bool(sort_eigenvalues),
        subset_by_index=subset_by_index,
    )
    return v, w


def eig(
    x,
    *,
    compute_left_eigenvectors=True,
    compute_right_eigenvectors=True,
    enable_eigvec_derivs=False,
    implementation=None,
    use_magma=None,
):
    """Eigenvalues and (optionally) left and right eigenvectors of square matrices, as
    a list `[w, vl, vr]` of complex arrays (vectors left out when not requested)."""
    return eig_p.bind(
        operand(x),
        compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
        enable_eigvec_derivs=bool(enable_eigvec_derivs),
        implementation=implementation,
    )


def lu(x):
    """LU decomposition with partial pivoting: `(lu, pivots, permutation)` with
    `x[..., permutation, :] == L @ U` (L unit lower triangular, stored below lu's
    diagonal; U upper triangular). A list, as JAX returns it."""
    return list(lu_p.bind(operand(x)))


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation that applying the row swaps `i <-> pivots[..., i]` in order
    gives to `arange(permutation_size)`."""
    return lu_pivots_to_permutation_p.bind(
        operand(pivots), permutation_size=int(permutation_size)
    )


def qr(x, *, pivoting=False, full_matrices=True, use_magma=None):
    """QR decomposition `(q, r)`, or `(q, r, p)` with column pivoting
    (`x[..., :, p] == q @ r`)."""
    outs = qr_p.bind(
        operand(x),
        full_matrices=bool(full_matrices),
        pivoting=bool(pivoting),
        use_magma=use_magma,
    )
    return tuple(outs)


def svd(
    x, *, full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None
):
    """Singular value decomposition: `(u, s, vt)` with descending s, or `s` alone when
    `compute_uv=False`."""
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
    outs = svd_p.bind(
        operand(x),
        algorithm=algorithm,
        compute_uv=bool(compute_uv),
        full_matrices=bool(full_matrices),
        subset_by_index=subset_by_index,
    )
    if not compute_uv:
        return outs[0]
    s, u, vt = outs
    return u, s, vt


def triangular_solve(
    a,
    b,
    *,
    left_side=False,
    lower=False,
    transpose_a=False,
    conjugate_a=False,
    unit_diagonal=False,
):
    """Solve `op(a) @ x = b` (left_side) or `x @ op(a) = b` for triangular a, where
    op transposes and/or conjugates a as asked. A `b` with one axis fewer than `a` is
    a single vector."""
    a, b = operand(a), operand(b)
    conjugate_a = bool(conjugate_a) and _is_complex(a)
    singleton = _ndim(b) == _ndim(a) - 1
    if singleton:
        b = _expand(b, -1 if left_side else -2)
    out = triangular_solve_p.bind(
        a,
        b,
        conjugate_a=conjugate_a,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        unit_diagonal=bool(unit_diagonal),
    )
    if singleton:
        out = squeeze(out, (_ndim(out) - 1 if left_side else _ndim(out) - 2,))
    return out


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
    """Solve the tridiagonal system with sub-diagonal dl (dl[..., 0] unused), diagonal
    d and super-diagonal du (du[..., -1] unused) for right-hand sides b (..., m, n)."""
    return tridiagonal_solve_p.bind(
        operand(dl),
        operand(d),
        operand(du),
        operand(b),
        perturb_singular=bool(perturb_singular),
    )


def symmetric_product(
    a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False
):
    """`alpha * a @ a^H + beta * c` (the lower triangle is what JAX guarantees; here
    the whole product is computed)."""
    a, c = operand(a_matrix), operand(c_matrix)
    out = ew.add(
        ew.mul(_const(alpha, a), _matmul(a, _H(a))), ew.mul(_const(beta, c), c)
    )
    if symmetrize_output:
        out = ew.add(_tril(out), _H(_tril(out, -1)))
    return out


# Compositions of the primitives above, in their own module (imported last: they use it).
from jaxlite.lax.linalg_householder import (  # noqa: E402
    hessenberg,
    hessenberg_p,
    householder_product,
    householder_product_p,
)
from jaxlite.lax.linalg_qdwh import qdwh  # noqa: E402
from jaxlite.lax.linalg_schur import schur, schur_p  # noqa: E402
from jaxlite.lax.linalg_updates import cholesky_update, ormqr, tridiagonal  # noqa: E402
