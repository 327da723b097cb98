"""jax.numpy.linalg: NumPy's linear-algebra API on the primitives of `lax.linalg`.

Every function takes stacks of matrices (leading batch axes), promotes integer inputs
to the default float type, and is written with lax operations only, so it traces, jits,
vmaps and differentiates. Where differentiating through a factorisation would be
wasteful or ill-defined, the derivative is given directly, as in JAX: `solve` (and so
`inv`) differentiates as `x' = a^-1 (b' - a' x)` reusing one LU factorisation, `det`'s
derivative is the trace of the adjugate product (computed from the LU factors so that
it stays finite for singular matrices of rank n - 1), `slogdet`'s is `tr(a^-1 a')`, and
`pinv` uses the Golub-Pereyra formula.
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer, get_aval
from jaxlite.eager_jit import eager_jit
from jaxlite.lax import linalg as lax_linalg
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.lax.linalg_householder import geqrf
from jaxlite.numpy import creation, products, reductions, ufuncs
from jaxlite.numpy.indexing import take_along_axis
from jaxlite.numpy.shape import (
    broadcast_to,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
    stack,
)
from jaxlite.numpy.shape import matrix_transpose as _matrix_transpose
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact
from jaxlite.util import canonicalize_axis

__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]


class EigResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    U: Array
    S: Array
    Vh: Array


# --------------------------------------------------------------------------------------
# Helpers


def _inexact(fun_name, *args):
    check_arraylike(fun_name, *args)
    return promote_dtypes_inexact(*args)


def _is_complex(x):
    return dtypes.issubdtype(get_aval(x).dtype, np.complexfloating)


def _dtype(x):
    return get_aval(x).dtype


def _T(x):
    return _matrix_transpose(x)


def _H(x):
    return ufuncs.conj(_T(x)) if _is_complex(x) else _T(x)


def _check_square(fun_name, a):
    s = np.shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(
            f"Argument to {fun_name} must have shape [..., n, n], got {s}."
        )


def _real_dtype(dtype):
    return (
        np.finfo(dtype).dtype if dtypes.issubdtype(dtype, np.complexfloating) else dtype
    )


def _broadcast_batch(a, b, a_core, b_core):
    """Broadcast the batch axes (all but the last `*_core` axes) of a and b together."""
    sa, sb = np.shape(a), np.shape(b)
    batch = np.broadcast_shapes(sa[: len(sa) - a_core], sb[: len(sb) - b_core])
    a = broadcast_to(a, batch + sa[len(sa) - a_core :])
    b = broadcast_to(b, batch + sb[len(sb) - b_core :])
    return a, b


def _permute_rows(perm, x):
    """`x[..., perm, :]` for a batch of permutations, as a product with a 0/1 matrix."""
    n = np.shape(perm)[-1]
    one_hot = lax.eq(
        lax.expand_dims(perm, (np.ndim(perm),)),
        lax.broadcasted_iota(_dtype(perm), (*np.shape(perm), n), np.ndim(perm)),
    )
    return products.matmul(lax.convert_element_type(one_hot, _dtype(x)), x)


def _lu_solve(lu, perm, b):
    """`a^-1 b` from the LU factors of a (b has a's batch axes and shape (..., n, k))."""
    x = _permute_rows(perm, b)
    x = lax_linalg.triangular_solve(
        lu, x, left_side=True, lower=True, unit_diagonal=True
    )
    return lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)


# --------------------------------------------------------------------------------------
# solve and inv: one LU factorisation, and a derivative that reuses it


@custom_jvp
def _solve(a, b):
    lu, _, perm = lax_linalg.lu(a)
    return _lu_solve(lu, perm, b)


@_solve.defjvp
def _solve_jvp(primals, tangents):
    # a x = b  =>  a x' = b' - a' x.
    a, b = primals
    a_dot, b_dot = tangents
    lu, _, perm = lax_linalg.lu(a)
    x = _lu_solve(lu, perm, b)
    rhs = ufuncs.subtract(b_dot, products.matmul(a_dot, x))
    return x, _lu_solve(lu, perm, rhs)


@eager_jit(n_arrays=2)
def solve(a, b):
    """Solve `a @ x = b` for square a (..., m, m) and b (..., m, k) or a vector b (m,);
    batch axes broadcast."""
    a, b = _inexact("jnp.linalg.solve", a, b)
    if np.ndim(a) < 2:
        raise ValueError(
            f"left hand array must be at least two dimensional; got a.shape={np.shape(a)}"
        )
    sa, sb = np.shape(a), np.shape(b)
    if sa[-1] != sa[-2]:
        raise ValueError(f"Argument to solve must have shape [..., m, m], got {sa}.")
    if len(sb) > 1 and len(sa) == len(sb) + 1 and sa[-1] == sb[-1] != sb[-2]:
        raise ValueError(
            f"Invalid shapes for solve: {sa}, {sb}. Prior to JAX v0.5.0, this would have "
            "been treated as a batched 1-dimensional solve. To recover this behavior, "
            "use solve(a, b[..., None]).squeeze(-1)."
        )
    vector = len(sb) == 1
    if vector:
        b = lax.expand_dims(b, (1,))
    core = np.shape(b)[-2]
    if core != sa[-1]:
        raise ValueError(
            f"inconsistent size for core dimension 'm': {core} vs {sa[-1]} in "
            f"jnp.linalg.solve with a.shape={sa} and b.shape={sb}."
        )
    a, b = _broadcast_batch(a, b, 2, 2)
    x = _solve(a, b)
    return x[..., 0] if vector else x


@eager_jit
def inv(a):
    """The inverse of square matrices (..., n, n)."""
    (a,) = _inexact("jnp.linalg.inv", a)
    s = np.shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Argument to inv must have shape [..., n, n], got {s}.")
    eye = broadcast_to(creation.eye(s[-1], dtype=_dtype(a)), s)
    return _solve(a, eye)


# --------------------------------------------------------------------------------------
# Determinants


def _lu_sign_and_diag(a):
    lu, pivots, perm = lax_linalg.lu(a)
    n = np.shape(a)[-1]
    diag = creation.diagonal(lu, 0, -2, -1)
    swaps = ufuncs.not_equal(pivots, Array(np.arange(n, dtype=np.int32)))
    parity = reductions.count_nonzero(swaps, axis=-1)
    sign = lax.convert_element_type(
        ufuncs.subtract(1, ufuncs.multiply(2, ufuncs.remainder(parity, 2))), _dtype(a)
    )
    return lu, perm, diag, sign


@custom_jvp
def _slogdet_lu(a):
    _, _, diag, sign = _lu_sign_and_diag(a)
    dtype = _dtype(a)
    is_zero = reductions.any(ufuncs.equal(diag, 0), axis=-1)
    if _is_complex(a):
        phase = ufuncs.divide(diag, ufuncs.abs(diag).astype(dtype))
        sign = ufuncs.multiply(sign, reductions.prod(phase, axis=-1))
    else:
        negatives = reductions.count_nonzero(ufuncs.less(diag, 0), axis=-1)
        flip = ufuncs.subtract(1, ufuncs.multiply(2, ufuncs.remainder(negatives, 2)))
        sign = ufuncs.multiply(sign, flip.astype(dtype))
    sign = ufuncs.where(is_zero, Array(np.zeros((), dtype)), sign)
    logdet = reductions.sum(ufuncs.log(ufuncs.abs(diag)), axis=-1)
    real = _real_dtype(dtype)
    logdet = ufuncs.where(is_zero, Array(np.array(-np.inf, real)), logdet)
    return sign, logdet


@_slogdet_lu.defjvp
def _slogdet_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    sign, logdet = _slogdet_lu(a)
    lu, _, perm = lax_linalg.lu(a)
    logdet_dot = products.trace(_lu_solve(lu, perm, a_dot), axis1=-2, axis2=-1)
    if _is_complex(a):
        sign_dot = ufuncs.multiply(
            ufuncs.subtract(logdet_dot, ufuncs.real(logdet_dot).astype(_dtype(a))), sign
        )
        logdet_dot = ufuncs.real(logdet_dot)
    else:
        sign_dot = creation.zeros_like(sign)
    return (sign, logdet), (sign_dot, logdet_dot)


def _slogdet_qr(a):
    if _is_complex(a):
        raise NotImplementedError(
            "slogdet method='qr' not implemented for complex inputs"
        )
    q, r = lax_linalg.qr(a, full_matrices=False)
    diag = creation.diagonal(r, 0, -2, -1)
    logdet = reductions.sum(ufuncs.log(ufuncs.abs(diag)), axis=-1)
    # det(q) is +-1: recover it from q itself through its own LU factors.
    _, _, q_diag, q_sign = _lu_sign_and_diag(lax.stop_gradient(q))
    q_det = ufuncs.multiply(q_sign, reductions.prod(ufuncs.sign(q_diag), axis=-1))
    sign = ufuncs.multiply(q_det, reductions.prod(ufuncs.sign(diag), axis=-1))
    return sign, logdet


@eager_jit
def slogdet(a, *, method=None):
    """`(sign, logabsdet)` of the determinant of square matrices; `method` is "lu"
    (default) or "qr"."""
    (a,) = _inexact("jnp.linalg.slogdet", a)
    s = np.shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Argument to slogdet() must have shape [..., n, n], got {s}")
    if method is None or method == "lu":
        return SlogdetResult(*_slogdet_lu(a))
    if method == "qr":
        return SlogdetResult(*_slogdet_qr(a))
    raise ValueError(
        f"Unknown slogdet method '{method}'. Supported methods are 'lu' (`None`), and "
        "'qr'."
    )


def _cofactor_solve(a, b):
    """`(det(a), det(a) * a^-1 b)`, finite when a has rank n - 1 (or less).

    With `P a = L U`: `det(a) a^-1 b = det(a) U^-1 L^-1 P b`. Partial pivoting leaves
    the zero pivot of a rank n - 1 matrix in U's last diagonal entry, so the solve
    uses U with that entry replaced by `1 / (sign * prod(u_ii, i < n))` and the other
    rows of `L^-1 P b` scaled by det(a): both give exactly `det(a) U^-1 (.)`, without
    dividing by zero. Matrices of lower rank have zero adjugate: the result is 0.
    """
    lu, perm, diag, sign = _lu_sign_and_diag(a)
    n = np.shape(a)[-1]
    dtype = _dtype(a)
    partial = ufuncs.multiply(sign, reductions.prod(diag[..., : n - 1], axis=-1))
    det_ = ufuncs.multiply(partial, diag[..., n - 1])
    last = np.zeros((n, n), dtype)
    last[n - 1, n - 1] = 1
    keep = Array((1 - last).astype(dtype))
    safe = ufuncs.where(ufuncs.equal(partial, 0), Array(np.ones((), dtype)), partial)
    corner = ufuncs.divide(1, safe)[..., None, None]
    lu = ufuncs.add(ufuncs.multiply(lu, keep), ufuncs.multiply(corner, Array(last)))
    # Rank < n - 1: the modified U is still singular; give zeros there. Zeroing b as
    # well keeps the NaNs of those solves out of the cotangents in reverse mode.
    ones = lax.expand_dims(creation.ones_like(diag), (np.ndim(diag),))
    probe = lax_linalg.triangular_solve(lu, ones, left_side=True)
    bad = reductions.any(ufuncs.logical_not(ufuncs.isfinite(probe)), axis=(-2, -1))
    bad = ufuncs.logical_or(bad, ufuncs.equal(partial, 0))[..., None, None]
    zero = Array(np.zeros((), dtype))
    x = _permute_rows(perm, ufuncs.where(bad, zero, b))
    x = lax_linalg.triangular_solve(
        lu, x, left_side=True, lower=True, unit_diagonal=True
    )
    scale = np.ones((n, 1), dtype)
    scale[n - 1] = 0
    scaled = ufuncs.multiply(x, det_[..., None, None])
    x = ufuncs.add(
        ufuncs.multiply(scaled, Array(scale)), ufuncs.multiply(x, Array(1 - scale))
    )
    x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    return det_, ufuncs.where(bad, zero, x)


@custom_jvp
def _det_lu(a):
    sign, logdet = _slogdet_lu(a)
    return ufuncs.multiply(sign, ufuncs.exp(logdet).astype(_dtype(sign)))


@_det_lu.defjvp
def _det_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    det_, z = _cofactor_solve(a, a_dot)
    return det_, products.trace(z, axis1=-2, axis2=-1)


def _det_2x2(a):
    return ufuncs.subtract(
        ufuncs.multiply(a[..., 0, 0], a[..., 1, 1]),
        ufuncs.multiply(a[..., 0, 1], a[..., 1, 0]),
    )


def _det_3x3(a):
    def m(i, j):
        return a[..., i, j]

    def minor(j, k):
        return ufuncs.subtract(
            ufuncs.multiply(m(1, j), m(2, k)), ufuncs.multiply(m(1, k), m(2, j))
        )

    return ufuncs.add(
        ufuncs.subtract(
            ufuncs.multiply(m(0, 0), minor(1, 2)), ufuncs.multiply(m(0, 1), minor(0, 2))
        ),
        ufuncs.multiply(m(0, 2), minor(0, 1)),
    )


@eager_jit
def det(a):
    """The determinant of square matrices (..., n, n)."""
    (a,) = _inexact("jnp.linalg.det", a)
    s = np.shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Argument to _det() must have shape [..., n, n], got {s}")
    if s[-1] == 2:
        return _det_2x2(a)
    if s[-1] == 3:
        return _det_3x3(a)
    return _det_lu(a)


# --------------------------------------------------------------------------------------
# Factorisations


@eager_jit
def cholesky(a, *, upper=False, symmetrize_input=True):
    """Cholesky factor of Hermitian positive-definite matrices: lower L with
    `a = L L^H`, or upper `L^H` when `upper=True`. NaNs when a is not positive
    definite."""
    (a,) = _inexact("jnp.linalg.cholesky", a)
    factor = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return _H(factor) if upper else factor


def eig(a):
    """Eigenvalues and right eigenvectors (columns, unit norm) of square matrices, as
    complex arrays."""
    (a,) = _inexact("jnp.linalg.eig", a)
    _check_eig_square(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def _check_eig_square(a):
    s = np.shape(a)
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {s}.")


def eigvals(a):
    """Eigenvalues of square matrices (complex)."""
    (a,) = _inexact("jnp.linalg.eigvals", a)
    _check_eig_square(a)
    return lax_linalg.eig(
        a, compute_left_eigenvectors=False, compute_right_eigenvectors=False
    )[0]


def _uplo_lower(uplo):
    if uplo is None or uplo == "L":
        return True
    if uplo == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {uplo}")


@eager_jit
def eigh(a, UPLO=None, symmetrize_input=True):  # noqa: N803  (NumPy's name)
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices."""
    lower = _uplo_lower(UPLO)
    (a,) = _inexact("jnp.linalg.eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO="L", *, symmetrize_input=True):  # noqa: N803
    """Eigenvalues (ascending) of Hermitian matrices."""
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


@eager_jit
def qr(a, mode="reduced"):
    """QR decomposition; `mode` is "reduced" (default), "complete", "r", or "raw"
    (LAPACK's compact form, as NumPy returns it: the transposed geqrf matrix and the
    Householder factors)."""
    (a,) = _inexact("jnp.linalg.qr", a)
    if mode == "raw":
        h, taus = geqrf(a)
        return QRResult(_matrix_transpose(h), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    if mode == "r":
        return r
    return QRResult(q, r)


@eager_jit
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """Singular value decomposition `(U, S, Vh)` with descending S, or S alone."""
    (a,) = _inexact("jnp.linalg.svd", a)
    if hermitian:
        return _hermitian_svd(a, compute_uv, subset_by_index)
    if compute_uv:
        u, s, vh = lax_linalg.svd(
            a, full_matrices=full_matrices, subset_by_index=subset_by_index
        )
        return SVDResult(u, s, vh)
    return lax_linalg.svd(
        a,
        full_matrices=full_matrices,
        compute_uv=False,
        subset_by_index=subset_by_index,
    )


def _hermitian_svd(a, compute_uv, subset_by_index):
    # From the eigendecomposition: the singular values are |w|, sorted descending.
    v, w = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = ufuncs.abs(w)
    last = np.ndim(s) - 1
    iota = lax.broadcasted_iota(np.int32, np.shape(s), last)
    s, order, sign = lax.sort((s, iota, ufuncs.sign(w)), dimension=last, num_keys=1)
    s, order, sign = (lax.rev(t, (last,)) for t in (s, order, sign))
    if not compute_uv:
        return s
    u = take_along_axis(v, order[..., None, :], axis=-1)
    vh = _H(ufuncs.multiply(u, sign[..., None, :].astype(_dtype(u))))
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """Singular values, descending."""
    return svd(x, compute_uv=False)


# --------------------------------------------------------------------------------------
# Pseudo-inverse, least squares, rank, condition number


def _pinv_value(a, rtol, hermitian):
    m, n = np.shape(a)[-2:]
    if m == 0 or n == 0:
        return creation.zeros((*np.shape(a)[:-2], n, m), _dtype(a))
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(dtypes.finfo(_dtype(s)).eps)
    rtol = lax.expand_dims(creation.asarray(rtol, dtype=_dtype(s)), (np.ndim(rtol),))
    cutoff = ufuncs.multiply(rtol, s[..., 0:1])
    big = ufuncs.greater(s, cutoff)
    safe = ufuncs.where(big, s, Array(np.ones((), _dtype(s))))
    s_inv = ufuncs.where(big, ufuncs.divide(1, safe), Array(np.zeros((), _dtype(s))))
    return products.matmul(
        _H(vh), ufuncs.multiply(s_inv[..., :, None].astype(_dtype(a)), _H(u))
    )


def _pinv_impl(a, rtol, hermitian):
    return _pinv_value(a, rtol, hermitian)


_pinv = custom_jvp(_pinv_impl, nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    # Golub & Pereyra (1973): the derivative of the pseudo-inverse where its rank is
    # locally constant.
    (a,), (a_dot,) = primals, tangents
    p = _pinv(a, rtol, hermitian)
    if hermitian:
        a = ufuncs.divide(ufuncs.add(a, _H(a)), 2)
        a_dot = ufuncs.divide(ufuncs.add(a_dot, _H(a_dot)), 2)
    mm = products.matmul
    m, n = np.shape(a)[-2:]
    if m >= n:
        s = mm(mm(p, _H(p)), _H(a_dot))
        t = mm(mm(_H(a_dot), _H(p)), p)
        p_dot = ufuncs.add(
            ufuncs.subtract(ufuncs.negative(mm(mm(p, a_dot), p)), mm(mm(s, a), p)),
            ufuncs.subtract(ufuncs.add(s, t), mm(mm(p, a), t)),
        )
    else:
        s = mm(p, mm(_H(p), _H(a_dot)))
        t = mm(_H(a_dot), mm(_H(p), p))
        p_dot = ufuncs.add(
            ufuncs.subtract(ufuncs.negative(mm(p, mm(a_dot, p))), mm(s, mm(a, p))),
            ufuncs.subtract(ufuncs.add(s, t), mm(p, mm(a, t))),
        )
    return p, p_dot


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse: singular values at most `rtol` times the
    largest are treated as zero (default `10 * max(m, n) * eps`)."""
    (a,) = _inexact("jnp.linalg.pinv", a)
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    if isinstance(rtol, Tracer):
        # A traced tolerance cannot be a static argument of the custom JVP: the
        # derivative then goes through the SVD.
        return _pinv_value(a, rtol, bool(hermitian))
    if rtol is not None and not isinstance(rtol, (int, float)):
        rtol = np.asarray(rtol)  # a static value: custom_jvp's nondiff argument
    return _pinv(a, rtol, bool(hermitian))


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """Least-squares solution of `a @ x = b` for a (m, n) and b (m,) or (m, k):
    `(x, residuals, rank, singular_values)`."""
    a, b = _inexact("jnp.linalg.lstsq", a, b)
    if np.shape(a)[:1] != np.shape(b)[:1]:  # checked first, as in JAX
        raise ValueError(
            f"Leading dimensions of input arrays must match, got a.shape={np.shape(a)} "
            f"and b.shape={np.shape(b)}."
        )
    if np.ndim(a) != 2:
        raise TypeError(
            f"{np.ndim(a)}-dimensional array given. Array must be two-dimensional"
        )
    if np.ndim(b) not in (1, 2):
        raise TypeError(
            f"{np.ndim(b)}-dimensional array given. Array must be one or two-dimensional"
        )
    m, n = np.shape(a)
    vector = np.ndim(b) == 1
    if vector:
        b = b[:, None]
    dtype = _dtype(a)
    real = _real_dtype(dtype)
    if m == 0 or n == 0:
        s = creation.zeros((0,), real)
        rank = creation.asarray(0, dtype=dtypes.default_int_dtype())
        x = creation.zeros((n, np.shape(b)[1]), dtype)
    else:
        eps = float(dtypes.finfo(real).eps)
        if rcond is None:
            rcond = eps * max(m, n)
        elif rcond < 0:
            rcond = eps
        u, s, vt = svd(a, full_matrices=False)
        mask = ufuncs.greater_equal(s, ufuncs.multiply(rcond, s[0]))
        rank = reductions.sum(mask)
        safe_s = ufuncs.where(mask, s, Array(np.ones((), real)))
        s_inv = ufuncs.where(mask, ufuncs.divide(1, safe_s), Array(np.zeros((), real)))
        utb = products.matmul(_H(u), b)
        x = products.matmul(_H(vt), ufuncs.multiply(s_inv[:, None].astype(dtype), utb))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = creation.asarray([], dtype=real)
    else:
        diff = ufuncs.subtract(b, products.matmul(a, x))
        resid = ufuncs.square(norm(diff, axis=0))
    if vector:
        x = x[:, 0]
    return x, resid, rank, s


def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):  # noqa: N803
    """The number of singular values greater than `rtol` (default
    `max(m, n) * eps * largest singular value`)."""
    check_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (m,) = promote_dtypes_inexact(M)
    if np.ndim(m) < 2:
        return reductions.any(ufuncs.not_equal(m, 0)).astype(np.int32)
    s = svd(m, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        eps = float(dtypes.finfo(_dtype(s)).eps)
        rtol = ufuncs.multiply(reductions.max(s, axis=-1), max(np.shape(m)[-2:]) * eps)
    rtol = creation.asarray(rtol)
    rtol = lax.expand_dims(rtol, (np.ndim(rtol),))
    return reductions.sum(ufuncs.greater(s, rtol), axis=-1)


def cond(x, p=None):
    """Condition number of matrices in the norm `p` (2-norm by default)."""
    check_arraylike("cond", x)
    (arr,) = promote_dtypes_inexact(x)
    s = np.shape(arr)
    if len(s) < 2:
        raise ValueError(
            f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={s}"
        )
    if s[-1] == 0 or s[-2] == 0:
        raise ValueError(
            f"jnp.linalg.cond: input array must not be empty; got arr.shape={s}"
        )
    if p is None or p == 2:
        sv = svdvals(arr)
        return ufuncs.divide(sv[..., 0], sv[..., -1])
    if p == -2:
        sv = svdvals(arr)
        r = ufuncs.divide(sv[..., -1], sv[..., 0])
    else:
        if s[-2] != s[-1]:
            raise ValueError(
                f"jnp.linalg.cond: for p={p}, array must be square; got arr.shape={s}"
            )
        r = ufuncs.multiply(
            norm(arr, ord=p, axis=(-2, -1)), norm(inv(arr), ord=p, axis=(-2, -1))
        )
    has_nan = reductions.any(ufuncs.isnan(arr), axis=(-2, -1))
    return ufuncs.where(
        ufuncs.logical_and(ufuncs.isnan(r), ufuncs.logical_not(has_nan)), np.inf, r
    )


# --------------------------------------------------------------------------------------
# Norms


def _abs2_sum(x, axis, keepdims):
    if _is_complex(x):
        sq = ufuncs.real(ufuncs.multiply(x, ufuncs.conj(x)))
    else:
        sq = ufuncs.multiply(x, x)
    return ufuncs.sqrt(reductions.sum(sq, axis=axis, keepdims=keepdims))


@eager_jit
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """Vector p-norm over `axis` (all axes by default): ord 2 (default), 1, inf, -inf,
    0 (count of non-zeros) or any other number."""
    (x,) = _inexact("jnp.linalg.vector_norm", x)
    if ord is None or ord == 2:
        return _abs2_sum(x, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    abs_x = ufuncs.abs(x)
    if ord == np.inf:
        return reductions.max(abs_x, axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return reductions.min(abs_x, axis=axis, keepdims=keepdims)
    if ord == 0:
        nonzero = ufuncs.not_equal(x, 0).astype(_dtype(abs_x))
        return reductions.sum(nonzero, axis=axis, keepdims=keepdims)
    if ord == 1:
        return reductions.sum(abs_x, axis=axis, keepdims=keepdims)
    ord_ = float(ord)
    total = reductions.sum(ufuncs.power(abs_x, ord_), axis=axis, keepdims=keepdims)
    return ufuncs.power(total, 1.0 / ord_)


def _matrix_norm(x, ord, axis, keepdims):  # noqa: A002
    row, col = axis
    if ord is None or ord in ("f", "fro"):
        return _abs2_sum(x, axis, keepdims)
    if ord in (1, -1, np.inf, -np.inf):
        # 1: largest column sum (sum over rows); inf: largest row sum.
        summed, other = (row, col) if ord in (1, -1) else (col, row)
        if not keepdims and other > summed:
            other -= 1
        sums = reductions.sum(ufuncs.abs(x), axis=summed, keepdims=keepdims)
        if ord in (1, np.inf):
            return reductions.max(sums, axis=other, keepdims=keepdims, initial=0)
        return reductions.min(sums, axis=other, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        y = moveaxis(x, (row, col), (-2, -1))
        s = svd(y, compute_uv=False)
        if ord == 2:
            out = reductions.max(s, axis=-1, initial=0)
        elif ord == -2:
            out = reductions.min(s, axis=-1)
        else:
            out = reductions.sum(s, axis=-1)
        if keepdims:
            out = expand_dims(out, tuple(sorted((row, col))))
        return out
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


@eager_jit
def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """Matrix or vector norm, as numpy.linalg.norm: a vector norm for one axis, a
    matrix norm ("fro", "nuc", 1, -1, 2, -2, inf, -inf) for two."""
    (x,) = _inexact("jnp.linalg.norm", x)
    ndim = np.ndim(x)
    if axis is None:
        if ord is None:
            return _abs2_sum(x, None, keepdims)
        axis = tuple(range(ndim))
    elif isinstance(axis, tuple):
        axis = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axis = (canonicalize_axis(axis, ndim),)
    if len(axis) == 1:
        return vector_norm(
            x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims
        )
    if len(axis) == 2:
        return _matrix_norm(x, ord, axis, keepdims)
    raise ValueError(
        f"Improper number of axes for norm: axis={axis}. Pass one axis to compute a "
        "vector-norm, or two axes to compute a matrix-norm."
    )


def matrix_norm(x, /, *, keepdims=False, ord="fro"):  # noqa: A002
    """Matrix norm over the last two axes."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


# --------------------------------------------------------------------------------------
# Powers, tensor inverses, chained products


def matrix_power(a, n):
    """`a` multiplied by itself n times (n < 0: of the inverse; n = 0: identity)."""
    check_arraylike("jnp.linalg.matrix_power", a)
    arr = creation.asarray(a)
    if np.ndim(arr) < 2:
        raise TypeError(
            f"{np.ndim(arr)}-dimensional array given. Array must be at least "
            "two-dimensional"
        )
    if np.shape(arr)[-2] != np.shape(arr)[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        eye = creation.eye(np.shape(arr)[-1], dtype=_dtype(arr))
        return broadcast_to(eye, np.shape(arr))
    if n < 0:
        arr = inv(arr)
        n = -n
    result, power_ = None, None
    while n > 0:
        power_ = arr if power_ is None else products.matmul(power_, power_)
        n, bit = divmod(n, 2)
        if bit:
            result = power_ if result is None else products.matmul(result, power_)
    return result


def tensorinv(a, ind=2):
    """Inverse of a tensor viewed as a matrix with the first `ind` axes as rows."""
    check_arraylike("tensorinv", a)
    arr = creation.asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    rows, cols = np.shape(arr)[:ind], np.shape(arr)[ind:]
    flat = (math.prod(rows), math.prod(cols))
    if flat[0] != flat[1]:
        raise ValueError(
            "tensorinv is only possible when the product of the first `ind` dimensions "
            f"equals that of the remaining dimensions. got arr.shape={np.shape(arr)} "
            f"with ind={ind}."
        )
    return reshape(inv(reshape(arr, flat)), (*cols, *rows))


def tensorsolve(a, b, axes=None):
    """Solve `tensordot(a, x, x.ndim) = b` for x."""
    check_arraylike("tensorsolve", a, b)
    a, b = creation.asarray(a), creation.asarray(b)
    if axes is not None:
        a = moveaxis(a, axes, len(axes) * (np.ndim(a) - 1,))
    out_shape = np.shape(a)[np.ndim(b) :]
    if np.shape(a)[: np.ndim(b)] != np.shape(b):
        raise ValueError(
            "After moving axes to end, leading shape of a must match shape of b. got "
            f"a.shape={np.shape(a)}, b.shape={np.shape(b)}"
        )
    if np.size(b) != math.prod(out_shape):
        raise ValueError(
            "Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); "
            f"got a.shape={np.shape(a)}, b.ndim={np.ndim(b)}."
        )
    a = reshape(a, (np.size(b), math.prod(out_shape)))
    return reshape(solve(a, ravel(b)), out_shape)


def multi_dot(arrays, *, precision=None):
    """`arrays[0] @ arrays[1] @ ...` in the cheapest order (the first and last may be
    vectors)."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrays)}")
    check_arraylike("jnp.linalg.multi_dot", *arrays)
    arrays = [creation.asarray(x) for x in arrays]
    first_vec, last_vec = np.ndim(arrays[0]) == 1, np.ndim(arrays[-1]) == 1
    if first_vec:
        arrays[0] = arrays[0][None, :]
    if last_vec:
        arrays[-1] = arrays[-1][:, None]
    for x in arrays:
        if np.ndim(x) != 2:
            raise ValueError(
                "multi_dot: every array but the first and last must be two-dimensional, "
                f"got shapes {[np.shape(a) for a in arrays]}"
            )
    order = _chain_order([np.shape(x) for x in arrays])

    def product(i, j):
        if i == j:
            return arrays[i]
        k = order[i][j]
        return products.matmul(product(i, k), product(k + 1, j), precision=precision)

    out = product(0, len(arrays) - 1)
    if first_vec:
        out = out[0]
    if last_vec:
        out = out[..., 0]
    return out


def _chain_order(shapes):
    """The classic matrix-chain dynamic program: `split[i][j]` is where to split."""
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


# --------------------------------------------------------------------------------------
# Array-API aliases


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product with NumPy's batch broadcasting."""
    return products.matmul(
        x1, x2, precision=precision, preferred_element_type=preferred_element_type
    )


def matrix_transpose(x, /):
    """Swap the last two axes."""
    return _matrix_transpose(x)


def outer(x1, x2, /):
    """Outer product of two vectors."""
    check_arraylike("jnp.linalg.outer", x1, x2)
    if np.ndim(x1) != 1 or np.ndim(x2) != 1:
        raise ValueError(
            "Input arrays must be one-dimensional, but they are "
            f"x1.ndim={np.ndim(x1)} x2.ndim={np.ndim(x2)}"
        )
    return products.outer(x1, x2)


def cross(x1, x2, /, *, axis=-1):
    """Cross product of (arrays of) 3-vectors along `axis`."""
    check_arraylike("jnp.linalg.cross", x1, x2)
    x1, x2 = ufuncs.promote_dtypes(x1, x2)
    n1, n2 = np.shape(x1)[axis], np.shape(x2)[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"x1.shape[axis]={n1} and x2.shape[axis]={n2}"
        )
    a = moveaxis(x1, axis, -1)
    b = moveaxis(x2, axis, -1)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    mul, sub = ufuncs.multiply, ufuncs.subtract
    c = stack(
        [
            sub(mul(a1, b2), mul(a2, b1)),
            sub(mul(a2, b0), mul(a0, b2)),
            sub(mul(a0, b1), mul(a1, b0)),
        ],
        axis=-1,
    )
    return moveaxis(c, -1, axis)


def trace(x, /, *, offset=0, dtype=None):
    """Sum of the `offset` diagonal of the last two axes."""
    return products.trace(x, offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset=0):
    """The `offset` diagonal of the last two axes."""
    return creation.diagonal(x, offset, -2, -1)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """Contract the last `axes` axes of x1 with the first of x2 (or the given pairs)."""
    return products.tensordot(
        x1, x2, axes, precision=precision, preferred_element_type=preferred_element_type
    )


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Conjugating dot product of vectors along `axis`."""
    return products.vecdot(
        x1,
        x2,
        axis=axis,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
