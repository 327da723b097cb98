"""Typed PRNG key arrays (`random.key`, dtype key<fry>) through jax.numpy and jax.lax.

Structural functions act on the keys' uint32 data with its trailing axis kept: every
case runs in jaxlite and in real JAX and must give the same shape, dtype and bit-equal
key data. Numeric functions refuse keys with JAX's error class and phrase.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax

MASK = np.array([True, False, True, False])
GATHER_DN = dict(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
SCATTER_DN = dict(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)

# name -> f(jax, jnp, lax, keys) where keys = (k, k1, k0): a (2, 3) key array, a (4,)
# key array and a single key.
CASES = {
    "where": lambda j, np_, lx, k: np_.where(MASK, k[1], k[1][::-1]),
    "where_scalar_key": lambda j, np_, lx, k: np_.where(MASK, k[1], k[2]),
    "select": lambda j, np_, lx, k: np_.select([MASK], [k[1]], k[1][::-1]),
    "take": lambda j, np_, lx, k: np_.take(k[1], np.array([2, 0])),
    "take_axis": lambda j, np_, lx, k: np_.take(k[0], np.array([2, 0]), axis=1),
    "take_out_of_bounds": lambda j, np_, lx, k: np_.take(k[1], np.array([5, -7])),
    "take_along_axis": lambda j, np_, lx, k: np_.take_along_axis(
        k[0], np.array([[1, 0, 2], [0, 0, 1]]), axis=1
    ),
    "broadcast_to": lambda j, np_, lx, k: np_.broadcast_to(k[1][0], (3,)),
    "broadcast_arrays": lambda j, np_, lx, k: np_.broadcast_arrays(k[2], k[1]),
    "expand_dims": lambda j, np_, lx, k: np_.expand_dims(k[0], 1),
    "flip": lambda j, np_, lx, k: np_.flip(k[0]),
    "flip_axis": lambda j, np_, lx, k: np_.flip(k[0], 1),
    "fliplr": lambda j, np_, lx, k: np_.fliplr(k[0]),
    "flipud": lambda j, np_, lx, k: np_.flipud(k[0]),
    "rot90": lambda j, np_, lx, k: np_.rot90(k[0]),
    "roll": lambda j, np_, lx, k: np_.roll(k[1], 1),
    "roll_axis": lambda j, np_, lx, k: np_.roll(k[0], -1, axis=1),
    "squeeze": lambda j, np_, lx, k: np_.squeeze(k[0][:1]),
    "swapaxes": lambda j, np_, lx, k: np_.swapaxes(k[0], 0, 1),
    "moveaxis": lambda j, np_, lx, k: np_.moveaxis(k[0], 0, -1),
    "transpose": lambda j, np_, lx, k: np_.transpose(k[0]),
    "matrix_transpose": lambda j, np_, lx, k: np_.matrix_transpose(k[0]),
    "reshape": lambda j, np_, lx, k: np_.reshape(k[0], (3, -1)),
    "ravel": lambda j, np_, lx, k: np_.ravel(k[0]),
    "tile": lambda j, np_, lx, k: np_.tile(k[0], (2, 1)),
    "repeat": lambda j, np_, lx, k: np_.repeat(k[1], 2),
    "repeat_axis": lambda j, np_, lx, k: np_.repeat(k[0], np.array([1, 0, 2]), axis=1),
    "atleast_1d": lambda j, np_, lx, k: np_.atleast_1d(k[2]),
    "atleast_3d": lambda j, np_, lx, k: np_.atleast_3d(k[1]),
    "array": lambda j, np_, lx, k: np_.array(k[0]),
    "asarray": lambda j, np_, lx, k: np_.asarray(k[0]),
    "array_of_list": lambda j, np_, lx, k: np_.array([k[2], k[2]]),
    "copy": lambda j, np_, lx, k: np_.copy(k[0]),
    "split": lambda j, np_, lx, k: np_.split(k[1], 2),
    "array_split": lambda j, np_, lx, k: np_.array_split(k[1], 3),
    "hsplit": lambda j, np_, lx, k: np_.hsplit(k[0], 3),
    "unstack": lambda j, np_, lx, k: np_.unstack(k[0]),
    "concatenate": lambda j, np_, lx, k: np_.concatenate([k[1], k[1][:2]]),
    "stack": lambda j, np_, lx, k: np_.stack([k[1], k[1]], axis=1),
    "vstack": lambda j, np_, lx, k: np_.vstack([k[1], k[1]]),
    "column_stack": lambda j, np_, lx, k: np_.column_stack([k[1], k[1]]),
    "append": lambda j, np_, lx, k: np_.append(k[1], k[1][:1]),
    "insert": lambda j, np_, lx, k: np_.insert(k[1], 1, k[2]),
    "delete": lambda j, np_, lx, k: np_.delete(k[1], 1),
    "pad_edge": lambda j, np_, lx, k: np_.pad(k[1], 1, mode="edge"),
    "diagonal": lambda j, np_, lx, k: np_.diagonal(k[0]),
    "tril": lambda j, np_, lx, k: np_.tril(k[0]),
    "compress": lambda j, np_, lx, k: np_.compress(MASK, k[1]),
    "choose": lambda j, np_, lx, k: np_.choose(
        np.array([0, 1, 0, 1]), [k[1], k[1][::-1]]
    ),
    "put": lambda j, np_, lx, k: np_.put(k[1], 0, k[2], inplace=False),
    "full_like": lambda j, np_, lx, k: np_.full_like(k[1], k[2]),
    "full_like_zero": lambda j, np_, lx, k: np_.full_like(k[1], 0),
    "zeros_like": lambda j, np_, lx, k: np_.zeros_like(k[1]),
    "equal": lambda j, np_, lx, k: np_.equal(k[1], k[1][::-1]),
    "not_equal": lambda j, np_, lx, k: np_.not_equal(k[1], k[2]),
    "lax_select_n": lambda j, np_, lx, k: lx.select_n(MASK, k[1], k[1][::-1]),
    "lax_select_n_scalar": lambda j, np_, lx, k: lx.select_n(True, k[1], k[1][::-1]),
    "lax_select": lambda j, np_, lx, k: lx.select(MASK, k[1], k[1][::-1]),
    "lax_dynamic_slice": lambda j, np_, lx, k: lx.dynamic_slice(k[1], (1,), (2,)),
    "lax_dynamic_index": lambda j, np_, lx, k: lx.dynamic_index_in_dim(
        k[1], 1, keepdims=False
    ),
    "lax_dynamic_update_slice": lambda j, np_, lx, k: lx.dynamic_update_slice(
        k[1], k[1][:2], (3,)
    ),
    "lax_gather": lambda j, np_, lx, k: lx.gather(
        k[1], np.array([[2], [0]]), lx.GatherDimensionNumbers(**GATHER_DN), (1,)
    ),
    "lax_scatter": lambda j, np_, lx, k: lx.scatter(
        k[1], np.array([[2]]), k[1][:1], lx.ScatterDimensionNumbers(**SCATTER_DN)
    ),
    "lax_reshape": lambda j, np_, lx, k: lx.reshape(k[0], (6,)),
    "lax_transpose": lambda j, np_, lx, k: lx.transpose(k[0], (1, 0)),
    "lax_broadcast_in_dim": lambda j, np_, lx, k: lx.broadcast_in_dim(
        k[1], (2, 4), (1,)
    ),
    "lax_rev": lambda j, np_, lx, k: lx.rev(k[1], (0,)),
    "lax_concatenate": lambda j, np_, lx, k: lx.concatenate([k[1], k[1]], 0),
    "lax_slice": lambda j, np_, lx, k: lx.slice(k[1], (1,), (3,)),
    "lax_split": lambda j, np_, lx, k: lx.split(k[1], (1, 3)),
    "lax_eq": lambda j, np_, lx, k: lx.eq(k[1], k[1][::-1]),
    "cond": lambda j, np_, lx, k: lx.cond(True, lambda a: a[::-1], lambda a: a, k[1]),
    "while_loop": lambda j, np_, lx, k: lx.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, j.random.split(c[1])[0]), (0, k[2])
    ),
    "scan": lambda j, np_, lx, k: lx.scan(
        lambda c, x: (j.random.fold_in(c, 1), np_.where(True, x, c)), k[2], k[1]
    ),
    "jit_where": lambda j, np_, lx, k: j.jit(np_.where)(MASK, k[1], k[1][::-1]),
    "vmap_where": lambda j, np_, lx, k: j.vmap(np_.where)(MASK, k[1], k[1][::-1]),
    "vmap_take": lambda j, np_, lx, k: j.vmap(lambda a: np_.take(a, 1), 1)(k[0]),
}


def _keys(lib):
    k = lib.random.split(lib.random.key(0), 6).reshape(2, 3)
    return k, lib.random.split(lib.random.key(1), 4), lib.random.key(3)


def _describe(lib, out):
    """Nested lists of (shape, dtype name, data) for the leaves, keys kept whole."""
    if isinstance(out, (list, tuple)):
        return [_describe(lib, o) for o in out]
    if lib.dtypes.issubdtype(out.dtype, lib.dtypes.prng_key):
        return (tuple(out.shape), str(out.dtype), np.asarray(lib.random.key_data(out)))
    return (tuple(np.shape(out)), str(out.dtype), np.asarray(out))


def _assert_same(got, want):
    assert type(got) is type(want) and len(got) == len(want)
    if isinstance(got, list):
        for g, w in zip(got, want):
            _assert_same(g, w)
        return
    assert got[:2] == want[:2]
    np.testing.assert_array_equal(got[2], want[2])
    assert got[2].dtype == want[2].dtype


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    jax = pytest.importorskip("jax")
    f = CASES[name]
    want = _describe(jax, f(jax, jax.numpy, jax.lax, _keys(jax)))
    got = _describe(jaxlite, f(jaxlite, jnp, lax, _keys(jaxlite)))
    _assert_same(got, want)


def test_data_moves_with_trailing_axis_kept():
    # NumPy reference on the data, no JAX needed.
    k, k1, _ = _keys(jaxlite)
    data = np.asarray(jaxlite.random.key_data(k))
    d1 = np.asarray(jaxlite.random.key_data(k1))
    data_of = lambda keys: np.asarray(jaxlite.random.key_data(keys))  # noqa: E731
    np.testing.assert_array_equal(data_of(jnp.flip(k)), data[::-1, ::-1])
    np.testing.assert_array_equal(data_of(jnp.swapaxes(k, 0, 1)), data.swapaxes(0, 1))
    np.testing.assert_array_equal(data_of(jnp.roll(k1, 1)), np.roll(d1, 1, axis=0))
    np.testing.assert_array_equal(
        data_of(jnp.where(MASK, k1, k1[::-1])),
        np.where(MASK[:, None], d1, d1[::-1]),
    )
    np.testing.assert_array_equal(data_of(jnp.take(k1, np.array([3, 1]))), d1[[3, 1]])


def test_jit_matches_eager_and_vmap_matches_loop():
    k, k1, k0 = _keys(jaxlite)
    data_of = lambda keys: np.asarray(jaxlite.random.key_data(keys))  # noqa: E731

    def f(m, a, b, i):
        return lax.dynamic_index_in_dim(jnp.where(m, a, b), i, keepdims=False)

    args = (MASK, k1, jnp.broadcast_to(k0, (4,)), 2)
    np.testing.assert_array_equal(data_of(jaxlite.jit(f)(*args)), data_of(f(*args)))
    masks = np.array([[True, False, True, False], [False, False, True, True]])
    batched = jaxlite.vmap(f, (0, None, None, None))(masks, *args[1:])
    loop = [data_of(f(m, *args[1:])) for m in masks]
    np.testing.assert_array_equal(data_of(batched), np.stack(loop))
    # Keys as the batched argument, through a split inside the function.
    out = jaxlite.vmap(lambda key: jnp.flip(jaxlite.random.split(key, 3)))(k1)
    loop = [data_of(jnp.flip(jaxlite.random.split(key, 3))) for key in k1]
    np.testing.assert_array_equal(data_of(out), np.stack(loop))


def test_non_key_calls_unchanged():
    x = jnp.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(jnp.flip(x), np.flip(np.arange(6).reshape(2, 3)))
    assert jnp.where(MASK, 1.0, 2.0).dtype == np.float32
    assert jnp.where.__name__ == "where"
    assert jnp.where is jaxlite.numpy.ufuncs.where


@pytest.mark.parametrize(
    "f, cls, phrase",
    [
        (lambda k: jnp.add(k, k), TypeError, "does not accept dtype key<fry>"),
        (lambda k: jnp.sum(k), TypeError, "Cannot interpret 'key<fry>'"),
        (lambda k: jnp.sort(k), TypeError, "does not accept dtype key<fry>"),
        (lambda k: k + k, TypeError, "add does not accept dtype"),
        (lambda k: k < k, TypeError, "lt does not accept dtype"),
        (lambda k: jnp.where(k), TypeError, "not_equal does not accept dtypes key"),
        (
            lambda k: jnp.where(MASK, k, 0),
            ValueError,
            "dtype=key<fry> is not a valid dtype for JAX type promotion",
        ),
        (
            lambda k: jnp.concatenate([k, np.zeros(4, np.uint32)]),
            ValueError,
            "dtype=key<fry> is not a valid dtype for JAX type promotion",
        ),
        (
            lambda k: jnp.select([MASK], [k]),
            ValueError,
            "dtype=key<fry> is not a valid dtype for JAX type promotion",
        ),
        (
            lambda k: jnp.astype(k, np.uint32),
            ValueError,
            "Cannot convert_element_type from key<fry> to uint32",
        ),
        (
            lambda k: lax.convert_element_type(k, np.uint32),
            ValueError,
            "Cannot convert_element_type from key<fry> to uint32",
        ),
        (
            lambda k: jnp.pad(k, 1),
            ValueError,
            "Cannot convert_element_type from int32 to key<fry>",
        ),
        (lambda k: k.astype(np.uint32), NotImplementedError, "Cannot call abstract"),
        (lambda k: k.sum(), NotImplementedError, "Cannot call abstract method sum"),
        (lambda k: k.repeat(2), NotImplementedError, "Cannot call abstract method"),
        (lambda k: bool(k[0]), TypeError, "key array cannot be converted to boolean"),
        (lambda k: k.at[0].add(k[1]), TypeError, "Cannot interpret 'key<fry>'"),
    ],
)
def test_errors(f, cls, phrase):
    k1 = _keys(jaxlite)[1]
    with pytest.raises(cls, match=phrase):
        f(k1)


def test_grad_of_keys():
    key = jaxlite.random.key(0)
    with pytest.raises(TypeError, match="but got key<fry>"):
        jaxlite.grad(lambda k: 1.0)(key)
    with pytest.raises(TypeError, match="but got key<fry>"):
        jaxlite.grad(lambda x, k: x, argnums=(0, 1))(1.0, key)
    g = jaxlite.grad(lambda k: 1.0, allow_int=True)(key)
    assert g.dtype == jaxlite.dtypes.float0 and g.shape == ()


def test_errors_match_jax():
    jax = pytest.importorskip("jax")
    for lib, np_ in ((jax, jax.numpy), (jaxlite, jnp)):
        k1 = _keys(lib)[1]
        with pytest.raises(
            ValueError, match="not a valid dtype for JAX type promotion"
        ):
            np_.where(MASK, k1, 0)
        with pytest.raises(ValueError, match="Cannot convert_element_type from key"):
            np_.astype(k1, np.uint32)
        with pytest.raises(TypeError, match="but got key<fry>"):
            lib.grad(lambda k: 1.0)(k1[0])
        with pytest.raises(NotImplementedError, match="Cannot call abstract method"):
            k1.sum()
