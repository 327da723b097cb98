"""`jaxlite.flatten_util.ravel_pytree`: values, dtypes and weak types against JAX,
the round trip, errors, and unravel under grad / jit / vmap / jvp."""

import numpy as np
import pytest

import jaxlite
import jaxlite.flatten_util
import jaxlite.numpy as jnp
from jaxlite.flatten_util import ravel_pytree
from testing import check_close, check_grads


def _trees(np_like):
    """The same pytrees built from `np_like` (jaxlite.numpy or jax.numpy)."""
    return {
        "empty_dict": {},
        "empty_list": [],
        "none": None,
        "float_and_int_scalars": [1.0, 2],
        "int_scalars": [1, 2],
        "python_float": 3.0,
        "same_dtype": {"a": np.arange(3.0, dtype=np.float32), "b": np.ones((2, 2))},
        "int32_float16": {
            "a": np_like.ones(2, np_like.int32),
            "b": np_like.zeros((2, 2), np_like.float16),
        },
        "int64_float64_numpy": {
            "a": np.ones(2, np.int64),
            "b": np.zeros((2,), np.float64),
        },
        "bfloat16_float16": [
            np_like.ones(2, np_like.bfloat16),
            np_like.ones(1, np_like.float16),
        ],
        "bool_uint8": [np_like.ones(2, bool), np_like.ones(1, np_like.uint8)],
        "complex_float": [
            np_like.ones(2, np_like.complex64),
            np_like.ones(1, np_like.float32),
        ],
        "bool_only": [np_like.ones(2, bool)],
        "zero_size_leaf": [
            np_like.ones(2),
            np_like.ones((0, 3), np_like.int32),
            np_like.float32(3),
        ],
        "nested": ((np.float32(1.5), [np.arange(4, dtype=np.int32)]), {"k": None}),
        "weak_and_strong_float32": [1.0, np_like.ones(2)],
        "int8_and_python_int": [np_like.int8(1), 2],
        "uint32_int32": [
            np_like.ones(2, np_like.uint32),
            np_like.ones(1, np_like.int32),
        ],
        "float16_and_python_float": [np_like.ones(2, np_like.float16), 1.5],
        "bool_and_python_int": [True, 3],
        "numpy_scalars": [np.int16(2), np.float16(1), np.float64(0.5)],
    }


def _describe(tree):
    return [
        (np.shape(x), np.dtype(x.dtype).name, bool(x.weak_type))
        for x in jaxlite.tree_util.tree_leaves(tree)
    ]


def _describe_jax(jax, tree):
    return [
        (np.shape(x), np.dtype(x.dtype).name, bool(x.weak_type))
        for x in jax.tree_util.tree_leaves(tree)
    ]


# Unravelling the complex vector to a float32 leaf warns about the discarded
# imaginary part, in JAX too.
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
@pytest.mark.parametrize("name", sorted(_trees(jnp)))
def test_flat_vector_and_unravel_match_jax(name):
    jax = pytest.importorskip("jax")
    jfu = pytest.importorskip("jax.flatten_util")
    import jax.numpy as jjnp

    ours_tree = _trees(jnp)[name]
    theirs_tree = _trees(jjnp)[name]
    flat, unravel = ravel_pytree(ours_tree)
    jflat, junravel = jfu.ravel_pytree(theirs_tree)
    assert flat.shape == jflat.shape and flat.ndim == 1
    assert flat.dtype == jflat.dtype
    assert flat.weak_type == jflat.weak_type
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(jflat))
    back, jback = unravel(flat), junravel(jflat)
    assert jaxlite.tree_util.tree_structure(back) == jaxlite.tree_util.tree_structure(
        ours_tree
    )
    assert _describe(back) == _describe_jax(jax, jback)
    for x, y in zip(
        jaxlite.tree_util.tree_leaves(back), jax.tree_util.tree_leaves(jback)
    ):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_round_trip_restores_values_and_dtypes():
    tree = {
        "w": np.arange(6, dtype=np.float32).reshape(2, 3),
        "i": np.array([7, -3], np.int32),
        "h": np.array([0.5], np.float16),
        "s": np.float32(2.5),
    }
    flat, unravel = ravel_pytree(tree)
    assert flat.dtype == np.float32 and flat.shape == (10,)
    back = unravel(flat)
    for k, v in tree.items():
        assert back[k].dtype == v.dtype and back[k].shape == np.shape(v)
        np.testing.assert_array_equal(np.asarray(back[k]), v)


def test_empty_pytree():
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == np.float32 and not flat.weak_type
    assert unravel(flat) == {}
    assert unravel(jnp.zeros(0)) == {}
    flat, unravel = ravel_pytree([None, ()])
    assert unravel(flat) == [None, ()]


def test_x64_dtypes_match_jax():
    jax = pytest.importorskip("jax")
    jfu = pytest.importorskip("jax.flatten_util")

    tree = [np.ones(2), np.ones(2, np.int64), 1.0, np.ones(1, np.float32)]
    with jaxlite.enable_x64(), jax.enable_x64(True):
        flat, unravel = ravel_pytree(tree)
        jflat, junravel = jfu.ravel_pytree(tree)
        assert flat.dtype == jflat.dtype == np.float64
        assert _describe(unravel(flat)) == _describe_jax(jax, junravel(jflat))


def test_unravel_errors_match_jax():
    # Wrong length: ValueError naming the sizes (as lax.split's message in JAX).
    _, unravel = ravel_pytree([jnp.ones(2), jnp.ones(1)])
    with pytest.raises(ValueError, match="Sum of sizes 3 must be equal to dimension 0"):
        unravel(jnp.ones(4))
    # Mixed dtypes: unravel checks the dtype of its argument.
    _, unravel = ravel_pytree([jnp.ones(2), jnp.ones(1, jnp.int32)])
    with pytest.raises(TypeError, match="unravel function given array of dtype"):
        unravel(jnp.ones(3, jnp.float16))
    with pytest.raises(TypeError, match="but expected dtype float32"):
        unravel(jnp.ones(3, jnp.int32))
    # A single dtype: unravel splits whatever it is given, as in JAX.
    _, unravel = ravel_pytree([jnp.ones(2), jnp.ones(1)])
    out = unravel(jnp.ones(3, jnp.float16))
    assert [x.dtype for x in out] == [np.float16, np.float16]
    # The leading axis is the one split (a (4, 1) array unravels to a (2, 2) leaf).
    _, unravel = ravel_pytree(jnp.ones((2, 2)))
    assert unravel(jnp.arange(4.0).reshape(4, 1)).shape == (2, 2)


def test_unravel_is_hashable_and_equal_for_equal_structures():
    _, u1 = ravel_pytree({"a": jnp.ones(2), "b": jnp.ones(3, jnp.int32)})
    _, u2 = ravel_pytree({"a": jnp.zeros(2), "b": jnp.zeros(3, jnp.int32)})
    _, u3 = ravel_pytree({"a": jnp.zeros(3), "b": jnp.zeros(2, jnp.int32)})
    assert u1 == u2 and hash(u1) == hash(u2)
    assert u1 != u3
    # Usable as a static argument: the second call hits the same cache entry.
    f = jaxlite.jit(lambda u, v: u(v)["a"].sum(), static_argnums=0)
    assert float(f(u1, jnp.arange(5.0))) == 1.0
    assert float(f(u2, jnp.arange(5.0))) == 1.0


def _mixed_tree():
    return {
        "w": jnp.array([0.5, -1.0, 2.0]),
        "i": jnp.array([3, 4], jnp.int32),
        "h": jnp.array([1.5, 0.25], jnp.float16),
    }


def _loss(params):
    return (
        jnp.sum(jnp.sin(params["w"]) * params["w"])
        + jnp.sum(params["h"].astype(jnp.float32) ** 2)
        + jnp.sum(params["i"]).astype(jnp.float32)
    )


def test_grad_through_unravel():
    flat, unravel = ravel_pytree(_mixed_tree())

    def loss_flat(v):
        return _loss(unravel(v))

    g = jaxlite.grad(loss_flat)(flat)
    w, h = np.array([0.5, -1.0, 2.0]), np.array([1.5, 0.25])
    # Leaves in key order: h, i, w. The integer leaf gets a zero gradient.
    expected = np.concatenate([2 * h, [0.0, 0.0], np.sin(w) + w * np.cos(w)])
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-6)
    assert g.dtype == np.float32


def test_grad_through_unravel_matches_jax():
    jax = pytest.importorskip("jax")
    jfu = pytest.importorskip("jax.flatten_util")
    import jax.numpy as jjnp

    flat, unravel = ravel_pytree(_mixed_tree())
    jtree = jax.tree_util.tree_map(jjnp.asarray, _mixed_tree())
    jflat, junravel = jfu.ravel_pytree(jtree)

    def jloss(p):
        return (
            jjnp.sum(jjnp.sin(p["w"]) * p["w"])
            + jjnp.sum(p["h"].astype(jjnp.float32) ** 2)
            + jjnp.sum(p["i"]).astype(jjnp.float32)
        )

    g = jaxlite.grad(lambda v: _loss(unravel(v)))(flat)
    jg = jax.grad(lambda v: jloss(junravel(v)))(jflat)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jg), rtol=1e-6)


def test_unravel_derivatives_against_finite_differences():
    tree = {"a": np.array([0.3, 0.8], np.float32), "b": np.array(1.5, np.float32)}
    _, unravel = ravel_pytree(tree)

    def f(v):
        p = unravel(v)
        return jnp.sum(jnp.tanh(p["a"]) * p["b"]) + p["b"] ** 3

    check_grads(f, (np.array([0.3, 0.8, 1.5], np.float32),), order=2)

    def g(a, b):
        return ravel_pytree({"a": jnp.sin(a), "b": b * a[0]})[0]

    check_grads(g, (tree["a"], tree["b"]), order=2)


def test_jvp_of_unravel_gives_float0_for_integer_leaves():
    flat, unravel = ravel_pytree(_mixed_tree())
    primal, tangent = jaxlite.jvp(unravel, (flat,), (jnp.ones_like(flat),))
    assert tangent["i"].dtype == jaxlite.dtypes.float0
    assert tangent["h"].dtype == np.float16 and tangent["w"].dtype == np.float32
    check_close(primal, _mixed_tree())


def test_jit_of_ravel_and_unravel_matches_eager():
    tree = _mixed_tree()
    flat, unravel = ravel_pytree(tree)
    check_close(jaxlite.jit(unravel)(flat), unravel(flat))
    jit_flat = jaxlite.jit(lambda t: ravel_pytree(t)[0])(tree)
    check_close(jit_flat, flat)
    text = str(jaxlite.make_jaxpr(unravel)(flat))
    assert "split[axis=0 sizes=(2, 2, 3)]" in text
    assert "convert_element_type[new_dtype=float16 weak_type=False]" in text


def test_vmap_of_ravel_and_unravel_matches_a_loop():
    tree = _mixed_tree()
    flat, unravel = ravel_pytree(tree)
    batch = jnp.stack([flat, flat + 1, flat * 2])
    out = jaxlite.vmap(unravel)(batch)
    for k in range(3):
        check_close(
            jaxlite.tree_util.tree_map(lambda x, k=k: x[k], out), unravel(batch[k])
        )
    batched_tree = jaxlite.tree_util.tree_map(lambda x: jnp.stack([x, x + 1]), tree)
    flats = jaxlite.vmap(lambda t: ravel_pytree(t)[0])(batched_tree)
    assert flats.shape == (2, 7)
    for k in range(2):
        one = jaxlite.tree_util.tree_map(lambda x, k=k: x[k], batched_tree)
        check_close(flats[k], ravel_pytree(one)[0])


def test_reachable_as_attribute():
    assert jaxlite.flatten_util.ravel_pytree is ravel_pytree


def test_grad_and_jvp_through_ravel_match_jax():
    jax = pytest.importorskip("jax")
    jfu = pytest.importorskip("jax.flatten_util")
    import jax.numpy as jjnp

    def loss(ravel, np_like):
        return lambda t: np_like.sum(ravel(t)[0] ** 2)

    tree = _mixed_tree()
    jtree = jax.tree_util.tree_map(jjnp.asarray, tree)
    g = jaxlite.grad(loss(ravel_pytree, jnp), allow_int=True)(tree)
    jg = jax.grad(loss(jfu.ravel_pytree, jjnp), allow_int=True)(jtree)
    assert g["i"].dtype == jaxlite.dtypes.float0
    for k in ("h", "w"):
        assert g[k].dtype == jg[k].dtype
        np.testing.assert_array_equal(np.asarray(g[k]), np.asarray(jg[k]))

    def tangents(np_like, float0):
        return {
            "w": np_like.ones(3),
            "i": np.zeros(2, float0),
            "h": np_like.ones(2, np_like.float16),
        }

    _, t_out = jaxlite.jvp(
        lambda t: ravel_pytree(t)[0], (tree,), (tangents(jnp, jaxlite.dtypes.float0),)
    )
    _, jt_out = jax.jvp(
        lambda t: jfu.ravel_pytree(t)[0], (jtree,), (tangents(jjnp, jax.dtypes.float0),)
    )
    np.testing.assert_array_equal(np.asarray(t_out), np.asarray(jt_out))
