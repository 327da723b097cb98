"""Array methods and device-API odds and ends, compared with JAX 0.10.2's behaviour."""

import copy
import pickle

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.core import ShapedArray


def test_copy_method_is_a_copy_primitive_under_tracing():
    x = jnp.arange(4.0)
    assert np.array_equal(x.copy(), np.arange(4.0))
    text = str(jax.make_jaxpr(lambda a: a.copy())(x))
    assert "b:f32[4] = copy a" in text
    assert float(jax.grad(lambda a: a.copy().sum())(2.0)) == 1.0


def test_contains_copy_deepcopy_pickle_tobytes():
    x = jnp.arange(4.0)
    assert 2.0 in x and 7 not in x
    assert copy.copy(x) is x and copy.deepcopy(x) is x  # immutable
    assert np.array_equal(pickle.loads(pickle.dumps(x)), x)
    assert x.tobytes() == np.arange(4.0, dtype=np.float32).tobytes()
    assert x.is_ready() and x.platform() == "cpu" and x.is_fully_replicated
    assert x.addressable_data(0) is x


def test_view_reinterprets_bits_like_numpy():
    if not hasattr(jax.lax, "bitcast_convert_type"):
        pytest.skip("lax.bitcast_convert_type not available")
    x = jnp.array([1.0, -2.0, 0.5, 3.0], jnp.float32)
    ref = np.asarray(x)
    for dtype in (np.int32, np.uint32, np.uint8, np.float16, np.int16):
        got = x.view(dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(np.asarray(got), ref.view(dtype))
    pairs = jnp.arange(4, dtype=jnp.int16)
    np.testing.assert_array_equal(
        pairs.view(jnp.int32), np.arange(4, dtype=np.int16).view(np.int32)
    )
    jitted = jax.jit(lambda a: a.view(jnp.int32))(x)
    np.testing.assert_array_equal(jitted, ref.view(np.int32))


def test_shaped_array_str_is_jaxs_short_form():
    assert str(ShapedArray((2,), np.float32)) == "float32[2]"
    assert str(ShapedArray((), np.int32, weak_type=True)) == "~int32[]"
    assert str(jnp.ones(2).aval) == "float32[2]"
