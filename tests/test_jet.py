"""`jaxlite.experimental.jet`: Taylor-mode derivatives against nested `jvp` (the
definition: the k-th output term is the k-th derivative of `f(x(t))` at t = 0) and
against real JAX's `jax.experimental.jet` on the same inputs."""

import math

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.experimental.jet import jet
from testing import check_close

RNG = np.random.default_rng(0)
X = np.array([0.3, 0.7, 1.2], np.float32)
SERIES = [RNG.uniform(-1, 1, 3).astype(np.float32) for _ in range(3)]


def path_derivatives(f, x, terms, order):
    """Derivatives 1..order of f(x(t)) at 0, x(t) = x + sum_k terms[k-1] t^k / k!,
    by nested jvp in t."""

    def path(t):
        return x + sum(
            tk * t ** (k + 1) / math.factorial(k + 1) for k, tk in enumerate(terms)
        )

    def g(t):
        return f(path(t))

    derivs = []
    d = g
    for _ in range(order):
        d = _derivative(d)
        derivs.append(d(0.0))
    return derivs


def _derivative(g):
    def dg(t):
        return jaxlite.jvp(g, (t,), (jnp.ones_like(t),))[1]

    return dg


UNARY = {
    "exp": jnp.exp,
    "log": jnp.log,
    "sin": jnp.sin,
    "cos": jnp.cos,
    "tanh": jnp.tanh,
    "sigmoid": jaxlite.nn.sigmoid,
    "sqrt": jnp.sqrt,
    "rsqrt": lax.rsqrt,
    "pow_const": lambda x: x**2.5,
    "pow_xy": lambda x: x**x,
    "integer_pow": lambda x: x**3,
    "integer_pow_neg": lambda x: x**-2,
    "square": jnp.square,
    "div": lambda x: 1 / (1 + x),
    "sum": lambda x: jnp.sum(x * x),
    "max": jnp.max,
    "dot": lambda x: jnp.dot(x, x[::-1]),
    "gelu": jaxlite.nn.gelu,
    "erf": jaxlite.scipy.special.erf,
    "sinh": jnp.sinh,
    "expm1": jnp.expm1,
    "log1p": jnp.log1p,
    "abs": lambda x: jnp.abs(x - 0.5),
    "where": lambda x: jnp.where(x > 0.5, x**2, jnp.sin(x)),
    "structural": lambda x: jnp.concatenate([x, jnp.exp(x)])[1:4].reshape(3, 1).T,
    "softmax": jaxlite.nn.softmax,
    "logsumexp": jaxlite.nn.logsumexp,
    "jit": jaxlite.jit(lambda x: jnp.sin(x) * x),
    "astype": lambda x: x.astype(jnp.float16).astype(jnp.float32) * 2,
    "maximum": lambda x: jnp.maximum(x, 0.7),
    "atan2": lambda x: jnp.arctan2(x, 1 + x),
    "mean_var": lambda x: jnp.var(x) + jnp.mean(x),
    "cumsum": jnp.cumsum,
    "broadcast": lambda x: jnp.broadcast_to(x, (2, 3)) * jnp.ones((2, 1)),
}
# Differentiable through their custom_jvp primal (JAX's jet leaks a tracer here).
JAXLITE_ONLY = {
    "relu": jaxlite.nn.relu,
    "softplus": jaxlite.nn.softplus,
    "tan": jnp.tan,
    "atan": jnp.arctan,
    "cbrt": jnp.cbrt,
    "clip": lambda x: jnp.clip(x, 0.5, 1.0),
    "checkpoint": jaxlite.checkpoint(lambda x: jnp.sin(x) ** 2),
}


@pytest.mark.parametrize("name", sorted(UNARY) + sorted(JAXLITE_ONLY))
def test_jet_matches_nested_jvp(name):
    f = {**UNARY, **JAXLITE_ONLY}[name]
    x = jnp.asarray(X)
    terms = [jnp.asarray(t) for t in SERIES]
    y, ys = jet(f, (x,), (terms,))
    check_close(y, f(x), rtol=1e-6)
    expected = path_derivatives(f, x, terms, 3)
    for got, want in zip(ys, expected):
        check_close(got, want, rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_jet_matches_jax(name):
    jax = pytest.importorskip("jax")
    from jax.experimental.jet import jet as jax_jet

    jax_funs = _jax_versions(jax)
    y, ys = jet(UNARY[name], (X,), (SERIES,))
    jy, jys = jax_jet(jax_funs[name], (X,), (SERIES,))
    check_close(y, np.asarray(jy), rtol=2e-5, atol=1e-6)
    assert len(ys) == len(jys)
    for got, want in zip(ys, jys):
        assert got.dtype == want.dtype
        check_close(got, np.asarray(want), rtol=2e-4, atol=2e-4)


def _jax_versions(jax):
    jn = jax.numpy
    return {
        "exp": jn.exp,
        "log": jn.log,
        "sin": jn.sin,
        "cos": jn.cos,
        "tanh": jn.tanh,
        "sigmoid": jax.nn.sigmoid,
        "sqrt": jn.sqrt,
        "rsqrt": jax.lax.rsqrt,
        "pow_const": lambda x: x**2.5,
        "pow_xy": lambda x: x**x,
        "integer_pow": lambda x: x**3,
        "integer_pow_neg": lambda x: x**-2,
        "square": jn.square,
        "div": lambda x: 1 / (1 + x),
        "sum": lambda x: jn.sum(x * x),
        "max": jn.max,
        "dot": lambda x: jn.dot(x, x[::-1]),
        "gelu": jax.nn.gelu,
        "erf": jax.scipy.special.erf,
        "sinh": jn.sinh,
        "expm1": jn.expm1,
        "log1p": jn.log1p,
        "abs": lambda x: jn.abs(x - 0.5),
        "where": lambda x: jn.where(x > 0.5, x**2, jn.sin(x)),
        "structural": lambda x: jn.concatenate([x, jn.exp(x)])[1:4].reshape(3, 1).T,
        "softmax": jax.nn.softmax,
        "logsumexp": jax.nn.logsumexp,
        "jit": jax.jit(lambda x: jn.sin(x) * x),
        "astype": lambda x: x.astype(jn.float16).astype(jn.float32) * 2,
        "maximum": lambda x: jn.maximum(x, 0.7),
        "atan2": lambda x: jn.arctan2(x, 1 + x),
        "mean_var": lambda x: jn.var(x) + jn.mean(x),
        "cumsum": jn.cumsum,
        "broadcast": lambda x: jn.broadcast_to(x, (2, 3)) * jn.ones((2, 1)),
    }


def _mlp(params, x):
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    return jnp.sum(jaxlite.nn.sigmoid(h @ w2 + b2) ** 2)


def test_mlp_fifth_order_matches_nested_jvp():
    params = [
        (RNG.normal(size=(3, 4)).astype(np.float32), np.zeros(4, np.float32)),
        (RNG.normal(size=(4, 2)).astype(np.float32), np.ones(2, np.float32)),
    ]
    x = jnp.asarray(RNG.normal(size=(2, 3)).astype(np.float32))
    v = jnp.asarray(RNG.normal(size=(2, 3)).astype(np.float32))
    zeros = [jnp.zeros_like(x)] * 4
    y, ys = jet(lambda x: _mlp(params, x), (x,), ([v, *zeros],))
    expected = path_derivatives(lambda x: _mlp(params, x), x, [v, *zeros], 5)
    for got, want in zip(ys, expected):
        check_close(got, want, rtol=2e-3, atol=2e-3)


def test_two_arguments_and_pytree_output():
    jax = pytest.importorskip("jax")
    from jax.experimental.jet import jet as jax_jet

    def f(np_):
        return lambda x, y: {"p": x * np_.sin(y), "q": (x / y, x)}

    args = (np.float32(0.7), np.float32(1.3))
    series = ([np.float32(1.0), np.float32(0.5)], [np.float32(-0.3), np.float32(2.0)])
    out, out_series = jet(f(jnp), args, series)
    jout, jseries = jax_jet(f(jax.numpy), args, series)
    for got, want in zip(
        jaxlite.tree_util.tree_leaves((out, out_series)),
        jax.tree_util.tree_leaves((jout, jseries)),
    ):
        check_close(got, np.asarray(want), rtol=1e-5, atol=1e-6)


def test_factorial_scaling():
    # Unscaled coefficients of exp(x + t) at 1: e / k!.
    y, ys = jet(jnp.exp, (1.0,), ([1.0, 0.0, 0.0],), factorial_scaled=False)
    check_close(ys, [np.e, np.e / 2, np.e / 6], rtol=1e-6)
    y, ys = jet(jnp.exp, (1.0,), ([1.0, 0.0, 0.0],))
    check_close(ys, [np.e] * 3, rtol=1e-6)
    assert ys[0].dtype == np.float32 and ys[0].weak_type


def test_constant_and_input_outputs_pass_through_as_in_jax():
    y, ys = jet(lambda x: 3.0, (1.0,), ([1.0, 0.0],))
    assert y == 3.0 and type(y) is float
    check_close(ys, [0.0, 0.0])
    (prod, passed), _ = jet(
        lambda x, y: (x * y, {"a": x}), (1.0, 2.0), ([1.0, 0.0], [0.0, 0.0])
    )
    assert passed == {"a": 1.0} and type(passed["a"]) is float
    y, ys = jet(lambda x: x, (1.0,), ([],))
    assert y == 1.0 and ys == []
    b, bs = jet(lambda x: x > 0, (1.0,), ([1.0, 0.0],))
    assert bool(b) and bs[0].dtype == np.float32


def test_exact_where_derivatives_are_exact():
    # x**3 at 0 (repeated squaring, no division by x) and x**2.0 at a negative base.
    _, ys = jet(lambda x: x**3, (0.0,), ([1.0, 0.0, 0.0],))
    check_close(ys, [0.0, 0.0, 6.0])
    _, ys = jet(lambda x: x**2.0, (-1.5,), ([1.0, 0.0],))
    check_close(ys, [-3.0, 2.0])


def test_composes_with_jit_vmap_grad_and_itself():
    def third(x):
        return jet(jnp.sin, (x,), ([1.0, 0.0, 0.0],))[1][2]

    xs = jnp.arange(3.0)
    check_close(jaxlite.jit(third)(0.5), -np.cos(0.5), rtol=1e-6)
    check_close(jaxlite.vmap(third)(xs), -np.cos(np.arange(3.0)), rtol=1e-6)
    check_close(jaxlite.grad(third)(0.5), np.sin(0.5), rtol=1e-6)
    y, ys = jet(lambda x: jet(jnp.sin, (x,), ([1.0],))[1][0], (1.0,), ([1.0, 0.0],))
    check_close([y, *ys], [np.cos(1.0), -np.sin(1.0), -np.cos(1.0)], rtol=1e-6)


def test_errors_match_jax():
    with pytest.raises(ValueError, match="inconsistent lengths"):
        jet(lambda x, y: x, (1.0, 2.0), ([1.0, 0.0], [0.0]))
    with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
        jet(lambda x: x, ((1.0, 2.0),), ([1.0, 0.0],))
    with pytest.raises(ValueError, match="term 0 for argument 0 is not an array"):
        jet(lambda x: x, (1.0,), ([(1.0, 2.0), 0.0],))
    with pytest.raises(KeyError, match="Jet rule for 'sort' not implemented"):
        jet(jnp.sort, (jnp.ones(3),), ([jnp.ones(3)],))
