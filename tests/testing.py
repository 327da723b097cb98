"""Test helpers: tolerant comparisons and numerical checks of derivatives.

`check_close` compares pytrees of arrays with tolerances that depend on the dtype.
`numerical_jvp` is a central difference taken in float64 (x64 mode on while `f` runs),
so it is accurate enough to judge float32 derivatives. `check_jvp` compares
`jaxlite.jvp` with it; `check_vjp` is the dot-product test
`<ct, jvp(t)> == <vjp(ct), t>`; `check_grads` applies both up to a given order, by
differentiating the derivative functions themselves.

The autodiff entry points are imported when first used, so this module also works while
only part of the library exists.
"""

from __future__ import annotations

import numpy as np

_DEFAULT_TOL = {
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

_GRAD_TOL = {
    "bfloat16": 1e-1,
    "float16": 1e-2,
    "float32": 2e-3,
    "float64": 1e-5,
    "complex64": 2e-3,
    "complex128": 1e-5,
}

_EPS = {
    "bfloat16": 1e-1,
    "float16": 1e-2,
    "float32": 1e-3,
    "float64": 1e-5,
    "complex64": 1e-3,
    "complex128": 1e-5,
}


def _dtype_name(x):
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype).name


def _leaves(tree):
    from jaxlite import tree_util

    return tree_util.tree_leaves(tree)


def default_tolerance(*arrays, table=_DEFAULT_TOL):
    """The loosest tolerance among the dtypes of `arrays` (1e-6 for unknown dtypes)."""
    return max(table.get(_dtype_name(a), 1e-6) for a in arrays)


def _as_float64(x):
    v = np.asarray(x)
    if v.dtype.kind == "c":
        return v.astype(np.complex128)
    if v.dtype.kind == "f" or v.dtype.name == "bfloat16":
        return v.astype(np.float64)
    return v


def check_close(a, b, rtol=None, atol=None, err_msg=""):
    """Assert two pytrees have the same structure, shapes and (nearly) equal values.

    Tolerances default to the loosest of the two leaves' dtypes (exact for integers
    and bools, 1e-6 for float32, 1e-15 for float64, ...).
    """
    from jaxlite import tree_util

    a_leaves, a_tree = tree_util.tree_flatten(a)
    b_leaves, b_tree = tree_util.tree_flatten(b)
    assert a_tree == b_tree, f"tree structures differ: {a_tree} vs {b_tree}. {err_msg}"
    for x, y in zip(a_leaves, b_leaves):
        assert np.shape(x) == np.shape(y), (
            f"shapes differ: {np.shape(x)} vs {np.shape(y)}. {err_msg}"
        )
        tol = default_tolerance(x, y)
        np.testing.assert_allclose(
            _as_float64(x),
            _as_float64(y),
            rtol=tol if rtol is None else rtol,
            atol=tol if atol is None else atol,
            err_msg=err_msg,
        )


def _x64_args(args):
    return [_as_float64(a) for a in args]


def _call_x64(f, args):
    import jaxlite

    with jaxlite.enable_x64():
        out = f(*_x64_args(args))
        return [_as_float64(leaf) for leaf in _leaves(out)], out


def numerical_jvp(f, primals, tangents, eps=None):
    """Central difference of `f` at `primals` along `tangents`, computed in float64.

    `f` runs in x64 mode on float64 copies of its inputs; the result has the pytree
    structure of `f`'s output, with float64 leaves.
    """
    from jaxlite import tree_util

    if eps is None:
        eps = 1e-4
    plus = [_as_float64(p) + eps * _as_float64(t) for p, t in zip(primals, tangents)]
    minus = [_as_float64(p) - eps * _as_float64(t) for p, t in zip(primals, tangents)]
    f_plus, out = _call_x64(f, plus)
    f_minus, _ = _call_x64(f, minus)
    diffs = [(hi - lo) / (2 * eps) for hi, lo in zip(f_plus, f_minus)]
    return tree_util.tree_unflatten(tree_util.tree_structure(out), diffs)


def _random_like(x, rng):
    """Standard normal values with the shape and (jaxlite) dtype of `x`."""
    import jaxlite.numpy as jnp

    dtype = np.dtype(jnp.result_type(x))
    shape = np.shape(x)
    if dtype.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _cast_like(values, likes):
    """`values` converted to the dtypes of `likes` (which may be tracers): derivative
    functions are evaluated in x64 mode too, where their inputs are float64."""
    import jaxlite.numpy as jnp

    return [jnp.asarray(v).astype(jnp.result_type(x)) for v, x in zip(values, likes)]


def _inner(xs, ys):
    """Sum of the elementwise products of two lists of arrays, in float64."""
    total = 0.0
    for x, y in zip(xs, ys):
        total += np.real(np.sum(_as_float64(x) * np.conj(_as_float64(y))))
    return total


def _tolerances(args, atol, rtol):
    tol = max(default_tolerance(a, table=_GRAD_TOL) for a in args) if args else 2e-3
    return (tol if atol is None else atol), (tol if rtol is None else rtol)


def check_jvp(f, primals, tangents=None, *, eps=None, atol=None, rtol=None, seed=0):
    """`jaxlite.jvp(f, primals, tangents)` agrees with `f` and with `numerical_jvp`."""
    import jaxlite

    primals = tuple(primals)
    rng = np.random.default_rng(seed)
    if tangents is None:
        tangents = tuple(_random_like(p, rng) for p in primals)
    atol, rtol = _tolerances(primals, atol, rtol)
    y, y_dot = jaxlite.jvp(f, primals, tuple(tangents))
    check_close(y, f(*primals), atol=atol, rtol=rtol, err_msg="jvp primal output")
    expected = numerical_jvp(f, primals, tangents, eps)
    for got, want in zip(_leaves(y_dot), _leaves(expected)):
        np.testing.assert_allclose(
            _as_float64(got), want, atol=atol, rtol=rtol, err_msg="jvp tangent output"
        )


def check_vjp(f, primals, cotangents=None, *, eps=None, atol=None, rtol=None, seed=0):
    """The dot-product test: `<ct, J t>` (J t by finite differences) equals
    `<vjp(ct), t>` for random tangents `t` and cotangents `ct`."""
    import jaxlite
    from jaxlite import tree_util

    primals = tuple(primals)
    rng = np.random.default_rng(seed)
    atol, rtol = _tolerances(primals, atol, rtol)
    y, vjp_fun = jaxlite.vjp(f, *primals)
    check_close(y, f(*primals), atol=atol, rtol=rtol, err_msg="vjp primal output")
    if cotangents is None:
        y_leaves, y_tree = tree_util.tree_flatten(y)
        cotangents = tree_util.tree_unflatten(
            y_tree, [_random_like(leaf, rng) for leaf in y_leaves]
        )
    tangents = tuple(_random_like(p, rng) for p in primals)
    ct_in = vjp_fun(cotangents)
    lhs = _inner(_leaves(ct_in), tangents)
    jvp_num = numerical_jvp(f, primals, tangents, eps)
    rhs = _inner(_leaves(cotangents), _leaves(jvp_num))
    scale = max(1.0, abs(lhs), abs(rhs))
    assert abs(lhs - rhs) <= atol * scale + rtol * scale, (
        f"vjp dot-product test failed: <vjp(ct), t> = {lhs}, <ct, jvp(t)> = {rhs}"
    )


def check_grads(f, args, order=2, modes=("fwd", "rev"), *, eps=None, atol=None,
                rtol=None, seed=0):
    """Check forward and/or reverse derivatives of `f` at `args` up to `order`.

    Higher orders differentiate the derivative functions: for "fwd" the map from
    primals to `jvp(f, primals, t)[1]`, for "rev" the map to `vjp(f, *primals)[1](ct)`,
    with `t` and `ct` fixed random values.
    """
    import jaxlite
    from jaxlite import tree_util

    args = tuple(args)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"unknown mode {mode!r}; use 'fwd' and/or 'rev'")
    tol = dict(eps=eps, atol=atol, rtol=rtol, seed=seed)
    rng = np.random.default_rng(seed + 1)
    if "fwd" in modes:
        check_jvp(f, args, **tol)
        if order > 1:
            tangents = tuple(_random_like(a, rng) for a in args)

            def f_jvp(*primals):
                return jaxlite.jvp(f, primals, tuple(_cast_like(tangents, primals)))[1]

            check_grads(f_jvp, args, order - 1, ("fwd",), **tol)
    if "rev" in modes:
        check_vjp(f, args, **tol)
        if order > 1:
            y_leaves, y_tree = tree_util.tree_flatten(f(*args))
            ct = tree_util.tree_unflatten(
                y_tree, [_random_like(leaf, rng) for leaf in y_leaves]
            )

            def f_vjp(*primals):
                y, pullback = jaxlite.vjp(f, *primals)
                y_leaves, y_tree = tree_util.tree_flatten(y)
                cts = _cast_like(tree_util.tree_leaves(ct), y_leaves)
                return pullback(tree_util.tree_unflatten(y_tree, cts))

            check_grads(f_vjp, args, order - 1, ("rev",), **tol)
