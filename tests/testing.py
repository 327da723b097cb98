"""Test helpers: tolerant comparisons and numerical checks of derivatives.

`check_close` compares pytrees of arrays with tolerances that depend on the dtype.
`numerical_jvp` is a central difference taken in float64 (x64 mode on while `f` runs),
so it is accurate enough to judge float32 derivatives. `check_jvp` compares
`jaxlite.jvp` with it; `check_vjp` is the dot-product test
`<ct, jvp(t)> == <vjp(ct), t>`; `check_grads` applies both up to a given order, by
differentiating the derivative functions themselves.
"""

from __future__ import annotations

import numpy as np

from jaxlite.test_util import _DEFAULT_TOLERANCE

# The same per-dtype tolerances as the public `jaxlite.test_util`.
_DEFAULT_TOL = _DEFAULT_TOLERANCE

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
    """The dtype of `x` as jaxlite stores it (Python scalars are weak 32-bit values)."""
    if type(x) in (bool, int, float, complex):
        import jaxlite.numpy as jnp

        return np.dtype(jnp.result_type(x)).name
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


def _tree_map(f, *trees):
    from jaxlite import tree_util

    return tree_util.tree_map(f, *trees)


def _is_inexact(x):
    kind = np.dtype(_dtype_name(x)).kind
    return kind in "fc" or _dtype_name(x) == "bfloat16"


def _call_x64(f, args):
    """`f(*args)` in x64 mode on float64 copies of `args` (pytrees): output leaves as
    float64 NumPy arrays, and the output tree."""
    import jaxlite

    with jaxlite.enable_x64():
        out = f(*_tree_map(_as_float64, args))
        return [_as_float64(leaf) for leaf in _leaves(out)], out


def numerical_jvp(f, primals, tangents, eps=None):
    """Central difference of `f` at `primals` along `tangents`, computed in float64.

    `primals` and `tangents` are tuples of pytrees with the same structure; integer
    leaves are not perturbed. `f` runs in x64 mode on float64 copies of its inputs;
    the result has the pytree structure of `f`'s output, with float64 leaves.
    """
    from jaxlite import tree_util

    if eps is None:
        eps = 1e-4

    def shift(sign):
        def step(p, t):
            if not _is_inexact(p):
                return p
            return _as_float64(p) + sign * eps * _as_float64(t)

        return _tree_map(step, tuple(primals), tuple(tangents))

    f_plus, out = _call_x64(f, shift(1))
    f_minus, _ = _call_x64(f, shift(-1))
    diffs = [(hi - lo) / (2 * eps) for hi, lo in zip(f_plus, f_minus)]
    return tree_util.tree_unflatten(tree_util.tree_structure(out), diffs)


def _random_leaf(x, rng):
    import jaxlite.numpy as jnp

    dtype = np.dtype(jnp.result_type(x))
    shape = np.shape(x)
    if dtype.kind == "c":
        re, im = rng.standard_normal(shape), rng.standard_normal(shape)
        return (re + 1j * im).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _random_like(tree, rng):
    """Standard normal values with the structure, shapes and (jaxlite) dtypes of
    `tree`."""
    return _tree_map(lambda x: _random_leaf(x, rng), tree)


def _cast_like(values, likes):
    """`values` (a pytree) converted to the dtypes of `likes` (which may hold tracers):
    derivative functions are evaluated in x64 mode too, where inputs are float64."""
    import jaxlite.numpy as jnp

    return _tree_map(
        lambda v, x: jnp.asarray(v).astype(jnp.result_type(x)), values, likes
    )


def _inner(xs, ys):
    """Sum of the elementwise products of two lists of arrays, in float64."""
    total = 0.0
    for x, y in zip(xs, ys):
        total += np.real(np.sum(_as_float64(x) * np.conj(_as_float64(y))))
    return total


def _norm(xs):
    return float(np.sqrt(sum(np.sum(np.abs(_as_float64(x)) ** 2) for x in xs)))


def _tolerances(args, atol, rtol):
    leaves = _leaves(args)
    tol = max((default_tolerance(a, table=_GRAD_TOL) for a in leaves), default=2e-3)
    return (tol if atol is None else atol), (tol if rtol is None else rtol)


def check_jvp(f, primals, tangents=None, *, eps=None, atol=None, rtol=None, seed=0):
    """`jaxlite.jvp(f, primals, tangents)` agrees with `f` and with `numerical_jvp`.

    `primals` (and `tangents`, random by default) are tuples of pytrees."""
    import jaxlite

    primals = tuple(primals)
    rng = np.random.default_rng(seed)
    if tangents is None:
        tangents = _random_like(primals, rng)
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
    `<vjp(ct), t>` for random tangents `t` and cotangents `ct` (random by default).

    The tolerance is relative to `|vjp(ct)| |t| + |ct| |J t|`, which bounds both sides.
    """
    import jaxlite

    primals = tuple(primals)
    rng = np.random.default_rng(seed)
    atol, rtol = _tolerances(primals, atol, rtol)
    y, vjp_fun = jaxlite.vjp(f, *primals)
    check_close(y, f(*primals), atol=atol, rtol=rtol, err_msg="vjp primal output")
    if cotangents is None:
        cotangents = _random_like(y, rng)
    tangents = _random_like(primals, rng)
    inexact = [_is_inexact(p) for p in _leaves(primals)]
    t_leaves = [t for t, ok in zip(_leaves(tangents), inexact) if ok]
    ct_in = [c for c, ok in zip(_leaves(vjp_fun(cotangents)), inexact) if ok]
    lhs = _inner(ct_in, t_leaves)
    jvp_num = _leaves(numerical_jvp(f, primals, tangents, eps))
    ct_leaves = _leaves(cotangents)
    rhs = _inner(ct_leaves, jvp_num)
    scale = _norm(ct_in) * _norm(t_leaves) + _norm(ct_leaves) * _norm(jvp_num)
    assert abs(lhs - rhs) <= max(atol, rtol) * scale, (
        f"vjp dot-product test failed: <vjp(ct), t> = {lhs}, <ct, jvp(t)> = {rhs}"
    )


def check_grads(
    f, args, order=2, modes=("fwd", "rev"), *, eps=None, atol=None, rtol=None, seed=0
):
    """Check forward and/or reverse derivatives of `f` at `args` (a tuple of pytrees)
    up to `order`.

    Higher orders differentiate the derivative functions: for "fwd" the map from
    primals to `jvp(f, primals, t)[1]`, for "rev" the map to `vjp(f, *primals)[1](ct)`,
    with `t` and `ct` fixed random values.
    """
    import jaxlite

    args = tuple(args)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"unknown mode {mode!r}; use 'fwd' and/or 'rev'")
    tol = dict(eps=eps, atol=atol, rtol=rtol, seed=seed)
    rng = np.random.default_rng(seed + 1)
    if "fwd" in modes:
        check_jvp(f, args, **tol)
        if order > 1:
            tangents = _random_like(args, rng)

            def f_jvp(*primals):
                return jaxlite.jvp(f, primals, _cast_like(tangents, primals))[1]

            check_grads(f_jvp, args, order - 1, ("fwd",), **tol)
    if "rev" in modes:
        check_vjp(f, args, **tol)
        if order > 1:
            ct = _random_like(f(*args), rng)

            def f_vjp(*primals):
                y, pullback = jaxlite.vjp(f, *primals)
                return pullback(_cast_like(ct, y))

            check_grads(f_vjp, args, order - 1, ("rev",), **tol)


# The modules of the native backend that need llvmlite (all but the package itself and
# host.py, which lax/ imports to register rules): skipped where it is not installed.
_NEEDS_LLVMLITE = "jaxlite.backend.native."
_LLVMLITE_FREE = {"jaxlite.backend.native.host"}


def package_modules():
    """The names of jaxlite's modules (the tour excepted), those that need llvmlite only
    where it can be imported."""
    import pkgutil

    import jaxlite
    from jaxlite.backend import native

    for m in pkgutil.walk_packages(jaxlite.__path__, "jaxlite."):
        if m.name in ("jaxlite.__main__", "jaxlite.tour", "jaxlite.tour_callbacks"):
            continue
        if (
            m.name.startswith(_NEEDS_LLVMLITE)
            and m.name not in _LLVMLITE_FREE
            and not native.available()
        ):
            continue
        yield m.name
