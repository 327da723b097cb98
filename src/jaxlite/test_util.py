"""Numerical checks of derivatives, as in `jax.test_util`.

`check_jvp` compares a JVP function's tangent output with a central difference
along a random direction; `check_vjp` is the dot-product test
`<vjp(ct), t> == <ct, J t>` with `J t` by central differences; `check_grads` runs
them on `f` and, for higher orders, on its derivative functions. As in JAX, the
differences are taken in the arguments' own dtype (step `eps`, default 1e-4) and
the default tolerances depend on the dtype (2e-3 for float32, 1e-5 for float64),
so float32 checks need smooth, well-scaled functions; pass float64 arguments under
`enable_x64` for tighter ones. Random directions come from a fixed seed, so a
check is reproducible.
"""

from __future__ import annotations

import numpy as np

from jaxlite import api_autodiff
from jaxlite import numpy as jnp
from jaxlite.tree_util import tree_leaves, tree_map, tree_structure

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4

_DEFAULT_TOLERANCE = {
    "bool": 0,
    "int8": 0,
    "int16": 0,
    "int32": 0,
    "int64": 0,
    "uint8": 0,
    "uint16": 0,
    "uint32": 0,
    "uint64": 0,
    "bfloat16": 1e-2,
    "float16": 1e-3,
    "float32": 1e-6,
    "float64": 1e-15,
    "complex64": 1e-6,
    "complex128": 1e-15,
}

_GRADIENT_TOLERANCE = {
    "bfloat16": 1e-1,
    "float16": 1e-2,
    "float32": 2e-3,
    "float64": 1e-5,
    "complex64": 1e-3,
    "complex128": 1e-5,
}


def _dtype_name(x):
    return np.dtype(jnp.result_type(x)).name


def _tolerance(x, tol, table):
    if tol is not None:
        return tol
    return table.get(_dtype_name(x), 1e-6)


def _as_float64(x):
    v = np.asarray(x)
    if v.dtype.kind == "c":
        return v.astype(np.complex128)
    if v.dtype.kind == "f" or v.dtype.name == "bfloat16":
        return v.astype(np.float64)
    return v


def _check_close(xs, ys, atol, rtol, err_msg, table, scale_by_size=False):
    if tree_structure(xs) != tree_structure(ys):
        raise AssertionError(
            f"{err_msg}: tree structures differ: {tree_structure(xs)} vs "
            f"{tree_structure(ys)}"
        )
    for x, y in zip(tree_leaves(xs), tree_leaves(ys)):
        if np.shape(x) != np.shape(y):
            raise AssertionError(
                f"{err_msg}: shapes differ: {np.shape(x)} vs {np.shape(y)}"
            )
        a = max(_tolerance(x, atol, table), _tolerance(y, atol, table))
        r = max(_tolerance(x, rtol, table), _tolerance(y, rtol, table))
        if scale_by_size:
            # A difference quotient's rounding error grows with the entries summed.
            a, r = a * max(np.size(x), 1), r * max(np.size(x), 1)
        np.testing.assert_allclose(
            _as_float64(x), _as_float64(y), atol=a, rtol=r, err_msg=err_msg
        )


def _is_inexact(x):
    dt = np.dtype(jnp.result_type(x))
    return dt.kind in "fc" or dt.name == "bfloat16"


def _rand_like(rng, x):
    dt = np.dtype(jnp.result_type(x))
    shape = np.shape(x)
    if dt.kind == "c":
        value = rng.standard_normal(shape) + 1j * rng.standard_normal(shape)
    else:
        value = rng.standard_normal(shape)
    return jnp.asarray(value, dtype=dt)


def _numerical_jvp(f, primals, tangents, eps):
    """Central difference of `f` along `tangents`, in the primals' dtypes."""

    def shift(sign):
        def step(p, t):
            if not _is_inexact(p):
                return p
            return p + jnp.asarray(sign * eps, dtype=jnp.result_type(p)) * t

        return tree_map(step, primals, tangents)

    f_pos = f(*shift(1))
    f_neg = f(*shift(-1))

    def diff(hi, lo):
        if not _is_inexact(hi):
            return jnp.zeros_like(hi)
        scale = jnp.asarray(0.5 / eps, dtype=jnp.result_type(hi))
        return (hi - lo) * scale

    return tree_map(diff, f_pos, f_neg)


def _inner_prod(xs, ys):
    total = 0.0
    for x, y in zip(tree_leaves(xs), tree_leaves(ys)):
        if np.asarray(x).dtype.kind == "V":  # float0 cotangents of integer inputs
            continue
        total = total + np.real(np.sum(np.conj(_as_float64(x)) * _as_float64(y)))
    return total


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check `f_jvp(primals, tangents) -> (f(*primals), J tangents)` against `f` and
    against central differences, along a random direction."""
    atol_tol = {"atol": atol, "rtol": rtol}
    rng = np.random.RandomState(0)
    tangent = tree_map(lambda x: _rand_like(rng, x), args)
    v_out, t_out = f_jvp(args, tangent)
    v_expected = f(*args)
    t_expected = _numerical_jvp(f, args, tangent, eps)
    msg = f"{err_msg} primal" if err_msg else "primal"
    _check_close(v_out, v_expected, err_msg=msg, table=_GRADIENT_TOLERANCE, **atol_tol)
    msg = f"{err_msg} tangent" if err_msg else "tangent"
    _check_close(
        t_out,
        t_expected,
        err_msg=msg,
        table=_GRADIENT_TOLERANCE,
        scale_by_size=True,
        **atol_tol,
    )


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """The dot-product test for `f_vjp(*primals) -> (f(*primals), vjp_fun)`:
    `<vjp_fun(ct), t>` equals `<ct, J t>` (`J t` by central differences) for random
    `t` and `ct`."""
    atol_tol = {"atol": atol, "rtol": rtol}
    rng = np.random.RandomState(0)
    v_out, vjpfun = f_vjp(*args)
    v_expected = f(*args)
    msg = f"{err_msg} primal" if err_msg else "primal"
    _check_close(v_out, v_expected, err_msg=msg, table=_GRADIENT_TOLERANCE, **atol_tol)
    tangent = tree_map(lambda x: _rand_like(rng, x), args)
    tangent_out = _numerical_jvp(f, args, tangent, eps)
    cotangent = tree_map(lambda x: _rand_like(rng, x), v_out)
    cotangent_out = tree_map(jnp.conj, vjpfun(tree_map(jnp.conj, cotangent)))
    ip = _inner_prod(tangent, cotangent_out)
    ip_expected = _inner_prod(tangent_out, cotangent)
    dtype_of = tree_leaves(v_out)[0] if tree_leaves(v_out) else np.float32(0)
    a = _tolerance(dtype_of, atol, _GRADIENT_TOLERANCE)
    r = _tolerance(dtype_of, rtol, _GRADIENT_TOLERANCE)
    msg = f"{err_msg} cotangent projection" if err_msg else "cotangent projection"
    np.testing.assert_allclose(ip, ip_expected, atol=a, rtol=r, err_msg=msg)


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check the derivatives of `f` at `args` (a tuple) up to `order`, in forward
    ("fwd") and/or reverse ("rev") mode, against central differences.

    Raises AssertionError when a derivative disagrees."""
    args = tuple(args)
    eps = eps or EPS
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(
                f"check_grads: unknown mode {mode!r}; use 'fwd' and/or 'rev'."
            )

    def check(f, args, order, err_msg=""):
        if "fwd" in modes:
            fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"

            def f_jvp(primals, tangents):
                return api_autodiff.jvp(f, primals, tangents)

            check_jvp(f, f_jvp, args, atol, rtol, eps, err_msg=fwd_msg)
            if order > 1:

                def jvp_of_f(primals, tangents):
                    return api_autodiff.jvp(f, primals, tangents)

                check(jvp_of_f, (args, args), order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"

            def f_vjp(*primals):
                return api_autodiff.vjp(f, *primals)

            check_vjp(f, f_vjp, args, atol, rtol, eps, err_msg=rev_msg)
            if order > 1:

                def vjp_of_f(*primals):
                    out, pullback = api_autodiff.vjp(f, *primals)
                    return pullback(out)

                check(vjp_of_f, args, order - 1, rev_msg)

    check(f, args, order)
