"""Tests for the order-based primitives (sort, argmax/argmin, cumulative reductions,
top_k) and the jnp functions built on them (sort, argsort, searchsorted, cumsum, ...).

Values are compared with NumPy and, where it is installed, with real JAX (dtypes, NaN
placement, tie order, jaxpr texts); every function also runs under jit.
"""

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.errors import ConcretizationTypeError

RNG = np.random.default_rng(1)

NAN_DATA = np.array(
    [1.0, np.nan, 3.0, -np.nan, 0.0, -0.0, np.inf, -np.inf, 3.0, 0.0], np.float32
)


def ints(shape, dtype=np.int32, high=5):
    return RNG.integers(0, high, shape).astype(dtype)


def floats(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


@pytest.fixture
def rjax():
    return pytest.importorskip("jax")


def same_text(a, b):
    return " ".join(str(a).split()) == " ".join(str(b).split())


def assert_same(ours, theirs):
    """Equal values (NaN == NaN, -0.0 != 0.0), shapes and dtypes."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours, theirs)
    if ours.dtype.kind == "f":
        np.testing.assert_array_equal(np.signbit(ours), np.signbit(theirs))


def check_jit(fun, *args):
    """fun(*args) eagerly and under jit give the same result (pytrees of arrays)."""
    args = [jnp.asarray(a) for a in args]
    eager = fun(*args)
    jitted = jaxlite.jit(fun)(*args)
    eager_leaves = eager if isinstance(eager, (tuple, list)) else [eager]
    jitted_leaves = jitted if isinstance(jitted, (tuple, list)) else [jitted]
    assert len(eager_leaves) == len(jitted_leaves)
    for e, j in zip(eager_leaves, jitted_leaves):
        assert_same(e, j)
        assert e.weak_type == j.weak_type
    return eager


# ----------------------------------------------------------------------------------------
# lax.sort


def test_sort_single_operand_nan_and_signed_zero():
    out = check_jit(lax.sort, NAN_DATA)
    expected = np.sort(NAN_DATA, kind="stable")
    assert_same(out, expected)
    # Stable: 0.0 (index 4) stays before -0.0 (index 5); NaNs go last.
    assert list(np.signbit(np.asarray(out))[1:4]) == [False, True, False]
    assert np.isnan(np.asarray(out)[-2:]).all()


@pytest.mark.parametrize(
    "dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16, ml_dtypes.bfloat16]
)
@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_sort_matches_numpy(dtype, dimension):
    x = ints((4, 6), high=3).astype(dtype)
    out = check_jit(lambda v: lax.sort(v, dimension=dimension), x)
    assert_same(out, np.sort(x, axis=dimension, kind="stable"))


def test_sort_multiple_operands_num_keys():
    k1 = ints((3, 8), high=2)
    k2 = ints((3, 8), high=3)
    payload = floats((3, 8))
    s1, s2, sp = check_jit(
        lambda a, b, c: lax.sort((a, b, c), num_keys=2), k1, k2, payload
    )
    perm = np.lexsort((k2, k1), axis=-1)
    assert_same(s1, np.take_along_axis(k1, perm, -1))
    assert_same(s2, np.take_along_axis(k2, perm, -1))
    assert_same(sp, np.take_along_axis(payload, perm, -1))
    # num_keys=1: ties in k1 keep their original order (stable).
    iota = np.broadcast_to(np.arange(8, dtype=np.int32), (3, 8))
    _, order = lax.sort((k1, iota), num_keys=1)
    assert_same(order, np.argsort(k1, axis=-1, kind="stable").astype(np.int32))


def test_sort_key_val(rjax):
    keys, vals = NAN_DATA, np.arange(NAN_DATA.size, dtype=np.int32)
    ours = check_jit(lax.sort_key_val, keys, vals)
    theirs = rjax.lax.sort_key_val(keys, vals)
    assert isinstance(ours, tuple) and len(ours) == 2
    for o, t in zip(ours, theirs):
        assert_same(o, t)


def test_sort_jaxpr_matches_jax(rjax):
    x = floats((2, 3))
    pairs = [
        (lambda v: lax.sort(v), lambda v: rjax.lax.sort(v)),
        (lambda v: lax.sort((v, v), num_keys=1), lambda v: rjax.lax.sort((v, v))),
        (lambda v: lax.sort(v, 0, False), lambda v: rjax.lax.sort(v, 0, False)),
    ]
    for ours, theirs in pairs:
        a, b = jaxlite.make_jaxpr(ours)(x), rjax.make_jaxpr(theirs)(x)
        assert same_text(a, b), f"\n{a}\n{b}"


def test_sort_errors():
    with pytest.raises(TypeError, match="Arguments to sort must have equal shapes"):
        lax.sort((jnp.ones((2, 3)), jnp.ones((3, 2))))
    with pytest.raises(ValueError, match="num_keys=3 must be between 1 and len"):
        lax.sort((jnp.ones(3), jnp.ones(3)), num_keys=3)
    with pytest.raises(ValueError, match="num_keys=0 must be between 1 and len"):
        lax.sort((jnp.ones(3), jnp.ones(3)), num_keys=0)
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        lax.sort(jnp.ones((2, 3)), dimension=2)
    with pytest.raises(ValueError, match="out of bounds for array of dimension 0"):
        lax.sort(jnp.float32(1))


# ----------------------------------------------------------------------------------------
# lax.argmax / argmin


@pytest.mark.parametrize("prim_name", ["argmax", "argmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.uint32, np.bool_])
@pytest.mark.parametrize("axis", [0, 1])
def test_lax_argminmax_matches_numpy(prim_name, dtype, axis):
    x = ints((4, 5), high=3).astype(dtype)
    out = check_jit(lambda v: getattr(lax, prim_name)(v, axis, np.int32), x)
    assert_same(out, getattr(np, prim_name)(x, axis=axis).astype(np.int32))


@pytest.mark.parametrize("prim_name", ["argmax", "argmin"])
def test_argminmax_nan_wins(rjax, prim_name):
    x = np.array([1.0, 5.0, np.nan, -3.0, np.nan], np.float32)
    out = getattr(lax, prim_name)(x, 0, np.int32)
    assert int(out) == 2
    assert int(getattr(rjax.lax, prim_name)(x, 0, np.int32)) == 2


def test_argmax_jaxpr_matches_jax(rjax):
    x = floats((2, 3))
    ours = jaxlite.make_jaxpr(lambda v: lax.argmax(v, 1, np.int32))(x)
    theirs = rjax.make_jaxpr(lambda v: rjax.lax.argmax(v, 1, np.int32))(x)
    assert same_text(ours, theirs)
    ours = jaxlite.make_jaxpr(lambda v: jnp.argmin(v, axis=0))(x)
    theirs = rjax.make_jaxpr(lambda v: rjax.numpy.argmin(v, axis=0))(x)
    assert same_text(ours, theirs)


def test_argminmax_errors():
    with pytest.raises(ValueError, match="require non-empty reduced dimension"):
        lax.argmax(jnp.ones((0, 3)), 0, np.int32)
    with pytest.raises(TypeError, match="index_dtype must be an integer type"):
        lax.argmax(jnp.ones(3), 0, np.float32)
    with pytest.raises(TypeError, match="argmax does not accept dtype complex64"):
        lax.argmax(jnp.ones(3, np.complex64), 0, np.int32)
    with pytest.raises(ValueError, match="attempt to get argmax of an empty sequence"):
        jnp.argmax(jnp.ones((0, 3)))
    with pytest.raises(ValueError, match="attempt to get argmin of an empty sequence"):
        jnp.argmin(jnp.ones((0, 3)), axis=0)


# ----------------------------------------------------------------------------------------
# Cumulative reductions

CUMULATIVE = {
    "cumsum": lambda x, axis: np.cumsum(x, axis=axis, dtype=x.dtype),
    "cumprod": lambda x, axis: np.cumprod(x, axis=axis, dtype=x.dtype),
    "cummax": lambda x, axis: np.maximum.accumulate(x, axis=axis),
    "cummin": lambda x, axis: np.minimum.accumulate(x, axis=axis),
    "cumlogsumexp": lambda x, axis: np.logaddexp.accumulate(x, axis=axis),
}


@pytest.mark.parametrize(
    "name,dtype",
    [
        (name, dtype)
        for name in sorted(CUMULATIVE)
        for dtype in (np.float32, np.int32, np.uint8)
        if name != "cumlogsumexp" or dtype == np.float32
    ],
)
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_matches_numpy(name, dtype, axis, reverse):
    x = (ints((3, 4), high=4) + 1).astype(dtype)
    out = check_jit(lambda v: getattr(lax, name)(v, axis=axis, reverse=reverse), x)
    reference = CUMULATIVE[name]
    if reverse:
        expected = np.flip(reference(np.flip(x, axis), axis), axis)
    else:
        expected = reference(x, axis)
    assert out.dtype == dtype
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-6)


def test_cummax_propagates_nan():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    out = np.asarray(lax.cummax(x))
    assert out[0] == 1.0 and np.isnan(out[1:]).all()


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
def test_cumulative_jaxpr_matches_jax(rjax, name):
    x = floats((2, 3))
    ours = jaxlite.make_jaxpr(lambda v: getattr(lax, name)(v, axis=1, reverse=True))(x)
    theirs = rjax.make_jaxpr(
        lambda v: getattr(rjax.lax, name)(v, axis=1, reverse=True)
    )(x)
    assert same_text(ours, theirs)


def test_cumulative_errors():
    with pytest.raises(TypeError, match="cumsum does not accept dtype bool"):
        lax.cumsum(jnp.ones(3, np.bool_))
    with pytest.raises(TypeError, match="cummax does not accept dtype bool"):
        lax.cummax(jnp.array([True, False]))
    with pytest.raises(TypeError, match="cumlogsumexp does not accept dtype int32"):
        lax.cumlogsumexp(jnp.ones(3, np.int32))
    with pytest.raises(ValueError, match=r"axis 1 is out of bounds for array of shape"):
        lax.cumsum(jnp.ones(3), axis=1)


# ----------------------------------------------------------------------------------------
# top_k


@pytest.mark.parametrize(
    "x",
    [
        np.array([1, 3, 3, 2, 3], np.int32),
        NAN_DATA,
        np.array([True, False, True]),
        np.array([[4, 1, 4, 0], [2, 2, 9, 2]], np.uint8),
        np.array([0.0, -0.0, 0.0, -0.0, 1.0], np.float16),
    ],
    ids=["ties", "nan", "bool", "2d", "zeros"],
)
@pytest.mark.parametrize("k", [1, 3, "all"])
def test_top_k_matches_jax(rjax, x, k):
    k = x.shape[-1] if k == "all" else min(k, x.shape[-1])
    values, indices = check_jit(lambda v: lax.top_k(v, k), x)
    r_values, r_indices = rjax.lax.top_k(x, k)
    assert_same(values, r_values)
    assert_same(indices, r_indices)


def test_top_k_axis_and_jaxpr(rjax):
    x = floats((4, 3))
    values, indices = lax.top_k(x, 2, axis=0)
    expected = -np.sort(-x, axis=0)[:2]
    np.testing.assert_array_equal(np.asarray(values), expected)
    np.testing.assert_array_equal(
        np.take_along_axis(x, np.asarray(indices), axis=0), expected
    )
    ours = jaxlite.make_jaxpr(lambda v: lax.top_k(v, 2))(x)
    theirs = rjax.make_jaxpr(lambda v: rjax.lax.top_k(v, 2))(x)
    assert same_text(ours, theirs)


def test_top_k_errors():
    with pytest.raises(ValueError, match="must be no larger than size along axis"):
        lax.top_k(jnp.ones((2, 3)), 4)
    with pytest.raises(ValueError, match="must be nonnegative"):
        lax.top_k(jnp.ones((2, 3)), -1)
    with pytest.raises(ValueError, match="out of bounds for array of dimension 0"):
        lax.top_k(jnp.float32(3), 1)


# ----------------------------------------------------------------------------------------
# jnp.sort, argsort, lexsort, sort_complex

SORT_KWARGS = [
    {},
    {"descending": True},
    {"axis": None},
    {"axis": 0},
    {"stable": True, "descending": True},
    {"axis": 0, "descending": True},
]


@pytest.mark.parametrize("name", ["sort", "argsort"])
@pytest.mark.parametrize("kwargs", SORT_KWARGS)
def test_jnp_sort_matches_jax(rjax, name, kwargs):
    x = ints((3, 6), high=3)
    ours = check_jit(lambda v: getattr(jnp, name)(v, **kwargs), x)
    assert_same(ours, getattr(rjax.numpy, name)(x, **kwargs))


@pytest.mark.parametrize("name", ["sort", "argsort"])
@pytest.mark.parametrize("descending", [False, True])
def test_jnp_sort_nan_matches_jax(rjax, name, descending):
    ours = check_jit(lambda v: getattr(jnp, name)(v, descending=descending), NAN_DATA)
    assert_same(ours, getattr(rjax.numpy, name)(NAN_DATA, descending=descending))


def test_argsort_is_stable_like_numpy():
    x = ints((50,), high=4)
    assert_same(jnp.argsort(x), np.argsort(x, kind="stable").astype(np.int32))
    expected = np.argsort(-x, kind="stable").astype(np.int32)
    assert_same(jnp.argsort(x, descending=True), expected)


def test_jnp_sort_jaxpr_matches_jax_body(rjax):
    x = floats((2, 3))
    ours = jaxlite.make_jaxpr(lambda v: jnp.argsort(v, descending=True))(x)
    theirs = rjax.make_jaxpr(lambda v: rjax.numpy.argsort(v, descending=True))(x)
    inner = theirs.eqns[0].params["jaxpr"]  # JAX wraps jnp.argsort in a jit
    assert [e.primitive.name for e in ours.eqns] == [
        e.primitive.name for e in inner.eqns
    ]


def test_sort_methods_and_errors():
    x = jnp.asarray(ints((2, 5)))
    assert_same(x.sort(), np.sort(np.asarray(x)))
    expected = np.argsort(np.asarray(x), 0, kind="stable").astype(np.int32)
    assert_same(x.argsort(axis=0), expected)
    with pytest.raises(TypeError, match="'kind' argument to sort is not supported"):
        jnp.sort(x, kind="quicksort")
    with pytest.raises(TypeError, match="'order' argument to sort is not supported"):
        jnp.sort(x, order="x")
    with pytest.raises(ValueError, match="axis -1 is out of bounds"):
        jnp.sort(jnp.float32(1))
    with pytest.raises(TypeError, match="sort requires ndarray or scalar arguments"):
        jnp.sort([3, 1])


def test_lexsort_and_sort_complex(rjax):
    keys = (np.array([1, 2, 1, 2, 0]), np.array([0, 0, 1, 0, 1]))
    ours = check_jit(lambda a, b: jnp.lexsort((a, b)), *keys)
    assert_same(ours, rjax.numpy.lexsort(keys))
    assert_same(ours, np.lexsort(keys).astype(np.int32))
    x = np.array([3, 1, 2], np.int32)
    assert_same(jnp.sort_complex(x), rjax.numpy.sort_complex(x))


# ----------------------------------------------------------------------------------------
# jnp.argmax / argmin


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"axis": 1}, {"axis": -1}, {"axis": 0, "keepdims": True}, {"keepdims": True}],
)
def test_jnp_argminmax_matches_jax(rjax, name, kwargs):
    x = ints((3, 4), high=3)
    ours = check_jit(lambda v: getattr(jnp, name)(v, **kwargs), x)
    assert_same(ours, getattr(rjax.numpy, name)(x, **kwargs))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "x",
    [NAN_DATA, np.array([False, True, True]), np.float32(3), np.ones((0, 3))],
    ids=["nan", "bool", "scalar", "empty"],
)
def test_jnp_argminmax_special_inputs(rjax, name, x):
    kwargs = {"axis": 1} if np.ndim(x) == 2 else {}
    ours = getattr(jnp, name)(x, **kwargs)
    assert_same(ours, getattr(rjax.numpy, name)(x, **kwargs))


def test_argmax_method():
    x = jnp.asarray(ints((3, 4)))
    assert int(x.argmax()) == int(np.argmax(np.asarray(x)))


# ----------------------------------------------------------------------------------------
# jnp.cumsum and friends


@pytest.mark.parametrize(
    "name",
    [
        "cumsum",
        "cumprod",
        "nancumsum",
        "nancumprod",
        "cumulative_sum",
        "cumulative_prod",
    ],
)
@pytest.mark.parametrize(
    "dtype", [np.bool_, np.int8, np.uint8, np.int32, np.float32, np.float16]
)
def test_jnp_cumulative_matches_jax(rjax, name, dtype):
    x = (np.arange(1, 7) % 3).astype(dtype).reshape(2, 3)
    kwargs = {"axis": 1}
    ours = check_jit(lambda v: getattr(jnp, name)(v, **kwargs), x)
    assert_same(ours, getattr(rjax.numpy, name)(x, **kwargs))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "nancumsum", "nancumprod"])
@pytest.mark.parametrize(
    "x,kwargs",
    [
        (np.array([[1.0, np.nan], [3.0, 2.0]], np.float32), {}),
        (np.array([1.7, 2.2, 3.0], np.float32), {"dtype": np.int32}),
        (np.arange(6, dtype=np.int32).reshape(2, 3), {"axis": 0, "dtype": np.float32}),
        (np.int32(3), {}),
    ],
    ids=["nan", "dtype", "axis0", "scalar"],
)
def test_jnp_cumulative_options(rjax, name, x, kwargs):
    ours = check_jit(lambda v: getattr(jnp, name)(v, **kwargs), x)
    assert_same(ours, getattr(rjax.numpy, name)(x, **kwargs))


def test_cumulative_sum_include_initial_and_errors(rjax):
    x = ints((3, 4))
    ours = jnp.cumulative_sum(x, axis=0, include_initial=True)
    assert_same(ours, rjax.numpy.cumulative_sum(x, axis=0, include_initial=True))
    ours = jnp.cumulative_prod(x, axis=1, include_initial=True)
    assert_same(ours, rjax.numpy.cumulative_prod(x, axis=1, include_initial=True))
    with pytest.raises(ValueError, match="axis was not set to an explicit value"):
        jnp.cumulative_sum(x)
    with pytest.raises(ValueError, match="must be non-scalar to take a cumulative sum"):
        jnp.cumulative_sum(jnp.float32(2))


def test_cumsum_jaxpr(rjax):
    x = floats((2, 3))
    ours = jaxlite.make_jaxpr(lambda v: jnp.cumsum(v, axis=1))(x)
    theirs = rjax.make_jaxpr(lambda v: rjax.numpy.cumsum(v, axis=1))(x)
    inner = theirs.eqns[0].params["jaxpr"]  # JAX wraps jnp.cumsum in a jit
    assert same_text(ours, inner)


# ----------------------------------------------------------------------------------------
# searchsorted


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("method", ["scan", "scan_unrolled", "compare_all", "sort"])
def test_searchsorted_matches_jax(rjax, side, method):
    a = np.array([0.0, 1.0, 1.0, 2.0, np.nan], np.float32)
    v = np.array([[np.nan, 1.0, -0.0], [0.0, 5.0, -1.0]], np.float32)

    def f(x, y):
        return jnp.searchsorted(x, y, side=side, method=method)

    ours = check_jit(f, a, v)
    assert_same(ours, rjax.numpy.searchsorted(a, v, side=side, method=method))
    finite = a[:-1]
    expected = np.searchsorted(finite, v[:, 1:], side=side).astype(np.int32)
    assert_same(jnp.searchsorted(finite, v[:, 1:], side=side), expected)


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_promotion_sorter_scalars(rjax, side):
    a, v = np.arange(5, dtype=np.int32), np.array([1.5, 2.0, -1.0, 9.0], np.float32)
    assert_same(
        jnp.searchsorted(a, v, side=side), rjax.numpy.searchsorted(a, v, side=side)
    )
    unsorted = np.array([3, 1, 2, 2, 7], np.int32)
    sorter = np.argsort(unsorted, kind="stable")
    ours = check_jit(
        lambda x, q, s: jnp.searchsorted(x, q, side=side, sorter=s),
        unsorted,
        np.array([2, 0, 8], np.int32),
        sorter,
    )
    expected = np.searchsorted(unsorted, [2, 0, 8], side=side, sorter=sorter)
    assert_same(ours, expected.astype(np.int32))
    scalar = jnp.searchsorted(a, 2, side=side)
    assert scalar.shape == () and int(scalar) == np.searchsorted(a, 2, side=side)
    empty = jnp.searchsorted(np.zeros(0, np.float32), np.ones(3, np.float32))
    assert_same(empty, np.zeros(3, np.int32))


def test_searchsorted_errors():
    with pytest.raises(ValueError, match="a should be 1-dimensional"):
        jnp.searchsorted(jnp.ones((2, 3)), 1.0)
    with pytest.raises(ValueError, match="invalid argument side='middle'"):
        jnp.searchsorted(jnp.ones(3), 1.0, side="middle")
    with pytest.raises(ValueError, match="invalid argument method='foo'"):
        jnp.searchsorted(jnp.ones(3), 1.0, method="foo")


# ----------------------------------------------------------------------------------------
# unique


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"return_index": True, "return_inverse": True, "return_counts": True},
        {"size": 6, "fill_value": -1},
        {"size": 2},
        {"axis": 0, "return_inverse": True},
        {"size": 5, "return_index": True, "return_counts": True},
    ],
)
def test_unique_matches_jax(rjax, kwargs):
    x = np.array([[3, 1], [3, 2], [1, 1]], np.int32)
    ours = jnp.unique(x, **kwargs)
    theirs = rjax.numpy.unique(x, **kwargs)
    if isinstance(theirs, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t)
    else:
        assert_same(ours, theirs)


def test_unique_nan_and_errors(rjax):
    assert_same(jnp.unique(NAN_DATA), rjax.numpy.unique(NAN_DATA))
    with pytest.raises(ConcretizationTypeError, match="jnp.unique"):
        jaxlite.jit(jnp.unique)(jnp.array([3, 1, 3]))
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(jnp.zeros(0), size=3)


# ----------------------------------------------------------------------------------------
# Derivatives and vmap


def test_sort_grads():
    from testing import check_grads

    x = floats((3, 5))
    check_grads(lambda v: lax.sort(v, dimension=1), (x,), order=2)
    check_grads(lambda v: jnp.sort(v, axis=0, descending=True), (x,), order=1)
    keys = RNG.permutation(15).reshape(3, 5).astype(np.float32)  # no ties
    check_grads(lambda k, v: lax.sort_key_val(k, v)[1], (keys, x), order=2)


def test_sort_grad_matches_jax(rjax):
    x = floats((6,))
    ours = jaxlite.grad(lambda v: (lax.sort(v) * np.arange(6)).sum())(x)
    theirs = rjax.grad(lambda v: (rjax.lax.sort(v) * np.arange(6)).sum())(x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6)


@pytest.mark.parametrize(
    "name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"]
)
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_grads(name, reverse):
    from testing import check_grads

    x = floats((3, 4))
    fun = getattr(lax, name)
    order = 1 if name in ("cummax", "cummin") else 2
    check_grads(
        lambda v: fun(v, axis=1, reverse=reverse),
        (x,),
        order=order,
        atol=1e-2,
        rtol=1e-2,
    )


@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_grad_at_zeros(reverse):
    from testing import check_grads

    x = np.array([[2.0, 0.0, 3.0, 0.5], [0.0, 1.5, 0.0, 2.0]], np.float32)
    check_grads(lambda v: lax.cumprod(v, axis=1, reverse=reverse), (x,), order=1)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cumlogsumexp"])
def test_cumulative_grad_matches_jax(rjax, name):
    x = np.array([[0.5, -1.0, 2.0, 0.0, 3.0], [1.5, 0.2, -0.7, 2.5, 0.1]], np.float32)
    w = np.arange(10, dtype=np.float32).reshape(2, 5)

    def loss(mod):
        return lambda v: (getattr(mod, name)(v, axis=1) * w).sum()

    ours = jaxlite.grad(loss(lax))(x)
    theirs = rjax.grad(loss(rjax.lax))(x)
    np.testing.assert_allclose(
        np.asarray(ours), np.asarray(theirs), rtol=1e-5, atol=1e-5
    )


def test_top_k_and_argmax_grads(rjax):
    from testing import check_grads

    x = floats((3, 6))
    check_grads(lambda v: lax.top_k(v, 3)[0], (x,), order=2)
    ours = jaxlite.grad(lambda v: lax.top_k(v, 2)[0].sum())(x)
    theirs = rjax.grad(lambda v: rjax.lax.top_k(v, 2)[0].sum())(x)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs))
    g = jaxlite.grad(lambda v: (v * jnp.argmax(v, axis=1)[:, None]).sum())(x)
    np.testing.assert_allclose(
        np.asarray(g), np.broadcast_to(np.argmax(x, 1)[:, None], x.shape)
    )


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_vmap_matches_loop(in_axis):
    x = floats((3, 4, 5))
    funs = [
        lambda v: lax.sort(v, dimension=0),
        lambda v: lax.sort_key_val(v, v * 2, dimension=1)[1],
        lambda v: lax.argmax(v, 1, np.int32),
        lambda v: lax.argmin(v, 0, np.int32),
        lambda v: lax.cumsum(v, axis=1, reverse=True),
        lambda v: lax.cummax(v, axis=0),
        lambda v: lax.top_k(v, 2)[1],
        lambda v: jnp.argsort(v, axis=0),
    ]
    for fun in funs:
        batched = np.asarray(jaxlite.vmap(fun, in_axes=in_axis)(x))
        rows = [
            np.asarray(fun(jnp.asarray(np.take(x, k, in_axis))))
            for k in range(x.shape[in_axis])
        ]
        np.testing.assert_allclose(batched, np.stack(rows), rtol=1e-6)


def test_searchsorted_vmap():
    from jaxlite.interpreters import batching

    if lax.reduce_sum_p not in batching.batch_rules:
        pytest.skip("needs the batching rule of reduce_sum (lax/reductions.py)")
    table = np.sort(floats((4, 6)), axis=1)
    queries = floats((4, 3))
    out = jaxlite.vmap(jnp.searchsorted)(table, queries)
    expected = [np.searchsorted(t, q) for t, q in zip(table, queries)]
    assert_same(out, np.stack(expected).astype(np.int32))


def test_x64_index_dtypes():
    from jaxlite.config import config

    config.update("jax_enable_x64", True)
    x = np.array([[3.0, 1.0, 2.0]])
    assert jnp.argsort(x).dtype == np.int64
    assert jnp.argmax(x).dtype == np.int64
    assert jnp.cumsum(x > 1).dtype == np.int64
    assert jnp.cumsum(x).dtype == np.float64
    assert jnp.searchsorted(x[0], 2.5).dtype == np.int32  # int32 whenever it fits
    assert lax.top_k(x, 2)[1].dtype == np.int32
