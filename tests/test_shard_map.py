"""jax.shard_map on jaxlite's one device: the whole arrays, with mesh axes bound."""

import warnings

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax

X = np.arange(6.0, dtype=np.float32).reshape(2, 3)


def test_psum_axis_index_all_gather():
    mesh = jax.make_mesh((1,), ("x",))

    def f(x):
        return lax.psum(x, "x"), lax.axis_index("x"), lax.all_gather(x, "x")

    # axis_index varies over "x": replicated out_specs need check_vma=False, as in
    # JAX (tests/test_shard_map_vma.py checks the error).
    g = jax.shard_map(f, mesh=mesh, in_specs=jax.P("x"), out_specs=jax.P(),
                      check_vma=False)  # fmt: skip
    s, i, gathered = g(X)
    np.testing.assert_array_equal(np.asarray(s), X)
    assert int(i) == 0 and gathered.shape == (1, 2, 3)
    for a, b in zip(jax.jit(g)(X), (s, i, gathered)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    grad = jax.grad(lambda x: g(x)[0].sum())(X)
    np.testing.assert_array_equal(np.asarray(grad), np.ones_like(X))


def test_two_axes_and_pcast_and_vmap():
    mesh = jax.make_mesh((1, 1), ("a", "b"))
    f = jax.shard_map(
        lambda x: lax.psum(lax.pcast(x, "a", to="varying"), ("a", "b"))
        * lax.axis_size("b"),
        mesh=mesh, in_specs=jax.P("a"), out_specs=jax.P(),
    )  # fmt: skip
    np.testing.assert_array_equal(np.asarray(f(X)), X)
    batched = jax.vmap(f)(np.stack([X, X + 1]))
    np.testing.assert_array_equal(np.asarray(batched), np.stack([X, X + 1]))


def test_spec_errors_and_experimental_alias():
    mesh = jax.make_mesh((1,), ("x",))
    with pytest.raises(ValueError, match="not in the mesh"):
        jax.shard_map(lambda x: x, mesh=mesh, in_specs=jax.P("y"), out_specs=jax.P())
    from jaxlite.experimental.shard_map import shard_map

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = shard_map(lambda x: lax.psum(x, "x"), mesh=mesh, in_specs=jax.P(),
                      out_specs=jax.P(), check_rep=False)  # fmt: skip
    assert any(issubclass(x.category, DeprecationWarning) for x in w)
    np.testing.assert_array_equal(np.asarray(g(X)), X)
    sm = jax.smap(lambda x: lax.psum(x, "i"), out_axes=0, axis_name="i")
    np.testing.assert_array_equal(np.asarray(sm(X)), X)
