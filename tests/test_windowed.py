"""reduce_window (sum, max, min and any computation), select_and_gather_add,
select_and_scatter_add and lax.reduce: values against NumPy and JAX, printed jaxprs,
derivatives, vmap against a loop, jit against eager, and errors."""

import re

import numpy as np
import pytest

import jaxlite
from jaxlite import lax
from testing import check_close, check_grads

# --------------------------------------------------------------------------------------
# A direct NumPy window reduction: dilate and pad with the init value, then reduce
# each window (padding included, as for the monoids).


def np_reduce_window(x, init, op, window, strides, pads, base=None, wdil=None):
    nd = x.ndim
    base, wdil = base or (1,) * nd, wdil or (1,) * nd
    dil = [max(0, (n - 1) * b + 1) for n, b in zip(x.shape, base)]
    xd = np.full(dil, init, x.dtype)
    xd[tuple(slice(None, None, b) for b in base)] = x
    for ax, (lo, hi) in enumerate(pads):
        if lo < 0:
            xd = np.take(xd, range(-lo, xd.shape[ax]), axis=ax)
        if hi < 0:
            xd = np.take(xd, range(0, xd.shape[ax] + hi), axis=ax)
        widths = [(0, 0)] * nd
        widths[ax] = (max(lo, 0), max(hi, 0))
        xd = np.pad(xd, widths, constant_values=init)
    span = [(w - 1) * d + 1 for w, d in zip(window, wdil)]
    out_shape = [max((p - s) // st + 1, 0) for p, s, st in zip(xd.shape, span, strides)]
    out = np.full(out_shape, init, x.dtype)
    for pos in np.ndindex(*out_shape):
        index = tuple(
            slice(p * st, p * st + s, d)
            for p, st, s, d in zip(pos, strides, span, wdil)
        )
        out[pos] = op.reduce(xd[index].ravel(), initial=init)
    return out


def _pads(padding, shape, window, strides):
    if isinstance(padding, str):
        return lax.padtype_to_pads(shape, window, strides, padding)
    return padding


# (window, strides, padding, base_dilation, window_dilation) for a (5, 6) operand
WINDOWS = [
    ((2, 2), (1, 1), "VALID", None, None),
    ((2, 3), (1, 2), "SAME", None, None),
    ((3, 2), (2, 1), ((1, 2), (-1, 1)), (1, 2), (2, 1)),
    ((2, 2), (1, 2), "VALID", (2, 1), (1, 2)),
    ((1, 3), (1, 1), "SAME_LOWER", None, None),
]

MONOIDS = [
    ("sum", np.add, 0.0),
    ("max", np.maximum, -np.inf),
    ("min", np.minimum, np.inf),
]
_LAX_OPS = {"sum": "add", "max": "max", "min": "min"}


def _distinct(rng, *shape):
    """Distinct values (no ties for max/min derivatives)."""
    return (rng.permutation(int(np.prod(shape))).reshape(shape) / 7.0 - 2).astype(
        np.float32
    )


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("name, np_op, init", MONOIDS)
def test_monoid_windows_match_numpy(window, name, np_op, init):
    wd, ws, padding, bd, wdil = window
    x = _distinct(np.random.default_rng(0), 5, 6)
    op = getattr(lax, _LAX_OPS[name])

    def f(x):
        return lax.reduce_window(x, init, op, wd, ws, padding, bd, wdil)

    pads = _pads(padding, x.shape, wd, ws)
    check_close(
        f(x), np_reduce_window(x, np.float32(init), np_op, wd, ws, pads, bd, wdil)
    )
    check_close(jaxlite.jit(f)(x), f(x))
    assert f"reduce_window_{name}" in str(jaxlite.make_jaxpr(f)(x))


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("name, np_op, init", MONOIDS)
def test_monoid_windows_match_jax(window, name, np_op, init):
    jax = pytest.importorskip("jax")
    wd, ws, padding, bd, wdil = window
    x = _distinct(np.random.default_rng(1), 5, 6)

    def f(m):
        op = getattr(m, _LAX_OPS[name])
        return lambda x: m.reduce_window(x, init, op, wd, ws, padding, bd, wdil)

    out, ref = f(lax)(x), f(jax.lax)(x)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    check_close(np.asarray(out), np.asarray(ref))
    loss = lambda m: lambda x: (f(m)(x) ** 2).sum()  # noqa: E731
    if name == "sum" or wdil is None:  # JAX has no max-pool VJP with window dilation
        check_close(
            np.asarray(jaxlite.grad(loss(lax))(x)),
            np.asarray(jax.grad(loss(jax.lax))(x)),
            atol=1e-5,
            rtol=1e-5,
        )
    t = _distinct(np.random.default_rng(2), 5, 6)
    got = jaxlite.jvp(f(lax), (x,), (t,))[1]
    check_close(np.asarray(got), np.asarray(jax.jvp(f(jax.lax), (x,), (t,))[1]))


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("name", ["sum", "max"])
def test_check_grads(window, name):
    wd, ws, padding, bd, wdil = window
    x = _distinct(np.random.default_rng(3), 5, 6)
    op, init = (lax.add, 0.0) if name == "sum" else (lax.max, -np.inf)
    check_grads(
        lambda x: lax.reduce_window(x, init, op, wd, ws, padding, bd, wdil),
        (x,),
        order=2,
        modes=("fwd", "rev"),
    )


def test_integer_and_bool_operands():
    x = np.arange(30, dtype=np.int32).reshape(5, 6) % 7
    out = lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "SAME")
    check_close(out, np_reduce_window(x, 0, np.add, (2, 2), (1, 1), [(0, 1), (0, 1)]))
    assert out.dtype == np.int32
    low = np.iinfo(np.int32).min
    out = lax.reduce_window(x, low, lax.max, (2, 3), (2, 1), "VALID")
    check_close(out, np_reduce_window(x, low, np.maximum, (2, 3), (2, 1), [(0, 0)] * 2))
    b = x > 3
    out = lax.reduce_window(b, False, lax.max, (2, 2), (1, 1), "VALID")
    assert out.dtype == np.bool_
    check_close(
        out, np_reduce_window(b, False, np.logical_or, (2, 2), (1, 1), [(0, 0)] * 2)
    )


@pytest.mark.parametrize("name", ["sum", "max", "min"])
def test_vmap_matches_loop(name):
    xs = _distinct(np.random.default_rng(4), 3, 5, 6)
    op, init = {
        "sum": (lax.add, 0.0),
        "max": (lax.max, -np.inf),
        "min": (lax.min, np.inf),
    }[name]

    def f(x):
        return lax.reduce_window(x, init, op, (2, 3), (1, 2), "SAME", (1, 2), (2, 1))

    loop = np.stack([f(x) for x in xs])
    for axis in range(3):
        out = jaxlite.vmap(f, in_axes=axis)(np.moveaxis(xs, 0, axis))
        check_close(out, loop)
    grads = jaxlite.vmap(jaxlite.grad(lambda x: (f(x) ** 2).sum()))(xs)
    check_close(
        grads, np.stack([jaxlite.grad(lambda x: (f(x) ** 2).sum())(x) for x in xs])
    )


def _strip(text):
    text = re.sub(r" out_sharding=None", "", text)
    return re.sub(r"broadcast_in_dim\[\s*broadcast_dimensions=\(\)\s*shape=\([^)]*\)\s*sharding=None\s*\]", "broadcast_in_dim", text)  # fmt: skip


def _normalize(text):
    """Compare jaxprs as token streams: JAX prints NumPy ints inside pad's
    configuration (`np.int64(1)`), which changes where lines wrap."""
    text = re.sub(r"np\.int64\((-?\d+)\)", r"\1", _strip(text))
    text = re.sub(r"\s+", " ", text)
    return re.sub(r"\[ ", "[", re.sub(r" \]", "]", text))


def test_printed_jaxprs_match_jax():
    jax = pytest.importorskip("jax")
    x = np.ones((4, 6), np.float32)
    programs = [
        lambda m, jit_grad: m.reduce_window(x, 0.0, m.add, (2, 2), (1, 2), "SAME"),
        lambda m, g: g(lambda x: m.reduce_window(x, -np.inf, m.max, (2, 2), (1, 2), "VALID").sum())(x),
        lambda m, g: g(lambda x: m.reduce_window(x, 0.0, m.add, (2, 2), (1, 2), "SAME").sum())(x),
        lambda m, g: m.reduce_window((x, x), (0.0, 0.0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (2, 2), (1, 2), "VALID"),
        lambda m, g: m.reduce_window(x, 1.0, m.mul, (2, 2), (1, 2), "VALID"),
        lambda m, g: m.reduce(x, 0.0, m.add, (0,)),
        lambda m, g: m.reduce(x, 1.0, m.mul, (1,)),
        lambda m, g: m.reduce(x, -np.inf, m.max, (0, 1)),
        lambda m, g: m.reduce(x > 0, True, m.bitwise_and, (0,)),
    ]  # fmt: skip
    for prog in programs:
        ours = str(jaxlite.make_jaxpr(lambda x, p=prog: p(lax, jaxlite.grad))(x))
        theirs = str(jax.make_jaxpr(lambda x, p=prog: p(jax.lax, jax.grad))(x))
        assert _normalize(ours) == _normalize(theirs)


def test_jvp_of_max_uses_select_and_gather_add():
    jax = pytest.importorskip("jax")
    x = np.ones((4, 6), np.float32)

    def prog(m, jvp):
        f = lambda x: m.reduce_window(
            x, -np.inf, m.max, (2, 2), (1, 2), "VALID", window_dilation=(1, 2)
        )  # noqa: E731
        return lambda x, t: jvp(f, (x,), (t,))

    ours = str(jaxlite.make_jaxpr(prog(lax, jaxlite.jvp))(x, x))
    theirs = str(jax.make_jaxpr(prog(jax.lax, jax.jvp))(x, x))
    assert ours == _strip(theirs)


# --------------------------------------------------------------------------------------
# Any computation


def test_general_computation_matches_jax():
    jax = pytest.importorskip("jax")
    x = _distinct(np.random.default_rng(5), 5, 6) / 3
    programs = [
        # A non-identity init: XLA applies it once and skips padding and holes
        # (the order within a window is XLA's own, so the computation is associative).
        lambda m: m.reduce_window(x, 0.5, lambda a, b: a * b, (2, 3), (1, 2), "SAME"),
        lambda m: m.reduce_window(x, 0.5, lambda a, b: a * b, (1, 2), (1, 1), "VALID", (1, 2)),
        lambda m: m.reduce_window(x, 1.0, m.mul, (3, 2), (2, 1), ((1, 2), (0, 1)), (1, 2), (2, 1)),
        lambda m: m.reduce_window((x, x + 1), (0.0, 1.0), lambda a, b: (a[0] + b[0], a[1] * b[1]), (2, 2), (1, 2), "VALID"),
        lambda m: m.reduce(x, 1.0, lambda a, b: a * b, (1,)),
        lambda m: m.reduce(x, 0.0, lambda a, b: a * 0.5 + b, (1,)),  # sequential, as XLA for short rows
        lambda m: m.reduce((x, x), (0.0, -np.inf), lambda a, b: (a[0] + b[0], m.max(a[1], b[1])), (0, 1)),
    ]  # fmt: skip
    for prog in programs:
        out = jaxlite.tree_util.tree_leaves(prog(lax))
        ref = jax.tree_util.tree_leaves(prog(jax.lax))
        for o, r in zip(out, ref):
            assert o.shape == r.shape and o.dtype == r.dtype
            check_close(np.asarray(o), np.asarray(r), atol=1e-6, rtol=1e-5)


def test_general_computation_derivatives():
    x = _distinct(np.random.default_rng(6), 4, 5) / 4

    def window_prod(x):
        return lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "SAME")

    def reduce_softmax_like(x):
        return lax.reduce(x, 0.0, lambda a, b: lax.log(lax.exp(a) + lax.exp(b)), (1,))

    check_grads(window_prod, (x,), order=2, modes=("fwd", "rev"))
    check_grads(reduce_softmax_like, (x,), order=2, modes=("fwd", "rev"))
    jax = pytest.importorskip("jax")
    t = _distinct(np.random.default_rng(7), 4, 5)
    got = jaxlite.jvp(window_prod, (x,), (t,))[1]
    want = jax.jvp(lambda x: jax.lax.reduce_window(x, 1.0, jax.lax.mul, (2, 2), (1, 2), "SAME"), (x,), (t,))[1]  # fmt: skip
    check_close(np.asarray(got), np.asarray(want), atol=1e-6, rtol=1e-5)


def test_general_computation_vmap_and_jit():
    xs = _distinct(np.random.default_rng(8), 3, 4, 5) / 4
    inits = np.array([1.0, 2.0, 0.5], np.float32)

    def f(x, init):
        return lax.reduce_window(x, init, lax.mul, (2, 2), (1, 2), "SAME")

    def g(x, init):
        return lax.reduce(
            (x, x), (init, init), lambda a, b: (a[0] * b[0], a[1] + b[1]), (0,)
        )

    for fn in (f, g):
        loop = [fn(x, i) for x, i in zip(xs, inits)]
        for in_axes, args in [
            ((0, None), (xs, np.float32(1.0))),
            ((0, 0), (xs, inits)),
            ((2, 0), (np.moveaxis(xs, 0, 2), inits)),
        ]:
            out = jaxlite.vmap(fn, in_axes=in_axes)(*args)
            want = (
                loop if in_axes[1] is not None else [fn(x, np.float32(1.0)) for x in xs]
            )
            check_close(out, jaxlite.tree_util.tree_map(lambda *a: np.stack(a), *want))
        check_close(jaxlite.jit(fn)(xs[0], inits[0]), fn(xs[0], inits[0]))


# --------------------------------------------------------------------------------------
# select_and_gather_add, select_and_scatter_add


def test_select_and_scatter_primitives_match_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(9)
    x = _distinct(rng, 5, 6)
    params = dict(
        window_dimensions=(2, 3), window_strides=(2, 1), padding=((1, 0), (0, 1))
    )
    for ours, theirs in [(lax.ge_p, jax.lax.ge_p), (lax.le_p, jax.lax.le_p)]:
        src = rng.standard_normal((3, 5)).astype(np.float32)
        got = lax.select_and_scatter_add_p.bind(src, x, select_prim=ours, **params)
        want = jax.lax.select_and_scatter_add_p.bind(
            src, x, select_prim=theirs, **params
        )
        check_close(np.asarray(got), np.asarray(want))
        t = rng.standard_normal(x.shape).astype(np.float32)
        full = dict(params, base_dilation=(1, 2), window_dilation=(1, 1))
        got = lax.select_and_gather_add_p.bind(t, x, select_prim=ours, **full)
        want = jax.lax.select_and_gather_add_p.bind(t, x, select_prim=theirs, **full)
        check_close(np.asarray(got), np.asarray(want))


def test_max_pool_derivatives_of_every_order():
    x = _distinct(np.random.default_rng(10), 6, 6)

    def pool(x):
        return lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), "VALID")

    hessian = jaxlite.jacfwd(jaxlite.grad(lambda x: (pool(x) ** 2).sum()))(x)
    assert hessian.shape == (6, 6, 6, 6)
    # d/dx (sum of squares of maxima) = 2 * max at the argmax: the hessian is 2 there.
    assert np.isclose(np.asarray(hessian).reshape(36, 36).trace(), 2 * 9)


# --------------------------------------------------------------------------------------
# lax.reduce


def test_reduce_recognises_monoids():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    cases = [
        (lax.add, 0.0, "reduce_sum", x.sum(0)),
        (lax.mul, 1.0, "reduce_prod", x.prod(0)),
        (lax.max, -np.inf, "reduce_max", x.max(0)),
        (lax.min, np.inf, "reduce_min", x.min(0)),
    ]
    for op, init, name, want in cases:
        f = lambda x, op=op, init=init: lax.reduce(x, init, op, (0,))  # noqa: E731
        assert f"{name}[" in str(jaxlite.make_jaxpr(f)(x))
        check_close(f(x), want)
    xi = x.astype(np.int32)
    for op, init, name in [
        (lax.bitwise_and, -1, "reduce_and"),
        (lax.bitwise_or, 0, "reduce_or"),
        (lax.bitwise_xor, 0, "reduce_xor"),
    ]:
        f = lambda x, op=op, init=init: lax.reduce(x, init, op, (1,))  # noqa: E731
        assert f"{name}[" in str(jaxlite.make_jaxpr(f)(xi))
    # Not an identity: a general reduction, starting from the init value.
    f = lambda x: lax.reduce(x, 1.0, lax.add, (0,))  # noqa: E731
    assert "reduce[" in str(jaxlite.make_jaxpr(f)(x))
    check_close(f(x), x.sum(0) + 1)


def test_reduce_vmap_and_grad():
    xs = _distinct(np.random.default_rng(11), 3, 4, 2, 3) / 5

    def f(x):
        return lax.reduce(x, 1.0, lambda a, b: a * b, (0, 2))

    check_close(jaxlite.vmap(f, 1)(np.moveaxis(xs, 0, 1)), np.stack([f(x) for x in xs]))
    check_grads(f, (xs[0],), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (lambda x: lax.reduce_window(x, 0.0, lax.add, (2,), (1,), "VALID"), TypeError,
         "reduce_window got the wrong number of window_dimensions for operand"),
        (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 0), (1, 1), "VALID"), TypeError,
         "window_dimensions must have every element be strictly positive"),
        (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1,), "VALID"), TypeError,
         "reduce_window got inconsistent window_strides and window_dimensions"),
        (lambda x: lax.reduce_window(x, 1, lax.mul, (2, 2), (1, 1), "VALID"), TypeError,
         "reduce_window got inconsistent dtypes for operands and init_values"),
        (lambda x: lax.reduce_window((x, x), (0.0,), lax.mul, (2, 2), (1, 1), "VALID"), ValueError,
         "Operands must have the same tree structure as init_values"),
        (lambda x: lax.reduce_window(x > 0, False, lax.add, (2, 2), (1, 1), "VALID"), TypeError,
         "operand to reduce_window_sum must have a number dtype"),
        (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), (1, 1), "VALID", base_dilation=(0, 1)), TypeError,
         "All dilations must be positive"),
        (lambda x: lax.reduce(x, np.zeros(3, np.float32), lambda a, b: a + b, (0,)), ValueError,
         "reduce found non-scalar initial value"),
        (lambda x: lax.reduce(x, 0, lambda a, b: a + b, (0,)), TypeError,
         "reduce operand dtypes should match corresponding initial value dtypes"),
    ],
)  # fmt: skip
def test_errors(call, error, phrase):
    x = np.ones((4, 6), np.float32)
    with pytest.raises(error, match=re.escape(phrase)):
        call(x)
    jax = pytest.importorskip("jax")
    jax_call = _as_jax(call, jax)
    with pytest.raises(error, match=re.escape(phrase)):
        jax_call(x)


def _as_jax(call, jax):
    """The same call made with jax.lax (the lambdas name `lax` as a global)."""
    import types

    return types.FunctionType(call.__code__, {**call.__globals__, "lax": jax.lax})
