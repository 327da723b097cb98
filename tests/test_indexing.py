"""Tests for indexing: lax slices, dynamic slices, gather and scatter; `x[idx]`,
`x.at[idx]`, and jnp's take / take_along_axis / nonzero / argwhere / flatnonzero /
compress / choose.

Reads are checked against NumPy (in bounds) and, where JAX's rules differ from NumPy's
(out of bounds, modes, fill values, dtypes, weak types), against real JAX when it is
installed. Jitted results are compared with eager ones, and the jaxprs of simple
indexing with JAX's text.
"""

import re
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from jaxlite.numpy.indexing import (
    argwhere,
    choose,
    compress,
    flatnonzero,
    nonzero,
    take,
    take_along_axis,
)

X345 = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
X45 = np.arange(20, dtype=np.float32).reshape(4, 5)


def _jax():
    return pytest.importorskip("jax")


def assert_same(out, ref):
    """Same shape, dtype and values (NaN equal to NaN)."""
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape, (out.shape, ref.shape)
    assert out.dtype == ref.dtype, (out.dtype, ref.dtype)
    np.testing.assert_array_equal(out, ref)


def assert_like_jax(out, ref):
    """Same shape, dtype, weak type and values as a JAX array."""
    assert_same(out, np.asarray(ref))
    assert out.weak_type == ref.weak_type


# ----------------------------------------------------------------------------------------
# Reads with NumPy's rules (in bounds)

READS = [
    (),
    0,
    2,
    -1,
    -3,
    slice(None),
    slice(1, 3),
    slice(None, None, -1),
    slice(None, None, 2),
    slice(3, 0, -2),
    slice(-2, None),
    slice(5, 1),
    slice(1, 100),
    Ellipsis,
    None,
    (1, 2),
    (1, 2, 3),
    (-1, -1, -1),
    (slice(None), 1),
    (Ellipsis, 1),
    (1, Ellipsis),
    (None, 1, None, slice(1, 3), Ellipsis, None),
    (slice(None, None, -1), slice(1, None, 2), slice(4, 0, -3)),
    np.array([0, 2, 1]),
    np.array([[0, 1], [2, 2]]),
    np.array([-1, 0]),
    (np.array([0, 2]), np.array([1, 3])),
    (np.array([0, 2]), slice(None), np.array([1, 3])),
    (slice(None), np.array([0, 3]), np.array([[1], [4]])),
    (1, slice(None), np.array([0, 2])),
    (slice(None), 1, np.array([0, 2])),
    (np.array([0, 2]), None, np.array([1, 3])),
    (np.array([0, 2]), Ellipsis, np.array([1, 3])),
    (slice(None, None, 2), np.array([1, 2])),
    (np.array([1, 2]), slice(1, 3)),
    (slice(None, None, -1), np.array([[0], [1]]), slice(None, None, 2)),
    (0, [1, 2]),
    ([0, 1], [1, 2]),
    np.array(1),
    np.int64(2),
    (np.int32(-1), slice(None), np.uint8(3)),
    np.array([True, False, True]),
    (slice(None), np.array([True, False, False, True])),
    np.arange(60).reshape(3, 4, 5) % 3 == 0,
    (1, np.arange(20).reshape(4, 5) > 12),
    True,
    False,
    (Ellipsis, True),
    (0, True),
    (True, np.array([0, 1])),
    (np.array([], np.int32),),
    (slice(None), np.zeros((0, 2), np.int32)),
]


def _ids(cases):
    return [re.sub(r"\s+", "", repr(c))[:40] for c in cases]


@pytest.mark.parametrize("idx", READS, ids=_ids(READS))
def test_getitem_matches_numpy(idx):
    assert_same(jnp.asarray(X345)[idx], X345[idx])


def _as_jnp_index(idx):
    if isinstance(idx, tuple):
        return tuple(_as_jnp_index(i) for i in idx)
    if isinstance(idx, np.ndarray):
        return jnp.asarray(idx)
    return idx


@pytest.mark.parametrize("idx", READS, ids=_ids(READS))
def test_getitem_with_jnp_index_arrays(idx):
    assert_same(jnp.asarray(X345)[_as_jnp_index(idx)], X345[idx])


_ARG = object()


def _split_arrays(idx):
    """(static index with array positions marked, the arrays) for passing to jit."""
    items = idx if isinstance(idx, tuple) else (idx,)
    arrays = [i for i in items if isinstance(i, np.ndarray) and i.dtype != np.bool_]
    marked = tuple(
        _ARG if isinstance(i, np.ndarray) and i.dtype != np.bool_ else i for i in items
    )
    return marked, arrays


@pytest.mark.parametrize("idx", READS, ids=_ids(READS))
def test_getitem_jit_matches_eager(idx):
    marked, arrays = _split_arrays(idx)

    def f(x, *arrs):
        it = iter(arrs)
        full = tuple(next(it) if i is _ARG else i for i in marked)
        return x[full]

    out = jaxlite.jit(f)(jnp.asarray(X345), *(jnp.asarray(a) for a in arrays))
    assert_same(out, X345[idx])


def test_getitem_traced_scalar_indices():
    f = jaxlite.jit(lambda x, i, j: x[i, 1:3, j])
    for i, j in [(0, 0), (2, 4), (-1, -2), (1, -5)]:
        assert_same(f(jnp.asarray(X345), i, j), X345[i, 1:3, j])


def test_getitem_weak_type_follows_operand():
    weak = jnp.asarray(X45) * 1.0  # strong
    assert not weak[1].weak_type
    w = lax.convert_element_type(jnp.asarray(X45), np.float32, weak_type=True)
    assert w[1].weak_type
    assert w[jnp.array([0, 1])].weak_type
    assert jaxlite.jit(lambda x, i: x[i])(w, 1).weak_type


# ----------------------------------------------------------------------------------------
# Out of bounds: reads clamp, negative indices wrap once


@pytest.mark.parametrize(
    "idx, expected",
    [(11, 9), (10, 9), (-11, 0), (-10, 0), (-1, 9), (1000, 9)],
)
def test_out_of_bounds_static_int_clamps(idx, expected):
    assert repr(jnp.arange(10)[idx]) == f"Array({expected}, dtype=int32)"


def test_out_of_bounds_traced_and_array_indices_clamp():
    x = jnp.arange(10)
    assert_same(
        x[jnp.array([11, -11, -12, 20, -1])], np.array([9, 0, 0, 9, 9], np.int32)
    )
    f = jaxlite.jit(lambda x, i: x[i])
    assert [int(f(x, i)) for i in (11, -11, -1, 3)] == [9, 0, 9, 3]


def test_sharp_bits_out_of_bounds_examples():
    assert repr(jnp.arange(10)[11]) == "Array(9, dtype=int32)"
    assert repr(jnp.arange(10.0).at[11].get()) == "Array(9., dtype=float32)"
    out = jnp.arange(10.0).at[11].get(mode="fill", fill_value=jnp.nan)
    assert repr(out) == "Array(nan, dtype=float32)"


def test_sharp_bits_update_examples():
    jax_array = jnp.zeros((3, 3), dtype=jnp.float32)
    updated = jax_array.at[1, :].set(1.0)
    assert str(updated) == "[[0. 0. 0.]\n [1. 1. 1.]\n [0. 0. 0.]]"
    assert str(jax_array) == "[[0. 0. 0.]\n [0. 0. 0.]\n [0. 0. 0.]]"
    new = jnp.ones((5, 6)).at[::2, 3:].add(7.0)
    expected = np.ones((5, 6), np.float32)
    expected[::2, 3:] += 7
    assert_same(new, expected)
    with pytest.raises(TypeError, match="JAX arrays are immutable"):
        jax_array[1, :] = 1.0


def test_sharp_bits_boolean_mask_nansum():
    def nansum(x):
        mask = ~jnp.isnan(x)
        return x[mask].sum()

    x = jnp.array([1, 2, jnp.nan, 3, 4])
    assert str(nansum(x)) == "10.0"
    with pytest.raises(NonConcreteBooleanIndexError) as info:
        jaxlite.jit(nansum)(x)
    assert str(info.value).startswith(
        "Array boolean indices must be concrete; got ShapedArray(bool[5])"
    )


def test_traced_scalar_boolean_index_raises():
    with pytest.raises(
        NonConcreteBooleanIndexError, match="ShapedArray\\(bool\\[\\]\\)"
    ):
        jaxlite.jit(lambda x, b: x[b])(jnp.arange(3), True)


def test_traced_boolean_mask_in_update_raises():
    with pytest.raises(NonConcreteBooleanIndexError, match="must be concrete"):
        jaxlite.jit(lambda x: x.at[x > 1].set(0))(jnp.arange(3))


# ----------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "idx, exc, phrase",
    [
        ([1, 2], TypeError, "Using a non-tuple sequence for multidimensional indexing"),
        (
            1.0,
            TypeError,
            "Indexer must have integer or boolean type, got indexer with type float64",
        ),
        (np.array([1.5]), TypeError, "got indexer with type float64"),
        ("a", TypeError, "JAX does not support string indexing"),
        (
            (1, 2, 3),
            IndexError,
            "Too many indices: array is 2-dimensional, but 3 were indexed",
        ),
        ((Ellipsis, Ellipsis), IndexError, "an index can only have a single ellipsis"),
        (slice(None, None, 0), ValueError, "slice step cannot be zero"),
        (np.array([True, False]), IndexError, "boolean index did not match shape"),
        (
            (np.array([0, 1]), np.array([0, 1, 2])),
            IndexError,
            "shape mismatch: indexing arrays could not be broadcast",
        ),
        (slice(1.5, None), TypeError, "slice indices must be integers or None"),
    ],
)
def test_getitem_errors(idx, exc, phrase):
    with pytest.raises(exc, match=re.escape(phrase)):
        jnp.asarray(X45)[idx]


def test_float_array_index_error():
    with pytest.raises(TypeError, match="got indexer with type float32"):
        jnp.arange(10)[jnp.array(1.0)]


def test_traced_slice_bounds_error():
    with pytest.raises(IndexError, match="Slice entries must be static integers"):
        jaxlite.jit(lambda x, i: x[i : i + 2])(jnp.arange(10), 1)


def test_index_into_empty_axis_error():
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        jnp.zeros(0)[0]


# ----------------------------------------------------------------------------------------
# x.at[...]: reprs and updates, against real JAX

# Every method and mode on these; `set`, `add` and `get` with None/'clip' on the rest.
FULL_UPDATE_INDICES = [
    12,
    slice(None, None, -2),
    np.array([3, 11, -12, -1]),
    (slice(None, None, 3), np.array([1, 0])),
]
UPDATE_INDICES = FULL_UPDATE_INDICES + [
    1,
    -1,
    -13,
    slice(1, 3),
    (slice(None), 2),
    (1, slice(2, None)),
    np.array([0, 2, 2]),
    np.array([[1], [-1]]),
    (np.array([0, 1]), np.array([4, 9])),
    np.arange(12) % 5 == 1,
    (Ellipsis, None, 3),
    True,
]
UPDATE_METHODS = "set add subtract multiply mul divide power min max apply get".split()
MODES = [None, "clip", "drop", "fill", "promise_in_bounds"]
AT_CASES = [
    (idx, method, mode)
    for idx in UPDATE_INDICES
    for method in UPDATE_METHODS
    for mode in MODES
    if any(idx is i for i in FULL_UPDATE_INDICES)
    or (method in ("set", "add", "get") and mode in (None, "clip"))
]


def _call_at(np_like, x, idx, method, mode, dtype):
    ref = x.at[idx]
    if method == "get":
        return ref.get(mode=mode)
    if method == "apply":
        return ref.apply(lambda v: v * 2 + 1, mode=mode)
    shape = np.shape(np.asarray(x)[idx]) if mode is None or mode == "clip" else None
    if shape is None:
        try:
            shape = np.shape(np.asarray(x)[idx])
        except IndexError:
            shape = ()
    values = np_like.asarray(
        (np.arange(int(np.prod(shape))) % 3 + 2).reshape(shape), dtype=dtype
    )
    return getattr(ref, method)(values, mode=mode)


def _has_repeats(x, idx):
    """Whether `set` with `idx` writes some element twice (then either write may win)."""
    counts = np.zeros(np.shape(x), np.int64)
    try:
        np.add.at(counts, _numpy_clipped(idx, np.shape(x)), 1)
    except (IndexError, TypeError):
        return True
    return counts.max() > 1


def _numpy_clipped(idx, shape):
    items = idx if isinstance(idx, tuple) else (idx,)
    out, d = [], 0
    for i in items:
        if isinstance(i, np.ndarray) and i.dtype != np.bool_:
            out.append(np.clip(np.where(i < 0, i + shape[d], i), 0, shape[d] - 1))
        else:
            out.append(i)
        d += i is not None and i is not Ellipsis
    return tuple(out)


@pytest.mark.parametrize(
    "idx, method, mode",
    AT_CASES,
    ids=[
        f"{i}-{m}-{mode}"
        for i, (_, m, mode) in zip(_ids([c[0] for c in AT_CASES]), AT_CASES)
    ],
)
def test_at_updates_match_jax(idx, method, mode):
    jax = _jax()
    if method == "set" and _has_repeats(np.zeros((12, 10)), idx):
        pytest.skip("which of several writes to one element wins is unspecified")
    if method == "get" and mode == "drop":
        pytest.skip("'drop' is 'fill' for reads")
    x = (np.arange(120).reshape(12, 10) % 7 + 1).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ref = _call_at(
                jax.numpy, jax.numpy.asarray(x), idx, method, mode, np.float32
            )
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                _call_at(jnp, jnp.asarray(x), idx, method, mode, np.float32)
            return
    out = _call_at(jnp, jnp.asarray(x), idx, method, mode, np.float32)
    assert_like_jax(out, ref)


def _future_warnings(caught):
    return [str(w.message) for w in caught if w.category is FutureWarning]


@pytest.mark.parametrize("method", ["set", "add", "multiply", "divide", "min", "max"])
@pytest.mark.parametrize("value", [2, 2.5, -3, True])
def test_at_update_dtype_rules_match_jax(method, value):
    jax = _jax()
    for dtype in (np.int32, np.uint8, np.float32, np.bool_):
        if dtype == np.bool_ and method in ("divide", "multiply"):
            continue
        x = np.arange(6).astype(dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ref = getattr(jax.numpy.asarray(x).at[1:3], method)(value)
            except TypeError:
                with pytest.raises(TypeError, match="does not accept dtype bool"):
                    getattr(jnp.asarray(x).at[1:3], method)(value)
                continue
        with warnings.catch_warnings(record=True) as jax_warned:
            warnings.simplefilter("always")
            getattr(jax.numpy.asarray(x).at[1:3], method)(value)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            out = getattr(jnp.asarray(x).at[1:3], method)(value)
        assert_like_jax(out, ref)
        # JAX's FutureWarning for values that do not cast safely to x's dtype.
        assert _future_warnings(warned) == _future_warnings(jax_warned)


def test_at_preserves_weak_type():
    w = lax.convert_element_type(jnp.zeros(4), np.float32, weak_type=True)
    assert w.at[1].set(jnp.float32(3)).weak_type
    assert not jnp.zeros(4).at[1].set(3.0).weak_type


def test_at_updates_jit_matches_eager():
    x = jnp.asarray(X45)
    idx = jnp.array([0, 3, 3, 9])

    def f(x, idx, v):
        return (
            x.at[idx].add(v),
            x.at[idx, 1:3].multiply(2.0),
            x.at[idx].get(mode="fill", fill_value=-1.0),
            x.at[::2, idx[:2]].set(v, mode="clip"),
            x.at[idx[1]].min(v),
        )

    eager = f(x, idx, 7.0)
    jitted = jaxlite.jit(f)(x, idx, 7.0)
    for e, j in zip(eager, jitted):
        assert_same(j, e)
    assert_same(eager[0][3], X45[3] + 14)
    assert_same(eager[2][3], np.full(5, -1, np.float32))


def test_at_duplicate_indices_accumulate():
    x = jnp.arange(5)
    assert_same(x.at[jnp.array([0, 0, 1])].add(5), np.array([10, 6, 2, 3, 4], np.int32))
    assert_same(
        (x + 1).at[jnp.array([0, 0, 1])].apply(lambda v: v * 2),
        np.array([4, 4, 3, 4, 5], np.int32),
    )
    out = x.at[jnp.array([0, 0, 1])].set(jnp.array([5, 6, 7]))
    assert int(out[0]) in (5, 6) and int(out[1]) == 7


def test_at_default_drops_out_of_bounds_updates():
    x = jnp.arange(10) + 1
    idx = jnp.array([-1, -11, 10])
    assert_same(x.at[idx].set(0), np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 0], np.int32))
    assert_same(
        x.at[idx].set(0, mode="clip"),
        np.array([0, 2, 3, 4, 5, 6, 7, 8, 9, 0], np.int32),
    )
    assert_same(x.at[11].add(100), np.asarray(x))


def test_at_repr_like_jax():
    x = jnp.arange(3)
    assert repr(x.at) == "_IndexUpdateHelper(Array([0, 1, 2], dtype=int32))"
    assert repr(x.at[2]) == "_IndexUpdateRef(Array([0, 1, 2], dtype=int32), 2)"
    assert repr(x.at[1:3]) == (
        "_IndexUpdateRef(Array([0, 1, 2], dtype=int32), slice(1, 3, None))"
    )
    assert (
        repr(x.at[2, ...])
        == "_IndexUpdateRef(Array([0, 1, 2], dtype=int32), (2, Ellipsis))"
    )


def test_at_errors():
    x = jnp.arange(4)
    with pytest.raises(ValueError, match="Cannot broadcast to shape with fewer dim"):
        x.at[1].set(jnp.ones(3, jnp.int32))
    with pytest.raises(ValueError, match='Unknown gather mode "bogus"'):
        x.at[1].set(1, mode="bogus")
    with pytest.raises(ValueError, match="fill_value argument to indexed get"):
        x.at[1].get(mode="fill", fill_value=jnp.ones(2))


def test_get_default_fill_values_match_jax():
    jax = _jax()
    for dtype in (
        np.float32,
        np.int32,
        np.int8,
        np.uint8,
        np.uint32,
        np.bool_,
        np.complex64,
    ):
        x = np.arange(4).astype(dtype)
        ref = jax.numpy.asarray(x).at[jax.numpy.array([1, 9, -9])].get(mode="fill")
        out = jnp.asarray(x).at[jnp.array([1, 9, -9])].get(mode="fill")
        assert_like_jax(out, ref)


# ----------------------------------------------------------------------------------------
# jaxprs of simple indexing read like JAX's


def _normalize(text):
    """Whitespace-insensitive, and JAX's short form of broadcast_in_dim / iota params
    (JAX leaves out `shape=`, `sharding=None` and empty `broadcast_dimensions`)."""
    text = re.sub(
        r"broadcast_in_dim\[\s*broadcast_dimensions=\(\)\s*shape=\([^)]*\)\s*"
        r"sharding=None\s*\]",
        "broadcast_in_dim",
        text,
    )
    text = re.sub(
        r"broadcast_in_dim\[\s*broadcast_dimensions=(\([^)]*\))\s*shape=\([^)]*\)\s*"
        r"sharding=None\s*\]",
        r"broadcast_in_dim[broadcast_dimensions=\1]",
        text,
    )
    return " ".join(text.split())


JAXPR_CASES = {
    "x[1:3]": lambda x: x[1:3],
    "x[2]": lambda x: x[2],
    "x[-1]": lambda x: x[-1],
    "x[1, 2]": lambda x: x[1, 2],
    "x[::2]": lambda x: x[::2],
    "x[::-1]": lambda x: x[::-1],
    "x[3:0:-2, 1::2]": lambda x: x[3:0:-2, 1::2],
    "x[None, 1:3, ..., None]": lambda x: x[None, 1:3, ..., None],
    "x[:, 1]": lambda x: x[:, 1],
    "x[...]": lambda x: x[...],
    "x[3:1]": lambda x: x[3:1],
    "x[1:100]": lambda x: x[1:100],
    "x[11]": lambda x: x[11],
    "x[2, -7]": lambda x: x[2, -7],
    "lax.slice": lambda x: _lax(x).slice(x, (1, 2), (3, 4), (1, 2)),
    "lax.slice_in_dim": lambda x: _lax(x).slice_in_dim(x, 1, 3, 1, 1),
    "lax.index_in_dim": lambda x: _lax(x).index_in_dim(x, 1, 1, False),
    "lax.dynamic_slice": lambda x: _lax(x).dynamic_slice(x, (1, 2), (2, 2)),
    "x.at[1].set": lambda x: x.at[1].set(2.0),
    "x.at[1:3].add": lambda x: x.at[1:3].add(2.0),
    "x.at[0].min": lambda x: x.at[0].min(2.0),
    "x.at[0].multiply": lambda x: x.at[0].multiply(2.0),
    "x.at[0].subtract": lambda x: x.at[0].subtract(2.0),
    "x.at[0].divide": lambda x: x.at[0].divide(2.0),
    "x.at[1].set(clip)": lambda x: x.at[1].set(5, mode="clip"),
    "x.at[:].set": lambda x: x.at[:].set(1.0),
    "x.at[1:3].get(fill)": lambda x: x.at[1:3].get(mode="fill"),
}
JAXPR_CASES_TRACED_INT = {
    "x[i]": lambda x, i: x[i],
    "x[i, 2]": lambda x, i: x[i, 2],
    "x[i, 1:3]": lambda x, i: x[i, 1:3],
    "x[1:3, i]": lambda x, i: x[1:3, i],
    "x[i, ::-1]": lambda x, i: x[i, ::-1],
    "lax.dynamic_slice(i)": lambda x, i: _lax(x).dynamic_slice(x, (i, 2), (2, 2)),
}
JAXPR_CASES_ARRAY = {
    "x[a]": lambda x, a: x[a],
    "x[a, a]": lambda x, a: x[a, a],
    "x[a, 1:3]": lambda x, a: x[a, 1:3],
    "x[1:3, a]": lambda x, a: x[1:3, a],
    "x[::2, a]": lambda x, a: x[::2, a],
    "x.at[a].get(clip)": lambda x, a: x.at[a].get(mode="clip"),
    "x.at[a].get(fill)": lambda x, a: x.at[a].get(mode="fill", fill_value=np.nan),
    "x.at[a].set": lambda x, a: x.at[a].set(2.0),
}


def _lax(x):
    return lax if isinstance(x, (jnp.ndarray, jaxlite.core.Tracer)) else _jax().lax


def _compare_jaxprs(f, jax_args, lite_args):
    jax = _jax()
    expected = _normalize(str(jax.make_jaxpr(f)(*jax_args)))
    got = _normalize(str(jaxlite.make_jaxpr(f)(*lite_args)))
    assert got == expected


@pytest.mark.parametrize("name", list(JAXPR_CASES))
def test_jaxpr_matches_jax(name):
    jax = _jax()
    _compare_jaxprs(JAXPR_CASES[name], [jax.numpy.asarray(X45)], [jnp.asarray(X45)])


@pytest.mark.parametrize("name", list(JAXPR_CASES_TRACED_INT))
def test_jaxpr_traced_int_matches_jax(name):
    jax = _jax()
    f = JAXPR_CASES_TRACED_INT[name]
    _compare_jaxprs(f, [jax.numpy.asarray(X45), 1], [jnp.asarray(X45), 1])


@pytest.mark.parametrize("name", list(JAXPR_CASES_ARRAY))
def test_jaxpr_array_index_matches_jax(name):
    jax = _jax()
    f = JAXPR_CASES_ARRAY[name]

    def closed(np_like):
        a = np_like.array([0, 2])
        return lambda x: f(x, a)

    expected = _normalize(
        str(jax.make_jaxpr(closed(jax.numpy))(jax.numpy.asarray(X45)))
    )
    got = _normalize(str(jaxlite.make_jaxpr(closed(jnp))(jnp.asarray(X45))))
    assert got == expected


def test_jaxpr_apply_has_update_jaxpr():
    text = str(jaxlite.make_jaxpr(lambda x: x.at[0].apply(jnp.sin))(jnp.asarray(X45)))
    assert "scatter[" in text
    assert "update_jaxpr={ lambda ; " in text and "sin" in text


def test_gather_and_scatter_params_print_like_jax():
    dn = lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    assert repr(dn) == (
        "GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), "
        "start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())"
    )
    sdn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    assert repr(sdn).startswith(
        "ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), "
    )
    assert repr(lax.GatherScatterMode.CLIP) == "GatherScatterMode.CLIP"
    assert lax.GatherScatterMode.from_any(None) is lax.GatherScatterMode.FILL_OR_DROP
    assert lax.GatherScatterMode.from_any("drop") is lax.GatherScatterMode.FILL_OR_DROP
    with pytest.raises(ValueError, match='Unknown gather mode "x"'):
        lax.GatherScatterMode.from_any("x")


# ----------------------------------------------------------------------------------------
# lax primitives: values against JAX


def test_dynamic_slice_clamps_like_xla():
    x = jnp.arange(10)
    assert_same(lax.dynamic_slice(x, (8,), (4,)), np.arange(6, 10, dtype=np.int32))
    assert_same(lax.dynamic_slice(x, (-3,), (2,)), np.array([7, 8], np.int32))
    assert_same(lax.dynamic_slice(x, (-30,), (2,)), np.array([0, 1], np.int32))
    f = jaxlite.jit(lambda x, i: lax.dynamic_slice(x, (i,), (3,)))
    assert_same(f(x, 9), np.array([7, 8, 9], np.int32))
    assert_same(f(x, -2), np.array([7, 8, 9], np.int32))
    g = jaxlite.jit(
        lambda x, i: lax.dynamic_slice(x, (i,), (3,), allow_negative_indices=False)
    )
    assert_same(g(x, -2), np.array([0, 1, 2], np.int32))


def test_dynamic_update_slice_clamps_like_xla():
    x = jnp.arange(10)
    u = jnp.array([100, 101, 102])
    expected = np.array([0, 1, 2, 3, 4, 5, 6, 100, 101, 102], np.int32)
    assert_same(lax.dynamic_update_slice(x, u, (8,)), expected)
    assert_same(lax.dynamic_update_slice(x, u, (-2,)), expected)
    f = jaxlite.jit(lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)))
    assert_same(f(x, u, 50), expected)
    assert_same(np.asarray(x), np.arange(10, dtype=np.int32))


def test_in_dim_helpers_match_numpy():
    y = jnp.asarray(X45)
    assert_same(lax.slice_in_dim(y, 1, 3, axis=1), X45[:, 1:3])
    assert_same(lax.slice_in_dim(y, None, -1, axis=1), X45[:, :-1])
    assert_same(lax.slice_in_dim(y, -3, None, 2, axis=-1), X45[:, -3::2])
    assert_same(lax.index_in_dim(y, 1, axis=1), X45[:, 1:2])
    assert_same(lax.index_in_dim(y, -1, axis=1, keepdims=False), X45[:, -1])
    assert_same(lax.dynamic_slice_in_dim(y, 1, 2, axis=1), X45[:, 1:3])
    assert_same(lax.dynamic_index_in_dim(y, 3, axis=0, keepdims=False), X45[3])
    ones = jnp.ones((4, 2))
    expected = X45.copy()
    expected[:, 1:3] = 1
    assert_same(lax.dynamic_update_slice_in_dim(y, ones, 1, axis=1), expected)
    expected = X45.copy()
    expected[:, 1] = 1
    assert_same(lax.dynamic_update_index_in_dim(y, jnp.ones(4), 1, axis=1), expected)
    with pytest.raises(
        IndexError, match="index 5 is out of bounds for axis 1 with size 5"
    ):
        lax.index_in_dim(y, 5, axis=1)


# (operand shape, indices, dimension numbers as positional fields, slice sizes)
GATHER_CASES = [
    ((3, 4), [[0], [2], [5], [-1]], ((1,), (0,), (0,)), (1, 4)),
    ((3, 4), [[0], [2], [5]], ((1,), (0,), (0,)), (1, 3)),
    ((3, 4), [[0], [2], [5]], ((1,), (1,), (1,)), (3, 1)),
    ((3, 4), [[0, 1], [2, 3], [1, 0]], ((), (0, 1), (0, 1)), (1, 1)),
    ((3, 4), [[1, 0], [3, 2]], ((1, 2), (), (1, 0)), (2, 2)),
    ((3, 4, 5), [[[1], [2]], [[0], [4]]], ((2, 3), (1,), (1,)), (3, 1, 2)),
    ((2, 4, 5), [[3], [4]], ((1,), (2,), (2,), (0,), (0,)), (1, 4, 1)),
    ((4,), np.zeros((2, 0), np.int32), ((1,), (), ()), (4,)),
]


@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("case", range(len(GATHER_CASES)))
def test_gather_matches_jax(case, mode):
    jax = _jax()
    shape, indices, dn, sizes = GATHER_CASES[case]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    idx = np.asarray(indices, np.int32)
    ref = jax.lax.gather(
        jax.numpy.asarray(x),
        idx,
        jax.lax.GatherDimensionNumbers(*dn),
        sizes,
        mode=mode,
    )
    out = lax.gather(
        jnp.asarray(x),
        jnp.asarray(idx),
        lax.GatherDimensionNumbers(*dn),
        sizes,
        mode=mode,
    )
    assert_like_jax(out, ref)
    jitted = jaxlite.jit(
        lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(*dn), sizes, mode=mode)
    )(jnp.asarray(x), jnp.asarray(idx))
    assert_same(jitted, out)


def test_gather_fill_value_param():
    dn = lax.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    x = jnp.arange(5)
    out = lax.gather(x, jnp.array([[1], [7]]), dn, (1,), mode="fill", fill_value=-3)
    assert_same(out, np.array([1, -3], np.int32))
    text = str(
        jaxlite.make_jaxpr(
            lambda x: lax.gather(x, jnp.array([[1]]), dn, (1,), mode="fill")
        )(x)
    )
    assert "fill_value=-2147483648" in text
    assert "mode=GatherScatterMode.FILL_OR_DROP" in text
    text = str(
        jaxlite.make_jaxpr(lambda x: lax.gather(x, jnp.array([[1]]), dn, (1,)))(x)
    )
    assert (
        "fill_value=None" in text and "mode=GatherScatterMode.PROMISE_IN_BOUNDS" in text
    )


# (operand shape, indices, updates shape, dimension numbers as positional fields)
SCATTER_CASES = [
    ((3, 4), [[0], [0], [5], [-1]], (4, 4), ((1,), (0,), (0,))),
    ((3, 4), [[0], [2]], (2, 3), ((1,), (0,), (0,))),
    ((3, 4), [[0, 1], [2, 3], [0, 1], [3, 0]], (4,), ((), (0, 1), (0, 1))),
    ((4,), [[3], [1], [-1], [2]], (4, 2), ((1,), (), (0,))),
    ((2, 4, 5), [[1], [4]], (2, 4), ((1,), (2,), (2,), (0,), (0,))),
]
SCATTERS = [
    "scatter_add",
    "scatter_sub",
    "scatter_mul",
    "scatter_min",
    "scatter_max",
    "scatter",
]


@pytest.mark.parametrize("mode", [None, "clip"])
@pytest.mark.parametrize("op", SCATTERS)
@pytest.mark.parametrize("case", range(len(SCATTER_CASES)))
def test_scatter_matches_jax(case, op, mode):
    jax = _jax()
    shape, indices, upd_shape, dn = SCATTER_CASES[case]
    if op == "scatter" and case in (0, 2):
        pytest.skip("repeated indices: which write wins is unspecified")
    x = (np.arange(np.prod(shape)) % 5).astype(np.float32).reshape(shape)
    upd = (np.arange(np.prod(upd_shape)) % 4 + 1).astype(np.float32).reshape(upd_shape)
    idx = np.asarray(indices, np.int32)
    ref = getattr(jax.lax, op)(
        jax.numpy.asarray(x), idx, upd, jax.lax.ScatterDimensionNumbers(*dn), mode=mode
    )
    out = getattr(lax, op)(
        jnp.asarray(x),
        jnp.asarray(idx),
        jnp.asarray(upd),
        lax.ScatterDimensionNumbers(*dn),
        mode=mode,
    )
    assert_like_jax(out, ref)


def test_scatter_jit_matches_eager_and_drops():
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    f = lambda x, i, u: lax.scatter_add(x, i, u, dn)
    x, i, u = jnp.zeros(4), jnp.array([[1], [1], [9], [-1]]), jnp.ones(4)
    assert_same(f(x, i, u), np.array([0, 2, 0, 0], np.float32))
    assert_same(jaxlite.jit(f)(x, i, u), np.array([0, 2, 0, 0], np.float32))


def test_scatter_apply_applies_per_occurrence():
    dn = lax.ScatterDimensionNumbers((), (0,), (0,))
    out = lax.scatter_apply(
        jnp.arange(5) + 1,
        jnp.array([[0], [0], [3], [7]]),
        lambda v: v * 3,
        dn,
        update_shape=(4,),
    )
    assert_same(out, np.array([9, 2, 3, 12, 5], np.int32))


def test_weak_type_rules():
    w = lax.convert_element_type(jnp.arange(4.0), np.float32, weak_type=True)
    s = jnp.arange(4.0)
    dn = lax.GatherDimensionNumbers((), (0,), (0,))
    sdn = lax.ScatterDimensionNumbers((), (0,), (0,))
    idx = jnp.array([[1]])
    assert lax.gather(w, idx, dn, (1,)).weak_type
    assert not lax.gather(s, idx, dn, (1,)).weak_type
    assert lax.dynamic_slice(w, (jnp.int32(1),), (2,)).weak_type
    assert lax.scatter_add(w, idx, s[:1], sdn).weak_type
    assert not lax.scatter_add(s, idx, w[:1], sdn).weak_type
    assert not lax.dynamic_update_slice(w, w[:2], (1,)).weak_type
    for f in (
        lambda x: lax.gather(x, idx, dn, (1,)),
        lambda x: lax.scatter_add(x, idx, s[:1], sdn),
    ):
        assert jaxlite.make_jaxpr(f)(w).out_avals[0].weak_type


@pytest.mark.parametrize(
    "call, exc, phrase",
    [
        (
            lambda x: lax.dynamic_slice(x, (2,), (12,)),
            TypeError,
            "dynamic_slice slice_sizes must be less than or equal to operand shape",
        ),
        (
            lambda x: lax.dynamic_slice(x, (2.0,), (1,)),
            TypeError,
            "index arguments to dynamic_slice must be integers of the same type, got: "
            "float32",
        ),
        (
            lambda x: lax.dynamic_slice(x, (2, 2), (1,)),
            TypeError,
            "Length of slice indices must match number of operand dimensions",
        ),
        (
            lambda x: lax.dynamic_slice(x, (jnp.array([2]),), (1,)),
            TypeError,
            "start_indices arguments to dynamic_slice must be scalars",
        ),
        (
            lambda x: lax.dynamic_slice(x, (-3,), (2,), allow_negative_indices=False),
            ValueError,
            "Index -3 is out of bounds for dimension 10",
        ),
        (
            lambda x: lax.dynamic_update_slice(x, jnp.array([1.0]), (8,)),
            TypeError,
            "lax.dynamic_update_slice requires arguments to have the same dtypes, got "
            "int32, float32.",
        ),
        (
            lambda x: lax.dynamic_update_slice(x, jnp.arange(12), (0,)),
            TypeError,
            "dynamic_update_slice update shape must be smaller than operand shape",
        ),
        (
            lambda x: lax.slice(x, (2,), (12,)),
            TypeError,
            "slice limit_indices must be less than or equal to operand shape",
        ),
        (
            lambda x: lax.slice(x, (2,), (1,)),
            TypeError,
            "slice limit_indices must be greater than or equal to start_indices",
        ),
        (
            lambda x: lax.slice(x, (2,), (5,), (0,)),
            TypeError,
            "slice strides must be positive",
        ),
        (
            lambda x: lax.slice(x, (2, 3), (5, 6)),
            TypeError,
            "slice start_indices must have length equal to the number of dimensions",
        ),
        (
            lambda x: lax.gather(
                x, jnp.array([[0.0]]), lax.GatherDimensionNumbers((), (0,), (0,)), (1,)
            ),
            ValueError,
            "gather indices must have an integer type",
        ),
        (
            lambda x: lax.gather(
                x, jnp.array([[0]]), lax.GatherDimensionNumbers((), (0,), (0,)), (2,)
            ),
            TypeError,
            "Gather op can only collapse slice dims with bound 1",
        ),
        (
            lambda x: lax.gather(
                x, jnp.array([[0]]), lax.GatherDimensionNumbers((0,), (), (0,)), (11,)
            ),
            TypeError,
            "Slice size at index 0 in gather op is out of range",
        ),
        (
            lambda x: lax.gather(
                x, jnp.array([[0, 1]]), lax.GatherDimensionNumbers((), (0,), (0,)), (1,)
            ),
            TypeError,
            "Gather op has 1 elements in start_index_map and the bound of dimension",
        ),
        (
            lambda x: lax.scatter_add(
                x,
                jnp.array([[0]]),
                jnp.array([1.0]),
                lax.ScatterDimensionNumbers((), (0,), (0,)),
            ),
            TypeError,
            "lax.scatter requires arguments to have the same dtypes",
        ),
        (
            lambda x: lax.scatter(
                x,
                jnp.array([[0]]),
                jnp.ones((1, 11), jnp.int32),
                lax.ScatterDimensionNumbers((1,), (), (0,)),
            ),
            TypeError,
            "Bounds of the window dimensions of updates must not exceed",
        ),
        (
            lambda x: lax.scatter(
                x,
                jnp.array([[0]]),
                jnp.ones((2,), jnp.int32),
                lax.ScatterDimensionNumbers((), (0,), (0,)),
            ),
            TypeError,
            "Bounds of the scatter dimensions of updates must be the same",
        ),
    ],
)
def test_lax_errors_eager_and_traced(call, exc, phrase):
    with pytest.raises(exc, match=re.escape(phrase)):
        call(jnp.arange(10))
    with pytest.raises(exc, match=re.escape(phrase)):
        jaxlite.make_jaxpr(call)(jnp.arange(10))


# ----------------------------------------------------------------------------------------
# take, take_along_axis, nonzero, argwhere, flatnonzero, compress, choose


@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
@pytest.mark.parametrize("axis", [None, 1, -2])
@pytest.mark.parametrize("indices", [[0, 11, -1, -11, 3], [[1, 2], [-4, 4]], -7])
def test_take_matches_jax(indices, axis, mode):
    jax = _jax()
    x = np.arange(20).reshape(4, 5)
    idx = np.asarray(indices, np.int32)
    ref = jax.numpy.take(jax.numpy.asarray(x), idx, axis=axis, mode=mode)
    out = take(jnp.asarray(x), jnp.asarray(idx), axis=axis, mode=mode)
    assert_like_jax(out, ref)
    assert_like_jax(
        take(
            jnp.asarray(x).astype(np.float32),
            jnp.asarray(idx),
            axis=axis,
            mode=mode,
            fill_value=-5.0,
        ),
        jax.numpy.take(
            jax.numpy.asarray(x, np.float32), idx, axis=axis, mode=mode, fill_value=-5.0
        ),
    )


def test_take_errors():
    with pytest.raises(NotImplementedError, match="The 'raise' mode to jnp.take"):
        take(jnp.arange(3), jnp.array([0]), mode="raise")
    with pytest.raises(TypeError, match="take requires ndarray or scalar arguments"):
        take([1, 2], jnp.array([0]))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_take_along_axis_matches_jax(axis, mode):
    jax = _jax()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[0, 5, -1], [2, 1, 0], [3, -2, 9]], np.int32)
    if axis is None:
        idx = idx.ravel()
    elif axis == 0:
        idx = np.concatenate([idx, idx[:, :1]], axis=1)[:2]
    ref = jax.numpy.take_along_axis(jax.numpy.asarray(x), idx, axis=axis, mode=mode)
    out = take_along_axis(jnp.asarray(x), jnp.asarray(idx), axis=axis, mode=mode)
    assert_like_jax(out, ref)


def test_take_along_axis_matches_numpy_in_bounds():
    x = np.random.default_rng(0).normal(size=(3, 4, 5)).astype(np.float32)
    idx = np.argsort(x, axis=1)
    assert_same(
        take_along_axis(jnp.asarray(x), jnp.asarray(idx), axis=1),
        np.take_along_axis(x, idx, axis=1),
    )
    out = jaxlite.jit(lambda x, i: take_along_axis(x, i, axis=1))(
        jnp.asarray(x), jnp.asarray(idx)
    )
    assert_same(out, np.take_along_axis(x, idx, axis=1))
    with pytest.raises(ValueError, match="indices must be 1D if axis=None"):
        take_along_axis(jnp.asarray(x), jnp.asarray(idx), axis=None)


def test_nonzero_family_matches_jax():
    jax = _jax()
    y = np.arange(12).reshape(3, 4) % 5 > 1
    cases = [
        (nonzero, jax.numpy.nonzero, {}),
        (nonzero, jax.numpy.nonzero, dict(size=10)),
        (nonzero, jax.numpy.nonzero, dict(size=3, fill_value=-1)),
        (nonzero, jax.numpy.nonzero, dict(size=10, fill_value=(-1, -2))),
        (argwhere, jax.numpy.argwhere, {}),
        (argwhere, jax.numpy.argwhere, dict(size=9, fill_value=7)),
        (flatnonzero, jax.numpy.flatnonzero, {}),
        (flatnonzero, jax.numpy.flatnonzero, dict(size=11)),
    ]
    for ours, theirs, kw in cases:
        ref = theirs(jax.numpy.asarray(y), **kw)
        out = ours(jnp.asarray(y), **kw)
        for o, r in zip(
            jaxlite.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(ref)
        ):
            assert_like_jax(o, r)
        if kw:
            jitted = jaxlite.jit(lambda a, ours=ours, kw=kw: ours(a, **kw))(
                jnp.asarray(y)
            )
            for o, r in zip(
                jaxlite.tree_util.tree_leaves(jitted), jax.tree_util.tree_leaves(ref)
            ):
                assert_same(o, np.asarray(r))


def test_nonzero_errors():
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        nonzero(jnp.array(3))
    with pytest.raises(
        ConcretizationTypeError, match="size argument of jnp.nonzero must"
    ):
        jaxlite.jit(nonzero)(jnp.arange(3))
    assert argwhere(jnp.array(3)).shape == (1, 0)
    assert argwhere(jnp.array(0)).shape == (0, 0)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_compress_matches_jax(axis):
    jax = _jax()
    y = np.arange(12).reshape(3, 4)
    cond = np.array([True, False, True])
    ref = jax.numpy.compress(cond, jax.numpy.asarray(y), axis=axis)
    assert_like_jax(compress(jnp.asarray(cond), jnp.asarray(y), axis=axis), ref)
    ref = jax.numpy.compress(
        cond, jax.numpy.asarray(y), axis=axis, size=3, fill_value=7
    )
    out = compress(jnp.asarray(cond), jnp.asarray(y), axis=axis, size=3, fill_value=7)
    assert_like_jax(out, ref)
    with pytest.raises(ValueError, match="size must be positive and not greater"):
        compress(jnp.asarray(cond), jnp.asarray(y), axis=0, size=4)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_choose_matches_jax(mode):
    jax = _jax()
    choices = [np.arange(4), np.arange(4) * 10, np.float32(0.5)]
    a = np.array([0, 1, 2, 1]) if mode == "raise" else np.array([0, 4, -1, 2])
    ref = jax.numpy.choose(a, choices, mode=mode)
    out = choose(jnp.asarray(a), [jnp.asarray(c) for c in choices], mode=mode)
    assert_like_jax(out, ref)
    if mode != "raise":
        jitted = jaxlite.jit(
            lambda a: choose(a, [jnp.asarray(c) for c in choices], mode=mode)
        )(jnp.asarray(a))
        assert_same(jitted, np.asarray(ref))


def test_choose_errors():
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        choose(jnp.array([0, 3]), [jnp.arange(2), jnp.arange(2)])
    with pytest.raises(ConcretizationTypeError, match="jit-compiled with mode='raise'"):
        jaxlite.jit(lambda a: choose(a, [jnp.arange(2), jnp.arange(2)]))(
            jnp.array([0, 1])
        )


def test_array_methods_forward_to_indexing_functions():
    x = jnp.arange(6)
    if not hasattr(jnp, "take"):
        pytest.skip("jnp does not export the indexing functions yet")
    assert_same(
        x.take(jnp.array([1, 7])), np.array([1, np.iinfo(np.int32).min], np.int32)
    )
    assert_same(x.nonzero()[0], np.arange(1, 6, dtype=np.int32))
