"""`jaxlite.scipy.optimize`: unconstrained minimisation (BFGS, L-BFGS) as in JAX.

The optimisers are ordinary traceable programs: the outer iteration and the
strong-Wolfe line search (Nocedal & Wright, algorithms 3.5/3.6 with cubic and
quadratic interpolation in the zoom phase) are `lax.while_loop`s over a dict of
state arrays, and every branch is a `jnp.where`.  So `minimize` runs eagerly,
under `jit` and under `vmap`, and takes exactly the same steps as
`jax.scipy.optimize.minimize` (same iteration, function and gradient counts).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.api_autodiff import value_and_grad

__all__ = ["OptimizeResults", "minimize"]


def _dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _pick(bit, old: dict, new: dict) -> dict:
    """Entries of `new` where `bit` holds, else those of `old` (same keys)."""
    return {k: jnp.where(bit, v, old[k]) for k, v in new.items()}


# ----------------------------------------------------------------- line search


class _LineSearchResults(NamedTuple):
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """Minimiser of the cubic through (a, fa, fpa), (b, fb), (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb = fb - fa - fpa * db
    rc = fc - fa - fpa * dc
    big_a = (dc**2 * rb - db**2 * rc) / denom
    big_b = (-(dc**3) * rb + db**3 * rc) / denom
    disc = big_b * big_b - 3.0 * big_a * fpa
    return a + (-big_b + jnp.sqrt(disc)) / (3.0 * big_a)


def _quad_min(a, fa, fpa, b, fb):
    """Minimiser of the parabola through (a, fa, fpa), (b, fb)."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db**2)
    return a - fpa / (2.0 * curv)


def _zoom(phi_dphi, wolfe_one, wolfe_two, lo, hi, g_0, skip):
    """Zoom phase: shrink [a_lo, a_hi] until the strong Wolfe conditions hold.

    `lo`/`hi` are (a, phi, dphi) triples; `skip` (traced bool) disables the loop
    so both possible zooms can be traced unconditionally.
    """
    a_lo, phi_lo, dphi_lo = lo
    a_hi, phi_hi, dphi_hi = hi
    st = dict(
        done=jnp.asarray(False),
        failed=jnp.asarray(False),
        j=jnp.asarray(0),
        a_lo=a_lo,
        phi_lo=phi_lo,
        dphi_lo=dphi_lo,
        a_hi=a_hi,
        phi_hi=phi_hi,
        dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=jnp.ones_like(a_lo),
        phi_star=phi_lo,
        dphi_star=dphi_lo,
        g_star=g_0,
        nfev=jnp.asarray(0),
        ngev=jnp.asarray(0),
    )
    st = {k: jnp.asarray(v) for k, v in st.items()}

    def body(s):
        s = dict(s)
        width = s["a_hi"] - s["a_lo"]
        left = jnp.minimum(s["a_hi"], s["a_lo"])
        right = jnp.maximum(s["a_hi"], s["a_lo"])
        cubic_margin = 0.2 * width
        quad_margin = 0.1 * width
        tiny = 1e-5 if jnp.finfo(width.dtype).bits < 64 else 1e-10
        s["failed"] = s["failed"] | (width <= tiny)

        a_cub = _cubic_min(
            s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"],
            s["a_rec"], s["phi_rec"],
        )  # fmt: skip
        use_cub = (
            (s["j"] > 0)
            & (a_cub > left + cubic_margin)
            & (a_cub < right - cubic_margin)
        )
        a_quad = _quad_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
        use_quad = (
            (~use_cub) & (a_quad > left + quad_margin) & (a_quad < right - quad_margin)
        )
        a_mid = (s["a_lo"] + s["a_hi"]) / 2.0
        a_j = jnp.where(use_cub, a_cub, jnp.where(use_quad, a_quad, a_mid))

        phi_j, dphi_j, g_j = phi_dphi(a_j)
        phi_j = phi_j.astype(s["phi_lo"].dtype)
        dphi_j = dphi_j.astype(s["dphi_lo"].dtype)
        g_j = g_j.astype(s["g_star"].dtype)
        s["nfev"] = s["nfev"] + 1
        s["ngev"] = s["ngev"] + 1

        to_hi = wolfe_one(a_j, phi_j) | (phi_j >= s["phi_lo"])
        found = wolfe_two(dphi_j) & (~to_hi)
        swap = (dphi_j * (s["a_hi"] - s["a_lo"]) >= 0.0) & (~to_hi) & (~found)
        to_lo = (~to_hi) & (~found)

        s.update(_pick(to_hi, s, dict(
            a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
            a_rec=s["a_hi"], phi_rec=s["phi_hi"],
        )))  # fmt: skip
        s["done"] = found | s["done"]
        s.update(_pick(found, s, dict(
            a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j,
        )))  # fmt: skip
        s.update(_pick(swap, s, dict(
            a_hi=s["a_lo"], phi_hi=s["phi_lo"], dphi_hi=s["dphi_lo"],
            a_rec=s["a_hi"], phi_rec=s["phi_hi"],
        )))  # fmt: skip
        # after a swap the old a_hi is already the recorded point
        s.update(_pick(to_lo & ~swap, s, dict(a_rec=s["a_lo"], phi_rec=s["phi_lo"])))
        s.update(_pick(to_lo, s, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)))
        s["j"] = s["j"] + 1
        s["failed"] = s["failed"] | (s["j"] >= 30)
        return s

    return lax.while_loop(lambda s: (~s["done"]) & (~skip) & (~s["failed"]), body, st)


def _line_search(
    f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
    maxiter=20,
):  # fmt: skip
    """Inexact line search satisfying the strong Wolfe conditions.

    Same algorithm as JAX's internal BFGS line search; returns a `_LineSearchResults`
    (failed, nit, nfev, ngev, k, a_k, f_k, g_k, status).
    """
    xk = jnp.asarray(xk)
    pk = jnp.asarray(pk)
    dt = jnp.result_type(xk, pk, float)
    xk, pk = xk.astype(dt), pk.astype(dt)

    def phi_dphi(t):
        t = jnp.array(t, dtype=pk.dtype)
        val, g = value_and_grad(f)(xk + t * pk)
        return val, jnp.real(_dot(g, pk)), g

    fresh = old_fval is None or gfk is None
    if fresh:
        phi_0, dphi_0, gfk = phi_dphi(0)
    else:
        phi_0 = jnp.asarray(old_fval)
        dphi_0 = jnp.real(_dot(gfk, pk))
    if old_old_fval is not None:
        guess = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = jnp.where(guess > 1, 1.0, guess)
    else:
        start = 1

    def wolfe_one(a, phi):  # sufficient decrease VIOLATED
        return phi > phi_0 + c1 * a * dphi_0

    def wolfe_two(dphi):  # curvature condition holds
        return jnp.abs(dphi) <= -c2 * dphi_0

    st = dict(
        done=jnp.array(False),
        failed=jnp.array(False),
        i=jnp.asarray(1),
        a_i1=jnp.asarray(0.0),
        phi_i1=phi_0,
        dphi_i1=dphi_0,
        nfev=jnp.asarray(1 if fresh else 0),
        ngev=jnp.asarray(1 if fresh else 0),
        a_star=jnp.asarray(0.0),
        phi_star=phi_0,
        dphi_star=dphi_0,
        g_star=gfk,
    )
    st = {k: jnp.asarray(v) for k, v in st.items()}
    star_keys = ("a_star", "phi_star", "dphi_star", "g_star")

    def body(s):
        s = dict(s)
        a_i = jnp.where(s["i"] == 1, start, s["a_i1"] * 2.0)
        phi_i, dphi_i, g_i = phi_dphi(a_i)
        s["nfev"] = s["nfev"] + 1
        s["ngev"] = s["ngev"] + 1

        zoom_a = wolfe_one(a_i, phi_i) | ((phi_i >= s["phi_i1"]) & (s["i"] > 1))
        accept = wolfe_two(dphi_i) & (~zoom_a)
        zoom_b = (dphi_i >= 0.0) & (~zoom_a) & (~accept)

        prev = (s["a_i1"], s["phi_i1"], s["dphi_i1"])
        cur = (a_i, phi_i, dphi_i)
        z1 = _zoom(phi_dphi, wolfe_one, wolfe_two, prev, cur, gfk, ~zoom_a)
        z2 = _zoom(phi_dphi, wolfe_one, wolfe_two, cur, prev, gfk, ~zoom_b)
        s["nfev"] = s["nfev"] + z1["nfev"] + z2["nfev"]
        s["ngev"] = s["ngev"] + z1["ngev"] + z2["ngev"]

        s["done"] = zoom_a | s["done"]
        s["failed"] = (zoom_a & z1["failed"]) | s["failed"]
        s.update(_pick(zoom_a, s, {k: z1[k] for k in star_keys}))
        s["done"] = accept | s["done"]
        s.update(_pick(accept, s, dict(
            a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i,
        )))  # fmt: skip
        s["done"] = zoom_b | s["done"]
        s["failed"] = (zoom_b & z2["failed"]) | s["failed"]
        s.update(_pick(zoom_b, s, {k: z2[k] for k in star_keys}))
        s.update(i=s["i"] + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)
        return {k: jnp.asarray(v).astype(st[k].dtype) for k, v in s.items()}

    s = lax.while_loop(
        lambda s: (~s["done"]) & (s["i"] <= maxiter) & (~s["failed"]), body, st
    )
    status = jnp.where(s["failed"], 1, jnp.where(s["i"] > maxiter, 3, 0))
    alpha = s["a_star"]
    if jnp.finfo(alpha.dtype).bits != 64:  # floor tiny steps in 32-bit mode
        alpha = jnp.where(jnp.abs(alpha) < 1e-8, jnp.sign(alpha) * 1e-8, alpha)
    return _LineSearchResults(
        failed=s["failed"] | (~s["done"]),
        nit=s["i"] - 1,
        nfev=s["nfev"],
        ngev=s["ngev"],
        k=s["i"],
        a_k=alpha,
        f_k=s["phi_star"],
        g_k=s["g_star"],
        status=status,
    )


# ------------------------------------------------------------------------ BFGS


def _minimize_bfgs(
    fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10
):
    x0 = jnp.asarray(x0)
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    n = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    st = dict(
        converged=jnp.linalg.norm(g_0, ord=norm) < gtol,
        failed=jnp.asarray(False),
        k=jnp.asarray(0),
        nfev=jnp.asarray(1),
        ngev=jnp.asarray(1),
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        H_k=jnp.eye(n, dtype=x0.dtype),
        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2,
        ls_status=jnp.asarray(0),
    )

    def body(s):
        s = dict(s)
        p = -_dot(s["H_k"], s["g_k"])
        ls = _line_search(
            fun, s["x_k"], p, old_fval=s["f_k"], old_old_fval=s["old_old_fval"],
            gfk=s["g_k"], maxiter=line_search_maxiter,
        )  # fmt: skip
        step = ls.a_k * p
        y = ls.g_k - s["g_k"]
        rho = jnp.reciprocal(_dot(y, step))
        eye = jnp.eye(n, dtype=rho.dtype)
        w = eye - rho * jnp.outer(step, y)
        h_new = jnp.matmul(
            jnp.matmul(w, s["H_k"], precision=lax.Precision.HIGHEST),
            w.T,
            precision=lax.Precision.HIGHEST,
        ) + rho * jnp.outer(step, step)
        h_new = jnp.where(jnp.isfinite(rho), h_new, s["H_k"])
        new = dict(
            nfev=s["nfev"] + ls.nfev,
            ngev=s["ngev"] + ls.ngev,
            failed=ls.failed,
            ls_status=ls.status,
            converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol,
            k=s["k"] + 1,
            x_k=s["x_k"] + step,
            f_k=ls.f_k,
            g_k=ls.g_k,
            H_k=h_new,
            old_old_fval=s["f_k"],
        )
        return {k: jnp.asarray(v).astype(st[k].dtype) for k, v in new.items()}

    s = lax.while_loop(
        lambda s: (~s["converged"]) & (~s["failed"]) & (s["k"] < maxiter), body, st
    )
    status = jnp.where(
        s["converged"],
        0,
        jnp.where(s["k"] == maxiter, 1, jnp.where(s["failed"], 2 + s["ls_status"], -1)),
    )
    s["status"] = status
    return s


# ---------------------------------------------------------------------- L-BFGS


def _two_loop(s, hist):
    """Search direction -H g from the stored (s, y, rho) pairs (N&W alg. 7.4)."""
    dt = s["rho_hist"].dtype
    used = jnp.where(s["k"] < hist, s["k"], hist)
    q = -jnp.conj(s["g_k"])

    def backward(j, carry):
        q, alphas = carry
        i = hist - 1 - j
        a = s["rho_hist"][i] * _dot(jnp.conj(s["s_hist"][i]), q).real.astype(dt)
        return q - a * jnp.conj(s["y_hist"][i]), alphas.at[i].set(a)

    q, alphas = lax.fori_loop(0, used, backward, (q, jnp.zeros_like(s["rho_hist"])))
    q = s["gamma"] * q

    def forward(j, q):
        i = hist - used + j
        b = s["rho_hist"][i] * _dot(s["y_hist"][i], q).real.astype(dt)
        return q + (alphas[i] - b) * s["s_hist"][i]

    return lax.fori_loop(0, used, forward, q)


def _push(history, new):
    return jnp.roll(history, -1, axis=0).at[-1].set(new)


def _minimize_lbfgs(
    fun, x0, maxiter=None, norm=np.inf, maxcor=10, ftol=2.220446049250313e-09,
    gtol=1e-05, maxfun=None, maxgrad=None, maxls=20,
):  # fmt: skip
    x0 = jnp.asarray(x0)
    n = len(x0)
    dt = x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = n * 200
    maxiter = np.inf if maxiter is None else maxiter
    maxfun = np.inf if maxfun is None else maxfun
    maxgrad = np.inf if maxgrad is None else maxgrad

    f_0, g_0 = value_and_grad(fun)(x0)
    st = dict(
        converged=jnp.asarray(False),
        failed=jnp.asarray(False),
        k=jnp.asarray(0),
        nfev=jnp.asarray(1),
        ngev=jnp.asarray(1),
        x_k=x0,
        f_k=f_0,
        g_k=g_0,
        s_hist=jnp.zeros((maxcor, n), dtype=dt),
        y_hist=jnp.zeros((maxcor, n), dtype=dt),
        rho_hist=jnp.zeros((maxcor,), dtype=dt),
        gamma=jnp.asarray(1.0, dtype=g_0.dtype),
        status=jnp.asarray(0),
        ls_status=jnp.asarray(0),
    )

    def body(s):
        p = _two_loop(s, maxcor)
        ls = _line_search(
            fun, s["x_k"], p, old_fval=s["f_k"], gfk=s["g_k"], maxiter=maxls
        )
        step = jnp.asarray(ls.a_k).astype(p.dtype) * p
        y = ls.g_k - s["g_k"]
        sy = jnp.real(_dot(y, step))
        rho = jnp.reciprocal(sy).astype(y.dtype)
        gamma = sy / jnp.real(_dot(jnp.conj(y), y))
        status = jnp.asarray(0)
        status = jnp.where(s["f_k"] - ls.f_k < ftol, 4, status)
        status = jnp.where(s["ngev"] >= maxgrad, 3, status)
        status = jnp.where(s["nfev"] >= maxfun, 2, status)
        status = jnp.where(s["k"] >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        conv = jnp.linalg.norm(ls.g_k, ord=norm) < gtol
        new = dict(
            converged=conv,
            failed=(status > 0) & (~conv),
            k=s["k"] + 1,
            nfev=s["nfev"] + ls.nfev,
            ngev=s["ngev"] + ls.ngev,
            x_k=s["x_k"] + step,
            f_k=ls.f_k,
            g_k=ls.g_k,
            s_hist=_push(s["s_hist"], step),
            y_hist=_push(s["y_hist"], y),
            rho_hist=_push(s["rho_hist"], rho),
            gamma=gamma,
            status=jnp.where(conv, 0, status),
            ls_status=ls.status,
        )
        return {k: jnp.asarray(v).astype(st[k].dtype) for k, v in new.items()}

    return lax.while_loop(lambda s: (~s["converged"]) & (~s["failed"]), body, st)


# -------------------------------------------------------------------- minimize


class OptimizeResults(NamedTuple):
    """Result of `minimize` (fields as in `jax.scipy.optimize.OptimizeResults`).

    x: final solution; success: converged without failure; status: solver
    status code; fun: final objective value; jac: final gradient; hess_inv:
    final inverse-Hessian estimate (None for L-BFGS); nfev / njev: function and
    gradient evaluations; nit: iterations.
    """

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimise a scalar function of one 1-D array, like
    `jax.scipy.optimize.minimize`.

    `method` is "BFGS" or "l-bfgs-experimental-do-not-rely-on-this"; `tol` is
    accepted for SciPy compatibility and ignored (pass `options={"gtol": ...}`).
    """
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(
            f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}"
        )

    def objective(x):
        return fun(x, *args)

    name = method.lower()
    if name == "bfgs":
        r = _minimize_bfgs(objective, x0, **options)
        hess_inv = r["H_k"]
    elif name == "l-bfgs-experimental-do-not-rely-on-this":
        r = _minimize_lbfgs(objective, x0, **options)
        hess_inv = None
    else:
        raise ValueError(f"Method {method} not recognized")
    return OptimizeResults(
        x=r["x_k"],
        success=r["converged"] & jnp.logical_not(r["failed"]),
        status=r["status"],
        fun=r["f_k"],
        jac=r["g_k"],
        hess_inv=hess_inv,
        nfev=r["nfev"],
        njev=r["ngev"],
        nit=r["k"],
    )
