"""Compiled float32 `erf` (jaxlite.lax.xla_float32_fast) against real JAX's `lax.erf`.

Under `jit`, float32 `erf` runs XLA's rational function in a dozen NumPy calls rather
than the eager, step-by-step exact kernel, so its results are within a few ulp of
XLA's (at most 7 measured: relative 4.8e-7), not bit for bit. The edges are exact:
signed zeros, +-inf, NaN and the +-1 beyond the clamp. XLA flushes subnormal inputs to
zero; the NumPy kernel does not, and gives a value of the same sign below 2**-125.
JAX's results depend on the array size below ~64 elements, so arrays here hold
multiples of 1024 values.
"""

import numpy as np
import pytest

import jaxlite
from jaxlite import lax

jax = pytest.importorskip("jax")

RTOL = 1e-6  # measured worst case 4.8e-7 (7 ulp near 0.5)
EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-40, -1e-40, 1e-45, -1e-45]
EDGES += [1.1754944e-38, -1.1754944e-38, 1e-30, -1e-30, 1e-20, 4e-4, -3.9e-4, 0.5]
EDGES += [-0.5, 1.0, -1.0, 2.0, 3.8, -3.8, 3.83, 3.8325069, -3.8325069, 3.9, -4.0]
EDGES += [9.0, 20.0, -20.0, 1e10, 1e30, -1e30, 3e38, -3e38]


def _inputs(seed=0, size=16 * 1024):
    rng = np.random.default_rng(seed)
    part = (size - len(EDGES)) // 5
    parts = [
        np.array(EDGES),
        rng.standard_normal(part),
        rng.uniform(-5, 5, part),
        rng.uniform(-1e-3, 1e-3, part),
        # magnitudes from the smallest normal float32 to the largest
        np.exp(rng.uniform(-87, 88, part)) * rng.choice([-1, 1], part),
    ]
    x = np.concatenate(parts)
    x = np.concatenate([x, rng.uniform(-3, 3, size - x.size)])
    return x.astype(np.float32)


def _expected(x):
    return np.asarray(jax.jit(jax.lax.erf)(x))


def _assert_like_jax(actual, expected, x):
    actual, expected, x = (np.asarray(v).reshape(-1) for v in (actual, expected, x))
    assert actual.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(x))
    subnormal = (x != 0) & (np.abs(x) < np.finfo(np.float32).tiny)
    normal = ~subnormal & ~np.isnan(x)
    np.testing.assert_allclose(actual[normal], expected[normal], rtol=RTOL, atol=0)
    # signed zeros, +-1 for large and infinite inputs, and no |erf| above 1
    np.testing.assert_array_equal(np.signbit(actual[normal]), np.signbit(x[normal]))
    big = normal & (np.abs(x) >= 3.9)
    np.testing.assert_array_equal(actual[big], np.sign(x[big]))
    assert np.all(np.abs(actual[normal]) <= 1)
    # XLA flushes subnormal inputs to zero; the kernel keeps a tiny value of their sign
    assert np.all(np.abs(actual[subnormal]) < 2.0**-125)
    np.testing.assert_array_equal(
        np.signbit(actual[subnormal]), np.signbit(x[subnormal])
    )


@pytest.mark.parametrize("size", [1024, 16 * 1024])
def test_jit_erf_float32_is_close_to_jax(size):
    x = _inputs(size=size)
    _assert_like_jax(jaxlite.jit(lax.erf)(x), _expected(x), x)


def test_jit_erf_float32_in_pieces_and_nd_is_close_to_jax():
    # 40 * 1024 values: more than one piece of the kernel, and a 2-d operand
    x = _inputs(seed=1, size=40 * 1024)
    expected = _expected(x)
    _assert_like_jax(jaxlite.jit(lax.erf)(x.reshape(40, 1024)), expected, x)
    _assert_like_jax(jaxlite.jit(lax.erf)(x), expected, x)


def test_jit_erf_edge_values_are_exact():
    x = np.zeros(1024, np.float32)
    x[: len(EDGES)] = EDGES
    out = np.asarray(jaxlite.jit(lax.erf)(x))
    expected = {0.0: 0.0, np.inf: 1.0, -np.inf: -1.0, 4.0: 1.0, 1e30: 1.0, -3e38: -1.0}
    for value, result in expected.items():
        (where,) = np.nonzero(x == np.float32(value))
        np.testing.assert_array_equal(out[where], np.float32(result))
    assert np.signbit(out[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()
    assert np.signbit(out[1]) and out[1] == 0  # erf(-0.0) is -0.0
    assert np.isnan(out[4]) and np.isnan(out[5])


def test_jit_erf_leaves_its_operand_alone():
    # the kernel works in place on its own temporaries, never on its operand, which
    # later equations (here the multiply) and the caller still read
    x = _inputs(seed=2, size=1024)
    before = x.copy()
    erf_x = np.asarray(jaxlite.jit(lax.erf)(x))
    out = np.asarray(jaxlite.jit(lambda v: lax.erf(v) * v)(x))
    np.testing.assert_array_equal(x.view(np.int32), before.view(np.int32))
    np.testing.assert_array_equal(out, erf_x * x)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_jit_erf_16_bit_floats_are_close_to_jax(dtype):
    x = _inputs(seed=3, size=4096)
    x = x[np.abs(x) < 60000].astype(dtype)  # float16 overflows beyond
    x = x[: (x.size // 1024) * 1024]
    actual = np.asarray(jaxlite.jit(lax.erf)(x))
    expected = np.asarray(jax.jit(jax.lax.erf)(x))
    assert actual.dtype == expected.dtype == x.dtype
    actual, expected = actual.astype(np.float32), expected.astype(np.float32)
    x32 = x.astype(np.float32)
    # XLA flushes float32-subnormal inputs (bfloat16 has them) to zero, as above
    normal = ~np.isnan(expected) & ~((x32 != 0) & (np.abs(x32) < 2.0**-126))
    # computed in float32 and rounded: at most one rounding step of the 16-bit type
    eps = float(jaxlite.numpy.finfo(dtype).eps)
    np.testing.assert_allclose(actual[normal], expected[normal], rtol=eps, atol=0)
    np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))


def test_jit_erf_float64_is_close_to_jax():
    with jaxlite.enable_x64(True), jax.enable_x64(True):
        x = _inputs(seed=4, size=2048).astype(np.float64)
        actual = np.asarray(jaxlite.jit(lax.erf)(x))
        expected = np.asarray(jax.jit(jax.lax.erf)(x))
    assert actual.dtype == np.float64
    np.testing.assert_allclose(actual, expected, rtol=1e-14, atol=0)
