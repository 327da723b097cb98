"""Tests for partition, argpartition, nanargmax and nanargmin: exact agreement with
real JAX (including the arrangement of the non-selected part, NaNs and signed zeros),
NumPy's partition property, jit and vmap."""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp

F = np.array([3.0, np.nan, 1.0, 2.0, 0.0, -0.0, 5.0, 1.0], np.float32)
U = np.random.default_rng(0).integers(0, 5, (4, 6, 5)).astype(np.uint8)
N = np.array(
    [[np.nan, 1.0, 3.0], [np.nan, np.nan, np.nan], [2, -1, np.nan]], np.float32
)


def assert_same(ours, ref):
    assert (ours.shape, ours.dtype, ours.weak_type) == (
        ref.shape,
        ref.dtype,
        ref.weak_type,
    )
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(ref))
    np.testing.assert_array_equal(
        np.signbit(np.asarray(ours)), np.signbit(np.asarray(ref))
    )


@pytest.mark.parametrize("name", ["partition", "argpartition"])
def test_partition_matches_jax(name):
    jax = pytest.importorskip("jax")
    for kth in (0, 3, -1, -3, 7):
        assert_same(getattr(jnp, name)(F, kth), getattr(jax.numpy, name)(F, kth))
    for axis in (0, 1, 2):
        ours = getattr(jnp, name)(U, 2, axis=axis)
        assert_same(ours, getattr(jax.numpy, name)(U, 2, axis=axis))


def test_partition_property_matches_numpy():
    x = np.random.default_rng(1).standard_normal((5, 7)).astype(np.float32)
    for kth in range(7):
        out = np.asarray(jnp.partition(x, kth, axis=1))
        np.testing.assert_array_equal(out[:, kth], np.sort(x, axis=1)[:, kth])
        assert (out[:, :kth] <= out[:, kth : kth + 1]).all()
        assert (out[:, kth + 1 :] >= out[:, kth : kth + 1]).all()
        idx = np.asarray(jnp.argpartition(x, kth, axis=1))
        picked = np.take_along_axis(x, idx, 1)
        np.testing.assert_array_equal(np.sort(picked, 1), np.sort(x, 1))
        np.testing.assert_array_equal(picked[:, : kth + 1], out[:, : kth + 1])
        assert (picked[:, kth + 1 :] >= picked[:, kth : kth + 1]).all()


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
def test_nanargminmax_matches_jax(name):
    jax = pytest.importorskip("jax")
    for kw in (
        {},
        dict(axis=1),
        dict(axis=0, keepdims=True),
        dict(axis=1, keepdims=True),
    ):
        assert_same(getattr(jnp, name)(N, **kw), getattr(jax.numpy, name)(N, **kw))
    assert_same(
        getattr(jnp, name)(np.array([1, 5, 2])),
        getattr(jax.numpy, name)(np.array([1, 5, 2])),
    )


def test_jit_and_vmap():
    x = np.random.default_rng(2).standard_normal((3, 6)).astype(np.float32)
    for f in (
        lambda a: jnp.partition(a, 2),
        lambda a: jnp.argpartition(a, 4),
        lambda a: jnp.nanargmax(a),
        lambda a: jnp.nanargmin(jnp.where(a > 0, jnp.nan, a)),
    ):
        np.testing.assert_array_equal(jaxlite.jit(f)(x[0]), f(x[0]))
        np.testing.assert_array_equal(jaxlite.vmap(f)(x), np.stack([f(r) for r in x]))


def test_errors():
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.partition(F, 8)
    with pytest.raises(ValueError, match="empty sequence"):
        jnp.nanargmax(np.zeros(0))
