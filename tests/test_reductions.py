"""Tests for the reductions: the lax primitives (reduce_sum, reduce_max, ...) and the
jax.numpy functions built on them (sum, mean, var, nanmax, median, quantile, ...).

Values are compared with NumPy over functions x shapes x axes x keepdims x dtypes;
dtypes, weak types, error classes and messages and jaxpr texts are compared with real
JAX where it is installed; every function also runs under jit.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.lax import reductions as lax_reductions

RNG = np.random.default_rng(0)


@pytest.fixture
def rjax():
    return pytest.importorskip("jax")


def floats(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def ints(shape, dtype=np.int32, low=-5, high=6):
    return RNG.integers(low, high, shape).astype(dtype)


def data(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.integers(0, 2, shape).astype(bool)
    if dtype.kind == "u":
        return ints(shape, dtype, 0, 6)
    if dtype.kind == "i":
        return ints(shape, dtype)
    if dtype.kind == "c":
        return (floats(shape) + 1j * floats(shape)).astype(dtype)
    return floats(shape, dtype)


def same_text(a, b):
    return " ".join(str(a).split()) == " ".join(str(b).split())


def assert_close(ours, expected, rtol=None, atol=None):
    ours = np.asarray(ours)
    expected = np.asarray(expected)
    assert ours.shape == expected.shape, (ours.shape, expected.shape)
    kind = np.dtype(ours.dtype)
    if rtol is None:
        if kind in (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)):
            rtol = 2e-2
        elif kind.kind in "fc":
            rtol = 1e-5
        else:
            rtol = 0
    if atol is None:
        atol = rtol
    np.testing.assert_allclose(
        ours.astype(np.complex128),
        expected.astype(np.complex128),
        rtol=rtol,
        atol=atol,
        equal_nan=True,
    )


def assert_same_type(ours, theirs):
    """Same shape, dtype and weak type as a real JAX array."""
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert np.dtype(ours.dtype) == np.dtype(theirs.dtype), (ours.dtype, theirs.dtype)
    assert ours.weak_type == theirs.weak_type, (ours.weak_type, theirs.weak_type)


# -------------------------------------------------------------------------------------
# lax primitives

LAX_REDUCTIONS = {
    # name: (NumPy reference keeping the dtype, accepted dtypes)
    "reduce_sum": (lambda x, a: np.sum(x, axis=a, dtype=x.dtype), "number"),
    "reduce_prod": (lambda x, a: np.prod(x, axis=a, dtype=x.dtype), "number"),
    "reduce_max": (lambda x, a: np.max(x, axis=a), "any"),
    "reduce_min": (lambda x, a: np.min(x, axis=a), "any"),
    "reduce_and": (lambda x, a: np.bitwise_and.reduce(x, axis=a), "logical"),
    "reduce_or": (lambda x, a: np.bitwise_or.reduce(x, axis=a), "logical"),
    "reduce_xor": (lambda x, a: np.bitwise_xor.reduce(x, axis=a), "logical"),
}
LAX_DTYPES = ["bool", "int8", "uint8", "int32", "uint32", "float16", "float32"]
LAX_DTYPES += ["complex64", "bfloat16"]
LAX_AXES = [((2, 3, 4), (0,)), ((2, 3, 4), (2, 0)), ((2, 3, 4), ()), ((5,), (0,))]
LAX_AXES += [((2, 3, 4), (0, 1, 2)), ((), ())]


def _accepts(kind, dtype):
    dtype = np.dtype(dtype)
    if kind == "any":
        return True
    if kind == "number":
        return dtype != np.bool_
    return dtype == np.bool_ or dtype.kind in "iu"


@pytest.mark.parametrize("name", list(LAX_REDUCTIONS))
@pytest.mark.parametrize("dtype", LAX_DTYPES)
@pytest.mark.parametrize("shape,axes", LAX_AXES)
def test_lax_reduction_matches_numpy_and_keeps_dtype(name, dtype, shape, axes):
    ref, kind = LAX_REDUCTIONS[name]
    x = data(shape, dtype)
    fun = getattr(lax, name)
    if not _accepts(kind, dtype):
        with pytest.raises(TypeError, match="dtype"):
            fun(x, axes)
        return
    expected = ref(x, axes)
    out = fun(x, axes)
    assert np.dtype(out.dtype) == np.dtype(dtype)
    assert out.shape == tuple(d for i, d in enumerate(shape) if i not in axes)
    assert_close(out, np.asarray(expected, dtype))
    jitted = jaxlite.jit(lambda v: fun(v, axes))(x)
    assert np.dtype(jitted.dtype) == np.dtype(dtype)
    assert_close(jitted, out, rtol=1e-6 if np.dtype(dtype).kind in "fc" else 0)


@pytest.mark.parametrize(
    "name,dtype,identity",
    [
        ("reduce_sum", "int8", 0),
        ("reduce_sum", "float32", 0.0),
        ("reduce_prod", "float32", 1.0),
        ("reduce_prod", "uint8", 1),
        ("reduce_max", "float32", -np.inf),
        ("reduce_max", "int32", np.iinfo(np.int32).min),
        ("reduce_max", "uint8", 0),
        ("reduce_max", "bool", False),
        ("reduce_min", "float16", np.inf),
        ("reduce_min", "uint8", 255),
        ("reduce_min", "int8", 127),
        ("reduce_min", "bool", True),
        ("reduce_and", "int32", -1),
        ("reduce_and", "uint8", 255),
        ("reduce_and", "bool", True),
        ("reduce_or", "int32", 0),
        ("reduce_or", "bool", False),
        ("reduce_xor", "uint32", 0),
    ],
)
@pytest.mark.parametrize("jit", [False, True])
def test_empty_lax_reduction_gives_identity(name, dtype, identity, jit):
    x = np.zeros((0, 3), dtype)
    fun = getattr(lax, name)
    if jit:
        fun = jaxlite.jit(fun, static_argnums=1)
    out = fun(x, (0,))
    assert out.shape == (3,)
    assert np.dtype(out.dtype) == np.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), np.full(3, identity, dtype))


def test_lax_reduce_max_propagates_nan_and_orders_complex_lexicographically():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    assert np.isnan(lax.reduce_max(x, (0,)))
    assert np.isnan(lax.reduce_min(x, (0,)))
    z = np.array([1 + 2j, 2 + 0j, 1 + 3j, 2 - 1j], np.complex64)
    assert complex(lax.reduce_max(z, (0,))) == 2 + 0j
    assert complex(lax.reduce_min(z, (0,))) == 1 + 2j


def test_lax_reductions_keep_weak_type_and_integer_wraparound():
    out = lax.reduce_sum(2.0, ())
    assert out.weak_type and np.dtype(out.dtype) == np.float32
    assert not lax.reduce_sum(np.ones(3, np.float32), (0,)).weak_type
    # int8 stays int8 (NumPy alone would sum in int64).
    assert int(lax.reduce_sum(np.array([100, 100], np.int8), (0,))) == -56
    assert int(lax.reduce_prod(np.array([100, 100], np.int8), (0,))) == 16
    # A float64 NumPy input is canonicalised to float32.
    assert np.dtype(lax.reduce_sum(np.ones(3), (0,)).dtype) == np.float32


@pytest.mark.parametrize(
    "fun,arg,axes,exc,phrase",
    [
        (lax.reduce_sum, np.ones((3, 4), np.float32), (2,), ValueError,
         "reduction axes (2,) contains out-of-bounds indices for float32[3,4]."),
        (lax.reduce_max, np.ones((3, 4), np.float32), (-1,), ValueError,
         "contains out-of-bounds indices"),
        (lax.reduce_sum, np.ones((3, 4), np.float32), (0, 0), ValueError,
         "duplicate value in 'axes' of reduction: (0, 0)"),
        (lax.reduce_sum, np.ones(3, bool), (0,), TypeError,
         "reduce_sum does not accept dtype bool. Accepted dtypes are subtypes of "
         "number."),
        (lax.reduce_prod, np.ones(3, bool), (0,), TypeError,
         "reduce_prod does not accept dtype bool"),
        (lax.reduce_and, np.ones(3, np.float32), (0,), TypeError,
         "logical reduction requires operand dtype bool or int, got float32."),
        (lax.reduce_xor, np.ones(3, np.complex64), (0,), TypeError,
         "logical reduction requires operand dtype bool or int"),
        (lax.reduce_sum, [1.0, 2.0], (0,), TypeError,
         "Error interpreting argument to reduce_sum as a JAX value. The problematic "
         "value is of type <class 'list'> and was passed to reduce_sum at position 0."),
    ],
)  # fmt: skip
def test_lax_reduction_errors(fun, arg, axes, exc, phrase):
    with pytest.raises(exc) as info:
        fun(arg, axes)
    assert phrase in str(info.value)
    if not isinstance(arg, list):
        with pytest.raises(exc) as info:
            jaxlite.jit(lambda v: fun(v, axes))(arg)
        assert phrase in str(info.value)


@pytest.mark.parametrize("name", list(LAX_REDUCTIONS))
def test_lax_reduction_jaxpr_text(name):
    dtype = (
        np.int32 if name in ("reduce_and", "reduce_or", "reduce_xor") else np.float32
    )
    short = "i32" if dtype is np.int32 else "f32"
    fun = getattr(lax, name)
    text = jaxlite.make_jaxpr(lambda v: fun(v, (1, 0)))(np.ones((3, 4), dtype))
    expected = f"{{ lambda ; a:{short}[3,4]. let b:{short}[] = {name}[axes=(1, 0)] a in (b,) }}"
    assert same_text(text, expected)


def test_every_reduction_primitive_has_its_rules():
    from jaxlite.backend import lowering_rules
    from jaxlite.core import abstract_eval_rules, impl_rules
    from jaxlite.interpreters import ad

    for name in LAX_REDUCTIONS:
        prim = getattr(lax_reductions, f"{name}_p")
        assert prim.name == name
        assert prim in impl_rules and prim in abstract_eval_rules
        assert prim in lowering_rules
        assert prim in ad.jvp_rules
    assert lax_reductions.reduce_sum_p in ad.transpose_rules


@pytest.mark.parametrize("name", list(LAX_REDUCTIONS))
def test_lax_reduction_matches_jax(rjax, name):
    _, kind = LAX_REDUCTIONS[name]
    for dtype in ["bool", "int8", "uint16", "float32", "float16"]:
        if not _accepts(kind, dtype):
            continue
        x = data((3, 4), dtype)
        ours = getattr(lax, name)(x, (1,))
        theirs = getattr(rjax.lax, name)(x, (1,))
        assert_same_type(ours, theirs)
        assert_close(ours, np.asarray(theirs))
        ours = getattr(lax, name)(np.zeros((0, 2), dtype), (0,))
        theirs = getattr(rjax.lax, name)(np.zeros((0, 2), dtype), (0,))
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


# -------------------------------------------------------------------------------------
# jax.numpy reductions against NumPy


def _np_ptp(x, axis=None, keepdims=False):
    return np.ptp(x, axis=axis, keepdims=keepdims)


# name: NumPy reference
NP_FUNCS = {
    "sum": np.sum,
    "prod": np.prod,
    "max": np.max,
    "min": np.min,
    "amax": np.amax,
    "amin": np.amin,
    "mean": np.mean,
    "var": np.var,
    "std": np.std,
    "any": np.any,
    "all": np.all,
    "count_nonzero": np.count_nonzero,
    "ptp": _np_ptp,
    "average": np.average,
    "nansum": np.nansum,
    "nanprod": np.nanprod,
    "nanmax": np.nanmax,
    "nanmin": np.nanmin,
    "nanmean": np.nanmean,
    "nanvar": np.nanvar,
    "nanstd": np.nanstd,
    "median": np.median,
    "nanmedian": np.nanmedian,
}
SHAPES_AXES = [
    ((), None),
    ((5,), None),
    ((5,), 0),
    ((5,), -1),
    ((3, 4), None),
    ((3, 4), 1),
    ((3, 4), (0,)),
    ((2, 3, 4), (0, 2)),
    ((2, 3, 4), (-1, 0)),
    ((2, 3, 4), (0, 1, 2)),
    ((2, 0, 3), 0),
]
NP_DTYPES = ["bool", "int8", "uint8", "int32", "float16", "float32", "complex64"]


def _expected_dtype_ok(name, dtype):
    dtype = np.dtype(dtype)
    if name == "ptp" and dtype == np.bool_:
        return False
    if name in ("median", "nanmedian") and dtype.kind == "c":
        return False
    return True


def _numpy_reference(name, x, axis, keepdims):
    ref = NP_FUNCS[name]
    kwargs = {"keepdims": keepdims}
    if name == "count_nonzero" and axis is None:
        axis = tuple(range(x.ndim))
    wide = x
    if x.dtype.kind == "f":
        wide = x.astype(np.float64)
    elif x.dtype.kind == "c":
        wide = x.astype(np.complex128)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if name in ("median", "nanmedian") and x.dtype.kind in "biu":
            wide = x.astype(np.float64)
        return np.asarray(ref(wide, axis=axis, **kwargs))


def _has_empty_reduction(shape, axis):
    if axis is None:
        return 0 in shape
    axes = axis if isinstance(axis, tuple) else (axis,)
    return builtins_any(shape[a] == 0 for a in axes)


builtins_any = any


@pytest.mark.parametrize("name", list(NP_FUNCS))
@pytest.mark.parametrize("shape,axis", SHAPES_AXES)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("dtype", NP_DTYPES)
def test_jnp_reduction_matches_numpy(name, shape, axis, keepdims, dtype):
    x = data(shape, dtype)
    fun = getattr(jnp, name)
    call = lambda v: fun(v, axis=axis, keepdims=keepdims)  # noqa: E731
    if not _expected_dtype_ok(name, dtype):
        with pytest.raises((TypeError, ValueError)):
            call(x)
        return
    empty = _has_empty_reduction(shape, axis)
    if name == "average" and x.size == 0:
        empty = True  # NumPy's average divides by a.size / avg.size
    if empty and name in ("max", "min", "amax", "amin", "nanmax", "nanmin", "ptp"):
        with pytest.raises(ValueError, match="zero-size array to reduction operation"):
            call(x)
        return
    if empty and name in ("median", "nanmedian", "average"):
        # NumPy divides by zero (median: NaN with a warning, average: an error); JAX
        # gives NaN (average) or fails inside a gather (median); jaxlite gives NaN.
        out = call(x)
        assert np.all(np.isnan(np.asarray(out)))
        return
    out = call(x)
    expected = _numpy_reference(name, x, axis, keepdims)
    if dtype == "complex64" and name in ("max", "min", "amax", "amin", "ptp"):
        expected = expected.astype(np.complex64)
    rtol = 2e-2 if dtype == "float16" else 2e-5
    if name in ("prod", "nanprod") and np.dtype(dtype).kind in "iu":
        expected = expected.astype(out.dtype)  # wraps around like JAX's int32
    assert_close(out, expected.astype(np.complex128), rtol=rtol, atol=rtol)
    jitted = jaxlite.jit(call)(x)
    assert np.dtype(jitted.dtype) == np.dtype(out.dtype)
    assert_close(jitted, np.asarray(out), rtol=1e-5, atol=1e-5)


# The dtypes of the results, as JAX gives them (checked against JAX below).
RESULT_DTYPES = {
    "sum": {"bool": "int32", "int8": "int32", "uint8": "uint32", "float16": "float16"},
    "prod": {"bool": "int32", "int16": "int32", "uint16": "uint32"},
    "max": {"bool": "bool", "int8": "int8"},
    "mean": {"bool": "float32", "int8": "float32", "float16": "float16"},
    "var": {"complex64": "float32", "int32": "float32"},
    "std": {"complex64": "float32", "uint8": "float32"},
    "any": {"float32": "bool", "complex64": "bool"},
    "all": {"int32": "bool"},
    "count_nonzero": {"float16": "int32", "bool": "int32"},
    "nansum": {"bool": "int32", "int8": "int32"},
    "nanmean": {"int32": "float32"},
    "median": {"int32": "float32", "bool": "float32", "bfloat16": "bfloat16"},
    "average": {"int8": "float32", "float16": "float16"},
}


@pytest.mark.parametrize(
    "name,dtype,expected",
    [(n, d, e) for n, table in RESULT_DTYPES.items() for d, e in table.items()],
)
def test_result_dtypes(name, dtype, expected):
    out = getattr(jnp, name)(data((2, 3), dtype))
    assert np.dtype(out.dtype) == np.dtype(expected)
    assert not out.weak_type


def test_integer_sums_wrap_in_the_default_integer_type():
    x = np.full(3, 2**30, np.int32)
    assert int(jnp.sum(x)) == np.int32(3 * 2**30 - 2**32)
    assert int(jnp.sum(np.array([100, 100], np.int8))) == 200
    out = jnp.sum(np.array([100, 100], np.int8), promote_integers=False)
    assert np.dtype(out.dtype) == np.int8 and int(out) == -56
    assert np.dtype(jnp.sum(np.ones(2, np.uint16)).dtype) == np.uint32


def test_float16_sum_accumulates_in_float32():
    x = np.full(4096, 1.0, np.float16)
    assert float(jnp.sum(x)) == 4096.0
    assert np.dtype(jnp.sum(x).dtype) == np.float16
    for fun in (jnp.sum, jnp.prod, jnp.mean):
        text = str(jaxlite.make_jaxpr(fun)(x))
        assert "c:f32[] = reduce_" in text
        assert "f16[] = convert_element_type[new_dtype=float16 weak_type=False]" in text
        assert "b:f32[4096] = convert_element_type[new_dtype=float32" in text


@pytest.mark.parametrize(
    "dtype,summed,averaged",
    [
        ("bool", "int64", "float32"),
        ("int8", "int64", "float32"),
        ("uint16", "uint64", "float32"),
        ("int32", "int64", "float32"),
        ("uint32", "uint64", "float32"),
        ("int64", "int64", "float64"),
        ("uint64", "uint64", "float64"),
        ("float32", "float32", "float32"),
        ("float64", "float64", "float64"),
    ],
)
def test_x64_dtypes(dtype, summed, averaged):
    # As JAX with x64 on: sums widen to 64 bits, but means of integers of up to 32
    # bits stay float32 (JAX's to_inexact_dtype).
    jaxlite.config.update("jax_enable_x64", True)
    x = np.ones((2, 3), dtype)
    assert np.dtype(jnp.sum(x).dtype) == np.dtype(summed)
    for fun in (jnp.mean, jnp.var, jnp.std, jnp.average, jnp.median, jnp.nanmean):
        assert np.dtype(fun(x).dtype) == np.dtype(averaged), fun
    assert np.dtype(jnp.count_nonzero(x).dtype) == np.int64
    assert np.dtype(jnp.sum(2.5).dtype) == np.float64


def test_python_scalars_give_strong_results():
    for fun in (jnp.sum, jnp.prod, jnp.max, jnp.mean, jnp.var, jnp.median):
        out = fun(3.0)
        assert not out.weak_type
        assert np.dtype(out.dtype) == np.float32
    assert np.dtype(jnp.sum(3).dtype) == np.int32
    assert np.dtype(jnp.sum(True).dtype) == np.int32
    assert np.dtype(jnp.mean(3).dtype) == np.float32
    assert np.dtype(jnp.max(True).dtype) == np.bool_


def test_weak_inputs_under_jit_give_strong_results():
    out = jaxlite.eval_shape(lambda v: jnp.sum(v), 2.0)
    assert out.dtype == np.float32 and not out.weak_type
    text = jaxlite.make_jaxpr(jnp.sum)(2.0)
    assert "convert_element_type[new_dtype=float32 weak_type=False]" in str(text)


# -------------------------------------------------------------------------------------
# where=, initial=, dtype=, ddof/correction


X34 = np.array([[1, -2, 3, 0.5], [4, 5, -6, 2], [0, 8, 1, -1]], np.float32)
W34 = np.array([[1, 0, 1, 1], [0, 0, 0, 1], [1, 1, 1, 0]], bool)


@pytest.mark.parametrize("name", ["sum", "prod", "mean", "var", "std", "any", "all"])
@pytest.mark.parametrize("axis", [None, 0, 1, (1, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_where_matches_numpy(name, axis, keepdims):
    x = X34 > 0.7 if name in ("any", "all") else X34
    ours = getattr(jnp, name)(x, axis=axis, keepdims=keepdims, where=W34)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = getattr(np, name)(x, axis=axis, keepdims=keepdims, where=W34)
    assert_close(ours, np.asarray(ref, np.asarray(ours).dtype))
    jitted = jaxlite.jit(
        lambda v, w: getattr(jnp, name)(v, axis=axis, keepdims=keepdims, where=w)
    )(x, W34)
    assert_close(jitted, ours)


@pytest.mark.parametrize("name,initial", [("max", -1.0), ("min", 10.0)])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_where_with_initial_matches_numpy(name, initial, axis):
    ours = getattr(jnp, name)(X34, axis=axis, where=W34, initial=initial)
    ref = getattr(np, name)(X34, axis=axis, where=W34, initial=initial)
    assert_close(ours, ref)


def test_where_broadcasts_and_rows_without_elements():
    row = np.array([True, False, True, False])
    assert float(jnp.sum(X34, where=row)) == float(np.sum(X34, where=row))
    none = np.zeros((3, 4), bool)
    assert np.all(np.isnan(np.asarray(jnp.mean(X34, axis=1, where=none))))
    assert np.all(np.isnan(np.asarray(jnp.var(X34, axis=1, where=none))))
    np.testing.assert_array_equal(np.asarray(jnp.sum(X34, axis=1, where=none)), 0)
    assert float(jnp.max(X34, where=none, initial=-7.0)) == -7.0


def test_initial():
    assert float(jnp.sum(X34, initial=10)) == float(X34.sum() + 10)
    assert float(jnp.sum(X34, initial=10, where=W34)) == float(X34[W34].sum() + 10)
    np.testing.assert_allclose(jnp.prod(X34, axis=0, initial=2), 2 * X34.prod(0))
    assert float(jnp.max(np.zeros((0,), np.float32), initial=3.0)) == 3.0
    out = jnp.max(np.arange(4), initial=2.5)  # the initial value takes x's dtype
    assert np.dtype(out.dtype) == np.int32 and int(out) == 3
    assert bool(jnp.max(np.zeros(3, bool), initial=1))
    # An initial value outside an unsigned dtype wraps like a cast.
    assert int(jnp.sum(np.arange(3, dtype=np.uint8), initial=-1)) == 2


def test_dtype_argument():
    out = jnp.sum(X34, dtype=np.int8)
    assert np.dtype(out.dtype) == np.int8
    out = jnp.sum(np.ones(3, np.int32), axis=0, dtype=np.float32)
    assert np.dtype(out.dtype) == np.float32 and float(out) == 3.0
    out = jnp.sum(np.array([True, False]), dtype=bool)
    assert np.dtype(out.dtype) == np.bool_ and bool(out)
    out = jnp.mean(X34 * 3, dtype=np.int32)
    assert np.dtype(out.dtype) == np.int32
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
        out = jnp.sum(X34, dtype=np.float64)
    assert np.dtype(out.dtype) == np.float32


@pytest.mark.parametrize("fun", ["var", "std"])
@pytest.mark.parametrize("ddof", [0, 1, 2, 1.5])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_ddof_and_correction(fun, ddof, axis):
    ref = getattr(np, fun)(X34.astype(np.float64), axis=axis, ddof=ddof)
    assert_close(getattr(jnp, fun)(X34, axis=axis, ddof=ddof), ref)
    assert_close(getattr(jnp, fun)(X34, axis=axis, correction=ddof), ref)


def test_var_with_too_large_ddof_is_nan():
    assert np.isnan(float(jnp.var(X34, axis=0, ddof=3)[0]))
    assert np.isnan(float(jnp.nanvar(X34, axis=0, ddof=3)[0]))


def test_var_with_given_mean_and_complex_input():
    m = np.mean(X34, axis=1, keepdims=True)
    assert_close(jnp.var(X34, axis=1, mean=m), np.var(X34.astype(np.float64), axis=1))
    z = (X34 + 1j * X34[::-1]).astype(np.complex64)
    out = jnp.var(z, axis=0)
    assert np.dtype(out.dtype) == np.float32
    assert_close(out, np.var(z.astype(np.complex128), axis=0))


def test_average():
    w = np.arange(1.0, 5.0)
    assert_close(
        jnp.average(X34, axis=1, weights=w), np.average(X34, axis=1, weights=w)
    )
    w2 = np.arange(12.0).reshape(4, 3)
    ours = jnp.average(X34, axis=(1, 0), weights=w2)
    assert_close(ours, np.average(X34, axis=(1, 0), weights=w2.T))
    avg, total = jnp.average(X34, axis=1, weights=w, returned=True)
    ref_avg, ref_total = np.average(X34, axis=1, weights=w, returned=True)
    assert_close(avg, ref_avg)
    assert_close(total, ref_total)
    avg, total = jnp.average(X34, axis=0, returned=True)
    assert_close(total, np.full(4, 3.0))
    avg, total = jnp.average(X34, axis=1, weights=w, returned=True, keepdims=True)
    assert avg.shape == (3, 1) and total.shape == (3, 1)
    out = jnp.average(X34, axis=0, weights=np.zeros(3))
    assert np.all(np.isnan(np.asarray(out)))


# -------------------------------------------------------------------------------------
# NaN-ignoring reductions

XN = np.array(
    [
        [1.0, np.nan, 3.0, -2.0],
        [np.nan, np.nan, np.nan, np.nan],
        [0.5, 4.0, np.nan, 1.0],
    ],
    np.float32,
)
NAN_FUNCS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"]
NAN_FUNCS += ["nanmedian"]


@pytest.mark.parametrize("name", NAN_FUNCS)
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_nan_functions_match_numpy(name, axis, keepdims):
    ours = getattr(jnp, name)(XN, axis=axis, keepdims=keepdims)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = getattr(np, name)(XN.astype(np.float64), axis=axis, keepdims=keepdims)
    assert np.dtype(ours.dtype) == np.float32
    assert_close(ours, ref)
    assert_close(
        jaxlite.jit(lambda v: getattr(jnp, name)(v, axis, keepdims=keepdims))(XN), ours
    )


@pytest.mark.parametrize("name", ["nanvar", "nanstd"])
def test_nanvar_ddof_and_where(name):
    ref = getattr(np, name)(XN.astype(np.float64), axis=1, ddof=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(getattr(jnp, name)(XN, axis=1, ddof=1), ref)
    ours = getattr(jnp, name)(XN, axis=1, where=W34)
    masked = np.where(W34, XN, np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(ours, getattr(np, name)(masked.astype(np.float64), axis=1))


def test_nan_functions_on_integers_are_the_plain_ones():
    x = ints((3, 4))
    assert np.dtype(jnp.nanmax(x).dtype) == np.int32
    assert int(jnp.nansum(x)) == int(x.sum())
    assert np.dtype(jnp.nanmean(x).dtype) == np.float32


def test_nanmax_with_initial_does_not_give_nan():
    out = jnp.nanmax(XN, axis=1, initial=0.5)
    np.testing.assert_array_equal(np.asarray(out), [3.0, 0.5, 4.0])


# -------------------------------------------------------------------------------------
# Order statistics

METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]
X345 = floats((3, 4, 5))


def _nearest_as_jax(x, q, axis, keepdims):
    """'nearest' as JAX defines it: a position exactly halfway between two elements
    takes the lower one (NumPy takes the even one)."""
    axes = range(x.ndim) if axis is None else np.atleast_1d(axis)
    n = int(np.prod([x.shape[a] for a in axes]))
    pos = np.asarray(q, np.float32) * np.float32(n - 1)
    frac = pos - np.floor(pos)
    kw = dict(axis=axis, keepdims=keepdims)
    lower = np.quantile(x, q, method="lower", **kw)
    higher = np.quantile(x, q, method="higher", **kw)
    frac = frac.reshape(frac.shape + (1,) * (lower.ndim - frac.ndim))
    return np.where(frac <= 0.5, lower, higher)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (2, 0)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    "q", [0.5, 0.0, 1.0, 0.3, np.array([0.1, 0.4, 0.9], np.float32)]
)
def test_quantile_matches_numpy(method, axis, keepdims, q):
    ours = jnp.quantile(X345, q, axis=axis, method=method, keepdims=keepdims)
    if method == "nearest":
        ref = _nearest_as_jax(X345, q, axis, keepdims)
    else:
        ref = np.quantile(X345, q, axis=axis, method=method, keepdims=keepdims)
    assert np.dtype(ours.dtype) == np.float32
    assert_close(ours, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("axis", [None, 1, (0, 1)])
def test_nanquantile_matches_numpy(method, axis):
    q = np.array([0.2, 0.5, 0.8], np.float32)
    ours = jnp.nanquantile(XN, q, axis=axis, method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.nanquantile(XN.astype(np.float64), q, axis=axis, method=method)
    assert_close(ours, ref, rtol=1e-5, atol=1e-6)


def test_percentile_median_and_nan_propagation():
    assert_close(jnp.percentile(X345, 30, axis=1), np.percentile(X345, 30, axis=1))
    assert_close(
        jnp.nanpercentile(XN, np.array([10, 90]), axis=1),
        np.nanpercentile(XN.astype(np.float64), [10, 90], axis=1),
    )
    assert_close(jnp.median(X345, axis=(0, 2)), np.median(X345, axis=(0, 2)))
    out = jnp.median(XN, axis=1)  # any NaN in a slice makes it NaN
    assert np.all(np.isnan(np.asarray(out)))
    assert float(jnp.median(np.array([3, 1, 2, 10]))) == 2.5
    # As in JAX, 'linear' weighs both neighbours even at a weight of 0, so an
    # infinite end value gives inf * 0 = NaN; 'lower' and 'higher' pick it exactly.
    x = np.array([-np.inf, 1.0, np.inf], np.float32)
    q = np.array([0.0, 0.5, 1.0])
    assert_close(jnp.quantile(x, q), [np.nan, 1.0, np.nan])
    assert_close(jnp.quantile(x, q, method="lower"), [-np.inf, 1.0, np.inf])


def test_quantile_clamps_q_outside_the_unit_interval():
    x = np.arange(5.0, dtype=np.float32)
    assert float(jnp.quantile(x, 1.5)) == 4.0
    assert float(jnp.quantile(x, -0.5)) == 0.0


def test_quantile_nearest_rounds_ties_down_as_jax():
    x = np.arange(5.0, dtype=np.float32)
    out = jnp.quantile(x, np.array([0.125, 0.375, 0.625]), method="nearest")
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0])


def test_quantile_of_empty_axis_is_nan():
    out = jnp.median(np.zeros((0, 3), np.float32), axis=0)
    assert out.shape == (3,) and np.all(np.isnan(np.asarray(out)))
    assert jnp.median(np.zeros((0, 3), np.float32), axis=1).shape == (0,)


def test_weighted_inverted_cdf_quantile():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    w = np.array([1, 1, 2, 1, 1], np.float32)
    assert float(jnp.quantile(x, 0.5, weights=w, method="inverted_cdf")) == 3.0
    ref = np.quantile(
        X345, 0.4, axis=1, weights=np.arange(1.0, 5.0), method="inverted_cdf"
    )
    ours = jnp.quantile(
        X345, 0.4, axis=1, weights=np.arange(1.0, 5.0), method="inverted_cdf"
    )
    assert_close(ours, ref)


@pytest.mark.parametrize(
    "fun",
    [
        lambda v: jnp.median(v, axis=1),
        lambda v: jnp.nanmedian(v, axis=0, keepdims=True),
        lambda v: jnp.quantile(v, 0.25, axis=1, method="midpoint"),
        lambda v: jnp.nanquantile(v, 0.7, method="inverted_cdf"),
        lambda v: jnp.percentile(v, 50.0, axis=(0, 1), method="higher"),
    ],
)
def test_order_statistics_under_jit(fun):
    assert_close(jaxlite.jit(fun)(XN), fun(XN))
    assert_close(jaxlite.jit(fun)(X345[0, :3]), fun(X345[0, :3]))


def test_quantile_with_traced_q():
    f = jaxlite.jit(lambda v, q: jnp.quantile(v, q, axis=1))
    q = np.array([0.1, 0.5], np.float32)
    assert_close(f(X345[0], q), np.quantile(X345[0], q, axis=1))


# -------------------------------------------------------------------------------------
# Derivatives


@pytest.mark.parametrize(
    "fun",
    [
        lambda v: jnp.sum(v, axis=0),
        lambda v: jnp.max(v, axis=1),
        lambda v: jnp.min(v),
        lambda v: jnp.prod(v, axis=1),
        lambda v: jnp.mean(v, axis=1),
        lambda v: jnp.var(v, axis=0),
        lambda v: jnp.std(v, axis=1, keepdims=True),
        lambda v: jnp.nanmean(v),
        lambda v: jnp.nanvar(v, axis=1),
        lambda v: jnp.average(v, axis=1, weights=np.arange(4.0)),
        lambda v: jnp.nanquantile(v, 0.3, axis=1),
    ],
)
def test_derivatives(fun):
    from testing import check_grads

    check_grads(fun, (floats((3, 4)),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize(
    "fun",
    [
        lambda v: jnp.median(v, axis=0),
        lambda v: jnp.quantile(v, np.array([0.2, 0.7]), axis=1),
    ],
)
def test_derivatives_of_order_statistics(fun):
    from jaxlite.interpreters import ad
    from jaxlite.lax import indexing

    if indexing.slice_p not in ad.jvp_rules:
        pytest.skip("lax.slice has no JVP rule yet")
    from testing import check_grads

    check_grads(fun, (floats((3, 4)),), order=2, modes=("fwd", "rev"))


def test_prod_derivative_with_zeros():
    x = np.array([[2.0, 0.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]], np.float32)
    g = jaxlite.grad(lambda v: jnp.sum(jnp.prod(v, axis=1)))(x)
    expected = [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0], [6.0, 3.0, 2.0]]
    np.testing.assert_allclose(np.asarray(g), expected)


def test_max_derivative_splits_ties():
    g = jaxlite.grad(lambda v: jnp.max(v))(np.array([1.0, 3.0, 3.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 0.5, 0.5, 0.0])


# -------------------------------------------------------------------------------------
# vmap


@pytest.mark.parametrize("name", list(LAX_REDUCTIONS))
@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("axes", [(0,), (1, 0), ()])
def test_lax_reduction_vmap(name, in_axis, axes):
    dtype = (
        np.int32 if name in ("reduce_and", "reduce_or", "reduce_xor") else np.float32
    )
    x = data((4, 3, 5), dtype)
    fun = getattr(lax, name)
    out = jaxlite.vmap(lambda v: fun(v, axes), in_axes=in_axis)(x)
    ref = np.stack(
        [
            np.asarray(fun(np.take(x, i, axis=in_axis), axes))
            for i in range(x.shape[in_axis])
        ]
    )
    assert_close(out, ref)


VMAP_FUNS = [
    lambda v: jnp.sum(v, axis=0),
    lambda v: jnp.max(v, axis=(1, 0), keepdims=True),
    lambda v: jnp.var(v, ddof=1),
    lambda v: jnp.mean(v, axis=-1, where=v > 0),
    lambda v: jnp.any(v > 1, axis=0),
    lambda v: jnp.nanmedian(v, axis=0),
    lambda v: jnp.nanquantile(v, np.array([0.1, 0.9]), axis=1, method="nearest"),
    lambda v: jnp.average(v, axis=1, weights=np.arange(1.0, v.shape[1] + 1)),
]


@pytest.mark.parametrize("fun", VMAP_FUNS)
@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_jnp_reduction_vmap(fun, in_axis):
    x = floats((4, 3, 5))
    out = jaxlite.vmap(fun, in_axes=in_axis)(x)
    ref = np.stack(
        [np.asarray(fun(np.take(x, i, axis=in_axis))) for i in range(x.shape[in_axis])]
    )
    assert_close(out, ref)


# -------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "name",
    ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "count_nonzero",
     "ptp", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
     "median", "nanmedian"],
)  # fmt: skip
def test_list_input_raises(name):
    with pytest.raises(TypeError) as info:
        getattr(jnp, name)([1, 2])
    assert str(info.value) == (
        f"{name} requires ndarray or scalar arguments, got <class 'list'> at position 0."
    )


@pytest.mark.parametrize(
    "call,exc,phrase",
    [
        (lambda: jnp.quantile([1.0], 0.5), TypeError,
         "quantile requires ndarray or scalar arguments, got <class 'list'> at "
         "position 0."),
        (lambda: jnp.quantile(X34, [0.5]), TypeError,
         "got <class 'list'> at position 1."),
        (lambda: jnp.percentile([1.0], 50), TypeError,
         "percentile requires ndarray or scalar arguments"),
        (lambda: jnp.average(X34, weights=[1, 2, 3]), TypeError,
         "average requires ndarray or scalar arguments, got <class 'list'> at position 1."),
        (lambda: jnp.max(np.zeros((0, 3))), ValueError,
         "zero-size array to reduction operation max which has no identity"),
        (lambda: jnp.min(np.zeros((0, 3)), axis=0), ValueError,
         "zero-size array to reduction operation min which has no identity"),
        (lambda: jnp.nanmax(np.zeros((0,))), ValueError,
         "zero-size array to reduction operation max which has no identity"),
        (lambda: jnp.max(X34, where=W34), ValueError,
         "reduction operation max does not have an identity, so to use a where mask "
         "one has to specify 'initial'"),
        (lambda: jnp.sum(X34, axis=2), ValueError,
         "axis 2 is out of bounds for array of dimension 2"),
        (lambda: jnp.mean(X34, axis=-3), ValueError,
         "axis -3 is out of bounds for array of dimension 2"),
        (lambda: jnp.sum(np.float32(1), axis=0), ValueError,
         "axis 0 is out of bounds for array of dimension 0"),
        (lambda: jnp.sum(X34, axis=(0, -2)), ValueError,
         "duplicate value in 'axis': (0, -2)"),
        (lambda: jnp.sum(X34, axis=1.0), TypeError, "axis"),
        (lambda: jnp.sum(X34, out=X34), NotImplementedError,
         "The 'out' argument to jnp.sum is not supported."),
        (lambda: jnp.var(X34, ddof=1, correction=1), ValueError,
         "ddof and correction can't be provided simultaneously."),
        (lambda: jnp.std(X34, dtype=np.int32), ValueError,
         "dtype argument to jnp.std must be inexact; got int32"),
        (lambda: jnp.var(X34.astype(np.complex64), dtype=np.float32), ValueError,
         "jax.numpy.var does not yet support real dtype parameters"),
        (lambda: jnp.sum(X34, where=np.ones((3, 4), np.int32)), ValueError,
         "jnp.sum: where must be None or a boolean array; got "
         "where.dtype=dtype('int32')."),
        (lambda: jnp.sum(X34, where=np.array([True, False, True])), ValueError,
         "Incompatible shapes for broadcasting"),
        (lambda: jnp.sum(X34, initial=np.ones(4)), ValueError,
         "initial value must be a scalar. Got array of shape (4,)"),
        (lambda: jnp.ptp(np.array([True, False])), TypeError,
         "does not accept dtype bool"),
        (lambda: jnp.quantile(X34, 0.5, method="foo"), ValueError,
         "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or "
         "'inverted_cdf'"),
        (lambda: jnp.quantile(X34, np.ones((2, 2)) * 0.5), ValueError,
         "q must be have rank <= 1, got shape (2, 2)"),
        (lambda: jnp.quantile(X34.astype(np.complex64), 0.5), ValueError,
         "quantile does not support complex input, as the operation is poorly defined."),
        (lambda: jnp.quantile(X34, 1), TypeError,
         "floor does not accept dtype int32"),
        (lambda: jnp.quantile(X34, 0.5, axis=(0, 0)), ValueError, "repeated axis"),
        (lambda: jnp.quantile(X34, 0.5, overwrite_input=True), ValueError,
         "jax.numpy.quantile does not support overwrite_input=True or out != None"),
        (lambda: jnp.quantile(X34, 0.5, axis=1, weights=np.ones(4)), NotImplementedError,
         "linear doesn't support weights. Only method 'inverted_cdf' supports weights."),
        (lambda: jnp.quantile(X34, 0.5, weights=np.ones(4), method="inverted_cdf"),
         ValueError, "Weights shape must match 'a' shape when axis is None."),
        (lambda: jnp.average(X34, weights=np.ones(3)), ValueError,
         "Axis must be specified when shapes of a and weights differ."),
        (lambda: jnp.average(X34, axis=1, weights=np.ones(3)), ValueError,
         "Shape of weights must be consistent with shape of a along specified axis."),
    ],
)  # fmt: skip
def test_errors(call, exc, phrase):
    with pytest.raises(exc) as info:
        call()
    assert phrase in str(info.value)


def test_axis_must_be_static_under_jit():
    from jaxlite.errors import ConcretizationTypeError

    f = jaxlite.jit(lambda v, a: jnp.sum(v, axis=a))
    with pytest.raises(
        ConcretizationTypeError, match="The axis argument must be known"
    ):
        f(X34, 1)
    assert_close(jaxlite.jit(jnp.sum, static_argnums=1)(X34, 1), X34.sum(1))


# -------------------------------------------------------------------------------------
# Against real JAX: dtypes, weak types, values, jaxprs

JAX_FUNCS = [
    "sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "count_nonzero",
    "ptp", "average", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar",
    "nanstd", "median", "nanmedian",
]  # fmt: skip
JAX_DTYPES = ["bool", "int8", "uint8", "int16", "uint32", "float16", "bfloat16"]
JAX_DTYPES += ["float32", "complex64"]


def _run(fun, *args, **kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fun(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001 - compared with the other library's error
        return None, e


def _compare_with_jax(ours, theirs, values=True):
    (o, o_err), (t, t_err) = ours, theirs
    if t_err is not None or o_err is not None:
        assert o_err is not None and t_err is not None, (o_err, t_err)
        assert isinstance(o_err, type(t_err)), (o_err, t_err)
        return
    if isinstance(t, tuple):
        for a, b in zip(o, t, strict=True):
            _compare_with_jax((a, None), (b, None), values)
        return
    assert_same_type(o, t)
    if values:
        assert_close(o, np.asarray(t).astype(np.asarray(o).dtype), rtol=2e-2, atol=2e-2)


def _shape_of(eval_shape, fun, *args, **kwargs):
    return _run(eval_shape, lambda *v: fun(*v, **kwargs), *args)


@pytest.mark.parametrize("name", JAX_FUNCS)
@pytest.mark.parametrize("dtype", JAX_DTYPES)
def test_matches_jax_dtypes_and_weak_types(rjax, name, dtype):
    # Abstract evaluation only (real JAX compiles every eager call, which is slow);
    # values are compared with NumPy above and with JAX below.
    x = data((2, 3), dtype)
    for kwargs in ({}, {"axis": 0}, {"axis": (1, 0), "keepdims": True}):
        ours = _shape_of(jaxlite.eval_shape, getattr(jnp, name), x, **kwargs)
        theirs = _shape_of(rjax.eval_shape, getattr(rjax.numpy, name), x, **kwargs)
        _compare_with_jax(ours, theirs, values=False)


@pytest.mark.parametrize("name", ["sum", "mean", "var", "nanmax", "median", "average"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "complex64"])
def test_matches_jax_values(rjax, name, dtype):
    x = data((2, 3), dtype)
    ours = _run(getattr(jnp, name), x, axis=1)
    theirs = _run(getattr(rjax.numpy, name), x, axis=1)
    _compare_with_jax(ours, theirs)


@pytest.mark.parametrize("name", JAX_FUNCS)
@pytest.mark.parametrize("value", [3, 2.5, True, 1j])
def test_matches_jax_on_python_scalars(rjax, name, value):
    ours = _run(getattr(jnp, name), value)
    theirs = _run(getattr(rjax.numpy, name), value)
    _compare_with_jax(ours, theirs)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.sum(X34, axis=1, where=W34, initial=2.0),
        lambda m: m.max(X34, axis=0, where=W34, initial=-1.0),
        lambda m: m.mean(X34, axis=1, where=W34),
        lambda m: m.var(X34, axis=(0, 1), where=W34, ddof=1),
        lambda m: m.any(X34 > 1, axis=1, where=W34),
        lambda m: m.nanvar(XN, axis=1, where=W34),
        lambda m: m.var(np.arange(4), dtype=np.int32),
        lambda m: m.average(X34, axis=1, weights=np.arange(4), returned=True),
        lambda m: m.average(X34, axis=(1, 0), weights=np.ones((4, 3))),
        lambda m: m.quantile(X345, np.float32(0.3), axis=(2, 0), method="nearest"),
        lambda m: m.quantile(X345, np.array([0.2, 0.5]), axis=1, keepdims=True),
        lambda m: m.nanquantile(XN, np.array([0.2, 0.5]), axis=1, keepdims=True),
        lambda m: m.nanpercentile(XN, 40, axis=0, method="lower"),
        lambda m: m.quantile(X345, 0.6, axis=1, weights=np.arange(4.0),
                             method="inverted_cdf"),
        lambda m: m.quantile(np.arange(5), np.float16(0.3)),
        lambda m: m.median(np.zeros((0, 3), np.float32), axis=1),
        lambda m: m.count_nonzero(XN, axis=1, keepdims=True),
        lambda m: m.any(np.array([1j, 0])),
        lambda m: m.sum(np.ones(3, bool), dtype=bool),
    ],
)  # fmt: skip
def test_matches_jax_options(rjax, call):
    _compare_with_jax(_run(call, jnp), _run(call, rjax.numpy))


JAXPR_CASES = [
    (lambda m: lambda v: m.sum(v, axis=(1, 0)), np.ones((3, 4), np.float32)),
    (lambda m: lambda v: m.sum(v, axis=1), np.ones((3, 4), np.int8)),
    (lambda m: lambda v: m.sum(v, axis=1), np.ones((3, 4), bool)),
    (lambda m: lambda v: m.sum(v), np.ones((3,), np.float16)),
    (lambda m: lambda v: m.sum(v, axis=-1, initial=2.0), np.ones((3, 4), np.float32)),
    (lambda m: lambda v: m.max(v, axis=-1, initial=2.0), np.ones((3, 4), np.float32)),
    (lambda m: lambda v: m.min(v, axis=1), np.ones((3, 4), np.float32)),
    (lambda m: lambda v: m.mean(v, axis=1), np.ones((3, 4), np.float32)),
    (lambda m: lambda v: m.mean(v, axis=1), np.ones((3, 4), np.int32)),
    (lambda m: lambda v: m.any(v, axis=1), np.ones((3, 4), np.float32)),
    (lambda m: lambda v: m.all(v), np.ones((3, 4), bool)),
    (lambda m: lambda v: m.max(v), 3.0),
    (lambda m: lambda v: m.sum(v), 3),
]


@pytest.mark.parametrize("case", range(len(JAXPR_CASES)))
def test_jaxpr_text_matches_jax(rjax, case):
    make, arg = JAXPR_CASES[case]
    theirs = str(rjax.make_jaxpr(make(rjax.numpy))(arg))
    theirs = theirs.replace(" out_sharding=None", "")  # jaxlite has one device
    assert same_text(jaxlite.make_jaxpr(make(jnp))(arg), theirs)


def test_golden_jaxpr_texts():
    x = np.ones((3, 4), np.float32)
    assert same_text(
        jaxlite.make_jaxpr(lambda v: jnp.mean(v, axis=1))(x),
        """{ lambda ; a:f32[3,4]. let
    b:f32[3] = reduce_sum[axes=(1,)] a
    c:f32[3] = div b 4.0:f32[]
  in (c,) }""",
    )
    assert same_text(
        jaxlite.make_jaxpr(lambda v: jnp.max(v, axis=0))(x),
        "{ lambda ; a:f32[3,4]. let b:f32[4] = reduce_max[axes=(0,)] a in (b,) }",
    )
