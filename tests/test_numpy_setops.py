"""Tests for the set operations of jaxlite.numpy: unique (and the Array API's
unique_*), union1d, intersect1d, setdiff1d, setxor1d and isin.

Results (values, shapes, dtypes, weak types, padding with `size=`) are compared with
real JAX and with NumPy; `size=` variants run under jit and vmap; without `size` a
traced input raises JAX's ConcretizationTypeError.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.errors import ConcretizationTypeError


def _leaves(x):
    return list(x) if isinstance(x, tuple) else [x]


def assert_same(ours, ref):
    ours, ref = _leaves(ours), _leaves(ref)
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        assert (o.shape, o.dtype, o.weak_type) == (r.shape, r.dtype, r.weak_type), (
            o,
            r,
        )
        np.testing.assert_array_equal(np.asarray(o), np.asarray(r))


@pytest.fixture(scope="module")
def jjnp():
    return pytest.importorskip("jax").numpy


X2 = np.array([[3, 1, 3], [2, 1, 7]], np.int32)
FNAN = np.array([np.nan, 1, np.nan, 0, -0.0, 1], np.float32)
ALL = dict(return_index=True, return_inverse=True, return_counts=True)
UNIQUE_CASES = [
    (X2, {}),
    (X2, ALL),
    (X2, dict(size=6, **ALL)),
    (X2, dict(size=2, return_counts=True)),
    (X2, dict(size=7, fill_value=-9, return_index=True)),
    (FNAN, ALL),
    (FNAN, dict(equal_nan=False, return_counts=True)),
    (FNAN, dict(size=5, return_counts=True)),
    (np.array(3), dict(return_inverse=True)),
    (3, dict(size=2)),
    (np.array([], np.float32), dict(size=3, fill_value=1, **ALL)),
    (X2, dict(axis=0)),
    (X2, dict(axis=1, **ALL)),
    (X2, dict(axis=0, size=3, **ALL)),
]


@pytest.mark.parametrize(
    "arr, kw",
    UNIQUE_CASES,
    ids=lambda v: str(np.shape(v)) if not isinstance(v, dict) else str(v),
)
def test_unique_matches_jax(jjnp, arr, kw):
    assert_same(jnp.unique(arr, **kw), jjnp.unique(arr, **kw))


def test_unique_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, (4, 5))
    ours = jnp.unique(x, **ALL)
    ref = np.unique(x, **ALL)
    for o, r in zip(ours, ref):
        np.testing.assert_array_equal(np.asarray(o), r)


@pytest.mark.parametrize(
    "name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"]
)
def test_array_api_unique_matches_jax(jjnp, name):
    kw = dict(size=5) if name in ("unique_all", "unique_values") else {}
    ours, ref = getattr(jnp, name)(FNAN, **kw), getattr(jjnp, name)(FNAN, **kw)
    if isinstance(ref, tuple):
        assert type(ours).__name__ == type(ref).__name__
        assert ours._fields == ref._fields
        ours, ref = tuple(ours), tuple(ref)
    assert_same(ours, ref)


A = np.array([15, 11, 13, 13, 19], np.int32)
B = np.array([13, 14, 15, 15, 10, 12], np.int32)
PAIRS = {
    "ints": (A, B),
    "disjoint": (np.array([1, 5]), np.array([2, 7])),
    "empty": (np.array([], np.int32), B),
    "nan": (np.array([1.0, np.nan]), np.array([np.nan, 2.0])),
    "promoted": (np.array([1, 2]), np.array([1.5])),
    "2d": (np.array([[3, 1]]), np.array([[2]])),
}
SET_CASES = [(pair, {}) for pair in PAIRS] + [
    ("ints", dict(size=8)),
    ("nan", dict(size=3)),
    ("disjoint", dict(size=1, fill_value=-1)),
]


@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d", "union1d"])
@pytest.mark.parametrize("pair, kw", SET_CASES, ids=str)
def test_set_operations_match_jax(jjnp, pair, kw, name):
    a, b = PAIRS[pair]
    assert_same(getattr(jnp, name)(a, b, **kw), getattr(jjnp, name)(a, b, **kw))


@pytest.mark.parametrize(
    "pair, kw", [("ints", {}), ("nan", {}), ("ints", dict(size=5))]
)
def test_intersect1d_indices_match_jax(jjnp, pair, kw):
    a, b = PAIRS[pair]
    assert_same(
        jnp.intersect1d(a, b, return_indices=True, **kw),
        jjnp.intersect1d(a, b, return_indices=True, **kw),
    )


@pytest.mark.parametrize("name", ["intersect1d", "setdiff1d", "setxor1d"])
def test_assume_unique_matches_jax(jjnp, name):
    a, b = np.array([9, 1, 5, 7]), np.array([7, 5, 0])
    ours = getattr(jnp, name)(a, b, assume_unique=True, size=5)
    assert_same(ours, getattr(jjnp, name)(a, b, assume_unique=True, size=5))


def test_set_operations_match_numpy():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 10, 12), rng.integers(5, 15, (3, 4))
    for name in ("intersect1d", "setdiff1d", "setxor1d", "union1d"):
        np.testing.assert_array_equal(getattr(jnp, name)(a, b), getattr(np, name)(a, b))
    np.testing.assert_array_equal(jnp.isin(b, a), np.isin(b, a))
    np.testing.assert_array_equal(
        jnp.isin(b, a, invert=True), np.isin(b, a, invert=True)
    )


def test_isin_matches_jax(jjnp):
    for e, t in [
        (np.array([[1, 2], [3, 4]]), np.array([2, 3])),
        (np.array([np.nan, 1.0]), np.array([np.nan])),
        (3, np.array([3])),
        (np.array([1.0, 2]), np.array([1, 2], np.int32)),
    ]:
        for invert in (False, True):
            assert_same(jnp.isin(e, t, invert=invert), jjnp.isin(e, t, invert=invert))


def test_size_variants_run_under_jit():
    x, y = np.array([3, 1, 3, 2, 2, 7]), np.array([2, 3, 9])
    funs = [
        lambda a, b: jnp.unique(a, size=5, **ALL),
        lambda a, b: jnp.unique_all(a, size=4),
        lambda a, b: jnp.intersect1d(a, b, size=3, return_indices=True),
        lambda a, b: jnp.union1d(a, b, size=6, fill_value=0),
        lambda a, b: jnp.setdiff1d(a, b, size=3),
        lambda a, b: jnp.setxor1d(a, b, size=4),
        lambda a, b: jnp.isin(a, b),
    ]
    for f in funs:
        for o, e in zip(_leaves(jaxlite.jit(f)(x, y)), _leaves(f(x, y))):
            np.testing.assert_array_equal(np.asarray(o), np.asarray(e))


def test_size_variants_vmap_like_a_loop():
    xs = np.array([[3, 1, 3, 2], [5, 5, 5, 5], [0, 9, 8, 9]])
    f = lambda a: jnp.unique(a, size=3, fill_value=-1, return_counts=True)
    values, counts = jaxlite.vmap(f)(xs)
    for k, x in enumerate(xs):
        v, c = f(x)
        np.testing.assert_array_equal(values[k], v)
        np.testing.assert_array_equal(counts[k], c)
    g = lambda a: jnp.setdiff1d(a, np.array([3, 9]), size=3)
    np.testing.assert_array_equal(jaxlite.vmap(g)(xs), np.stack([g(x) for x in xs]))


@pytest.mark.parametrize(
    "f",
    [
        jnp.unique,
        jnp.unique_values,
        lambda a: jnp.union1d(a, a),
        lambda a: jnp.setdiff1d(a, a),
    ],
)
def test_traced_without_size_raises(f):
    with pytest.raises(ConcretizationTypeError, match="size argument"):
        jaxlite.jit(f)(np.array([1, 2, 2]))


def test_errors():
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(np.array([], np.int32), size=2)
    with pytest.raises(TypeError, match="requires ndarray or scalar"):
        jnp.isin([1, 2], np.array([1]))
