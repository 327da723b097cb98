"""NumPy kernels for the Schur decomposition `a = q t q^H` (LAPACK's gees), which NumPy
does not have.

Both start from the Hessenberg form `h = q0^H a q0` (the Householder kernel of
`linalg_numpy`) and run the shifted QR algorithm on it, restricted to the active
window of rows and columns whose subdiagonal has not yet become negligible
("deflation"), with every rotation also applied to the rest of the matrix (so `t`
is the full Schur form, not only its eigenvalues) and accumulated into `q`:

- Real matrices: Francis' implicit double-shift step. The two shifts are the
  eigenvalues of the trailing 2 x 2 block (complex conjugate or real), applied
  together in real arithmetic by chasing a 3 x 3 Householder bulge down the
  subdiagonal. The result is quasi-triangular: 1 x 1 blocks for real eigenvalues and
  2 x 2 blocks for complex pairs, standardised as LAPACK does (equal diagonal
  entries, off-diagonal entries of opposite signs), and a 2 x 2 block with real
  eigenvalues is rotated to triangular form.
- Complex matrices: the single-shift step with Wilkinson's shift (the eigenvalue of
  the trailing 2 x 2 block nearer its last entry), chasing a 2 x 2 Givens rotation;
  the result is upper triangular.

Every tenth step without deflation uses an exceptional shift to break cycles; a
matrix that does not converge in 30 steps per eigenvalue (or has NaNs or infinities)
gives NaNs, as JAX reports LAPACK's failures. The work is done in float64 or
complex128 and cast back.
"""

from __future__ import annotations

import numpy as np

from jaxlite.lax import linalg_numpy as kernels

__all__ = ["schur"]

_EPS = np.finfo(np.float64).eps


def _hessenberg_q(a):
    """`(h, q)` with `a = q h q^H`, h upper Hessenberg (a single matrix)."""
    n = a.shape[0]
    packed, taus = kernels.hessenberg(a)
    q = np.eye(n, dtype=a.dtype)
    if n > 1:
        q[1:, 1:] = kernels.householder_product(packed[1:, : n - 1], taus)
    return np.triu(packed, -1), q


def _rotate(h, q, rows, g):
    """Similarity by the 2 x 2 unitary `g` on rows/columns `rows`: h <- g^H h g."""
    h[rows, :] = g.conj().T @ h[rows, :]
    h[:, rows] = h[:, rows] @ g
    q[:, rows] = q[:, rows] @ g


def _negligible(h, k, scale):
    """Whether the subdiagonal entry h[k, k-1] is negligible next to its neighbours."""
    s = abs(h[k - 1, k - 1]) + abs(h[k, k])
    if s == 0:
        s = scale
    return abs(h[k, k - 1]) <= _EPS * s


def _active_start(h, hi, scale):
    """The first row of the unreduced block ending at row `hi`, zeroing the
    negligible subdiagonal entry above it."""
    lo = hi
    while lo > 0 and not _negligible(h, lo, scale):
        lo -= 1
    if lo > 0:
        h[lo, lo - 1] = 0
    return lo


# --------------------------------------------------------------------------------------
# Real matrices: Francis double shift


def _reflector(x):
    """A unit vector v with (I - 2 v v^T) x = -+|x| e1 (identity when x = 0)."""
    v = np.array(x, dtype=np.float64)
    norm = np.linalg.norm(v)
    if norm == 0:
        return None
    v[0] += norm if v[0] >= 0 else -norm
    return v / np.linalg.norm(v)


def _francis_step(h, q, lo, hi, exceptional):
    """One implicit double-shift QR step on the window h[lo:hi+1, lo:hi+1]."""
    if exceptional:  # an ad-hoc pair h[hi, hi] + w (0.75 +- 0.66i) to break a cycle
        w = abs(h[hi, hi - 1]) + abs(h[hi - 1, hi - 2])
        center = h[hi, hi] + 0.75 * w
        s, t = 2 * center, center * center + 0.4375 * w * w
    else:  # the eigenvalues of the trailing 2 x 2 block: their sum s and product t
        s = h[hi - 1, hi - 1] + h[hi, hi]
        t = h[hi - 1, hi - 1] * h[hi, hi] - h[hi - 1, hi] * h[hi, hi - 1]
    # First column of (H - mu1)(H - mu2) = H^2 - s H + t I: three nonzero entries.
    x = h[lo, lo] * h[lo, lo] + h[lo, lo + 1] * h[lo + 1, lo] - s * h[lo, lo] + t
    y = h[lo + 1, lo] * (h[lo, lo] + h[lo + 1, lo + 1] - s)
    z = h[lo + 1, lo] * h[lo + 2, lo + 1]
    for k in range(lo, hi - 1):
        v = _reflector((x, y, z))
        if v is not None:
            rows = slice(k, k + 3)
            first = max(lo, k - 1)
            h[rows, first:] -= 2 * np.outer(v, v @ h[rows, first:])
            last = min(k + 4, hi + 1)
            h[:last, rows] -= 2 * np.outer(h[:last, rows] @ v, v)
            q[:, rows] -= 2 * np.outer(q[:, rows] @ v, v)
        x, y = h[k + 1, k], h[k + 2, k]
        z = h[k + 3, k] if k < hi - 2 else 0.0
        if k > lo:
            h[k + 1 : k + 3, k - 1] = 0  # the chased bulge, zero to rounding
    v = _reflector((x, y))
    if v is not None:
        rows = slice(hi - 1, hi + 1)
        h[rows, hi - 2 :] -= 2 * np.outer(v, v @ h[rows, hi - 2 :])
        h[: hi + 1, rows] -= 2 * np.outer(h[: hi + 1, rows] @ v, v)
        q[:, rows] -= 2 * np.outer(q[:, rows] @ v, v)
    if hi - 2 >= lo:
        h[hi, hi - 2] = 0


def _givens(c, s):
    return np.array([[c, -s], [s, c]])


def _standardize(h, q, k):
    """Put the 2 x 2 diagonal block at rows k, k+1 in LAPACK's standard form: upper
    triangular when its eigenvalues are real, else equal diagonal entries with
    off-diagonal entries of opposite signs."""
    rows = [k, k + 1]
    a, b, c, d = h[k, k], h[k, k + 1], h[k + 1, k], h[k + 1, k + 1]
    if c == 0:
        return
    if b == 0:  # swap the two rows and columns
        _rotate(h, q, rows, _givens(0.0, 1.0))
    elif a - d == 0 and np.sign(b) != np.sign(c):
        return
    else:
        # Rotate to equal diagonal entries: tan(2 theta) = (a - d) / (b + c).
        theta = 0.5 * np.arctan2(d - a, b + c)
        _rotate(h, q, rows, _givens(np.cos(theta), np.sin(theta)))
        mean = 0.5 * (h[k, k] + h[k + 1, k + 1])
        h[k, k] = h[k + 1, k + 1] = mean
    b, c = h[k, k + 1], h[k + 1, k]
    if (c != 0 and np.sign(b) == np.sign(c)) or b == 0:
        # Real eigenvalues mean +- sqrt(b c): rotate an eigenvector to the front.
        a, d = h[k, k], h[k + 1, k + 1]
        root = np.sqrt(abs(b)) * np.sqrt(abs(c))
        lam = 0.5 * (a + d) + (root if b * c >= 0 else 0.0)
        vec = np.array([b, lam - a]) if abs(b) >= abs(c) else np.array([lam - d, c])
        norm = np.hypot(*vec)
        if norm > 0:
            cs, sn = vec / norm
            _rotate(h, q, rows, _givens(cs, sn))
        h[k + 1, k] = 0


def _real_schur(a):
    n = a.shape[0]
    h, q = _hessenberg_q(a)
    scale = max(np.abs(h).sum(), np.finfo(np.float64).tiny)
    hi, steps = n - 1, 0
    while hi > 0:
        lo = _active_start(h, hi, scale)
        if lo == hi:
            hi, steps = hi - 1, 0
        elif lo == hi - 1:
            _standardize(h, q, hi - 1)
            hi, steps = hi - 2, 0
        else:
            steps += 1
            if steps > 30 * n:
                return None
            _francis_step(h, q, lo, hi, exceptional=steps % 10 == 0)
    return np.triu(h, -1), q


# --------------------------------------------------------------------------------------
# Complex matrices: single shift with Wilkinson's shift


def _complex_givens(x, y):
    """A unitary g with g^H [x; y] = [r; 0]."""
    r = np.sqrt(abs(x) ** 2 + abs(y) ** 2)
    if r == 0:
        return np.eye(2, dtype=np.complex128)
    c, s = x / r, y / r
    return np.array([[c, -np.conj(s)], [s, np.conj(c)]])


def _wilkinson_shift(h, hi):
    a, b = h[hi - 1, hi - 1], h[hi - 1, hi]
    c, d = h[hi, hi - 1], h[hi, hi]
    half = 0.5 * (a - d)
    root = np.sqrt(half * half + b * c)
    # the eigenvalue of [[a, b], [c, d]] nearer d
    mu1, mu2 = 0.5 * (a + d) + root, 0.5 * (a + d) - root
    return mu1 if abs(mu1 - d) <= abs(mu2 - d) else mu2


def _complex_step(h, q, lo, hi, exceptional):
    if exceptional:
        mu = h[hi, hi] + 0.75 * abs(h[hi, hi - 1].real) + 0.75j * abs(h[hi, hi - 1])
    else:
        mu = _wilkinson_shift(h, hi)
    x, y = h[lo, lo] - mu, h[lo + 1, lo]
    for k in range(lo, hi):
        g = _complex_givens(x, y)
        rows = slice(k, k + 2)
        first = max(lo, k - 1)
        h[rows, first:] = g.conj().T @ h[rows, first:]
        last = min(k + 3, hi + 1)
        h[:last, rows] = h[:last, rows] @ g
        q[:, rows] = q[:, rows] @ g
        if k > lo:
            h[k + 1, k - 1] = 0
        if k < hi - 1:
            x, y = h[k + 1, k], h[k + 2, k]


def _complex_schur(a):
    n = a.shape[0]
    h, q = _hessenberg_q(a)
    scale = max(np.abs(h).sum(), np.finfo(np.float64).tiny)
    hi, steps = n - 1, 0
    while hi > 0:
        lo = _active_start(h, hi, scale)
        if lo == hi:
            hi, steps = hi - 1, 0
            continue
        steps += 1
        if steps > 30 * n:
            return None
        _complex_step(h, q, lo, hi, exceptional=steps % 10 == 0)
    return np.triu(h), q


# --------------------------------------------------------------------------------------


def schur(a, compute_schur_vectors=True):
    """`[t, q]` (or `[t]`) for a stack of square matrices: real Schur form for real
    input, complex (triangular) Schur form for complex input."""
    x, out_dtype = kernels.as_lapack(a)
    complex_input = x.dtype.kind == "c"
    work = np.complex128 if complex_input else np.float64
    n = x.shape[-1]
    flat = x.reshape((-1, n, n)).astype(work)
    ts, qs = np.empty_like(flat), np.empty_like(flat)
    for i, mat in enumerate(flat):
        result = None
        if np.all(np.isfinite(mat)):
            result = _complex_schur(mat) if complex_input else _real_schur(mat)
        if result is None:  # LAPACK's failure: NaNs, as JAX reports it
            ts[i] = qs[i] = np.nan
        else:
            ts[i], qs[i] = result
    outs = [ts.reshape(x.shape).astype(out_dtype)]
    if compute_schur_vectors:
        outs.append(qs.reshape(x.shape).astype(out_dtype))
    return outs
