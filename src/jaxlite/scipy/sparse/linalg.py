"""jax.scipy.sparse.linalg: Krylov solvers (`cg`, `gmres`, `bicgstab`) for `A x = b`.

`A` is a square matrix, any object with `@` (a sparse matrix), or a linear function;
`b` and `x0` may be any pytree of arrays, the unknown vector being all the leaves
together. Each solver is a `lax.while_loop` over pytree arithmetic, wrapped in
`lax.custom_linear_solve`: the derivative of `x` comes from `A x = b` (one more solve
of the same kind, with the transposed operator in reverse mode), never from
differentiating through the iterations, and `jit` and `vmap` pass through the loop and
the solve primitive. The tolerance is SciPy's non-legacy rule
`norm(r) <= max(tol * norm(b), atol)`. As in JAX, `cg` and `bicgstab` return
`info=None`, and `gmres` returns 0, or -1 when the solution has NaNs. Inner products
run at the highest precision.

`gmres` builds the Krylov basis with Arnoldi iterations, orthogonalised by classical
Gram-Schmidt repeated twice ("twice is enough"); `solve_method="incremental"` keeps a
QR factorisation of the Hessenberg matrix up to date with Givens rotations, which
also tells the residual after every step and so stops a restart early;
`solve_method="batched"` builds the whole restart first and solves the small
least-squares problem through its normal equations.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer
from jaxlite.lax.elementwise import convert_element_type
from jaxlite.scipy import linalg as jsp_linalg
from jaxlite.tree_util import tree_leaves, tree_map, tree_reduce, tree_structure

__all__ = ["bicgstab", "cg", "gmres"]

_HIGHEST = lax.Precision.HIGHEST


def _dot(a, b):
    return jnp.dot(a, b, precision=_HIGHEST)


def _vdot(a, b):
    return jnp.vdot(a, b, precision=_HIGHEST)


# --------------------------------------------------------------------------------------
# Arithmetic on pytrees of arrays (one vector spread over the leaves)


def _vdot_real_part(x, y):
    """Re <x, y> without the cross terms: real even for complex x and y (the uses
    here are of the form z^H M z with M Hermitian positive definite)."""
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result = result + _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x, y):
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def _norm(x):
    leaves = tree_leaves(x)
    return jnp.sqrt(sum(_vdot_real_part(v, v) for v in leaves))


def _mul(scalar, tree):
    return tree_map(lambda v: scalar * v, tree)


def _add(x, y):
    return tree_map(operator.add, x, y)


def _sub(x, y):
    return tree_map(operator.sub, x, y)


def _result_type(tree):
    """`(dtype, weak_type)` of the leaves of `tree` together."""
    return dtypes.result_type(*tree_leaves(tree), return_weak_type_flag=True)


def _identity(x):
    return x


def _normalize_matvec(f):
    """`A` as a function computing `A @ x`."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, Array, Tracer)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(
                f"linear operator must be a square matrix, but has shape: {f.shape}"
            )
        return functools.partial(_dot, f)
    if hasattr(f, "__matmul__"):
        shape = getattr(f, "shape", None)
        if shape is not None and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(
                f"linear operator must be a square matrix, but has shape: {shape}"
            )
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _check_x0(x0, b):
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(
            "x0 and b must have matching tree structure: "
            f"{tree_structure(x0)} vs {tree_structure(b)}"
        )


def _shapes(tree):
    return [np.shape(x) for x in tree_leaves(tree)]


def _prepare(b, x0):
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    return b, x0


# --------------------------------------------------------------------------------------
# Conjugate gradients and BiCGSTAB


def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned conjugate gradients from `x0`."""
    atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))

    def cond_fun(value):
        _, r, gamma, _, k = value
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value):
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        beta_ = gamma_ / gamma
        p_ = _add(z_, _mul(beta_, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = dtypes.result_type(*tree_leaves(p0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, 0))
    return x_final


def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    """Preconditioned BiCGSTAB from `x0`. The counter turns negative on a breakdown
    (rho = 0: -10; alpha or omega = 0: -11), which stops the loop."""
    atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))

    def cond_fun(value):
        _, r, *_, k = value
        rs = _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter) & (k >= 0)

    def body_fun(value):
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_map(
            functools.partial(jnp.where, exit_early),
            _add(x, _mul(alpha_, phat)),
            _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))),
        )
        r_ = tree_map(
            functools.partial(jnp.where, exit_early), s, _sub(s, _mul(omega_, t))
        )
        k_ = jnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = jnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    dtype, weak_type = _result_type(b)
    one = convert_element_type(1, dtype, weak_type)
    initial = (x0, r0, r0, one, one, one, r0, r0, 0)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, initial)
    return x_final


def _isolve(solve, A, b, x0, *, tol, atol, maxiter, M, check_symmetric=False):
    b, x0 = _prepare(b, x0)
    if maxiter is None:
        maxiter = 10 * sum(np.size(x) for x in tree_leaves(b))  # as SciPy
    A = _normalize_matvec(A)
    M = _identity if M is None else _normalize_matvec(M)
    _check_x0(x0, b)
    if _shapes(x0) != _shapes(b):
        raise ValueError(
            f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
            f"{_shapes(b)}"
        )
    isolve = functools.partial(solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # A real positive-definite operator is symmetric, so the transposed solve is the
    # same solve; a complex Hermitian one is not symmetric.
    symmetric = check_symmetric and all(
        not dtypes.issubdtype(x.dtype, np.complexfloating) for x in tree_leaves(b)
    )
    x = lax.custom_linear_solve(
        A, b, solve=isolve, transpose_solve=isolve, symmetric=symmetric
    )
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve `A x = b` by (preconditioned) conjugate gradients.

    `A` (a matrix, an object with `@`, or a function) must be Hermitian positive
    definite and return arrays shaped like its argument; `b` and `x0` are arrays or
    pytrees of arrays; `M` approximates the inverse of `A`. Stops when
    `norm(A x - b) <= max(tol * norm(b), atol)` or after `maxiter` steps (default
    `10 * size`). Derivatives come from another `cg` solve (implicit
    differentiation), accurate when both solves converge. Returns `(x, None)`.
    """
    return _isolve(
        _cg_solve,
        A,
        b,
        x0,
        tol=tol,
        atol=atol,
        maxiter=maxiter,
        M=M,
        check_symmetric=True,
    )


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solve `A x = b` by BiCGSTAB, for a general (non-symmetric) operator `A`.

    Arguments as for `cg`; reverse-mode derivatives solve with the transposed
    operator. Returns `(x, None)`.
    """
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


# --------------------------------------------------------------------------------------
# GMRES


def _safe_normalize(x, thresh=None):
    """`(x / norm(x), norm(x))`, or zeros and 0 where the norm is not above `thresh`
    (by default the machine epsilon of x's dtype)."""
    norm = _norm(x)
    dtype, weak_type = _result_type(x)
    if thresh is None:
        thresh = dtypes.finfo(norm.dtype).eps
    thresh = jnp.asarray(thresh).astype(dtype).real
    use_norm = norm > thresh
    norm_cast = convert_element_type(norm, dtype, weak_type)
    normalized = tree_map(lambda y: jnp.where(use_norm, y / norm_cast, 0.0), x)
    return normalized, jnp.where(use_norm, norm, 0.0)


def _project_on_columns(Q, v):
    """Q^H v, Q's leaves holding the columns along their last axis."""
    projected = tree_map(
        lambda X, y: jnp.einsum("...n,...->n", X.conj(), y, precision=_HIGHEST), Q, v
    )
    return tree_reduce(operator.add, projected)


def _iterative_classical_gram_schmidt(Q, x, xnorm, max_iterations=2):
    """`(q, r)`: `x` orthogonalised against the orthonormal columns of `Q` (x is in
    span(Q, q)) and its overlaps `r` with them. Classical Gram-Schmidt, repeated
    (at most `max_iterations` times) while ||r|| >= ||x|| / sqrt(2)."""
    Q0 = tree_leaves(Q)[0]
    r = jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)
    xnorm_scaled = xnorm / jnp.sqrt(2.0)

    def body_function(carry):
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        q = _sub(q, tree_map(lambda X: _dot(X, h), Q))
        r = _add(r, h)

        def qnorm_cond(carry):
            k, not_done, _, _ = carry
            return jnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(carry):
            k, _, q, _ = carry
            _, qnorm = _safe_normalize(q)
            return k, False, q, qnorm / jnp.sqrt(2.0)

        _, _, q, qnorm_scaled = lax.while_loop(
            qnorm_cond, qnorm, (k, True, q, qnorm_scaled)
        )
        return k + 1, q, r, qnorm_scaled

    def cond_function(carry):
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    carry = body_function((0, x, r, xnorm_scaled))
    _, q, r, _ = lax.while_loop(cond_function, body_function, carry)
    return q, r


def _kth_arnoldi_iteration(k, A, M, V, H):
    """Step k of Arnoldi: column k+1 of V becomes M(A(V[:, k])) orthonormalised
    against the first columns, row k of H its overlaps. An invariant subspace (the
    new vector vanishes to rounding) gives a zero column and `breakdown`."""
    dtype, _ = _result_type(V)
    eps = dtypes.finfo(dtype).eps
    v = M(A(tree_map(lambda X: X[..., k], V)))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    unit_v, v_norm_1 = _safe_normalize(v, thresh=eps * v_norm_0)
    V = tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    H = H.at[k, :].set(h)
    return V, H, v_norm_1 == 0.0


def _rotate_vectors(H, i, cs, sn):
    x1, y1 = H[i], H[i + 1]
    H = H.at[i].set(cs.conj() * x1 - sn.conj() * y1)
    return H.at[i + 1].set(sn * x1 + cs * y1)


def _givens_rotation(a, b):
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row, givens, k):
    """Apply the first k stored rotations to `H_row`, then make and apply the one
    that zeroes its element k+1."""

    def apply_ith_rotation(i, row):
        return _rotate_vectors(row, i, givens[i, 0], givens[i, 1])

    R_row = lax.fori_loop(0, k, apply_ith_rotation, H_row)
    cs, sn = _givens_rotation(R_row[k], R_row[k + 1])
    givens = givens.at[k, :].set(jnp.stack([cs, sn]).astype(givens.dtype))
    return _rotate_vectors(R_row, k, cs, sn), givens


def _krylov_basis(unit_residual, restart):
    """V: the unit residual as column 0, then `restart` zero columns."""
    return tree_map(
        lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)),
        unit_residual,
    )


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart of GMRES, the Hessenberg matrix QR-factorised as it grows; stops
    early once the (free) residual estimate is below `ptol`."""
    V = _krylov_basis(unit_residual, restart)
    dtype = dtypes.result_type(*tree_leaves(b))
    # eye, not zeros: an early stop must not leave R singular.
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta_vec = (
        jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    )

    def loop_cond(carry):
        k, err, _, _, _, _ = carry
        return jnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry):
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = R.at[k, :].set(R_row)
        beta_vec = _rotate_vectors(beta_vec, k, givens[k, 0], givens[k, 1])
        return k + 1, abs(beta_vec[k + 1]), V, R, beta_vec, givens

    carry = (0, residual_norm, V, R, beta_vec, givens)
    _, _, V, R, beta_vec, _ = lax.while_loop(loop_cond, arnoldi_qr_step, carry)
    y = jsp_linalg.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _lstsq(a, b):
    """Least squares through the normal equations (a^H a) x = a^H b."""
    a2 = _dot(a.T.conj(), a)
    b2 = _dot(a.T.conj(), b)
    return jsp_linalg.solve(a2, b2, assume_a="pos")


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart of GMRES: the whole Arnoldi process (until breakdown), then one
    dense least-squares solve."""
    del ptol
    V = _krylov_basis(unit_residual, restart)
    dtype, weak_type = _result_type(b)
    H = convert_element_type(
        jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak_type
    )

    def loop_cond(carry):
        _, _, breakdown, k = carry
        return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

    def arnoldi_process(carry):
        V, H, _, k = carry
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(loop_cond, arnoldi_process, (V, H, False, 0))
    beta_vec = (
        jnp.zeros(restart + 1, dtype=H.dtype).at[0].set(residual_norm.astype(dtype))
    )
    y = _lstsq(H.T, beta_vec)
    x = _add(x0, tree_map(lambda X: _dot(X[..., :-1], y), V))
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func):
    """Restart GMRES from the last solution until `norm(M(b - A x)) <= atol` or
    `maxiter` restarts."""
    residual = M(_sub(b, A(x0)))
    unit_residual, residual_norm = _safe_normalize(residual)

    def cond_fun(value):
        _, k, _, residual_norm = value
        return jnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value):
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(
            A, b, x, unit_residual, residual_norm, ptol, restart, M
        )
        return x, k + 1, unit_residual, residual_norm

    x_final, *_ = lax.while_loop(
        cond_fun, body_fun, (x0, 0, unit_residual, residual_norm)
    )
    return x_final


_GMRES_METHODS = {"incremental": _gmres_incremental, "batched": _gmres_batched}


def gmres(
    A,
    b,
    x0=None,
    *,
    tol=1e-5,
    atol=0.0,
    restart=20,
    maxiter=None,
    M=None,
    solve_method="batched",
):
    """Solve `A x = b` by restarted GMRES, for a general linear operator `A`.

    `restart` is the dimension of the Krylov space built between restarts and
    `maxiter` the number of restarts (default `10 * size`). `solve_method` is
    `"incremental"` (Givens-rotation QR during Arnoldi, with early stopping inside a
    restart) or `"batched"` (one least-squares solve per restart). Other arguments as
    for `cg`. Returns `(x, info)` with `info` 0, or -1 when `x` has NaNs.
    """
    gmres_func = _GMRES_METHODS.get(solve_method)
    if gmres_func is None:
        raise ValueError(
            f"invalid solve_method {solve_method}, must be either 'incremental' or "
            "'batched'"
        )
    b, x0 = _prepare(b, x0)
    M = _identity if M is None else _normalize_matvec(M)
    A = _normalize_matvec(A)
    size = sum(np.size(x) for x in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # as SciPy
    restart = min(restart, size)
    _check_x0(x0, b)

    b_norm = _norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)

    def solve(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func)

    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
    return x, info
