"""NumPy kernels for the factorisations `numpy.linalg` lacks: LU with partial pivoting,
triangular solves, Householder reflectors (Hessenberg reduction, products of
reflectors, the pivots of column-pivoted QR), tridiagonal solves, and a Cholesky and an
eigendecomposition that give NaNs instead of raising.

jaxlite depends on NumPy only (no SciPy), so these are written here. Each kernel works on
stacks of matrices (any leading batch axes) and follows LAPACK's conventions, so the
results match JAX's on CPU: `getrf`'s pivot choice (the first entry of largest
magnitude, |re| + |im| for complex) and 0-based pivot rows, `larfg`'s reflectors
(`beta = -sign(alpha) * norm`), and NaNs where LAPACK reports a failure. The blocked
algorithms do their O(n^3) work in matrix products (BLAS through `np.matmul`) and keep
the Python loops to O(n) small steps.
"""

from __future__ import annotations

import math

import numpy as np

_BLOCK = 32

# Dtypes LAPACK (through numpy.linalg) computes in; others go through float32.
_LAPACK_DTYPES = frozenset(
    np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)
)


def lapack_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype in _LAPACK_DTYPES:
        return dtype
    if dtype.kind == "c":
        return np.dtype(np.complex64)
    return np.dtype(np.float32)


def as_lapack(x):
    """`x` as a NumPy array of a dtype LAPACK handles, and the dtype to return."""
    x = np.asarray(x)
    dtype = lapack_dtype(x.dtype)
    return (x if x.dtype == dtype else x.astype(dtype)), x.dtype


def _stack(x, core):
    """`x` reshaped to (batch, *core_shape) and a function restoring batch axes."""
    batch = x.shape[: x.ndim - core]
    flat = x.reshape((math.prod(batch),) + x.shape[x.ndim - core :])

    def restore(y, ycore):
        return y.reshape(batch + y.shape[y.ndim - ycore :])

    return flat, restore


def _magnitude(x):
    """LAPACK's pivot magnitude: |x| for reals, |re| + |im| for complex."""
    if x.dtype.kind == "c":
        return np.abs(x.real) + np.abs(x.imag)
    return np.abs(x)


# --------------------------------------------------------------------------------------
# Triangular solves


def _solve_lower(a, b, unit):
    """Solve `a @ x = b` for lower-triangular `a` (B, m, m) and `b` (B, m, n): blocked
    forward substitution."""
    x = np.array(b, copy=True)
    m = a.shape[-1]
    with np.errstate(all="ignore"):
        for i0 in range(0, m, _BLOCK):
            i1 = min(i0 + _BLOCK, m)
            if i0:
                x[:, i0:i1] -= a[:, i0:i1, :i0] @ x[:, :i0]
            for i in range(i0, i1):
                if i > i0:
                    x[:, i] -= (a[:, i, None, i0:i] @ x[:, i0:i])[:, 0]
                if not unit:
                    x[:, i] /= a[:, i, i, None]
    return x


def triangular_solve(
    a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    """LAPACK's `trsm`: `op(a) @ x = b` (left side) or `x @ op(a) = b` (right side) for a
    triangular `a`; only the triangle named by `lower` is read."""
    a, b = np.asarray(a), np.asarray(b)
    out_dtype = b.dtype
    compute = lapack_dtype(np.result_type(a.dtype, b.dtype))
    a, b = a.astype(compute, copy=False), b.astype(compute, copy=False)
    if conjugate_a:
        a = np.conj(a)
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
        lower = not lower
    if not left_side:
        # x @ A = b  <=>  A^T @ x^T = b^T
        a = np.swapaxes(a, -1, -2)
        b = np.swapaxes(b, -1, -2)
        lower = not lower
    if not lower:
        # Reversing rows and columns turns an upper-triangular system into a lower one.
        a = a[..., ::-1, ::-1]
        b = b[..., ::-1, :]
    a3, _ = _stack(a, 2)
    b3, restore = _stack(b, 2)
    x = restore(_solve_lower(a3, b3, unit_diagonal), 2)
    if not lower:
        x = x[..., ::-1, :]
    if not left_side:
        x = np.swapaxes(x, -1, -2)
    return np.ascontiguousarray(x).astype(out_dtype, copy=False)


# --------------------------------------------------------------------------------------
# LU with partial pivoting


def _rows_of_arange(rows, n, dtype):
    """A writable (rows, n) array whose every row is `arange(n)` (`np.tile` is slow)."""
    out = np.empty((rows, n), dtype)
    out[...] = np.arange(n, dtype=dtype)
    return out


def lu(a):
    """`getrf`: `(lu, pivots, permutation)` with `a[perm] = L @ U`, L unit lower (its
    strict lower triangle stored in `lu`), U upper; pivots are 0-based row swaps."""
    a, out_dtype = as_lapack(a)
    m, n = a.shape[-2:]
    k = min(m, n)
    x, restore = _stack(np.array(a, copy=True), 2)
    nb = x.shape[0]
    rows = np.arange(nb)
    pivots = np.zeros((nb, k), np.int32)
    perm = _rows_of_arange(nb, m, np.int32)
    with np.errstate(all="ignore"):
        for j0 in range(0, k, _BLOCK):
            j1 = min(j0 + _BLOCK, k)
            for j in range(j0, j1):
                p = j + np.argmax(_magnitude(x[:, j:, j]), axis=1)
                pivots[:, j] = p
                swap = p != j
                if swap.any():
                    r, pr = rows[swap], p[swap]
                    x[r, j], x[r, pr] = x[r, pr], x[r, j].copy()
                    perm[r, j], perm[r, pr] = perm[r, pr], perm[r, j].copy()
                piv = x[:, j, j]
                safe = np.where(piv == 0, 1, piv)
                x[:, j + 1 :, j] /= safe[:, None]
                if j + 1 < j1:
                    x[:, j + 1 :, j + 1 : j1] -= (
                        x[:, j + 1 :, j, None] * x[:, j, None, j + 1 : j1]
                    )
            if j1 < n:
                x[:, j0:j1, j1:] = _solve_lower(
                    x[:, j0:j1, j0:j1], x[:, j0:j1, j1:], True
                )
                if j1 < m:
                    x[:, j1:, j1:] -= x[:, j1:, j0:j1] @ x[:, j0:j1, j1:]
    lu_out = restore(x, 2).astype(out_dtype, copy=False)
    return lu_out, restore(pivots, 1), restore(perm, 1)


def lu_pivots_to_permutation(pivots, permutation_size):
    """Apply the row swaps `i <-> pivots[..., i]` in order to `arange(size)`."""
    pivots = np.asarray(pivots)
    flat, restore = _stack(pivots, 1)
    nb = flat.shape[0]
    rows = np.arange(nb)
    perm = _rows_of_arange(nb, permutation_size, pivots.dtype)
    for i in range(flat.shape[1]):
        p = np.clip(flat[:, i], 0, permutation_size - 1)
        perm[rows, i], perm[rows, p] = perm[rows, p], perm[rows, i].copy()
    return restore(perm, 1)


# --------------------------------------------------------------------------------------
# Cholesky and eigendecompositions


def cholesky(a):
    """Lower Cholesky factor; a matrix that is not positive definite gives NaNs (JAX's
    behaviour), not an exception."""
    a, out_dtype = as_lapack(a)
    try:
        out = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        flat, restore = _stack(a, 2)
        out = np.empty_like(flat)
        for i, mat in enumerate(flat):
            try:
                out[i] = np.linalg.cholesky(mat)
            except np.linalg.LinAlgError:
                out[i] = np.nan
        out = restore(out, 2)
    return out.astype(out_dtype, copy=False)


def _real_dtype(dtype):
    return np.finfo(dtype).dtype if dtype.kind == "c" else dtype


def _each_matrix(fn, x, nan_shapes):
    """`fn(x)` (a list of arrays) for a stack of matrices; when LAPACK fails on some
    matrix, per matrix, with NaN outputs for the failures (JAX's behaviour)."""
    try:
        return [np.asarray(o) for o in fn(x)]
    except np.linalg.LinAlgError:
        pass
    flat, restore = _stack(x, 2)
    per = []
    for mat in flat:
        try:
            per.append([np.asarray(o) for o in fn(mat)])
        except np.linalg.LinAlgError:
            per.append([np.full(shape, np.nan, dtype) for shape, dtype in nan_shapes])
    outs = []
    for k, (shape, dtype) in enumerate(nan_shapes):
        stacked = np.stack([p[k] for p in per]) if per else np.zeros((0, *shape), dtype)
        outs.append(stacked.reshape(x.shape[:-2] + shape))
    return outs


def eigh(a, lower, subset_by_index):
    """`[v, w]`: eigenvectors and ascending eigenvalues of Hermitian matrices."""
    x, out_dtype = as_lapack(a)
    n = x.shape[-1]
    real = _real_dtype(x.dtype)
    w, v = _each_matrix(
        lambda m: np.linalg.eigh(m, UPLO="L" if lower else "U"),
        x,
        [((n,), real), ((n, n), x.dtype)],
    )
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w, v = w[..., lo:hi], v[..., lo:hi]
    return [v.astype(out_dtype), w.astype(_real_dtype(out_dtype))]


def svd(a, full_matrices, compute_uv, subset_by_index):
    """`[s, u, vt]` (or `[s]`) with descending singular values."""
    x, out_dtype = as_lapack(a)
    m, n = x.shape[-2:]
    k = min(m, n)
    real = _real_dtype(x.dtype)
    if compute_uv:
        ku, kv = (m, n) if full_matrices else (k, k)
        u, s, vt = _each_matrix(
            lambda mat: np.linalg.svd(mat, full_matrices=full_matrices),
            x,
            [((m, ku), x.dtype), ((k,), real), ((kv, n), x.dtype)],
        )
    else:
        (s,) = _each_matrix(
            lambda mat: [np.linalg.svd(mat, compute_uv=False)], x, [((k,), real)]
        )
    if subset_by_index is not None:
        lo, hi = subset_by_index
        s = s[..., lo:hi]
        if compute_uv:
            u, vt = u[..., lo:hi], vt[..., lo:hi, :]
    s = s.astype(_real_dtype(out_dtype))
    if not compute_uv:
        return [s]
    return [s, u.astype(out_dtype), vt.astype(out_dtype)]


def qr(a, full_matrices, pivoting):
    """`[q, r]`, or `[q, r, p]` with column pivoting (`a[..., p] = q r`)."""
    x, out_dtype = as_lapack(a)
    pivots = []
    if pivoting:
        p = qr_pivots(x)
        x = np.take_along_axis(x, p[..., None, :].astype(np.intp), axis=-1)
        pivots = [p]
    q, r = np.linalg.qr(x, mode="complete" if full_matrices else "reduced")
    return [q.astype(out_dtype), r.astype(out_dtype), *pivots]


def geqrf(a):
    """`geqrf`: `(a, taus)` with R in the upper triangle of `a` and the Householder
    vectors below it (unit leading entries implied), as LAPACK stores them."""
    x, out_dtype = as_lapack(a)
    *batch, m, n = x.shape
    if x.size == 0:
        k = min(m, n)
        return [np.zeros(x.shape, out_dtype), np.zeros((*batch, k), out_dtype)]
    h, taus = np.linalg.qr(x, mode="raw")  # h is the transpose of LAPACK's `a`
    return [np.swapaxes(h, -1, -2).astype(out_dtype), taus.astype(out_dtype)]


def eig(a, compute_left, compute_right):
    """`geev`: eigenvalues and (unit-norm) left and right eigenvectors, complex."""
    a, _ = as_lapack(a)
    cdtype = np.result_type(a.dtype, np.complex64)
    if not np.all(np.isfinite(a)):
        w = np.full(a.shape[:-1], np.nan, cdtype)
        v = np.full(a.shape, np.nan, cdtype)
        return [w] + [v] * compute_left + [v] * compute_right
    w, vr = np.linalg.eig(a)
    w, vr = w.astype(cdtype), vr.astype(cdtype)
    outs = [w]
    if compute_left:
        with np.errstate(all="ignore"):
            vl = np.conj(np.swapaxes(np.linalg.inv(vr), -1, -2))
        outs.append(_normalize_columns(vl))
    if compute_right:
        outs.append(vr)
    return outs


def _normalize_columns(v):
    """Unit 2-norm columns whose entry of largest magnitude is real and positive."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    big = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
    return v * (np.conj(big) / np.abs(big))


# --------------------------------------------------------------------------------------
# Householder reflectors


def householder(alpha, x):
    """`larfg` on a batch: `(beta, tau, v)` with `H = I - tau [1; v] [1; v]^H` and
    `H^H [alpha; x] = [beta; 0]`. `alpha` is (B,), `x` is (B, r)."""
    xnorm = np.linalg.norm(x, axis=-1)
    if np.iscomplexobj(alpha):
        ar, ai = alpha.real, alpha.imag
    else:
        ar, ai = alpha, np.zeros_like(alpha)
    identity = (xnorm == 0) & (ai == 0)
    norm = np.sqrt(ar * ar + ai * ai + xnorm * xnorm)
    beta = np.where(ar >= 0, -norm, norm)
    safe_beta = np.where(identity, 1, beta)
    with np.errstate(all="ignore"):
        if np.iscomplexobj(alpha):
            tau = (safe_beta - ar) / safe_beta - 1j * ai / safe_beta
        else:
            tau = (safe_beta - ar) / safe_beta
        scale = 1 / np.where(identity, 1, alpha - safe_beta)
    tau = np.where(identity, 0, tau).astype(alpha.dtype)
    v = np.where(identity[:, None], 0, x * scale[:, None]).astype(x.dtype)
    beta = np.where(identity, alpha, beta).astype(alpha.dtype)
    return beta, tau, v


def _reflect_left(h, tau, v):
    """`H^H @ h` for the reflectors `(tau, v)` (v with its leading 1)."""
    w = np.conj(v)[:, None, :] @ h  # (B, 1, c)
    return h - np.conj(tau)[:, None, None] * v[:, :, None] * w


def _reflect_right(h, tau, v):
    """`h @ H` for the reflectors `(tau, v)`."""
    w = h @ v[:, :, None]  # (B, r, 1)
    return h - tau[:, None, None] * w * np.conj(v)[:, None, :]


def hessenberg(a):
    """`gehrd`: the upper Hessenberg form in the upper part of the result, the
    reflectors below the first subdiagonal, and the `n - 1` scalar factors `taus`."""
    a, out_dtype = as_lapack(a)
    n = a.shape[-1]
    x, restore = _stack(np.array(a, copy=True), 2)
    taus = np.zeros((x.shape[0], max(n - 1, 0)), x.dtype)
    for j in range(n - 1):
        beta, tau, v = householder(x[:, j + 1, j], x[:, j + 2 :, j])
        full_v = np.concatenate([np.ones_like(beta)[:, None], v], axis=1)
        x[:, j + 1 :, j + 1 :] = _reflect_left(x[:, j + 1 :, j + 1 :], tau, full_v)
        x[:, :, j + 1 :] = _reflect_right(x[:, :, j + 1 :], tau, full_v)
        x[:, j + 1, j] = beta
        x[:, j + 2 :, j] = v
        taus[:, j] = tau
    return restore(x, 2).astype(out_dtype), restore(taus, 1).astype(out_dtype)


def householder_product(a, taus):
    """`orgqr`: the first n columns of `H_1 ... H_k`, where reflector i has the vector
    `[0] * i + [1] + a[i + 1:, i]` and factor `taus[i]`."""
    a, out_dtype = as_lapack(a)
    taus = np.asarray(taus).astype(a.dtype)
    m, n = a.shape[-2:]
    x, restore = _stack(a, 2)
    t, _ = _stack(taus, 1)
    q = np.tile(np.eye(m, n, dtype=a.dtype), (x.shape[0], 1, 1))
    for i in reversed(range(t.shape[1])):
        v = np.concatenate([np.ones((x.shape[0], 1), a.dtype), x[:, i + 1 :, i]], 1)
        w = np.conj(v)[:, None, :] @ q[:, i:]
        q[:, i:] -= t[:, i, None, None] * v[:, :, None] * w
    return restore(q, 2).astype(out_dtype, copy=False)


def qr_pivots(a):
    """The column order `geqp3` chooses: at each step the column whose part below the
    current row has the largest norm, after the previous reflectors are applied."""
    a, _ = as_lapack(a)
    m, n = a.shape[-2:]
    x, restore = _stack(np.array(a, copy=True), 2)
    nb = x.shape[0]
    rows = np.arange(nb)
    perm = _rows_of_arange(nb, n, np.int32)
    for j in range(min(m, n)):
        norms = np.linalg.norm(x[:, j:, j:], axis=1)
        p = j + np.argmax(norms, axis=1)
        x[rows, :, j], x[rows, :, p] = x[rows, :, p], x[rows, :, j].copy()
        perm[rows, j], perm[rows, p] = perm[rows, p], perm[rows, j].copy()
        beta, tau, v = householder(x[:, j, j], x[:, j + 1 :, j])
        full_v = np.concatenate([np.ones_like(beta)[:, None], v], axis=1)
        x[:, j:, j + 1 :] = _reflect_left(x[:, j:, j + 1 :], tau, full_v)
    return restore(perm, 1)


# --------------------------------------------------------------------------------------
# Tridiagonal systems


def tridiagonal_solve(dl, d, du, b):
    """Solve `T @ x = b` with T's sub-, main and super-diagonals `dl`, `d`, `du`
    (`dl[..., 0]` and `du[..., -1]` are ignored): the Thomas algorithm."""
    out_dtype = np.asarray(b).dtype
    compute = lapack_dtype(out_dtype)
    dl, d, du, b = (np.asarray(v).astype(compute) for v in (dl, d, du, b))
    m = d.shape[-1]
    if m == 0:
        return b.astype(out_dtype)
    c = np.empty_like(d)
    y = np.empty_like(b)
    with np.errstate(all="ignore"):
        denom = d[..., 0]
        c[..., 0] = du[..., 0] / denom
        y[..., 0, :] = b[..., 0, :] / denom[..., None]
        for i in range(1, m):
            denom = d[..., i] - dl[..., i] * c[..., i - 1]
            c[..., i] = du[..., i] / denom
            y[..., i, :] = (b[..., i, :] - dl[..., i, None] * y[..., i - 1, :]) / denom[
                ..., None
            ]
        for i in range(m - 2, -1, -1):
            y[..., i, :] -= c[..., i, None] * y[..., i + 1, :]
    return y.astype(out_dtype, copy=False)
