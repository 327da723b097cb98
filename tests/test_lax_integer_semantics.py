"""Integer arithmetic where NumPy and XLA differ: division and remainder by zero, the
INT_MIN / -1 overflow, and negative integer powers. jaxlite follows XLA (JAX's
results), eagerly and under jit."""

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

SIGNED = [np.int8, np.int16, np.int32]
UNSIGNED = [np.uint8, np.uint16, np.uint32]


@pytest.mark.parametrize("dtype", SIGNED + UNSIGNED)
@pytest.mark.parametrize("jit", [False, True])
def test_division_and_remainder_by_zero(dtype, jit):
    values = [5, -5, 0, 7] if dtype in SIGNED else [5, 3, 0, 7]
    x = jnp.array(values, dtype)
    zero = jnp.zeros(4, dtype)
    div = jax.jit(lax.div) if jit else lax.div
    rem = jax.jit(lax.rem) if jit else lax.rem
    # x / 0 has all bits set (-1, or the maximum of an unsigned type); x % 0 is x.
    np.testing.assert_array_equal(div(x, zero), np.full(4, -1).astype(dtype))
    np.testing.assert_array_equal(rem(x, zero), np.array(values, dtype))
    assert div(x, zero).dtype == dtype


@pytest.mark.parametrize("jit", [False, True])
def test_truncating_division_and_min_over_minus_one(jit):
    div = jax.jit(lax.div) if jit else lax.div
    rem = jax.jit(lax.rem) if jit else lax.rem
    x = jnp.array([7, -7, 7, -7], jnp.int32)
    y = jnp.array([2, 2, -2, -2], jnp.int32)
    np.testing.assert_array_equal(div(x, y), [3, -3, -3, 3])
    np.testing.assert_array_equal(rem(x, y), [1, -1, 1, -1])
    big = jnp.int32(np.iinfo(np.int32).min)
    assert int(div(big, jnp.int32(-1))) == np.iinfo(np.int32).min
    assert int(rem(big, jnp.int32(-1))) == 0


def test_integer_pow_negative_exponent_is_a_type_error():
    with pytest.raises(
        TypeError,
        match=r"Integers cannot be raised to negative powers, got integer_pow\(~int32\[\], -1\)",
    ):
        jnp.power(2, -1)
    with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
        jax.jit(lambda x: lax.integer_pow(x, -2))(jnp.int32(3))


def test_integer_pow_jvp_is_written_as_jax_writes_it():
    text = str(jax.make_jaxpr(jax.grad(lambda x: x**2))(1.0))
    assert "b:f32[] = mul 2.0:f32[] a" in text
    text = str(jax.make_jaxpr(jax.grad(lambda x: x**3))(1.0))
    assert "b:f32[] = integer_pow[y=2] a\n    c:f32[] = mul 3.0:f32[] b" in text


def test_against_jax():
    real = pytest.importorskip("jax")
    for dtype in ("int8", "int32", "uint8", "uint32"):
        x = np.array([5, 3, 0, 7], dtype)
        y = np.array([0, 2, 0, 3], dtype)
        for name in ("div", "rem"):
            ours = getattr(lax, name)(x, y)
            theirs = getattr(real.lax, name)(x, y)
            np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
