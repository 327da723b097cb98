"""Smaller corners of the jax namespace, each against real JAX where installed:
debugging/PRNG config switches (`jax.no_tracing`, `jax.explain_cache_misses`, ...),
`jax.dlpack`, tokens (`lax.create_token`, `lax.after_all`), sharding diagrams
(`jax.debug.visualize_array_sharding`) and `custom_derivatives.linear_call`."""

import contextlib
import io
import logging
from functools import partial

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.config import config
from jaxlite.custom_derivatives import linear_call
from testing import check_close


@pytest.fixture(autouse=True)
def restore_config():
    saved = config.values
    yield
    for name, value in saved.items():
        if config.read(name) != value:
            config.update(name, value)


# ----------------------------------------------------------------------------------------
# Config switches

STATES = {
    "check_tracer_leaks": False,
    "debug_key_reuse": False,
    "explain_cache_misses": False,
    "no_tracing": False,
    "no_execution": False,
    "enable_checks": False,
    "threefry_partitionable": True,
    "default_prng_impl": "threefry2x32",
    "enable_custom_prng": False,
    "legacy_prng_key": "allow",
    "softmax_custom_jvp": False,
    "allow_f16_reductions": True,
}


@pytest.mark.parametrize("name", sorted(STATES))
def test_state_defaults_context_and_update(name):
    state = getattr(jax, name)
    assert state.value == STATES[name]
    option = f"jax_{name}"
    assert getattr(config, option) == STATES[name]
    if isinstance(STATES[name], bool):
        with state(not STATES[name]):
            assert state.value is (not STATES[name])
            assert config.read(option) is (not STATES[name])
        assert state.value == STATES[name]
        config.update(option, not STATES[name])
        assert state.value is (not STATES[name])
    else:
        with pytest.raises(TypeError, match="requires an argument"):
            state()


def test_states_mirror_jax_namespace():
    real = pytest.importorskip("jax")
    for name, default in STATES.items():
        value = getattr(real, name).value
        assert getattr(value, "value", value) == default, name


def test_enum_options_are_checked():
    with pytest.raises(ValueError, match="new enum value must be in"):
        config.update("jax_default_prng_impl", "foo")
    config.update("jax_default_prng_impl", "rbg")  # every JAX implementation exists
    try:
        assert str(jax.random.key(0).dtype) == "key<rbg>"
    finally:
        config.update("jax_default_prng_impl", "threefry2x32")
    with jax.legacy_prng_key("warn"):
        assert jax.legacy_prng_key.value == "warn"
    with pytest.raises(ValueError, match="not a valid LegacyPrngKeyState"):
        config.update("jax_legacy_prng_key", "bad")


def test_no_tracing_raises_on_a_cache_miss_only():
    f = jax.jit(lambda x: x * 2)
    f(1.0)
    with jax.no_tracing(True):
        check_close(f(2.0), 4.0)
        with pytest.raises(RuntimeError, match="for `jit`, but 'no_tracing' is set"):
            f(jnp.ones(3))
        assert "add" in str(jax.make_jaxpr(lambda x: x + 1)(1.0))


def test_no_execution_refuses_running_but_not_tracing():
    f = jax.jit(lambda x: x * 2)
    x = jnp.ones(3)
    f(x)
    msg = "but the no_execution config option is set"
    with jax.no_execution(True):
        for thunk in (lambda: f(x), lambda: f(2.0), lambda: jnp.sin(x), lambda: x + 1):
            with pytest.raises(RuntimeError, match=msg):
                thunk()
        with pytest.raises(RuntimeError, match=r"execute function jit\(sin\)"):
            jnp.sin(x)
        assert "mul" in str(jax.make_jaxpr(f)(x))
        assert jax.eval_shape(f, x).shape == (3,)
    check_close(f(x), 2 * np.ones(3))
    check_close(jnp.sin(1.0), np.sin(1.0))


def _miss_log(caplog, calls):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="jaxlite.cache_misses"):
        with jax.explain_cache_misses(True):
            calls()
    return [r.getMessage() for r in caplog.records]


def test_explain_cache_misses_logs_the_reason(caplog):
    def f(x):
        return x * 2

    g = jax.jit(f)

    def calls():
        g(1.0)
        g(jnp.ones(3))
        g(jnp.ones(3))  # a hit: nothing logged
        g(1)
        with jax.enable_x64(True):
            g(1.0)

    first, shape, dtype, ctx = _miss_log(caplog, calls)
    assert first.startswith("TRACING CACHE MISS at ")
    assert "test_api_extras.py" in first
    assert "  never seen function:\n    f id=" in first
    assert "all previously seen cache keys differ" in shape
    assert "  * at x, now f32[3]{weak_type=False} and before f32[]{weak_type=True}" in (
        shape
    )
    assert "  * at x, now i32[] and before f32[]" in dtype
    assert "  * jax_enable_x64 differs: now True and before False" in ctx

    h = jax.jit(partial(lambda x, n: x * n), static_argnums=1)
    (_, static) = _miss_log(caplog, lambda: (h(1.0, 2), h(1.0, 3)))
    assert "different static arguments" in static and "now 3 and before 2" in static
    assert _miss_log(caplog, lambda: g(1.0)) == []  # warm: no miss


# ----------------------------------------------------------------------------------------
# dlpack


def test_from_dlpack_copies_and_canonicalizes_like_jax():
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    x = jax.dlpack.from_dlpack(a)
    a[0, 0] = 100.0
    assert x.dtype == np.float32 and not x.weak_type and float(x[0, 0]) == 0.0
    y = jax.dlpack.from_dlpack(np.arange(3.0))
    assert y.dtype == np.float32
    z = jax.dlpack.from_dlpack(np.arange(3))
    assert z.dtype == np.int32
    shared = jax.dlpack.from_dlpack(a, copy=False)
    a[0, 1] = 7.0
    assert float(shared[0, 1]) == 7.0
    real = pytest.importorskip("jax")
    for v in (np.arange(6.0, dtype=np.float32), np.arange(3.0), np.array(True)):
        want = real.dlpack.from_dlpack(v)
        got = jax.dlpack.from_dlpack(v)
        assert got.dtype == want.dtype
        check_close(got, np.asarray(want))


def test_from_dlpack_errors_and_supported_dtypes():
    with pytest.raises(TypeError, match="must have __dlpack__ and __dlpack_device__"):
        jax.dlpack.from_dlpack([1, 2])
    with pytest.raises(TypeError, match="must have __dlpack__"):
        jax.dlpack.from_dlpack(np.float32(1.0))
    names = [np.float32, np.float64, np.int8, np.uint64, np.bool_, np.complex64]
    names += [np.float16, np.object_, "bfloat16", np.uint16]
    got = [jax.dlpack.is_supported_dtype(d) for d in names]
    assert got == [True] * 7 + [False, True, True]
    real = pytest.importorskip("jax")
    assert got == [real.dlpack.is_supported_dtype(d) for d in names]


def test_numpy_reads_an_array_zero_copy_and_read_only():
    x = jnp.arange(4.0)
    view = np.from_dlpack(x)
    assert np.shares_memory(view, x._value)
    assert not view.flags.writeable
    np.testing.assert_array_equal(view, [0, 1, 2, 3])
    assert x.__dlpack_device__()[0] == 1  # kDLCPU
    check_close(jnp.from_dlpack(x), x)
    assert jax.dlpack.from_dlpack(x) is x


# ----------------------------------------------------------------------------------------
# Tokens


def test_token_jaxprs_print_as_in_jax():
    t = lax.create_token()
    texts = [
        str(jax.make_jaxpr(lambda: lax.create_token())()),
        str(jax.make_jaxpr(lambda x: lax.after_all(lax.create_token(), lax.create_token()))(1.0)),
        str(jax.make_jaxpr(lambda t: lax.after_all(t, t))(t)),
        str(jax.make_jaxpr(lambda t: t)(t)),
        str(jax.make_jaxpr(lambda x: lax.after_all())(1.0)),
    ]  # fmt: skip
    assert texts[0] == "{ lambda ; . let a:Tok = create_token  in (a,) }"
    assert texts[2] == "{ lambda ; a:Tok. let b:Tok = after_all a a in (b,) }"
    assert texts[3] == "{ lambda ; a:Tok. let  in (a,) }"
    real = pytest.importorskip("jax")
    rt = real.lax.create_token()
    rlax = real.lax
    want = [
        str(real.make_jaxpr(lambda: rlax.create_token())()),
        str(real.make_jaxpr(lambda x: rlax.after_all(rlax.create_token(), rlax.create_token()))(1.0)),
        str(real.make_jaxpr(lambda t: rlax.after_all(t, t))(rt)),
        str(real.make_jaxpr(lambda t: t)(rt)),
        str(real.make_jaxpr(lambda x: rlax.after_all())(1.0)),
    ]  # fmt: skip
    assert texts == want


def test_tokens_eager_jit_and_transformations():
    t = lax.create_token()
    assert repr(jax.typeof(t)) == "AbstractToken()"
    assert jax.typeof(lax.after_all(t, t)) == jax.typeof(t)
    assert jax.tree_util.tree_leaves(t) == [t]
    assert type(jax.jit(lambda t: t)(t)) is type(t)
    assert type(jax.jit(lambda t: lax.after_all(t))(t)) is type(t)
    tok, y = jax.jit(lambda x: (lax.create_token(x), x * 2))(1.0)
    assert type(tok) is type(t) and float(y) == 2.0
    tok, _ = jax.jit(lambda x: (lax.create_token(x), x * 2))(1.0)  # the warm path
    assert type(tok) is type(t)

    def f(x):
        lax.after_all(lax.create_token(x))
        return x * 2

    check_close(jax.grad(f)(1.0), 2.0)
    check_close(jax.vmap(f)(jnp.arange(3.0)), np.array([0.0, 2.0, 4.0], np.float32))
    assert jax.jvp(f, (1.0,), (1.0,))[1] == 2.0
    for bad in (1.0, jnp.ones(2)):
        with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
            lax.after_all(bad)
    with pytest.raises(TypeError, match="Arguments to after_all must be tokens"):
        jax.make_jaxpr(lambda x: lax.after_all(x))(1.0)


# ----------------------------------------------------------------------------------------
# Sharding diagrams

DIAGRAM_CASES = [
    ((4, 4), {}),
    ((8,), {}),
    ((2, 8), {}),
    ((8, 2), {}),
    ((3, 5), {"scale": 0.5}),
    ((2, 4), {"max_width": 40}),
    ((4, 4), {"min_width": 30}),
    ((5,), {"scale": 3}),
]


def _diagram(module, shape, kwargs):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        module.debug.visualize_array_sharding(module.numpy.zeros(shape), **kwargs)
    return buf.getvalue()


def test_visualize_array_sharding_one_device():
    assert _diagram(jax, (8,), {}) == "┌───────┐\n│ CPU 0 │\n└───────┘\n"
    square = _diagram(jax, (4, 4), {}).splitlines()
    assert len(square) == 11 and square[5] == "│" + " " * 9 + "CPU 0" + " " * 9 + "│"
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2"):
        jax.debug.visualize_array_sharding(jnp.ones((2, 2, 2)))


def test_visualize_array_sharding_matches_jax():
    real = pytest.importorskip("jax")
    pytest.importorskip("rich")
    for shape, kwargs in DIAGRAM_CASES:
        assert _diagram(jax, shape, kwargs) == _diagram(real, shape, kwargs), shape


def test_inspect_array_sharding_eager_and_traced():
    seen = []

    def f(x):
        jax.debug.inspect_array_sharding(x, callback=seen.append)
        return x * 2

    x = jnp.ones(3)
    f(x)
    g = jax.jit(f)
    g(x)
    g(x)  # cached: no callback, as in JAX
    assert len(seen) == 2
    assert all(s.device_set == {jax.devices()[0]} for s in seen)


# ----------------------------------------------------------------------------------------
# linear_call


def _div(r, x):
    return x / r


def _div_t(r, t):
    return t / r


def _transpose(f, x_example):
    def transposed(y):
        (x,) = jax.linear_transpose(f, x_example)(y)
        return x

    return transposed


def _custom_id(x):
    return linear_call(lambda _, x: x, lambda _, t: 7.0, (), x)


def test_linear_call_docstring_examples():
    def div_add(x, denom):
        return x + linear_call(_div, _div_t, denom, x)

    check_close(div_add(9.0, 3.0), 12.0)
    check_close(_transpose(partial(div_add, denom=3.0), 1.0)(18.0), 24.0)
    check_close(_custom_id(1.0), 1.0)
    t1 = _transpose(_custom_id, 1.0)
    check_close(t1(1.0), 7.0)
    check_close(_transpose(t1, 1.0)(1.0), 1.0)
    check_close(_transpose(_transpose(t1, 1.0), 1.0)(1.0), 7.0)
    check_close(jax.jit(div_add)(9.0, 3.0), 12.0)


def test_linear_call_autodiff():
    check_close(jax.grad(lambda x: linear_call(_div, _div_t, 3.0, x) * 2)(1.0), 2 / 3)
    y, y_dot = jax.jvp(lambda x: linear_call(_div, _div_t, 3.0, x), (1.0,), (1.0,))
    check_close([y, y_dot], [1 / 3, 1 / 3])

    # The custom transpose is what reverse mode uses, not the body's transpose.
    def scaled(x):
        return linear_call(_div, lambda r, c: c * 10, 3.0, x)

    check_close(jax.grad(scaled)(1.0), 10.0)
    check_close(jax.grad(jax.jit(scaled))(1.0), 10.0)
    with pytest.raises(NotImplementedError, match="residual_args"):
        jax.grad(lambda d: linear_call(_div, _div_t, d, 2.0))(3.0)
    with pytest.raises(TypeError, match="transpose output pytree structure"):
        jax.linear_transpose(
            lambda x: linear_call(_div, lambda r, c: (c, c), 2.0, x), 1.0
        )(1.0)


def test_linear_call_vmap_matches_loop():
    def f(x, d):
        return linear_call(_div, lambda r, c: c * 10 / r, d, x)

    xs, ds = jnp.arange(3.0), jnp.arange(1.0, 4.0)
    check_close(jax.vmap(f)(xs, ds), jnp.stack([f(x, d) for x, d in zip(xs, ds)]))
    check_close(jax.vmap(jax.grad(f))(xs, ds), 10 / ds)
    grads = jax.grad(lambda x: jax.vmap(lambda d: f(x, d))(ds).sum())(2.0)
    check_close(grads, jnp.sum(10 / ds))


def test_experimental_x64_context_managers_are_gone_as_in_jax():
    # JAX 0.10 removed jax.experimental.enable_x64/disable_x64; use jax.enable_x64.
    assert not hasattr(jax.experimental, "enable_x64")
    assert not hasattr(jax.experimental, "disable_x64")
    real = pytest.importorskip("jax")
    assert not hasattr(real.experimental, "enable_x64")
