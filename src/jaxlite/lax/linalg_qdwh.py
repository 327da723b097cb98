"""jax.lax.linalg.qdwh: the polar decomposition `x = u h` by the QR-based dynamically
weighted Halley iteration (Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31,
2010).

Halley's iteration `u <- u (a I + b u^H u)(I + c u^H u)^{-1}` drives every singular
value of `u` to 1 while keeping its singular vectors, so it converges to the unitary
polar factor. With weights (a, b, c) chosen from a lower bound `l` on the smallest
singular value of the scaled matrix, the bound grows so fast that float32 needs at most
about six steps from `l = eps`. Since `l` evolves independently of the data, the
weights are computed in Python before tracing (a static schedule). Each step is written
as `u <- (b/c) u + (a - b/c) u (I + c u^H u)^{-1}` and evaluated
- while c is large (early steps, ill-conditioned `I + c u^H u`) from the QR
  factorisation of the stacked matrix `[sqrt(c) u; I]`: with Q = [Q1; Q2],
  `u (I + c u^H u)^{-1} = Q1 Q2^H / sqrt(c)`, no inverse formed;
- afterwards from the Cholesky factor of `I + c u^H u` and two triangular solves.
The Cholesky steps measure the change of `u`; if the schedule ends before the change is
below `(5 eps)^(1/3)`, plain Halley steps (a, b, c) = (3, 1, 3) continue up to
`max_iterations` in all. A Newton-Schulz step `1.5 u - 0.5 u u^H u` polishes the result
and `h = u^H x` is symmetrised. The outputs `(u, h, num_iters, is_converged)` and the
iteration count follow JAX's schedule exactly, so they agree with JAX's.

`dynamic_shape=(m, n)` treats the top-left m x n block of a padded matrix as the input
(the padding is masked to zero and kept out of the QR and Cholesky factorisations).
Everything is lax (`fori_loop`, `while_loop`, the factorisation primitives), so it jits
and vmaps; forward-mode derivatives flow through the loops.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.core import concrete_or_error

__all__ = ["qdwh"]

# Above this weight c, `I + c u^H u` is too ill-conditioned for Cholesky: use QR.
_CHOLESKY_CUTOFF = 100


def _weights(bound):
    """The optimal Halley weights (a, b, c) for the smallest singular value bound,
    and the bound after the step."""
    l2 = bound * bound
    d = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
    root = (1 + d) ** 0.5
    a = root + (2 - d + 2 * (2 - l2) / (l2 * root)) ** 0.5
    b = (a - 1) ** 2 / 4
    c = a + b - 1
    return (a, b, c), bound * (a + b * l2) / (1 + c * l2)


def _schedule(eps, max_iterations):
    """The static weights: `(qr_steps, cholesky_steps)`, each a list of (a, b, c)."""
    qr_steps, chol_steps = [], []
    bound, tol_bound = eps, 5 * eps
    while bound + tol_bound < 1 and len(qr_steps) + len(chol_steps) < max_iterations:
        abc, bound = _weights(bound)
        (qr_steps if abc[2] > _CHOLESKY_CUTOFF else chol_steps).append(abc)
    return qr_steps, chol_steps


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """Polar decomposition of a full-rank matrix x (M x N, M >= N): `(u, h,
    num_iters, is_converged)` with `x = u h`, u with orthonormal columns, h Hermitian
    positive definite, the number of Halley steps taken and whether they converged
    within `max_iterations` (default 10)."""
    from jaxlite import lax
    from jaxlite.lax import linalg
    from jaxlite.lax.structural import operand

    concrete_or_error(
        bool,
        is_hermitian,
        "The `is_hermitian` argument must be statically specified to use `qdwh` "
        "within JAX transformations.",
    )
    if max_iterations is None:
        max_iterations = 10
    else:
        max_iterations = concrete_or_error(
            int,
            max_iterations,
            "The `max_iterations` argument must be statically specified to use "
            "`qdwh` within JAX transformations.",
        )
    x = operand(x)
    big_m, big_n = x.shape
    if big_m < big_n:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    dtype = x.dtype
    if eps is None:
        eps = float(dtypes.finfo(dtype).eps)

    def mask(v, dims, fill=0):
        """v with the entries outside the leading `dims` block replaced by fill."""
        keep = None
        for axis, size in enumerate(dims):
            if size is not None:
                inside = lax.broadcasted_iota(np.int32, v.shape, axis) < size
                keep = inside if keep is None else keep & inside
        if keep is None:
            return v
        return lax.select(keep, v, fill if np.ndim(fill) else lax.full_like(v, fill))

    if dynamic_shape is None:
        m, n = big_m, big_n
    else:
        m, n = dynamic_shape
        x = mask(x, (m, n))
    eye = lax.convert_element_type(
        lax.eq(
            lax.broadcasted_iota(np.int32, (big_n, big_n), 0),
            lax.broadcasted_iota(np.int32, (big_n, big_n), 1),
        ),
        dtype,
    )

    def qr_step(u, params):
        """u (I + c u^H u)^{-1} from the QR factors of [sqrt(c) u; I] (padding kept
        in the right places: the identity block starts at the true row count m)."""
        scaled_ae, sqrt_c, e = params
        stacked = lax.dynamic_update_slice_in_dim(
            lax.concatenate([sqrt_c * u, lax.full_like(eye, 0)], 0), eye, m, 0
        )
        q, _ = linalg.qr(stacked, full_matrices=False)
        q1 = mask(q[:big_m], (m, n))
        q2 = mask(lax.dynamic_slice_in_dim(q, m, big_n, 0), (n, n))
        return e * u + scaled_ae * (q1 @ q2.T.conj())

    def cholesky_step(u, params):
        """u (I + c u^H u)^{-1} from the Cholesky factor of I + c u^H u."""
        a_minus_e, c, e = params
        gram = mask(c * (u.T.conj() @ u) + eye, (n, n), eye)
        chol = linalg.cholesky(gram, symmetrize_input=False)
        z = linalg.triangular_solve(
            chol, u.T, left_side=True, lower=True, conjugate_a=True
        ).conj()
        z = linalg.triangular_solve(
            chol, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True
        )
        return e * u + a_minus_e * z.T.conj()

    def qr_params(a, b, c):
        e = b / c
        return ((a - e) / c**0.5, c**0.5, e)

    def cholesky_params(a, b, c):
        e = b / c
        return (a - e, c, e)

    tol_norm = lax.cbrt(operand(5 * eps))

    def step(update, params, u):
        new = update(u, params)
        return new, _frobenius_norm(lax, new - u) > tol_norm

    def run_schedule(u, weights, update, make_params, measure):
        if not weights:
            return u, True
        table = operand(np.asarray([make_params(*w) for w in weights], dtype))

        def body(k, state):
            params = tuple(lax.dynamic_index_in_dim(table, k, keepdims=False))
            if measure:
                return step(update, params, state[0])
            return update(state[0], params), True

        return lax.fori_loop(0, len(weights), body, (u, True))

    # Scale so that the 2-norm is at most 1: 1 / sqrt(|x|_1 |x|_inf) >= 1 / |x|_2.
    one_norm = _largest_abs_sum(lax, x, 0)  # largest column sum: the 1-norm
    inf_norm = _largest_abs_sum(lax, x, 1)  # largest row sum: the inf-norm
    scale = lax.rsqrt(one_norm) * lax.rsqrt(inf_norm)
    scale = lax.select(
        lax.eq(one_norm, lax.full_like(one_norm, 0)), lax.full_like(scale, 1), scale
    )
    u = x * scale.astype(dtype)

    qr_steps, chol_steps = _schedule(eps, max_iterations)
    u, _ = run_schedule(u, qr_steps, qr_step, qr_params, False)
    u, not_converged = run_schedule(u, chol_steps, cholesky_step, cholesky_params, True)

    def halley_cond(state):
        k, _, not_converged = state
        return lax.bitwise_and(not_converged, k < max_iterations)

    def halley_body(state):
        k, u, _ = state
        u, not_converged = step(cholesky_step, cholesky_params(3, 1, 3), u)
        return k + 1, u, not_converged

    start = len(qr_steps) + len(chol_steps)
    num_iters, u, not_converged = lax.while_loop(
        halley_cond, halley_body, (start, u, not_converged)
    )
    u = 1.5 * u - 0.5 * u @ (u.T.conj() @ u)  # Newton-Schulz polish
    h = u.T.conj() @ x
    h = (h + h.T.conj()) / 2
    return u, h, num_iters, lax.bitwise_not(not_converged)


def _frobenius_norm(lax, x):
    """sqrt(sum |x|^2), as jnp.linalg.norm's default for a matrix."""
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        sq = lax.real(lax.mul(x, lax.conj(x)))
    else:
        sq = lax.mul(x, x)
    return lax.sqrt(lax.reduce_sum(sq, tuple(range(np.ndim(x)))))


def _largest_abs_sum(lax, x, axis):
    """The largest sum of |x| over `axis` (0: the 1-norm, 1: the inf-norm)."""
    return lax.reduce_max(lax.reduce_sum(lax.abs(x), (axis,)), (0,))
