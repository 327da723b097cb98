"""Array creation (jaxlite.numpy.creation) and the selection functions added to
jaxlite.numpy.ufuncs (where, select, clip, nan_to_num).

Results are compared with real JAX (values, dtype and weak type) and, where the APIs
agree, with NumPy; every case also runs under `jit`. Error cases check the class and a
key phrase.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.errors import ConcretizationTypeError

M = np.arange(12, dtype=np.float32).reshape(3, 4)
S = np.arange(9, dtype=np.int32).reshape(3, 3)
T = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
V = np.arange(4, dtype=np.float32)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 1.0, -0.0], np.float32)
CSPECIAL = np.array(
    [complex(np.nan, np.inf), complex(-np.inf, 1), 1 - 2j], np.complex64
)


def _jax():
    return pytest.importorskip("jax")


def _on_jax(jax, args):
    return [jax.numpy.asarray(a) if isinstance(a, np.ndarray) else a for a in args]


def assert_same(ours, ref, rtol=0.0):
    """Same structure, shape, dtype, weak type (if `ref` has one) and values."""
    if isinstance(ref, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(ref)
        for o, r in zip(ours, ref):
            assert_same(o, r, rtol)
        return
    assert isinstance(ours, jaxlite.Array), type(ours)
    assert ours.shape == np.shape(ref)
    assert ours.dtype == np.asarray(ref).dtype, (ours.dtype, np.asarray(ref).dtype)
    if hasattr(ref, "weak_type"):
        assert ours.weak_type == ref.weak_type, (ours.weak_type, ref.weak_type)
    if rtol:
        np.testing.assert_allclose(
            np.asarray(ours), np.asarray(ref), rtol=rtol, atol=1e-6
        )
    else:
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(ref))


# ----------------------------------------------------------------------------------
# array and asarray


ARRAY_CASES = [
    ("float_weak", 3.0, None),
    ("int_weak", 3, None),
    ("bool", True, None),
    ("complex_weak", 1j, None),
    ("int_min", -(2**31), None),
    ("list_mixed", [1, 2.5], None),
    ("nested", [[1, 2], [3, 4]], None),
    ("tuple", (1, 2), None),
    ("empty", [], None),
    ("empty_rows", [[], []], None),
    ("bool_list", [True, False], None),
    ("complex_list", [1j, 2], None),
    ("numpy_f64", np.ones((2, 2)), None),
    ("numpy_scalar_f64", np.float64(1.5), None),
    ("numpy_0d", np.array(3.0), None),
    ("numpy_uint64", np.uint64(3), None),
    ("numpy_int64_wraps", np.int64(2**40), None),
    ("list_of_numpy", [np.ones(2), np.zeros(2)], None),
    ("mixed_f16", [1, np.float16(2)], None),
    ("mixed_i8", [np.int8(1), 3], None),
    ("mixed_bool_int", [True, 2], None),
    ("mixed_f64_scalar", [np.float64(1), 2], None),
    ("dtype_float", 3, float),
    ("dtype_str", [1, 2], "float32"),
    ("dtype_int8", [1.7, -2.2], np.int8),
    ("dtype_bool", [0, 2], bool),
    ("dtype_bfloat16", [1, 2], "bfloat16"),
    ("dtype_complex", [1, 2], np.complex64),
]


@pytest.mark.parametrize("name,obj,dtype", ARRAY_CASES, ids=[c[0] for c in ARRAY_CASES])
def test_array_matches_jax(name, obj, dtype):
    jax = _jax()
    assert_same(jnp.array(obj, dtype=dtype), jax.numpy.array(obj, dtype=dtype))
    assert_same(jnp.asarray(obj, dtype=dtype), jax.numpy.asarray(obj, dtype=dtype))


def test_array_weak_types_as_in_jax():
    assert repr(jnp.array(3.0)) == "Array(3., dtype=float32, weak_type=True)"
    assert repr(jnp.array([1, 2.5])) == "Array([1. , 2.5], dtype=float32)"
    assert jnp.array(jnp.array(3.0)).weak_type
    assert not jnp.array(jnp.array(3.0), dtype=jnp.float32).weak_type
    assert not jnp.asarray(3, dtype=float).weak_type
    assert jnp.array(1.0, ndmin=2).weak_type and jnp.array(1.0, ndmin=2).shape == (1, 1)
    assert not jnp.array([jnp.array(1.0), 2]).weak_type


def test_array_of_arrays_promotes_like_jax():
    jax = _jax()
    for parts in (
        [np.ones(2, np.int8), np.ones(2, np.uint8)],
        [np.ones(2, np.int32), np.zeros(2, np.float16)],
    ):
        ours = jnp.array([jnp.asarray(p) for p in parts])
        ref = jax.numpy.array([jax.numpy.asarray(p) for p in parts])
        assert_same(ours, ref)
    ours = jnp.array([jnp.ones(2, jnp.bfloat16), jnp.ones(2, jnp.int32)])
    assert ours.dtype == jnp.bfloat16


def test_asarray_returns_its_array_and_array_copies():
    x = jnp.ones(3)
    assert jnp.asarray(x) is x
    y = jnp.array(x)
    assert y is not x and np.array_equal(np.asarray(y), np.asarray(x))
    assert jnp.copy(x) is not x and jnp.copy(2).weak_type


def test_array_64bit_dtype_request_warns():
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
        out = jnp.array([1, 2], dtype=np.float64)
    assert out.dtype == np.float32
    with pytest.warns(UserWarning, match="requested in asarray"):
        assert jnp.asarray(1, dtype="int64").dtype == np.int32
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.array(np.ones(2)).dtype == np.float32  # no request, no warning


ARRAY_ERRORS = [
    ("none", lambda m: m.array(None), ValueError, "None is not a valid value"),
    ("string", lambda m: m.array("abc"), TypeError, "not a valid JAX array type"),
    ("ragged", lambda m: m.array([[1], [1, 2]]), ValueError, "inhomogeneous"),
    ("big_int", lambda m: m.array(2**40), OverflowError, "too large to convert"),
    ("big_int_list", lambda m: m.array([2**40]), OverflowError, "out of bounds"),
    (
        "overflow_i8",
        lambda m: m.array([np.int8(1), 300]),
        OverflowError,
        "out of bounds",
    ),
    (
        "negative_uint",
        lambda m: m.array(-1, dtype=np.uint32),
        OverflowError,
        "out of bounds",
    ),
    ("order", lambda m: m.array([1.0], order="F"), NotImplementedError, "order='K'"),
]


@pytest.mark.parametrize(
    "name,fn,cls,phrase", ARRAY_ERRORS, ids=[e[0] for e in ARRAY_ERRORS]
)
def test_array_errors(name, fn, cls, phrase):
    with pytest.raises(cls, match=re.escape(phrase)):
        fn(jnp)
    jax = pytest.importorskip("jax")
    with pytest.raises(cls):
        fn(jax.numpy)


def test_array_of_tracers():
    f = jaxlite.jit(lambda a: jnp.array([[a, 2.0], [3.0, a]]))
    out = f(1.0)
    assert repr(out) == "Array([[1., 2.],\n       [3., 1.]], dtype=float32)"
    g = jaxlite.jit(lambda a: jnp.array([a, 2.5]))
    assert g(np.int32(1)).dtype == np.float32


def normalize(text):
    text = re.sub(r"\s+", " ", text).replace("[ ", "[").replace(" ]", "]")
    text = re.sub(r" ?sharding=None", "", text)
    text = re.sub(r"(broadcast_in_dim\[[^\]]*?) shape=\([^)]*\)", r"\1", text)
    return text.replace("broadcast_in_dim[broadcast_dimensions=()]", "broadcast_in_dim")


# `jnp.array` of a list of tracers is not compared: the seed documents (the spec) print
# all conversions before the broadcasts, JAX 0.10.2 interleaves them (see
# tests/test_sharp_bits.py::test_permissive_sum_jaxpr).
JAXPRS = [
    ("array_copy", lambda m, a: m.array(a), np.ones(2, np.float32)),
    ("asarray", lambda m, a: m.asarray(a), np.ones(2, np.float32)),
    ("asarray_dtype", lambda m, a: m.asarray(a, dtype=m.int32), np.ones(2, np.float32)),
    ("copy", lambda m, a: m.copy(a), np.ones(2, np.float32)),
    ("eye", lambda m, a: m.eye(3, k=1) * a, 1.0),
    ("tri", lambda m, a: m.tri(3, 2, -1) * a, 1.0),
    ("meshgrid", lambda m, a: m.meshgrid(a, a), np.ones(3, np.float32)),
]


@pytest.mark.parametrize("name,fn,x", JAXPRS, ids=[j[0] for j in JAXPRS])
def test_jaxpr_matches_jax(name, fn, x):
    jax = _jax()
    ours = str(jaxlite.make_jaxpr(lambda a: fn(jnp, a))(x))
    ref = str(jax.make_jaxpr(lambda a: fn(jax.numpy, a))(x))
    assert normalize(ours) == normalize(ref)


# ----------------------------------------------------------------------------------
# Ranges


LINSPACE = [
    ("basic", (0, 1, 5), {}),
    ("no_endpoint", (0, 1, 5), {"endpoint": False}),
    ("retstep", (0, 1, 5), {"retstep": True}),
    ("retstep_no_endpoint", (2.0, -1.0, 4), {"endpoint": False, "retstep": True}),
    ("one", (0, 1, 1), {"retstep": True}),
    ("one_no_endpoint", (0, 5, 1), {"retstep": True, "endpoint": False}),
    ("zero", (0, 1, 0), {"retstep": True}),
    ("int_dtype", (0, 10, 5), {"dtype": int}),
    ("int_negative", (-10, 10, 4), {"dtype": np.int32}),
    ("bool_dtype", (0, 5, 3), {"dtype": bool}),
    ("int_inputs", (np.int32(0), np.int32(5), 3), {}),
    ("float16_inputs", (np.float16(0), np.float16(5), 3), {}),
    ("complex", (0, 1j, 3), {}),
    ("array_bounds", (np.array([0.0, 1.0], np.float32), 2.0, 3), {}),
    ("array_bounds_axis", (np.array([0.0, 1.0], np.float32), 2.0, 3), {"axis": 1}),
    ("array_bounds_neg_axis", (np.zeros((2, 3), np.float32), 1.0, 4), {"axis": -1}),
    ("bfloat16", (0, 1, 3), {"dtype": "bfloat16"}),
]


@pytest.mark.parametrize("name,args,kw", LINSPACE, ids=[c[0] for c in LINSPACE])
def test_linspace_matches_jax(name, args, kw):
    jax = _jax()
    ours = jnp.linspace(*args, **kw)
    assert_same(ours, jax.numpy.linspace(*_on_jax(jax, args), **kw), rtol=1e-6)
    if not kw.get("retstep"):
        np.testing.assert_allclose(
            np.asarray(ours), np.linspace(*args, **kw), rtol=1e-5, atol=1e-6
        )


def test_linspace_with_traced_bounds():
    f = jaxlite.jit(lambda a, b: jnp.linspace(a, b, 4, retstep=True))
    out, step = f(0.0, 3.0)
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0, 3.0])
    assert float(step) == 1.0 and out.dtype == np.float32 and not out.weak_type


def test_linspace_errors():
    with pytest.raises(ValueError, match="must be non-negative"):
        jnp.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        jnp.linspace(0, 5, 3.0)
    with pytest.raises(ConcretizationTypeError, match="'num' argument of jnp.linspace"):
        jaxlite.jit(lambda n: jnp.linspace(0, 5, n))(3)


@pytest.mark.parametrize(
    "fn",
    [
        lambda m: m.logspace(0, 2, 3),
        lambda m: m.logspace(0, 2, 3, base=2.0, endpoint=False),
        lambda m: m.logspace(0, 2, 3, dtype=m.int32),
        lambda m: m.logspace(np.array([0.0, 1.0], np.float32), 3, 4, axis=1),
        lambda m: m.geomspace(1, 1000, 4),
        lambda m: m.geomspace(-1, -1000, 4, endpoint=False),
        lambda m: m.geomspace(1, 1000, 4, dtype=m.int32),
        lambda m: m.geomspace(np.array([1.0, 2.0], np.float32), 64.0, 3, axis=-1),
    ],
    ids=[
        "log",
        "log_base",
        "log_int",
        "log_axis",
        "geom",
        "geom_neg",
        "geom_int",
        "geom_axis",
    ],
)
def test_logspace_geomspace_match_jax(fn):
    jax = _jax()
    ours = fn(jnp)
    assert_same(ours, fn(jax.numpy), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ours), fn(np), rtol=1e-5)


def test_arange_still_works():
    assert_same(jnp.arange(5), np.arange(5, dtype=np.int32))
    assert jnp.arange(0.0, 1.0, 0.25).shape == (4,)


# ----------------------------------------------------------------------------------
# Grids and matrices


MATRIX_CASES = [
    ("eye", lambda m: m.eye(3)),
    ("eye_rect_k", lambda m: m.eye(3, 4, 1)),
    ("eye_neg_k", lambda m: m.eye(3, k=-2, dtype=m.int32)),
    ("eye_bool", lambda m: m.eye(2, dtype=bool)),
    ("eye_far_k", lambda m: m.eye(2, 3, 5)),
    ("identity", lambda m: m.identity(2, m.int8)),
    ("tri", lambda m: m.tri(3, 4, 1)),
    ("tri_neg", lambda m: m.tri(4, k=-1, dtype=m.int32)),
    ("tril", lambda m: m.tril(M, -1)),
    ("tril_batch", lambda m: m.tril(T, 1)),
    ("triu", lambda m: m.triu(M)),
    ("triu_batch", lambda m: m.triu(T, 2)),
    ("tril_int", lambda m: m.tril(S)),
    ("diag_1d", lambda m: m.diag(V)),
    ("diag_1d_k", lambda m: m.diag(V, 1)),
    ("diag_1d_neg_k", lambda m: m.diag(V, -2)),
    ("diag_2d", lambda m: m.diag(M)),
    ("diag_2d_k", lambda m: m.diag(M, 2)),
    ("diag_2d_neg_k", lambda m: m.diag(M, -1)),
    ("diag_2d_far", lambda m: m.diag(M, 10)),
    ("diag_empty", lambda m: m.diag(np.zeros(0, np.float32))),
    ("diagonal_3d", lambda m: m.diagonal(T, 1, 0, 2)),
    ("diagonal_axes", lambda m: m.diagonal(T, -1, 2, 1)),
    ("diagonal_special", lambda m: m.diagonal(np.diag(SPECIAL))),
    ("diagflat", lambda m: m.diagflat(S[:2, :2], -1)),
    ("meshgrid_xy", lambda m: m.meshgrid(V, V[:3])),
    ("meshgrid_ij", lambda m: m.meshgrid(V, V[:3], indexing="ij")),
    ("meshgrid_sparse", lambda m: m.meshgrid(V, V[:3], V[:2], sparse=True)),
    ("meshgrid_one", lambda m: m.meshgrid(V)),
    ("indices", lambda m: m.indices((2, 3))),
    ("indices_sparse", lambda m: m.indices((2, 3), sparse=True)),
]


@pytest.mark.parametrize("name,fn", MATRIX_CASES, ids=[c[0] for c in MATRIX_CASES])
def test_matrices_match_jax_and_numpy(name, fn):
    jax = _jax()
    ours = fn(jnp)
    assert_same(ours, fn(jax.numpy))
    ref = fn(np)
    ours_list = ours if isinstance(ours, (list, tuple)) else [ours]
    ref_list = ref if isinstance(ref, (list, tuple)) else [ref]
    for o, r in zip(ours_list, ref_list):
        np.testing.assert_array_equal(np.asarray(o), r)
    jitted = jaxlite.jit(lambda: fn(jnp))()
    assert_same(type(ours)(jitted) if isinstance(ours, (list, tuple)) else jitted, ours)


def test_matrices_with_traced_inputs():
    f = jaxlite.jit(lambda k: jnp.eye(3, k=k))
    np.testing.assert_array_equal(np.asarray(f(1)), np.eye(3, k=1))
    g = jaxlite.jit(lambda x: (jnp.diag(x), jnp.tril(x), jnp.diagonal(x, 1)))
    d, lo, dg = g(S)
    np.testing.assert_array_equal(np.asarray(d), np.diag(S))
    np.testing.assert_array_equal(np.asarray(lo), np.tril(S))
    np.testing.assert_array_equal(np.asarray(dg), np.diagonal(S, 1))


MATRIX_ERRORS = [
    ("eye_negative", lambda m: m.eye(-1), ValueError, "negative dimensions"),
    ("tril_1d", lambda m: m.tril(V), ValueError, "must be at least 2D"),
    ("diag_3d", lambda m: m.diag(T), ValueError, "diag input must be 1d or 2d"),
    ("diagonal_1d", lambda m: m.diagonal(V), ValueError, "at least two dimensions"),
    ("meshgrid_2d", lambda m: m.meshgrid(M), ValueError, "must be 1D"),
    (
        "meshgrid_indexing",
        lambda m: m.meshgrid(V, indexing="foo"),
        ValueError,
        "Valid values for indexing",
    ),
]


@pytest.mark.parametrize(
    "name,fn,cls,phrase", MATRIX_ERRORS, ids=[e[0] for e in MATRIX_ERRORS]
)
def test_matrix_errors(name, fn, cls, phrase):
    with pytest.raises(cls, match=re.escape(phrase)):
        fn(jnp)
    jax = pytest.importorskip("jax")
    with pytest.raises(cls):
        fn(jax.numpy)


# ----------------------------------------------------------------------------------
# where, select, clip, nan_to_num (jaxlite.numpy.ufuncs)


SELECTION_CASES = [
    ("where", lambda m, x: m.where(x > 2, x, 0), (M,)),
    ("where_weak", lambda m: m.where(True, 1.0, 2), ()),
    ("where_int_weak", lambda m, x: m.where(x > 2, 1, 2), (M,)),
    ("where_int_cond", lambda m, x: m.where(x, 1.0, 2.0), (S,)),
    ("where_broadcast", lambda m, x: m.where(x[:, :1] > 3, x[:1], -1.0), (M,)),
    ("where_promote", lambda m, x, y: m.where(x > 1, x, y), (S, V[:3])),
    ("where_nonzero", lambda m, x: m.where(x > 5), (M,)),
    ("where_nonzero_size", lambda m, x: m.where(x > 5, size=8, fill_value=-1), (M,)),
    ("select", lambda m, x: m.select([x > 6, x > 2], [x, -x], 9.0), (M,)),
    ("select_broadcast", lambda m, x: m.select([x > 6, x[0] > 1], [x, 1], 9.5), (M,)),
    ("select_int_cond", lambda m, x: m.select([x], [x]), (S,)),
    ("select_weak", lambda m: m.select([True], [1.0], 2), ()),
    ("clip", lambda m, x: m.clip(x, 1, 4), (M,)),
    ("clip_min", lambda m, x: m.clip(x, min=3), (M,)),
    ("clip_max", lambda m, x: m.clip(x, max=3), (M,)),
    ("clip_none", lambda m, x: m.clip(x), (M,)),
    ("clip_int_float_bounds", lambda m, x: m.clip(x, 1.5, 3), (S,)),
    ("clip_weak", lambda m: m.clip(2.0, 0, 1), ()),
    ("clip_array_bounds", lambda m, x, lo: m.clip(x, lo, 6), (M, V)),
    ("clip_nan", lambda m, x: m.clip(x, 0, 0.5), (SPECIAL,)),
    ("clip_inverted", lambda m, x: m.clip(x, 4, 1), (M,)),
    ("nan_to_num", lambda m, x: m.nan_to_num(x), (SPECIAL,)),
    (
        "nan_to_num_args",
        lambda m, x: m.nan_to_num(x, nan=5.0, posinf=7, neginf=-7),
        (SPECIAL,),
    ),
    ("nan_to_num_int", lambda m, x: m.nan_to_num(x), (S,)),
    ("nan_to_num_f16", lambda m, x: m.nan_to_num(x.astype(m.float16)), (SPECIAL,)),
    ("nan_to_num_complex", lambda m, x: m.nan_to_num(x), (CSPECIAL,)),
    ("nan_to_num_weak", lambda m: m.nan_to_num(1.0), ()),
]


@pytest.mark.parametrize(
    "name,fn,args", SELECTION_CASES, ids=[c[0] for c in SELECTION_CASES]
)
def test_selection_matches_jax(name, fn, args):
    jax = _jax()
    ours = fn(jnp, *args)
    assert_same(ours, fn(jax.numpy, *_on_jax(jax, args)))
    if "nonzero" not in name:
        jitted = jaxlite.jit(lambda *a: fn(jnp, *a))(*args)
        assert_same(jitted, ours)


def test_where_one_argument_needs_size_under_jit():
    with pytest.raises(ConcretizationTypeError, match="size argument of jnp.nonzero"):
        jaxlite.jit(lambda x: jnp.where(x > 2))(M)
    rows, cols = jaxlite.jit(lambda x: jnp.where(x > 8, size=4, fill_value=-1))(M)
    np.testing.assert_array_equal(np.asarray(rows), [2, 2, 2, -1])
    np.testing.assert_array_equal(np.asarray(cols), [1, 2, 3, -1])


SELECTION_ERRORS = [
    ("where_two_args", lambda m: m.where(M > 2, 1), TypeError, "at position 2"),
    ("where_list", lambda m: m.where([True], 1.0, 2.0), TypeError, "requires ndarray"),
    (
        "where_shapes",
        lambda m: m.where(V > 1, np.ones(3), 0),
        ValueError,
        "Incompatible shapes for broadcasting",
    ),
    (
        "where_size_three",
        lambda m: m.where(M > 2, M, 0, size=3),
        ValueError,
        "cannot be used in three-term where",
    ),
    (
        "select_lengths",
        lambda m: m.select([M > 1], [M, M]),
        ValueError,
        "condlist must have length equal to choicelist",
    ),
    (
        "select_empty",
        lambda m: m.select([], []),
        ValueError,
        "condlist must be non-empty",
    ),
    (
        "select_shapes",
        lambda m: m.select([V > 0], [np.ones(3)]),
        ValueError,
        "Incompatible shapes for broadcasting",
    ),
    ("clip_nothing", lambda m: m.clip(), ValueError, "No input was provided"),
    (
        "clip_complex",
        lambda m: m.clip(np.array([1j]), 0, 1),
        ValueError,
        "Complex values have no ordering",
    ),
    ("clip_a_min", lambda m: m.clip(M, a_min=1), TypeError, "a_min"),
    ("clip_list", lambda m: m.clip([1, 2], 0, 1), TypeError, "requires ndarray"),
    ("nan_to_num_list", lambda m: m.nan_to_num([1.0]), TypeError, "requires ndarray"),
]


@pytest.mark.parametrize(
    "name,fn,cls,phrase", SELECTION_ERRORS, ids=[e[0] for e in SELECTION_ERRORS]
)
def test_selection_errors(name, fn, cls, phrase):
    with pytest.raises(cls, match=re.escape(phrase)):
        fn(jnp)
    jax = pytest.importorskip("jax")
    with pytest.raises(cls):
        fn(jax.numpy)


def test_where_and_clip_jaxprs():
    text = str(jaxlite.make_jaxpr(lambda x: jnp.where(x > 2, x, 0.0))(M))
    assert normalize(text) == normalize(
        "{ lambda ; a:f32[3,4]. let b:bool[3,4] = gt a 2.0:f32[] "
        "c:f32[3,4] = broadcast_in_dim 0.0:f32[] d:f32[3,4] = select_n b c a in (d,) }"
    )
    text = str(jaxlite.make_jaxpr(lambda x: jnp.clip(x, 0.0, 1.0))(M))
    assert normalize(text) == normalize(
        "{ lambda ; a:f32[3,4]. let b:f32[3,4] = max 0.0:f32[] a "
        "c:f32[3,4] = min 1.0:f32[] b in (c,) }"
    )
