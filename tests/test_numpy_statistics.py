"""Tests for cov, corrcoef, bincount, digitize and the histograms, plus the NaN
reductions folded onto var/mean (nanvar's fractional ddof).

Values, dtypes and weak types are compared with real JAX and NumPy; bincount and the
histograms run under jit (with static lengths and bin counts) and vmap; cov and
corrcoef are differentiated.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.errors import ConcretizationTypeError
from testing import check_close, check_grads

A = np.array([1.0, 2, 2, 3, 5, 7, 9, 9], np.float32)
M = np.array([[1.0, 2, 4], [3, 1, 0]], np.float32)
S2 = np.stack([A, A[::-1]], 1)

CASES = [
    ("histogram", (A,), {}),
    ("histogram", (A,), dict(bins=3, range=(0, 10), density=True)),
    ("histogram", (A,), dict(bins=np.array([0, 2, 5, 10]), weights=np.arange(8))),
    ("histogram", (np.array([1, 2, 3]),), {}),
    ("histogram", (A,), dict(bins=2, range=(3, 4))),
    (
        "histogram",
        (A.reshape(2, 4),),
        dict(bins=4, weights=np.ones((2, 4), np.float32), density=True),
    ),
    ("histogram_bin_edges", (np.array([2.0, 2.0]), 4), {}),
    (
        "histogram_bin_edges",
        (np.array([1, 5], np.int32),),
        dict(bins=np.array([0, 3, 6])),
    ),
    ("histogram2d", (A, A[::-1]), dict(bins=3)),
    (
        "histogram2d",
        (A, A[::-1]),
        dict(bins=[2, np.array([0.0, 5, 10])], weights=np.arange(8.0)),
    ),
    ("histogram2d", (A, A[::-1]), dict(bins=np.array([0.0, 3, 6, 10]), density=True)),
    ("histogramdd", (S2,), dict(bins=(2, 3), range=[(0, 10), None], density=True)),
    (
        "histogramdd",
        (np.stack([A, A[::-1], A * 2], 1),),
        dict(bins=[np.array([0, 5, 10]), 3, 2], weights=np.ones(8)),
    ),
    ("bincount", (np.array([0, 1, 1, 5]),), {}),
    (
        "bincount",
        (np.array([0, 1, 1, 5]),),
        dict(weights=np.array([0.5, 1, 1, 2], np.float32), minlength=8),
    ),
    ("bincount", (np.array([0, 1, -1, 5]),), dict(length=4)),
    ("bincount", (np.array([0, 1, 1, 5]),), dict(weights=np.array([1, 2, 3, 4]))),
    ("digitize", (np.array([0.0, 1.5, 3, 10]), np.array([1.0, 2, 3])), {}),
    (
        "digitize",
        (np.array([0.0, 1.5, 3, 10]), np.array([3.0, 2, 1])),
        dict(right=True),
    ),
    (
        "digitize",
        (np.array([[0.0, 1.5], [3, 10]]), np.array([1.0, 2, 3])),
        dict(right=True),
    ),
    ("cov", (M,), {}),
    ("cov", (np.array([1, 2, 4]),), {}),
    ("cov", (np.array([1, 2, 4]), np.array([3, 1, 0])), dict(ddof=0)),
    (
        "cov",
        (M,),
        dict(rowvar=False, fweights=np.array([1, 2]), aweights=np.array([0.5, 1.0])),
    ),
    ("cov", (M,), dict(bias=True)),
    ("cov", (M,), dict(aweights=np.array([1.0, 2, 1]), ddof=1)),
    ("cov", (M + 1j * M[::-1],), {}),
    ("corrcoef", (M,), {}),
    ("corrcoef", (np.array([1.0, 2, 4]),), {}),
    ("corrcoef", (np.array([1, 2, 4]), np.array([3, 1, 0])), {}),
    ("corrcoef", (M,), dict(rowvar=False)),
]


def _id(case):
    name, args, kw = case
    return f"{name}-{[np.shape(a) for a in args]}-{sorted(kw)}"


def _leaves(x):
    out = []
    for leaf in x if isinstance(x, (tuple, list)) else [x]:
        out.extend(_leaves(leaf) if isinstance(leaf, (tuple, list)) else [leaf])
    return out


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_matches_jax(case):
    jax = pytest.importorskip("jax")
    name, args, kw = case
    ours = _leaves(getattr(jnp, name)(*args, **kw))
    ref = _leaves(getattr(jax.numpy, name)(*args, **kw))
    for o, r in zip(ours, ref, strict=True):
        assert (o.shape, o.dtype, o.weak_type) == (r.shape, r.dtype, r.weak_type)
        check_close(np.asarray(o), np.asarray(r), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_matches_numpy(case):
    name, args, kw = case
    if name == "bincount" and "length" in kw:
        pytest.skip("length= is JAX's")
    if name == "histogramdd" and "range" in kw:
        pytest.skip("NumPy wants both ends of every range")
    ours = _leaves(getattr(jnp, name)(*args, **kw))
    ref = _leaves(getattr(np, name)(*args, **kw))
    for o, r in zip(ours, ref, strict=True):
        check_close(np.asarray(o), np.asarray(r).astype(o.dtype), atol=2e-5, rtol=2e-5)


def test_counting_under_jit_and_vmap():
    x = np.array([[0, 1, 1, 3], [2, 2, 0, 0]])
    f = lambda v: jnp.bincount(v, length=5)
    np.testing.assert_array_equal(jaxlite.jit(f)(x[0]), f(x[0]))
    np.testing.assert_array_equal(jaxlite.vmap(f)(x), np.stack([f(v) for v in x]))
    h = lambda a: jnp.histogram(a, bins=4, range=(0, 10))
    counts, edges = jaxlite.vmap(h)(np.stack([A, A[::-1] * 0.5]))
    for k, a in enumerate([A, A[::-1] * 0.5]):
        c, e = h(a)
        check_close(np.asarray(counts[k]), np.asarray(c))
        check_close(np.asarray(edges[k]), np.asarray(e))
    for fun in (
        lambda a: jnp.histogram(a, bins=3),
        lambda a: jnp.histogram2d(a, a[::-1], bins=(2, 3)),
        lambda a: jnp.digitize(a, np.array([0.0, 3, 6])),
        lambda a: jnp.cov(jnp.stack([a, a**2])),
    ):
        eager, jitted = _leaves(fun(A)), _leaves(jaxlite.jit(fun)(A))
        for e, j in zip(eager, jitted, strict=True):
            check_close(np.asarray(j), np.asarray(e))


def test_bincount_needs_length_under_jit():
    with pytest.raises(ConcretizationTypeError, match="static `length`"):
        jaxlite.jit(jnp.bincount)(np.array([0, 1]))


def test_cov_and_corrcoef_grads():
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    check_grads(lambda a: jnp.cov(a, aweights=np.arange(1.0, 6.0)), (x,), order=2)
    check_grads(jnp.corrcoef, (x,), order=1)
    check_grads(
        lambda a: jnp.histogram(a, bins=3, range=(-3, 3), weights=a)[0], (x,), order=1
    )


def test_nanvar_fractional_ddof_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.array([[1.0, np.nan, 3, 4], [2, 2, np.nan, np.nan]], np.float32)
    for kw in (dict(ddof=0.5), dict(axis=1, ddof=1.5), dict(axis=1, dtype=np.float16)):
        for name in ("nanvar", "nanstd"):
            ours, ref = getattr(jnp, name)(x, **kw), getattr(jax.numpy, name)(x, **kw)
            assert (ours.dtype, ours.weak_type) == (ref.dtype, ref.weak_type)
            check_close(np.asarray(ours), np.asarray(ref), atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (lambda: jnp.bincount(np.array([0.5])), TypeError, "integer type"),
        (lambda: jnp.histogram(A, bins=0), ValueError, "must be positive"),
        (lambda: jnp.histogram(A, weights=np.ones(3)), ValueError, "same shape"),
        (lambda: jnp.cov(np.ones((2, 2, 2))), ValueError, "more than 2 dimensions"),
        (lambda: jnp.histogramdd(S2, bins=[2, 3, 4]), ValueError, "dimension of bins"),
    ],
)
def test_errors(call, error, phrase):
    with pytest.raises(error, match=phrase):
        call()
