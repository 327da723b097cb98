"""Float32 transcendental functions equal XLA:CPU's (real JAX's) bit for bit.

jaxlite computes exp, tanh, sin, ... of arrays up to `jaxlite_xla_exact_math_limit`
elements with XLA's own algorithms (jaxlite.lax.xla_float32), eagerly, under jit and
under vmap, and larger arrays with NumPy's ufuncs, within a few ulp. JAX's own results
depend on the array size for some sizes below ~64 elements (XLA picks other code
there), so the differential tests use multiples of 1024 elements, and scalars.
"""

import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.config import config
from jaxlite.lax import xla_float32

jax = pytest.importorskip("jax")

N = 48 * 1024
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1e-45, -1.17e-38]
SPECIAL += [1.1754944e-38, 3e38, -3e38, 1.0, -1.0, 0.5, -0.5, 88.72, -87.3, 89.0]
SPECIAL += [-104.0, 20.0, -20.0, 7.9988, 9.0, 4e-4, -3.9e-4, 0.41421357, 2.0**64]


def _inputs(seed, domain):
    rng = np.random.default_rng(seed)
    parts = [
        np.array(SPECIAL),
        rng.uniform(-10, 10, 16384),
        rng.uniform(-1, 1, 12288),
        rng.uniform(-100, 100, 8192),
        rng.uniform(-1e-3, 1e-3, 2048),
        np.exp(rng.uniform(-100, 88, 4096)) * rng.choice([-1, 1], 4096),
    ]
    x = np.concatenate(parts).astype(np.float32)
    x = np.concatenate([x, rng.uniform(-3, 3, N - x.size).astype(np.float32)])
    if domain == "unit":  # asin, acos, atanh, erf_inv: mostly inside [-1, 1]
        x = np.concatenate([x[: len(SPECIAL)], x[len(SPECIAL) :] / np.float32(9.5)])
    elif domain == "positive":  # log, acosh: mostly inside their domain
        x = np.concatenate([x[: len(SPECIAL)], np.abs(x[len(SPECIAL) :]) + 1])
    return x.astype(np.float32)


def _jax_special(name):
    return getattr(jax.scipy.special, name)


# name -> (jaxlite function, JAX function, input domain)
UNARY = {
    "exp": (jnp.exp, jax.numpy.exp, None),
    "log": (jnp.log, jax.numpy.log, "positive"),
    "tanh": (jnp.tanh, jax.numpy.tanh, None),
    "sin": (jnp.sin, jax.numpy.sin, None),
    "cos": (jnp.cos, jax.numpy.cos, None),
    "logistic": (jaxlite.nn.sigmoid, jax.nn.sigmoid, None),
    "log1p": (jnp.log1p, jax.numpy.log1p, None),
    "expm1": (jnp.expm1, jax.numpy.expm1, None),
    "erf": (jaxlite.scipy.special.erf, _jax_special("erf"), None),
    "tan": (jnp.tan, jax.numpy.tan, None),
    "atan": (jnp.arctan, jax.numpy.arctan, None),
    "sinh": (jnp.sinh, jax.numpy.sinh, None),
    "cosh": (jnp.cosh, jax.numpy.cosh, None),
    "exp2": (jnp.exp2, jax.numpy.exp2, None),
    "erf_inv": (jaxlite.scipy.special.erfinv, _jax_special("erfinv"), "unit"),
    "asin": (jnp.arcsin, jax.numpy.arcsin, "unit"),
    "acos": (jnp.arccos, jax.numpy.arccos, "unit"),
    "asinh": (jnp.arcsinh, jax.numpy.arcsinh, None),
    "acosh": (jnp.arccosh, jax.numpy.arccosh, "positive"),
    "atanh": (jnp.arctanh, jax.numpy.arctanh, "unit"),
    "cbrt": (jnp.cbrt, jax.numpy.cbrt, None),
}


def assert_bits_equal(actual, expected, inputs=None):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    same = actual.view(np.uint32) == expected.view(np.uint32)
    same |= np.isnan(actual) & np.isnan(expected)
    if not same.all():
        bad = np.flatnonzero(~same)[:5]
        where = [] if inputs is None else np.asarray(inputs).ravel()[bad].tolist()
        raise AssertionError(
            f"{np.mean(~same):.4%} differ, e.g. at {where}: "
            f"{actual.ravel()[bad].tolist()} != {expected.ravel()[bad].tolist()}"
        )


@pytest.fixture
def exact_everywhere():
    previous = config.read("jaxlite_xla_exact_math_limit")
    config.update("jaxlite_xla_exact_math_limit", N)
    yield
    config.update("jaxlite_xla_exact_math_limit", previous)


@pytest.mark.parametrize("name", list(UNARY))
def test_bits_equal_jax_eager_and_vmap(name, exact_everywhere):
    fun, jax_fun, domain = UNARY[name]
    x = _inputs(len(name), domain)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.asarray(jax_fun(x))
    assert_bits_equal(fun(x), expected, x)
    # Compiled code keeps NumPy's ufuncs (speed): close to JAX.
    assert_close_to_jax(jaxlite.jit(fun)(x[:4096]), expected[:4096], x[:4096])
    batched = jaxlite.vmap(fun)(x[:4096].reshape(4, 1024))
    assert_bits_equal(batched, expected[:4096].reshape(4, 1024))


@pytest.mark.parametrize("name", list(UNARY))
def test_scalars_equal_jax(name):
    # 0-d values take a pure-Python path (NumPy's per-call cost would dominate).
    fun, jax_fun, domain = UNARY[name]
    x = _inputs(len(name) + 1, domain)
    sample = np.concatenate([x[: len(SPECIAL)], x[len(SPECIAL) :: 1499]])
    if name == "acosh":
        # JAX's scalar acosh differs from its array acosh for ~0.1% of inputs (XLA
        # emits other code for one element); jaxlite follows the arrays.
        expected = [np.asarray(jax_fun(sample))[i] for i in range(sample.size)]
    else:
        expected = [np.asarray(jax_fun(v)) for v in sample]
    actual = [fun(v) for v in sample]
    assert_bits_equal(np.array(actual), np.array(expected), sample)
    assert_close_to_jax(jaxlite.jit(fun)(sample[7]), expected[7], sample[7])


def test_printed_values_match_jax():
    assert str(jnp.exp(1.0)) == str(jax.numpy.exp(1.0)) == "2.7182817"
    assert str(jnp.sin(1.0)) == str(jax.numpy.sin(1.0)) == "0.84147096"
    assert repr(jnp.tanh(jnp.arange(3.0) / 4)) == (
        "Array([0.        , 0.24491866, 0.46211717], dtype=float32)"
    )


@pytest.mark.parametrize("name", ["atan2", "pow"])
def test_binary_functions_equal_jax(name, exact_everywhere):
    rng = np.random.default_rng(3)
    x = rng.uniform(-10, 10, 16384).astype(np.float32)
    y = rng.uniform(-10, 10, 16384).astype(np.float32)
    x[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0, 0.5]
    y[:8] = [0.0, 1.0, -1.0, np.inf, 2.0, np.nan, -0.0, 3.0]
    if name == "pow":
        x, y = np.abs(x), y / np.float32(2)
        fun, jax_fun = jnp.power, jax.numpy.power
    else:
        fun, jax_fun = jnp.arctan2, jax.numpy.arctan2
    expected = np.asarray(jax_fun(x, y))
    assert_bits_equal(fun(x, y), expected)
    assert_close_to_jax(jaxlite.jit(fun)(x, y), expected, x)
    assert_bits_equal(fun(x[9], y[9]), np.asarray(jax_fun(x[9], y[9])))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_16_bit_floats_are_computed_in_float32(dtype, exact_everywhere):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # float16 overflows to inf
        x = _inputs(1, None)[:4096].astype(dtype)
    # logistic, expm1, exp2 and the inverse hyperbolic functions keep NumPy's for
    # 16-bit floats: XLA expands them in the 16-bit type around a float32 core.
    for name in ("exp", "log1p", "tanh", "sin", "sinh", "erf", "erf_inv", "cbrt"):
        fun, jax_fun, _ = UNARY[name]
        expected = np.asarray(jax_fun(x))
        actual = np.asarray(fun(x))
        assert actual.dtype == expected.dtype
        # float32 holds every 16-bit float exactly.
        assert_bits_equal(actual.astype(np.float32), expected.astype(np.float32), x)


def assert_close_to_jax(actual, expected, inputs):
    """NumPy's float32 functions against XLA's: a few ulp apart, except where XLA
    flushes a subnormal input to zero."""
    actual, expected, inputs = (
        np.atleast_1d(np.asarray(v)) for v in (actual, expected, inputs)
    )
    normal = (inputs == 0) | ~(np.abs(inputs) < np.finfo(np.float32).tiny)
    np.testing.assert_allclose(actual[normal], expected[normal], rtol=1e-5, atol=1e-30)


def _ulps(a, b):
    a, b = (np.asarray(v, np.float32).view(np.int32).astype(np.int64) for v in (a, b))
    a = np.where(a < 0, -(a & 0x7FFFFFFF), a)
    b = np.where(b < 0, -(b & 0x7FFFFFFF), b)
    return np.abs(a - b)


@pytest.mark.parametrize("name", list(UNARY))
def test_arrays_above_the_limit_use_numpy_within_a_few_ulp(name):
    fun, jax_fun, domain = UNARY[name]
    limit = config.read("jaxlite_xla_exact_math_limit")
    x = np.random.default_rng(5).uniform(-10, 10, 2 * limit + 1024)
    x = x.astype(np.float32)
    if domain == "positive" or name == "log1p":
        x = np.abs(x) + 1
    elif domain == "unit":
        x = x / np.float32(10.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = np.asarray(jax_fun(x))
    assert np.max(_ulps(fun(x), expected)) <= 10
    assert np.max(_ulps(jaxlite.jit(fun)(x), expected)) <= 10


@pytest.mark.numpy_backend
def test_compiled_code_keeps_numpy_ufuncs():
    # Eager small arrays are exact; jit (any size, loop bodies included) runs NumPy's
    # ufunc, which may write into a dying buffer.
    f = jaxlite.jit(lambda x: jnp.tanh(x * 2.0) + 1.0)
    source = f.lower(jnp.ones(8)).as_text()
    assert "np.tanh(b, out=b)" in source and "xla" not in source
    x = jnp.linspace(-2, 2, 8, dtype=np.float32)
    assert str(jnp.tanh(x * 2.0) + 1.0) == str(
        jax.numpy.tanh(np.asarray(x) * 2.0) + 1.0
    )
    np.testing.assert_allclose(f(x), jnp.tanh(x * 2.0) + 1.0, rtol=0, atol=3e-7)


def test_limit_option_validates_and_switches():
    previous = config.read("jaxlite_xla_exact_math_limit")
    with pytest.raises(ValueError, match="non-negative integer"):
        config.update("jaxlite_xla_exact_math_limit", -1)
    x = jnp.asarray(np.float32([0.3, 1.7]))
    try:
        config.update("jaxlite_xla_exact_math_limit", 0)
        assert_bits_equal(jnp.exp(x), np.exp(np.asarray(x)))
        assert_bits_equal(jaxlite.jit(jnp.exp)(x), np.exp(np.asarray(x)))
    finally:
        config.update("jaxlite_xla_exact_math_limit", previous)
    assert_bits_equal(jnp.exp(x), np.asarray(jax.numpy.exp(np.asarray(x))))


def test_gradients_and_other_dtypes_are_unchanged():
    assert float(jaxlite.grad(jnp.tanh)(0.5)) == pytest.approx(1 - np.tanh(0.5) ** 2)
    with jaxlite.enable_x64():
        x = np.array([0.5, 2.0])
        np.testing.assert_array_equal(jnp.exp(x), np.exp(x))
    z = np.complex64(0.5 + 1j)
    assert complex(lax.exp(z)) == pytest.approx(complex(np.exp(z)), rel=1e-6)


def test_fma_rounds_once():
    a = np.float32(4097)  # 4097**2 = 2**24 + 2**13 + 1: halfway between two float32s
    tiny = np.float32(2.0**-40)
    assert xla_float32.fma_values(a, a, tiny) == np.float32(16785410)
    assert xla_float32.fma_values(a, a, -tiny) == np.float32(16785408)
