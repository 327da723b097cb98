"""`jaxlite.experimental.ode`: `odeint`, an adaptive Dormand-Prince ODE solver.

The solver is the one `jax.experimental.ode` uses: explicit Runge-Kutta 5(4)
(Dormand-Prince) with a mean-square error-ratio step controller, dense output
by a 4th-order interpolating polynomial per accepted step, a `lax.scan` over
the requested output times and a `lax.while_loop` of steps inside each.
Because it is written in `jaxlite.numpy`/`jaxlite.lax` it runs under `jit`
and `vmap`; reverse-mode derivatives use the continuous adjoint method via
`custom_vjp` (solve the augmented system backwards in time), so memory does
not grow with the number of solver steps.
"""

from __future__ import annotations

import operator

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.api_autodiff import vjp
from jaxlite.api_vmap import vmap
from jaxlite.custom_derivatives import closure_convert, custom_vjp
from jaxlite.flatten_util import ravel_pytree
from jaxlite.tree_util import tree_leaves, tree_map

__all__ = ["odeint"]

# Dormand-Prince 5(4) tableau.
_C = np.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0, 0.0])
_A = np.array([
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
])  # fmt: skip
_B5 = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_B4 = np.array(
    [1951 / 21600, 0, 22642 / 50085, 451 / 720, -12231 / 42400, 649 / 6300, 1 / 60]
)
# Weights giving y(t + dt/2) from the stages (for the dense-output fit).
_MID = np.array([
    6025192743 / 30085553152, 0, 51252292925 / 65400821598,
    -2691868925 / 45128329728, 187940372067 / 1594534317056,
    -1776094331 / 19743644256, 11237099 / 235043384,
]) / 2  # fmt: skip


def _is_valid_arg(x) -> bool:
    if isinstance(x, (bool, int, float, complex, np.number, np.ndarray, np.bool_)):
        return True
    return hasattr(x, "aval") or hasattr(x, "shape") and hasattr(x, "dtype")


def _dense_fit(y0, y1, k, dt):
    """Coefficients (highest power first) of the quartic through the step."""
    dt = dt.astype(y0.dtype)
    y_mid = y0 + dt * jnp.dot(jnp.asarray(_MID, dtype=y0.dtype), k)
    f0, f1 = k[0], k[-1]
    c4 = -2.0 * dt * f0 + 2.0 * dt * f1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    c3 = 5.0 * dt * f0 - 3.0 * dt * f1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c2 = -4.0 * dt * f0 + dt * f1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return jnp.stack([c4, c3, c2, dt * f0, y0])


def _horner(coeff, s):
    # jnp.polyval over the leading axis of a (5, n) coefficient matrix
    out = coeff[0]
    for c in coeff[1:]:
        out = out * s + c
    return out


def _first_step(fun, t0, y0, order, rtol, atol, f0):
    """Hairer-Norsett-Wanner initial step-size heuristic."""
    dt_y = y0.dtype
    scale = (atol + jnp.abs(y0) * rtol).astype(dt_y)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(dt_y) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where(
        (d1 <= 1e-15) & (d2 <= 1e-15),
        jnp.maximum(1e-6, h0 * 1e-3),
        (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)),
    )
    return jnp.minimum(100.0 * h0, h1)


def _rk_step(fun, y0, f0, t0, dt):
    """One Dormand-Prince step: (y1, f1, error estimate, stage matrix)."""
    ft = f0.dtype
    c = jnp.asarray(_C, dtype=dt.dtype)
    a = jnp.asarray(_A, dtype=ft)
    h = dt.astype(ft)

    def stage(i, k):
        yi = y0 + h * jnp.dot(a[i - 1, :], k)
        return k.at[i, :].set(fun(yi, t0 + dt * c[i - 1]))

    k = jnp.zeros((7, f0.shape[0]), ft).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, stage, k)
    y1 = h * jnp.dot(jnp.asarray(_B5, dtype=ft), k) + y0
    err = h * jnp.dot(jnp.asarray(_B5 - _B4, dtype=ft), k)
    return y1, k[-1], err, k


def _error_ratio(err, rtol, atol, y0, y1):
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    r = err / tol.astype(err.dtype)
    sq = r.real**2 + r.imag**2 if jnp.iscomplexobj(r) else r**2
    return jnp.sqrt(jnp.mean(sq))


def _next_step(dt, ratio, safety=0.9, grow=10.0, shrink=0.2, order=5.0):
    shrink = jnp.where(ratio < 1, 1.0, shrink)
    factor = jnp.minimum(grow, jnp.maximum(ratio ** (-1.0 / order) * safety, shrink))
    return jnp.where(ratio == 0, dt * grow, dt * factor)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=jnp.inf, hmax=jnp.inf):
    """Integrate `dy/dt = func(y, t, *args)` from `t[0]`, like
    `jax.experimental.ode.odeint`.

    `y0` may be a pytree; the result has the structure of `y0` with a leading
    axis of length `len(t)`. `t` must be strictly increasing floats. `rtol` /
    `atol` are the local error tolerances, `mxstep` caps the steps between two
    output times and `hmax` the step size. Differentiable in `y0`, `t` and
    `args` (adjoint method).
    """
    for arg in tree_leaves(args):
        if not _is_valid_arg(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}."
            )
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_flat(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


def _odeint_flat(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    y0_flat, unravel = ravel_pytree(y0)

    def flat_func(y, t, *a):
        return ravel_pytree(func(unravel(y), t, *a))[0]

    out = _odeint(flat_func, rtol, atol, mxstep, hmax, y0_flat, ts, *args)
    return vmap(unravel)(out)


def _odeint_impl(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    def fun(y, t):
        return func(y, t, *args)

    def to_next_output(carry, target_t):
        def keep_going(st):
            i, _, _, t, dt, _, _ = st
            return (t < target_t) & (i < mxstep) & (dt > 0)

        def step(st):
            i, y, f, t, dt, last_t, coeff = st
            y1, f1, err, k = _rk_step(fun, y, f, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_coeff = _dense_fit(y, y1, k, dt)
            dt_next = jnp.clip(_next_step(dt, ratio), min=0.0, max=hmax)
            ok = ratio <= 1.0
            accepted = [i + 1, y1, f1, t + dt, dt_next, t, new_coeff]
            rejected = [i + 1, y, f, t, dt_next, last_t, coeff]
            return [jnp.where(ok, a, r) for a, r in zip(accepted, rejected)]

        _, *carry = lax.while_loop(keep_going, step, [jnp.asarray(0)] + carry)
        _, _, t, _, last_t, coeff = carry
        s = (target_t - last_t) / (t - last_t)
        return carry, _horner(coeff, s.astype(coeff.dtype))

    f0 = fun(y0, ts[0])
    dt = jnp.clip(_first_step(fun, ts[0], y0, 4, rtol, atol, f0), min=0.0, max=hmax)
    init = [y0, f0, ts[0], dt, ts[0], jnp.stack([y0] * 5)]
    _, ys = lax.scan(to_next_output, init, ts[1:])
    return jnp.concatenate((y0[None], ys))


_odeint = custom_vjp(_odeint_impl, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint_impl(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, res, g):
    ys, ts, args = res

    def augmented(state, t, *a):
        # backwards in time: the state, the adjoint, d/dt0 and d/dargs
        y, y_bar, *_ = state
        y_dot, pullback = vjp(func, y, -t, *a)
        return (-y_dot, *pullback(y_bar))

    def between_outputs(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            augmented, (ys[i], y_bar, t0_bar, args_bar),
            jnp.array([-ts[i], -ts[i - 1]]), *args,
            rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax,
        )  # fmt: skip
        y_bar, t0_bar, args_bar = tree_map(
            operator.itemgetter(1), (y_bar, t0_bar, args_bar)
        )
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    init = (g[-1], jnp.zeros((), ts.dtype), tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
        between_outputs, init, jnp.arange(len(ts) - 1, 0, -1)
    )
    ts_bar = jnp.concatenate([jnp.array([t0_bar]), rev_ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
