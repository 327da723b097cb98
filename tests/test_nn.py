"""Tests for jaxlite.nn: activations, softmax and friends, one_hot, attention and the
initializers.

Values are checked against NumPy formulas and against real JAX (values, dtypes and
weak types) where it is installed; gradients against finite differences
(check_grads) and against JAX at the kinks where JAX defines them with custom JVPs;
jit against eager and vmap against a per-example loop.
"""

import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import nn
from testing import check_close, check_grads

RNG = np.random.default_rng(0)
X = np.array([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0], np.float32)
X2 = np.linspace(-2, 3, 12).reshape(3, 4).astype(np.float32)

ELEMENTWISE = [
    "relu",
    "relu6",
    "sigmoid",
    "softplus",
    "soft_sign",
    "silu",
    "swish",
    "log_sigmoid",
    "leaky_relu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "elu",
    "celu",
    "selu",
    "gelu",
    "squareplus",
    "mish",
    "sparse_plus",
    "sparse_sigmoid",
    "tanh",
    "identity",
]


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softplus(x):
    return np.logaddexp(x, 0)


NUMPY_REFS = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": _sigmoid,
    "softplus": _softplus,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "silu": lambda x: x * _sigmoid(x),
    "log_sigmoid": lambda x: -_softplus(-x),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "sparse_plus": lambda x: np.where(
        x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)
    ),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "gelu": lambda x: (
        x * 0.5 * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    ),
}


@pytest.fixture(scope="module")
def rjax():
    return pytest.importorskip("jax")


def assert_same_as_jax(ours, theirs, rtol=2e-6, atol=1e-6):
    """Same tree, shapes, dtypes, weak types and (nearly) values as JAX's result."""
    import jax

    ours_leaves = jaxlite.tree_util.tree_leaves(ours)
    their_leaves = jax.tree_util.tree_leaves(theirs)
    assert len(ours_leaves) == len(their_leaves)
    for a, b in zip(ours_leaves, their_leaves):
        a_np, b_np = np.asarray(a), np.asarray(b)
        assert a_np.dtype == b_np.dtype, (a_np.dtype, b_np.dtype)
        assert a_np.shape == b_np.shape
        if hasattr(b, "weak_type"):
            assert a.weak_type == b.weak_type
        if a_np.dtype.kind in "fc" or a_np.dtype.name == "bfloat16":
            np.testing.assert_allclose(
                a_np.astype(np.complex128), b_np.astype(np.complex128), rtol, atol
            )
        else:
            np.testing.assert_array_equal(a_np, b_np)


# ----------------------------------------------------------------------------------
# Elementwise activations


@pytest.mark.parametrize("name", sorted(NUMPY_REFS))
def test_activation_values_match_numpy(name):
    out = getattr(nn, name)(jnp.asarray(X))
    check_close(out, NUMPY_REFS[name](X.astype(np.float64)).astype(np.float32))


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activation_matches_jax(rjax, name):
    ours, theirs = getattr(nn, name), getattr(rjax.nn, name)
    for x in (X, np.array([-2, 0, 3], np.int32), 0.5):
        try:
            expected = rjax.jit(theirs)(x)
        except TypeError:  # e.g. sigmoid of integers: both refuse
            with pytest.raises(TypeError):
                ours(jnp.asarray(x))
            continue
        assert_same_as_jax(ours(jnp.asarray(x)), expected)
    bf16 = X.astype(jnp.bfloat16)
    assert_same_as_jax(
        ours(jnp.asarray(bf16)), rjax.jit(theirs)(bf16), rtol=1e-2, atol=1e-2
    )


def test_activation_parameters_match_jax(rjax):
    cases = [
        ("gelu", {"approximate": False}),
        ("leaky_relu", {"negative_slope": 0.2}),
        ("elu", {"alpha": 2.0}),
        ("celu", {"alpha": 0.5}),
        ("squareplus", {"b": 1}),
    ]
    for name, kwargs in cases:
        assert_same_as_jax(
            getattr(nn, name)(jnp.asarray(X), **kwargs),
            rjax.jit(lambda x, n=name, kw=kwargs: getattr(rjax.nn, n)(x, **kw))(X),
        )
    y = np.array([0.1, 0.5, 1.0, 5.0], np.float32)
    assert_same_as_jax(nn.log1mexp(jnp.asarray(y)), rjax.nn.log1mexp(y))
    assert_same_as_jax(nn.glu(jnp.asarray(X2)), rjax.nn.glu(X2))
    assert_same_as_jax(nn.glu(jnp.asarray(X2[:2]), 0), rjax.nn.glu(X2[:2], 0))
    with pytest.raises(AssertionError, match="divisible by 2"):
        nn.glu(jnp.ones((3, 2)), axis=0)


@pytest.mark.parametrize(
    "name", ["relu", "relu6", "hard_sigmoid", "hard_silu", "hard_tanh", "leaky_relu"]
)
def test_gradients_at_kinks_match_jax(rjax, name):
    # Points where the function is not differentiable: JAX fixes the value with a
    # custom JVP (relu'(0) = 0, relu6'(6) = 0) or by its select formula.
    pts = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0], np.float32)
    ours = jaxlite.vmap(jaxlite.grad(getattr(nn, name)))(jnp.asarray(pts))
    theirs = rjax.jit(rjax.vmap(rjax.grad(getattr(rjax.nn, name))))(pts)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_relu_gradient_is_zero_at_zero():
    assert float(jaxlite.grad(nn.relu)(0.0)) == 0.0
    assert float(jaxlite.grad(nn.relu6)(6.0)) == 0.0
    assert float(jaxlite.grad(nn.relu6)(3.0)) == 1.0


@pytest.mark.parametrize(
    "name",
    [
        "sigmoid",
        "softplus",
        "soft_sign",
        "silu",
        "log_sigmoid",
        "elu",
        "celu",
        "selu",
        "gelu",
        "squareplus",
        "mish",
    ],
)
def test_smooth_activation_grads(name):
    x = jnp.asarray(np.array([-2.3, -0.7, 0.4, 1.9], np.float32))
    check_grads(getattr(nn, name), (x,), order=2)


def test_piecewise_activation_grads_away_from_kinks():
    x = jnp.asarray(np.array([-2.3, -0.7, 0.4, 1.9, 6.5], np.float32))
    for f in (nn.relu, nn.relu6, nn.hard_tanh, nn.leaky_relu, nn.sparse_plus):
        check_grads(f, (x,), order=1)
    check_grads(nn.log1mexp, (jnp.asarray([0.2, 1.5, 4.0]),), order=2)
    check_grads(lambda x: nn.gelu(x, approximate=False), (x,), order=2)


def test_softplus_and_logaddexp_gradients_at_infinities(rjax):
    inf = np.float32(np.inf)
    assert float(jaxlite.grad(nn.softplus)(inf)) == 1.0
    for a, b in [(-inf, -inf), (inf, np.float32(1.0)), (np.float32(2.0), -inf)]:
        ours = jaxlite.grad(jnp.logaddexp, argnums=(0, 1))(a, b)
        theirs = rjax.grad(rjax.numpy.logaddexp, argnums=(0, 1))(a, b)
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


def test_activations_jit_and_vmap():
    x = jnp.asarray(X2)
    for name in ("relu", "gelu", "selu", "hard_silu", "mish"):
        f = getattr(nn, name)
        check_close(jaxlite.jit(f)(x), f(x))
        check_close(jaxlite.vmap(f)(x), jnp.stack([f(row) for row in x]))


# ----------------------------------------------------------------------------------
# softmax, log_softmax, logsumexp, standardize, one_hot


def _np_softmax(x, axis):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_softmax_values(axis):
    x = jnp.asarray(X2)
    check_close(nn.softmax(x, axis=axis), _np_softmax(X2, axis))
    check_close(nn.log_softmax(x, axis=axis), np.log(_np_softmax(X2, axis)))


def test_softmax_family_matches_jax(rjax):
    x = jnp.asarray(X2)
    mask = X2 > 0
    b = np.array([1.0, -2, 0, 1], np.float32)
    cases = [
        lambda n, x: n.softmax(x, where=mask),
        lambda n, x: n.softmax(x, axis=1, where=X2 > 10),
        lambda n, x: n.log_softmax(x, where=mask),
        lambda n, x: n.logsumexp(x, axis=1, b=b),
        lambda n, x: n.logsumexp(x, axis=0, b=b, return_sign=True),
        lambda n, x: n.logsumexp(x, axis=1, where=mask, keepdims=True),
        lambda n, x: n.logmeanexp(x, axis=1, where=mask),
        lambda n, x: n.standardize(x),
        lambda n, x: n.standardize(x, axis=0, algorithm="stable"),
        lambda n, x: n.standardize(x, mean=1.0, variance=2.0, where=mask),
    ]
    for f in cases:
        assert_same_as_jax(f(nn, x), rjax.jit(lambda x, f=f: f(rjax.nn, x))(X2))
    ninf = np.array([-np.inf, -np.inf], np.float32)
    assert_same_as_jax(nn.logsumexp(jnp.asarray(ninf)), rjax.nn.logsumexp(ninf))
    assert_same_as_jax(
        nn.softmax(jnp.asarray([-np.inf, 0.0, 1.0])),
        rjax.nn.softmax(rjax.numpy.asarray([-np.inf, 0.0, 1.0])),
    )
    with pytest.raises(ValueError, match="Unknown algorithm"):
        nn.standardize(x, algorithm="other")


def test_softmax_where_masks_out():
    x = jnp.asarray(X2)
    mask = X2 > 0
    out = np.asarray(nn.softmax(x, where=mask))
    assert np.all(out[~mask] == 0)
    expected = np.where(mask, np.exp(X2), 0)
    expected = expected / np.maximum(expected.sum(-1, keepdims=True), 1e-30)
    check_close(out, expected.astype(np.float32))
    assert np.all(np.isneginf(np.asarray(nn.log_softmax(x, where=mask))[~mask]))


def test_softmax_gradients(rjax):
    x = jnp.asarray(X2)
    w = RNG.standard_normal((3, 4)).astype(np.float32)
    check_grads(lambda x: nn.softmax(x) * w, (x,), order=2)
    check_grads(lambda x: nn.log_softmax(x, axis=0), (x,), order=2)
    check_grads(lambda x: nn.logsumexp(x, axis=1), (x,), order=2)
    check_grads(nn.standardize, (x,), order=1)
    ours = jaxlite.grad(lambda x: (nn.softmax(x, where=x > 0) * w).sum())(x)
    theirs = rjax.jit(rjax.grad(lambda x: (rjax.nn.softmax(x, where=x > 0) * w).sum()))(
        X2
    )
    check_close(ours, np.asarray(theirs))


def test_softmax_custom_jvp_variant():
    # The `jax_softmax_custom_jvp` formulation: same values and derivatives.
    from jaxlite.nn.functions import _softmax_custom

    x = jnp.asarray(X2)
    check_close(_softmax_custom(x, -1, None), nn.softmax(x))
    t = jnp.asarray(RNG.standard_normal((3, 4)).astype(np.float32))
    _, ours = jaxlite.jvp(lambda x: _softmax_custom(x, -1, None), (x,), (t,))
    _, plain = jaxlite.jvp(nn.softmax, (x,), (t,))
    check_close(ours, plain, rtol=1e-5, atol=1e-6)
    check_grads(lambda x: _softmax_custom(x, (0, 1), x > 0), (x,), order=1)


def test_softmax_jit_vmap():
    x = jnp.asarray(X2)
    check_close(jaxlite.jit(nn.softmax)(x), nn.softmax(x))
    check_close(
        jaxlite.vmap(nn.log_softmax)(x), jnp.stack([nn.log_softmax(r) for r in x])
    )


def test_one_hot(rjax):
    idx = np.array([0, 1, 2, -1, 3], np.int32)
    expected = np.zeros((5, 3), np.float32)
    expected[[0, 1, 2], [0, 1, 2]] = 1
    check_close(nn.one_hot(jnp.asarray(idx), 3), expected)
    a = np.array([[0, 1], [2, 0]], np.int32)
    for kwargs in ({}, {"dtype": np.int32, "axis": 0}, {"axis": 1}):
        assert_same_as_jax(
            nn.one_hot(jnp.asarray(a), 3, **kwargs), rjax.nn.one_hot(a, 3, **kwargs)
        )
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        nn.one_hot(jnp.asarray([0.0, 1.0]), 2)
    assert any("integer-typed" in str(w.message) for w in record)
    out = jaxlite.jit(lambda i: nn.one_hot(i, 4))(jnp.asarray([1, 3]))
    check_close(out, np.eye(4, dtype=np.float32)[[1, 3]])


# ----------------------------------------------------------------------------------
# dot_product_attention


def _np_attention(q, k, v, bias=None, mask=None, causal=False, scale=None):
    B, T, N, H = q.shape  # noqa: N806
    K = k.shape[2]  # noqa: N806
    k = np.repeat(k, N // K, axis=2)
    v = np.repeat(v, N // K, axis=2)
    scale = 1 / np.sqrt(H) if scale is None else scale
    logits = np.einsum("btnh,bsnh->bnts", q, k).astype(np.float64) * scale
    if bias is not None:
        logits = logits + bias
    keep = np.ones(logits.shape, bool)
    if mask is not None:
        keep &= mask
    if causal:
        keep &= np.tril(np.ones(logits.shape[-2:], bool))
    logits = np.where(keep, logits, -1e30)
    return np.einsum("bnts,bsnh->btnh", _np_softmax(logits, -1), v)


ATT = {
    "q": RNG.standard_normal((2, 3, 4, 5)).astype(np.float32),
    "k": RNG.standard_normal((2, 4, 2, 5)).astype(np.float32),
    "v": RNG.standard_normal((2, 4, 2, 5)).astype(np.float32),
    "bias": RNG.standard_normal((1, 4, 3, 4)).astype(np.float32),
    "mask": RNG.random((2, 1, 3, 4)) > 0.3,
}


def test_attention_matches_numpy():
    q, k, v, bias, mask = (ATT[n] for n in ("q", "k", "v", "bias", "mask"))
    out = nn.dot_product_attention(
        jnp.asarray(q), jnp.asarray(k), jnp.asarray(v), bias=bias, mask=mask
    )
    check_close(out, _np_attention(q, k, v, bias, mask).astype(np.float32), 1e-5, 1e-5)
    out = nn.dot_product_attention(q[0], k[0], v[0], is_causal=True, scale=0.3)
    ref = _np_attention(q[:1], k[:1], v[:1], causal=True, scale=0.3)[0]
    check_close(out, ref.astype(np.float32), 1e-5, 1e-5)


def test_attention_matches_jax(rjax):
    q, k, v, bias, mask = (ATT[n] for n in ("q", "k", "v", "bias", "mask"))
    for kwargs in (
        {"bias": bias, "mask": mask, "local_window_size": (1, 0)},
        {
            "is_causal": True,
            "return_residual": True,
            "query_seq_lengths": np.array([2, 3], np.int32),
            "key_value_seq_lengths": np.array([4, 1], np.int32),
        },
    ):
        assert_same_as_jax(
            nn.dot_product_attention(q, k, v, **kwargs),
            rjax.jit(lambda q, kw=kwargs: rjax.nn.dot_product_attention(q, k, v, **kw))(
                q
            ),
            rtol=1e-5,
            atol=1e-5,
        )
    ours = jaxlite.grad(
        lambda q, k, v: nn.dot_product_attention(q, k, v, bias=bias).sum(),
        argnums=(0, 1, 2),
    )(q, k, v)
    theirs = rjax.jit(
        rjax.grad(
            lambda q, k, v: rjax.nn.dot_product_attention(q, k, v, bias=bias).sum(),
            argnums=(0, 1, 2),
        )
    )(q, k, v)
    assert_same_as_jax(ours, theirs, rtol=1e-4, atol=1e-5)


def test_attention_errors_jit_vmap():
    q, k, v = (jnp.asarray(ATT[n]) for n in ("q", "k", "v"))
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        nn.dot_product_attention(q[:, :, :3], k, v)
    with pytest.raises(ValueError, match="value dtype should be"):
        nn.dot_product_attention(q, k, v.astype(jnp.float16))
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        nn.dot_product_attention(q, k, v, mask=jnp.ones((1, 1, 3, 4)))
    with pytest.raises(NotImplementedError, match="implementation"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")
    f = lambda q, k, v: nn.dot_product_attention(q, k, v, is_causal=True)  # noqa: E731
    check_close(jaxlite.jit(f)(q, k, v), f(q, k, v))
    check_close(jaxlite.vmap(f)(q, k, v), jnp.stack([f(*t) for t in zip(q, k, v)]))


# ----------------------------------------------------------------------------------
# Initializers


def test_initializers_match_jax_bit_for_bit(rjax):
    # One shape throughout, so that JAX compiles each sampler once.
    inits = [
        lambda m: m.glorot_uniform(),
        lambda m: m.glorot_normal(),
        lambda m: m.he_normal(),
        lambda m: m.lecun_uniform(),
        lambda m: m.xavier_uniform(in_axis=0, out_axis=1),
        lambda m: m.kaiming_normal(in_axis=-1, out_axis=-2),
        lambda m: m.zeros,
        lambda m: m.ones,
        lambda m: m.constant(3.0),
        lambda m: m.uniform(2.0),
        lambda m: m.normal(0.5),
        lambda m: m.truncated_normal(0.5),
        lambda m: m.variance_scaling(2.0, "fan_out", "normal"),
        lambda m: m.variance_scaling(2.0, "fan_geo_avg", "uniform"),
        lambda m: m.orthogonal(),
        lambda m: m.orthogonal(2.0, column_axis=0),
    ]
    key = jaxlite.random.PRNGKey(7)
    ours = [make(nn.initializers)(key, (3, 4)) for make in inits]
    ours.append(
        nn.initializers.he_uniform(in_axis=(0, 1), batch_axis=2)(key, (1, 3, 2, 2))
    )
    ours.append(
        nn.initializers.variance_scaling(1.0, "fan_in", "uniform")(
            key, (3, 4), jnp.complex64
        )
    )
    ours.append(
        nn.initializers.variance_scaling(1.0, "fan_in", "truncated_normal")(
            key, (3, 4), jnp.complex64
        )
    )

    def theirs(key):  # one jit: JAX compiles once
        init = rjax.nn.initializers
        out = [make(init)(key, (3, 4)) for make in inits]
        out.append(init.he_uniform(in_axis=(0, 1), batch_axis=2)(key, (1, 3, 2, 2)))
        out.append(
            init.variance_scaling(1.0, "fan_in", "uniform")(key, (3, 4), np.complex64)
        )
        out.append(
            init.variance_scaling(1.0, "fan_in", "truncated_normal")(
                key, (3, 4), np.complex64
            )
        )
        return out

    assert_same_as_jax(ours, rjax.jit(theirs)(rjax.random.PRNGKey(7)), 1e-5, 1e-6)


def test_initializer_statistics_and_errors():
    key = jaxlite.random.PRNGKey(0)
    w = np.asarray(nn.initializers.he_normal()(key, (400, 300)))
    np.testing.assert_allclose(w.var(), 2 / 400, rtol=0.05)
    w = np.asarray(nn.initializers.glorot_uniform()(key, (400, 300)))
    np.testing.assert_allclose(w.var(), 2 / 700, rtol=0.05)
    q = np.asarray(nn.initializers.orthogonal()(key, (6, 4)))
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-5)
    assert isinstance(nn.initializers.lecun_normal(), nn.initializers.Initializer)
    assert nn.initializers.constant(2, jnp.int32)(key, (2,)).dtype == np.int32
    with pytest.raises(ValueError, match="at least 2D or specify in_axis"):
        nn.initializers.glorot_uniform()(key, (3,))
    with pytest.raises(ValueError, match="invalid mode"):
        nn.initializers.variance_scaling(1.0, "fan_x", "normal")(key, (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        nn.initializers.variance_scaling(1.0, "fan_in", "x")(key, (2, 2))
    with pytest.raises(ValueError, match="at least a 2D shape"):
        nn.initializers.orthogonal()(key, (3,))
    with pytest.raises(ValueError, match="less or equal than `fan_out`"):
        nn.initializers.delta_orthogonal()(key, (3, 3, 4, 2))
    jitted = jaxlite.jit(lambda k: nn.initializers.he_uniform()(k, (3, 4)))
    check_close(jitted(key), nn.initializers.he_uniform()(key, (3, 4)))
