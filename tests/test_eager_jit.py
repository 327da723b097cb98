"""Eager calls that run compiled: `eager_jit` functions and jit's fast paths.

Every compiled eager call must give what the op-by-op evaluation gives (the same
values, dtype and weak type: `disable_jit` runs the functions op by op), stage the
function's own primitives under a trace, fall back for arguments it cannot key on,
and keep per-call behaviour (warnings, NaN checks) unchanged.
"""

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.eager_jit import eager_jit

RNG = np.random.default_rng(0)
X8 = jnp.asarray(RNG.standard_normal(8).astype(np.float32))
X34 = jnp.asarray(RNG.standard_normal((3, 4)).astype(np.float32))
A4 = jnp.asarray(RNG.standard_normal((4, 4)).astype(np.float32) + 4 * np.eye(4))
IDX = jnp.asarray(np.array([0, -1, 3, 9, 3], np.int32))  # negative, out of bounds
I8 = jnp.asarray(np.array([1, -2, 3, 4, 5, 6, 7, 8], np.int8))
WIDE = jnp.asarray(RNG.standard_normal((300, 200)).astype(np.float32))

CASES = {
    "var": lambda: jnp.var(X8),
    "std ddof": lambda: jnp.std(X34, axis=0, ddof=1),
    "mean axis": lambda: jnp.mean(X34, 1, keepdims=True),
    "sum int8": lambda: jnp.sum(I8),
    "max initial": lambda: jnp.max(X8, initial=0.5),
    "argmax": lambda: jnp.argmax(X34, axis=1),
    "argsort": lambda: jnp.argsort(X34, axis=0),
    "cumsum wide rows": lambda: jnp.cumsum(WIDE, axis=0),
    "cumprod axis 1": lambda: jnp.cumprod(X34, axis=1),
    "take": lambda: jnp.take(X8, IDX),
    "take clip": lambda: jnp.take(X34, IDX, axis=1, mode="clip"),
    "getitem array": lambda: X8[IDX],
    "take_along_axis": lambda: jnp.take_along_axis(
        X34, jnp.asarray(np.array([[0], [3], [5]], np.int32)), axis=1
    ),
    "at set int": lambda: X8.at[-2].set(7.0),
    "at add repeated": lambda: X8.at[IDX].add(1.5),
    "at max": lambda: I8.at[jnp.asarray(np.array([0, 0, 9], np.int32))].max(3),
    "linspace": lambda: jnp.linspace(0, 1, 7),
    "linspace arrays": lambda: jnp.linspace(X8[:2], 3.0, 4, axis=1),
    "where weak scalar": lambda: jnp.where(X8 > 0, X8, 0.0),
    "pad": lambda: jnp.pad(X34, ((1, 0), (0, 2))),
    "split": lambda: jnp.split(X8, 4),
    "repeat": lambda: jnp.repeat(X34, 2, axis=1),
    "solve": lambda: jnp.linalg.solve(A4, X8[:4]),
    "inv": lambda: jnp.linalg.inv(A4),
    "norm": lambda: jnp.linalg.norm(X34, axis=1),
    "svd": lambda: jnp.linalg.svd(A4, compute_uv=False),
    "softmax": lambda: jax.nn.softmax(X34),
    "log_softmax": lambda: jax.nn.log_softmax(X34, axis=0),
    "gelu": lambda: jax.nn.gelu(X8, approximate=False),
    "one_hot": lambda: jax.nn.one_hot(IDX, 4),
    "logsumexp": lambda: jax.scipy.special.logsumexp(X34, axis=1),
}


def _leaves(out):
    return jax.tree_util.tree_leaves(out)


def _assert_same(got, want):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.weak_type == w.weak_type
        if np.issubdtype(g.dtype, np.inexact):
            # Op by op, small float32 exp/log/... are XLA's exact roundings; compiled
            # code uses NumPy's ufuncs (lax/xla_float32.py): an ulp or so apart.
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        else:
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("name", sorted(CASES))
def test_compiled_eager_call_matches_op_by_op(name):
    case = CASES[name]
    first, second = case(), case()  # a trace and compile, then a cache hit
    with jax.disable_jit():
        want = case()
    _assert_same(first, want)
    _assert_same(second, want)


def test_values_dtypes_and_weak_types_match_jax():
    jax_ = pytest.importorskip("jax")
    jjnp = jax_.numpy
    x = np.asarray(X8)
    pairs = [
        (jnp.var(X8), jjnp.var(x)),
        (jnp.mean(3.0), jjnp.mean(3.0)),
        (jnp.linspace(0, 1, 5), jjnp.linspace(0, 1, 5)),
        (jnp.where(X8 > 0, X8, 0.0), jjnp.where(x > 0, x, 0.0)),
        (jnp.take(X8, IDX), jjnp.take(x, np.asarray(IDX))),
        (X8.at[np.int32(2)].set(1.0), jjnp.asarray(x).at[2].set(1.0)),
        (jax.nn.log_softmax(X8), jax_.nn.log_softmax(x)),
    ]
    for ours, theirs in pairs:
        assert ours.dtype == theirs.dtype
        assert ours.weak_type == theirs.weak_type
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=2e-6)


def test_under_a_trace_the_function_stages_its_own_primitives():
    text = str(jax.make_jaxpr(jnp.var)(X8))
    assert "reduce_sum" in text and "jit" not in text
    assert "gather" in str(jax.make_jaxpr(lambda x, i: x[i])(X8, IDX))
    grad = jax.grad(lambda x: jnp.var(x))(X8)
    expected = 2 * (np.asarray(X8) - np.asarray(X8).mean()) / 8
    np.testing.assert_allclose(np.asarray(grad), expected, rtol=1e-5, atol=1e-7)


def test_arguments_it_cannot_key_on_run_op_by_op():
    x = np.asarray(X34)
    np.testing.assert_allclose(jnp.sum(X34, axis=[0, 1]), x.sum(), rtol=1e-6)
    np.testing.assert_allclose(jnp.mean(x, 0), x.mean(0), rtol=1e-6)  # a NumPy input
    mask = jnp.asarray(x > 0)
    np.testing.assert_allclose(jnp.sum(X34, where=mask), x[x > 0].sum(), rtol=1e-6)
    np.testing.assert_array_equal(jnp.take(a=X8, indices=IDX), jnp.take(X8, IDX))
    np.testing.assert_array_equal(jnp.repeat(X8, jnp.asarray(np.arange(8))).shape, 28)


def test_plain_eager_jit_function_keys_on_statics_and_dtypes():
    calls = []

    @eager_jit(n_arrays=2)
    def f(x, y, scale, *, shift=0.0):
        calls.append(1)  # Python side effects run when tracing only
        return x * scale + y + shift

    out = f(X8, 1.0, 2.0)
    assert out.dtype == np.float32 and not out.weak_type
    f(X8, 1.0, 2.0)
    assert len(calls) == 1
    f(X8, 1.0, 3.0)  # another static value
    f(X8, 1.0, np.float64(3.0))  # equal, but another type
    f(X8, 1.0, 3.0, shift=1.0)
    assert len(calls) == 4
    weak = f(1.0, 2.0, 3.0)
    assert weak.weak_type and weak.dtype == np.float32
    np.testing.assert_allclose(f(X8, 1.0, 2.0), np.asarray(X8) * 2 + 1, rtol=1e-6)
    assert f(2**40, 1, 1) == 2**40 + 1  # too large for int32: runs op by op
    with jax.enable_x64():
        assert f(jnp.arange(3), 1, 2, shift=0).dtype == np.int64


def test_per_call_behaviour_is_unchanged():
    x = jnp.asarray(np.array([0.0, 1.0], np.float32))
    for _ in range(2):  # the warning comes with every call, not only the first
        with pytest.warns(DeprecationWarning, match="should be integer-typed"):
            jax.nn.one_hot(x, 3)
    with jax.debug_nans(True):
        with pytest.raises(FloatingPointError, match="encountered in sub"):
            jnp.var(jnp.asarray(np.array([np.inf, 1.0], np.float32)))
    assert np.isnan(jnp.var(jnp.asarray(np.array([np.inf, 1.0], np.float32))))


def test_jit_fast_path_with_pytrees_and_static_arguments():
    traces = []

    def f(params, n, extra):
        traces.append(1)
        total = sum(v.sum() for v in params.values())
        return total * n + extra[0] - extra[1][0]

    jf = jax.jit(f, static_argnums=1)
    params = {f"w{i}": jnp.asarray(np.full(3, i, np.float32)) for i in range(4)}
    extra = (X8[0], [X8[1], None])
    want = 18.0 * 2 + float(X8[0]) - float(X8[1])
    for _ in range(3):
        np.testing.assert_allclose(float(jf(params, 2, extra)), want, rtol=1e-6)
    assert len(traces) == 1
    jf(params, 3, extra)
    jf({**params, "w9": params["w0"]}, 3, extra)  # another structure
    assert len(traces) == 3
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        jf(params, [2], extra)
