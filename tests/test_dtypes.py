"""Tests for jaxlite.dtypes: canonical dtypes, weak types, promotion, dtype classes.

The promotion tables are checked pair by pair (and on triples) against real JAX
when it is installed, in both x64 modes.
"""

import contextlib
import inspect
import itertools
import warnings

import ml_dtypes
import numpy as np
import pytest

from jaxlite import dtypes
from jaxlite.config import config, enable_x64

STRONG_NAMES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bfloat16",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]
WEAK_NAMES = ["i*", "f*", "c*"]
ALL_NAMES = STRONG_NAMES + WEAK_NAMES
PYTHON_TYPE = {"i*": int, "f*": float, "c*": complex}
PYTHON_VALUE = {"i*": 1, "f*": 1.0, "c*": 1j}


class FakeArray:
    """Stands in for a jaxlite Array or tracer: just `.dtype` and `.weak_type`."""

    def __init__(self, dtype, weak_type=False):
        self.dtype = np.dtype(dtype)
        self.weak_type = weak_type


class ScalarType:
    """Stands in for a jnp scalar type such as `jnp.float32` (a class attribute)."""

    dtype = np.dtype("float64")


@contextlib.contextmanager
def both_x64(value):
    """Sets x64 mode for jaxlite and, if installed, real JAX; restores both."""
    try:
        import jax
    except ImportError:
        jax = None
    jax_before = jax.config.jax_enable_x64 if jax else None
    with enable_x64(value):
        if jax:
            jax.config.update("jax_enable_x64", value)
        try:
            yield
        finally:
            if jax:
                jax.config.update("jax_enable_x64", jax_before)


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    """Runs the test in both modes."""
    with both_x64(request.param):
        yield request.param


@pytest.fixture
def jax():
    return pytest.importorskip("jax")


def as_type(name):
    return PYTHON_TYPE[name] if name in PYTHON_TYPE else dtypes.dtype_names[name]


def as_value(name):
    if name in PYTHON_VALUE:
        return PYTHON_VALUE[name]
    return np.zeros(0, dtypes.dtype_names[name])


# --- canonical dtypes ------------------------------------------------------------


def test_canonicalize_x32():
    with enable_x64(False):
        assert dtypes.canonicalize_dtype(np.int64) == np.int32
        assert dtypes.canonicalize_dtype("uint64") == np.uint32
        assert dtypes.canonicalize_dtype(np.dtype("float64")) == np.float32
        assert dtypes.canonicalize_dtype(np.complex128) == np.complex64
        assert dtypes.canonicalize_dtype(int) == np.int32
        assert dtypes.canonicalize_dtype(float) == np.float32
        assert dtypes.canonicalize_dtype(complex) == np.complex64
        assert dtypes.canonicalize_dtype(bool) == np.bool_
        assert dtypes.canonicalize_dtype(ml_dtypes.bfloat16) == dtypes.bfloat16
        assert dtypes.canonicalize_dtype(np.int8) == np.int8
        assert dtypes.canonicalize_dtype(dtypes.float0) == dtypes.float0


def test_canonicalize_x64_keeps_64_bit():
    with enable_x64(True):
        for name in ["int64", "uint64", "float64", "complex128"]:
            assert dtypes.canonicalize_dtype(name) == np.dtype(name)
        assert dtypes.canonicalize_dtype(int) == np.int64
        assert dtypes.canonicalize_dtype(float) == np.float64


def test_canonicalize_returns_np_dtype_and_follows_mode_switches():
    for _ in range(2):
        with enable_x64(True):
            assert dtypes.canonicalize_dtype(np.float64) == np.float64
        with enable_x64(False):
            result = dtypes.canonicalize_dtype(np.float64)
            assert isinstance(result, np.dtype)
            assert result == np.float32


def test_canonicalize_accepts_objects_with_dtype():
    with enable_x64(False):
        assert dtypes.canonicalize_dtype(ScalarType) == np.float32
        assert dtypes.canonicalize_dtype(FakeArray("int64")) == np.int32


def test_canonicalize_non_native_byte_order():
    assert dtypes.canonicalize_dtype(np.dtype(">i2")) == np.dtype("int16")


def test_canonicalize_matches_jax(jax, x64):
    for name in STRONG_NAMES:
        expected = jax.dtypes.canonicalize_dtype(np.dtype(name))
        assert dtypes.canonicalize_dtype(name) == expected, name
    for t in [int, float, complex, bool]:
        assert dtypes.canonicalize_dtype(t) == jax.dtypes.canonicalize_dtype(t)


def test_defaults(x64):
    bits = 64 if x64 else 32
    assert dtypes.default_int_dtype() == np.dtype(f"int{bits}")
    assert dtypes.default_uint_dtype() == np.dtype(f"uint{bits}")
    assert dtypes.default_float_dtype() == np.dtype(f"float{bits}")
    assert dtypes.default_complex_dtype() == np.dtype(f"complex{2 * bits}")


def test_float0():
    assert dtypes.float0 == np.dtype([("float0", np.void, 0)])
    assert dtypes.float0.itemsize == 0
    assert dtypes.dtype_names["float0"] is dtypes.float0


def test_float0_matches_jax(jax):
    assert dtypes.float0 == jax.dtypes.float0


# --- user-requested dtypes -------------------------------------------------------

TRUNCATED = [
    ("int64", "int32"),
    ("uint64", "uint32"),
    ("float64", "float32"),
    ("complex128", "complex64"),
]


@pytest.mark.parametrize("wide, narrow", TRUNCATED)
def test_user_dtype_warning_text(wide, narrow):
    with enable_x64(False):
        with pytest.warns(UserWarning) as record:
            result = dtypes.canonicalize_user_dtype(np.dtype(wide))
    assert result == np.dtype(narrow)
    assert len(record) == 1
    assert str(record[0].message) == (
        f"Explicitly requested dtype {wide} is not available, and will be "
        f"truncated to dtype {narrow}. To enable more dtypes, set the "
        "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell "
        "environment variable. See https://github.com/jax-ml/jax#current-gotchas "
        "for more."
    )


def test_user_dtype_warning_points_at_caller():
    with enable_x64(False):
        with pytest.warns(UserWarning) as record:
            line = inspect.currentframe().f_lineno + 1
            dtypes.canonicalize_user_dtype("float64")
    assert record[0].filename == __file__
    assert record[0].lineno == line


def test_user_dtype_warning_skips_jaxlite_frames():
    """Called through a (simulated) jaxlite function, the warning names its caller."""
    namespace = {"__name__": "jaxlite.fake_numpy", "dtypes": dtypes}
    exec(
        "def zeros(dtype):\n    return dtypes.canonicalize_user_dtype(dtype)", namespace
    )
    with enable_x64(False):
        with pytest.warns(UserWarning) as record:
            line = inspect.currentframe().f_lineno + 1
            namespace["zeros"](np.float64)
    assert record[0].filename == __file__
    assert record[0].lineno == line


def test_user_dtype_explicit_stacklevel():
    def library_function():
        dtypes.canonicalize_user_dtype(np.float64, stacklevel=2)

    with enable_x64(False):
        with pytest.warns(UserWarning) as record:
            line = inspect.currentframe().f_lineno + 1
            library_function()
    assert record[0].filename == __file__
    assert record[0].lineno == line


@pytest.mark.parametrize("wide, narrow", TRUNCATED)
def test_user_dtype_warning_matches_jax(jax, wide, narrow):
    jnp = pytest.importorskip("jax.numpy")
    with enable_x64(False):
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            jnp.zeros(2, dtype=np.dtype(wide))
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            result = dtypes.canonicalize_user_dtype(np.dtype(wide), "zeros")
    assert result == np.dtype(narrow)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert len(ours) == 1


@pytest.mark.parametrize("requested", [int, float, complex, bool, np.int32, "int8"])
def test_no_warning_for_python_types_and_narrow_dtypes(requested):
    with enable_x64(False):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = dtypes.canonicalize_user_dtype(requested)
    assert result == dtypes.canonicalize_dtype(requested)


def test_no_warning_with_x64():
    with enable_x64(True):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert dtypes.canonicalize_user_dtype(np.float64) == np.float64
            assert dtypes.check_user_dtype_supported(np.int64) == np.int64


def test_user_dtype_none_passes_through():
    assert dtypes.canonicalize_user_dtype(None) is None


@pytest.mark.parametrize("bad", ["U", object, np.str_, "V"])
def test_user_dtype_rejects_non_numbers(bad):
    with pytest.raises(TypeError, match="only supports number"):
        dtypes.canonicalize_user_dtype(bad)


def test_user_dtype_accepts_float0_and_bfloat16():
    assert dtypes.canonicalize_user_dtype(dtypes.float0) == dtypes.float0
    assert dtypes.canonicalize_user_dtype(ml_dtypes.bfloat16) == dtypes.bfloat16


# --- weak types and single values ------------------------------------------------


def test_dtype_and_weak_x32():
    with enable_x64(False):
        assert dtypes.dtype_and_weak(1) == (np.int32, True)
        assert dtypes.dtype_and_weak(1.0) == (np.float32, True)
        assert dtypes.dtype_and_weak(1j) == (np.complex64, True)
        assert dtypes.dtype_and_weak(True) == (np.bool_, False)
        assert dtypes.dtype_and_weak(np.float64(1)) == (np.float32, False)
        assert dtypes.dtype_and_weak(np.ones(2, np.int64)) == (np.int32, False)
        assert dtypes.dtype_and_weak(FakeArray("float32", True)) == (np.float32, True)
        assert dtypes.dtype_and_weak("int16") == (np.int16, False)


def test_dtype_and_weak_matches_jax(jax, x64):
    values = [1, 1.0, 1j, True, False, np.float64(2), np.int8(3), np.uint64(4)]
    values += [np.zeros(2, name) for name in STRONG_NAMES]
    values += [int, float, complex, bool, np.float16, "float64"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for value in values:
            expected = jax.dtypes.result_type(value, return_weak_type_flag=True)
            assert dtypes.dtype_and_weak(value) == expected, value


def test_scalar_subclasses_are_strong(jax):
    import enum

    class Color(enum.IntEnum):
        RED = 1

    class MyFloat(float):
        pass

    for value in [Color.RED, MyFloat(1.0)]:
        expected = jax.dtypes.result_type(value, return_weak_type_flag=True)
        assert dtypes.dtype_and_weak(value) == expected
        assert dtypes.dtype_and_weak(value)[1] is False


def test_is_weakly_typed():
    assert dtypes.is_weakly_typed(1)
    assert dtypes.is_weakly_typed(2.5)
    assert dtypes.is_weakly_typed(1j)
    assert not dtypes.is_weakly_typed(True)
    assert not dtypes.is_weakly_typed(np.float32(1))
    assert not dtypes.is_weakly_typed(np.ones(2))
    assert dtypes.is_weakly_typed(FakeArray("float32", True))
    assert not dtypes.is_weakly_typed(FakeArray("float32", False))


def test_is_python_scalar():
    for value in [True, 1, 1.0, 1j]:
        assert dtypes.is_python_scalar(value)
    for value in [np.float64(1), np.ones(()), "1", None, [1]]:
        assert not dtypes.is_python_scalar(value)


def test_dtype_of_values(x64):
    bits = 64 if x64 else 32
    assert dtypes.dtype(1) == np.dtype(f"int{bits}")
    assert dtypes.dtype(np.ones(2)) == np.dtype(f"float{bits}")
    assert dtypes.dtype("float16") == np.float16
    assert dtypes.dtype(FakeArray("uint8")) == np.uint8


def test_dtype_errors():
    with pytest.raises(TypeError, match="Cannot determine dtype"):
        dtypes.dtype([1, 2])
    with pytest.raises(ValueError, match="Invalid argument to dtype"):
        dtypes.dtype(None)


def test_scalar_type_of():
    assert dtypes.scalar_type_of(1) is int
    assert dtypes.scalar_type_of(np.uint8(1)) is int
    assert dtypes.scalar_type_of(True) is bool
    assert dtypes.scalar_type_of(np.ones(2, ml_dtypes.bfloat16)) is float
    assert dtypes.scalar_type_of(np.ones(2, np.complex64)) is complex


def test_itemsize_bits():
    assert dtypes.itemsize_bits(np.float32) == 32
    assert dtypes.itemsize_bits(ml_dtypes.bfloat16) == 16
    assert dtypes.itemsize_bits(np.bool_) == 8


# --- promotion --------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, x32, x64_result",
    [
        ("int8", "uint8", "int16", "int16"),
        ("uint32", "int32", "int32", "int64"),
        ("bfloat16", "float16", "float32", "float32"),
        ("uint64", "int8", "float64", "float64"),
        ("float32", "float64", "float64", "float64"),
        ("i*", "uint8", "uint8", "uint8"),
        ("i*", "i*", "int64", "int64"),
        ("bool", "i*", "int64", "int64"),
        ("f*", "int32", "float64", "float64"),
        ("c*", "bfloat16", "complex64", "complex64"),
    ],
)
def test_promote_types_examples(a, b, x32, x64_result):
    with enable_x64(False):
        assert dtypes.promote_types(as_type(a), as_type(b)) == np.dtype(x32)
    with enable_x64(True):
        assert dtypes.promote_types(as_type(a), as_type(b)) == np.dtype(x64_result)


def test_promote_types_is_symmetric_and_idempotent(x64):
    for a, b in itertools.product(ALL_NAMES, repeat=2):
        ab = dtypes.promote_types(as_type(a), as_type(b))
        assert ab == dtypes.promote_types(as_type(b), as_type(a)), (a, b)
    for name in STRONG_NAMES:
        assert dtypes.promote_types(name, name) == np.dtype(dtypes.dtype_names[name])


def test_promote_types_table_matches_jax(jax, x64):
    jnp = pytest.importorskip("jax.numpy")
    for a, b in itertools.product(ALL_NAMES, repeat=2):
        expected = jnp.promote_types(as_type(a), as_type(b))
        assert dtypes.promote_types(as_type(a), as_type(b)) == expected, (a, b)


def test_result_type_pairs_match_jax(jax, x64):
    for a, b in itertools.product(ALL_NAMES, repeat=2):
        args = (as_value(a), as_value(b))
        expected = jax.dtypes.result_type(*args, return_weak_type_flag=True)
        got = dtypes.result_type(*args, return_weak_type_flag=True)
        assert got == expected, (a, b)
        assert isinstance(got[0], np.dtype)


def test_result_type_triples_match_jax(jax, x64):
    names = ["bool", "int8", "uint8", "uint32", "int64", "uint64", "bfloat16"]
    names += ["float16", "float64", "complex64", "i*", "f*", "c*"]
    for combo in itertools.product(names, repeat=3):
        args = [as_value(name) for name in combo]
        expected = jax.dtypes.result_type(*args, return_weak_type_flag=True)
        assert dtypes.result_type(*args, return_weak_type_flag=True) == expected, combo


def _jax_weak_array(jax, name):
    lax_internal = pytest.importorskip("jax._src.lax.lax")
    zero = jax.numpy.zeros((), np.float32)
    return lax_internal._convert_element_type(
        zero, np.dtype(dtypes.dtype_names[name]), weak_type=True
    )


def test_result_type_weak_arrays_match_jax(jax, x64):
    """Weakly typed arrays of every dtype (what jnp ops on Python scalars give)."""
    names = ["bool", "int8", "uint8", "int32", "uint32", "bfloat16", "float16"]
    names += ["float32", "complex64"]
    cases = [(name, True) for name in names] + [(name, False) for name in names]
    cases += [("i*", None), ("f*", None)]

    def ours(name, weak):
        if weak is None:
            return PYTHON_VALUE[name]
        return FakeArray(dtypes.dtype_names[name], weak)

    def theirs(name, weak):
        if weak is None:
            return PYTHON_VALUE[name]
        if weak:
            return _jax_weak_array(jax, name)
        return np.zeros(0, dtypes.dtype_names[name])

    for single in cases:
        expected = jax.dtypes.result_type(theirs(*single), return_weak_type_flag=True)
        got = dtypes.result_type(ours(*single), return_weak_type_flag=True)
        assert got == expected, single
    for first, second in itertools.product(cases, repeat=2):
        expected = jax.dtypes.result_type(
            theirs(*first), theirs(*second), return_weak_type_flag=True
        )
        got = dtypes.result_type(
            ours(*first), ours(*second), return_weak_type_flag=True
        )
        assert got == expected, (first, second)


def test_result_type_examples_x32():
    with enable_x64(False):
        i32 = FakeArray("int32")
        assert dtypes.result_type(i32, 1.0, return_weak_type_flag=True) == (
            np.float32,
            True,
        )
        u8 = FakeArray("uint8")
        assert dtypes.result_type(u8, 1, return_weak_type_flag=True) == (
            np.uint8,
            False,
        )
        assert dtypes.result_type(True, 1, return_weak_type_flag=True) == (
            np.int32,
            True,
        )
        assert dtypes.result_type(np.uint64, np.int64) == np.int32
        assert dtypes.result_type(FakeArray("float32"), FakeArray("float32")) == (
            np.float32
        )


def test_result_type_accepts_dtype_likes(x64):
    assert dtypes.result_type(np.float16, "float16") == np.float16
    assert dtypes.result_type(ScalarType, np.float16) == dtypes.default_float_dtype()
    assert dtypes.result_type(int, return_weak_type_flag=True)[1] is True
    assert dtypes.result_type(bool, return_weak_type_flag=True) == (np.bool_, False)


def test_result_type_is_stable_across_mode_switches():
    a = FakeArray("int64")
    b = FakeArray("int8")
    for _ in range(2):
        with enable_x64(False):
            assert dtypes.result_type(a, b) == np.int32
            assert dtypes.result_type(a, 1.0) == np.float32
        with enable_x64(True):
            assert dtypes.result_type(a, b) == np.int64
            assert dtypes.result_type(a, 1.0) == np.float64


def test_result_type_many_args():
    args = [FakeArray("int8")] * 5 + [FakeArray("uint8"), 2]
    assert dtypes.result_type(*args) == np.int16


def test_result_type_errors():
    with pytest.raises(ValueError, match="at least one array or dtype"):
        dtypes.result_type()
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        dtypes.result_type(dtypes.float0, np.float32)
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        dtypes.promote_types(dtypes.float0, dtypes.float0)
    with pytest.raises(TypeError, match="Cannot determine dtype"):
        dtypes.result_type([1, 2])


def test_result_type_float0_alone():
    assert dtypes.result_type(dtypes.float0) == dtypes.float0
    assert dtypes.result_type(dtypes.float0, dtypes.float0) == dtypes.float0


# --- dtype classes ---------------------------------------------------------------

ABSTRACT = [
    np.generic,
    np.number,
    np.inexact,
    np.floating,
    np.complexfloating,
    np.integer,
    np.signedinteger,
    np.unsignedinteger,
    np.bool_,
]


def test_issubdtype_bfloat16():
    for parent in [np.floating, np.inexact, np.number, np.generic, ml_dtypes.bfloat16]:
        assert dtypes.issubdtype(ml_dtypes.bfloat16, parent)
        assert dtypes.issubdtype(np.dtype(ml_dtypes.bfloat16), parent)
    for other in [np.integer, np.complexfloating, np.float16, np.float32, np.bool_]:
        assert not dtypes.issubdtype(ml_dtypes.bfloat16, other)
    assert not dtypes.issubdtype(np.float32, ml_dtypes.bfloat16)


def test_issubdtype_standard():
    assert dtypes.issubdtype(np.int8, np.signedinteger)
    assert not dtypes.issubdtype(np.uint8, np.signedinteger)
    assert dtypes.issubdtype("complex64", np.inexact)
    assert dtypes.issubdtype(float, np.floating)
    assert not dtypes.issubdtype(np.float32, np.float64)
    assert dtypes.issubdtype(FakeArray("int16"), np.integer)
    assert dtypes.issubdtype(dtypes.float0, np.generic)
    assert not dtypes.issubdtype(dtypes.float0, np.void)


def test_issubdtype_table_matches_jax(jax):
    jnp = pytest.importorskip("jax.numpy")
    concrete = [np.dtype(dtypes.dtype_names[name]) for name in STRONG_NAMES]
    inputs = concrete + [dtypes.float0, int, float, complex, bool]
    for a, b in itertools.product(inputs, concrete + ABSTRACT + [dtypes.float0]):
        assert dtypes.issubdtype(a, b) == jnp.issubdtype(a, b), (a, b)


ISDTYPE_KINDS = [
    "bool",
    "signed integer",
    "unsigned integer",
    "integral",
    "real floating",
    "complex floating",
    "numeric",
    ("bool", "integral"),
    ("real floating", np.int8),
    np.float32,
    ml_dtypes.bfloat16,
]


def test_isdtype_matches_jax(jax):
    jnp = pytest.importorskip("jax.numpy")
    for name, kind in itertools.product(STRONG_NAMES, ISDTYPE_KINDS):
        dt = dtypes.dtype_names[name]
        assert dtypes.isdtype(dt, kind) == jnp.isdtype(dt, kind), (name, kind)


def test_isdtype_examples_and_errors():
    assert dtypes.isdtype(ml_dtypes.bfloat16, "real floating")
    assert not dtypes.isdtype(np.float32, ("integral", "bool"))
    assert dtypes.isdtype(np.complex64, "numeric")
    with pytest.raises(ValueError, match="Unrecognized kind='foo'"):
        dtypes.isdtype(np.float32, "foo")
    with pytest.raises(TypeError, match="Expected kind to be a dtype"):
        dtypes.isdtype(np.float32, 3)


def test_predicates():
    for name in STRONG_NAMES:
        dt = dtypes.dtype_names[name]
        assert dtypes.is_int(dt) == dtypes.issubdtype(dt, np.integer), name
        assert dtypes.is_unsigned(dt) == dtypes.issubdtype(dt, np.unsignedinteger)
        assert dtypes.is_float(dt) == dtypes.issubdtype(dt, np.floating), name
        assert dtypes.is_complex(dt) == dtypes.issubdtype(dt, np.complexfloating)
        assert dtypes.is_inexact(dt) == dtypes.issubdtype(dt, np.inexact), name
        assert dtypes.is_bool(dt) == (name == "bool")
    assert dtypes.is_float(dtypes.dtype_names["bfloat16"])
    assert not dtypes.is_int(dtypes.dtype_names["bool"])


def test_finfo_and_iinfo():
    info = dtypes.finfo(ml_dtypes.bfloat16)
    assert float(info.eps) == 2.0**-7
    assert info.bits == 16
    assert dtypes.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert dtypes.finfo(float).dtype == np.float64
    assert dtypes.finfo(np.complex64).dtype == np.float32
    assert dtypes.iinfo(np.int8).min == -128
    assert dtypes.iinfo("uint16").max == 65535
    with pytest.raises(ValueError):
        dtypes.finfo(np.int32)


def test_finfo_matches_jax(jax):
    for name in ["bfloat16", "float16", "float32", "float64", "complex64"]:
        ours = dtypes.finfo(dtypes.dtype_names[name])
        theirs = jax.dtypes.finfo(dtypes.dtype_names[name])
        assert ours.dtype == theirs.dtype
        assert ours.eps == theirs.eps
        assert ours.max == theirs.max
        assert ours.tiny == theirs.tiny


def test_short_names():
    expected = {
        "float32": "f32",
        "float64": "f64",
        "float16": "f16",
        "bfloat16": "bf16",
        "int8": "i8",
        "int16": "i16",
        "int32": "i32",
        "int64": "i64",
        "uint8": "u8",
        "uint16": "u16",
        "uint32": "u32",
        "uint64": "u64",
        "bool": "bool",
        "complex64": "c64",
        "complex128": "c128",
        "float0": "float0",
    }
    for name, short in expected.items():
        assert dtypes.short_name(dtypes.dtype_names[name]) == short
        if name != "float0":
            assert dtypes.short_name(name) == short
    assert dtypes.short_name(np.float32) == "f32"


def test_short_names_match_jax_jaxprs(jax):
    with both_x64(True):
        for name, dt in dtypes.dtype_names.items():
            text = str(jax.make_jaxpr(lambda x: x)(np.zeros((), dt)))
            printed = text.split("a:", 1)[1].split("[", 1)[0]
            assert dtypes.short_name(dt) == printed, name


# --- conversion ------------------------------------------------------------------


def test_coerce_python_scalars(x64):
    bits = 64 if x64 else 32
    for value, kind in [(1, "int"), (1.5, "float"), (True, "bool"), (2j, "complex")]:
        arr = dtypes.coerce_to_array(value)
        assert isinstance(arr, np.ndarray)
        assert arr.shape == ()
        if kind == "bool":
            assert arr.dtype == np.bool_
        elif kind == "complex":
            assert arr.dtype == np.dtype(f"complex{2 * bits}")
        else:
            assert arr.dtype == np.dtype(f"{kind}{bits}")
        assert arr.item() == value


def test_coerce_lists_and_numpy_x32():
    with enable_x64(False):
        assert dtypes.coerce_to_array([1, 2]).dtype == np.int32
        assert dtypes.coerce_to_array((1, 2.5)).dtype == np.float32
        assert dtypes.coerce_to_array(np.ones(3)).dtype == np.float32
        assert dtypes.coerce_to_array(np.float64(2)).dtype == np.float32
        arr = np.ones(3, np.float16)
        assert dtypes.coerce_to_array(arr) is arr
        assert dtypes.coerce_to_array(1, dtype=np.float64).dtype == np.float32
        assert dtypes.coerce_to_array(1.7, dtype=np.int32).item() == 1


def test_coerce_overflow_x32():
    with enable_x64(False):
        with pytest.raises(
            OverflowError,
            match="Python int 1099511627776 too large to convert to int32",
        ):
            dtypes.coerce_to_array(2**40)
        with pytest.raises(OverflowError, match="-2147483649"):
            dtypes.coerce_to_array(-(2**31) - 1)
        with pytest.raises(OverflowError, match="out of bounds for int32"):
            dtypes.coerce_to_array([1, 2**40])
        with pytest.raises(OverflowError, match="out of bounds for uint8"):
            dtypes.coerce_to_array(300, dtype=np.uint8)
        assert dtypes.coerce_to_array(2**31 - 1).item() == 2**31 - 1


def test_coerce_overflow_x64():
    with enable_x64(True):
        assert dtypes.coerce_to_array(2**40).dtype == np.int64
        with pytest.raises(OverflowError, match="too large to convert to int64"):
            dtypes.coerce_to_array(2**63)


def test_coerce_overflow_messages_match_jax(jax, x64):
    jnp = pytest.importorskip("jax.numpy")
    for value in [2**40, -(2**40), 2**63, 2**64]:
        if x64 and abs(value) < 2**63:
            continue
        with pytest.raises(OverflowError) as theirs:
            jnp.array(value)
        with pytest.raises(OverflowError) as ours:
            dtypes.coerce_to_array(value)
        assert str(ours.value) == str(theirs.value)


def test_coerce_dtypes_match_jax(jax, x64):
    jnp = pytest.importorskip("jax.numpy")
    values = [1, 1.0, 1j, True, [1, 2], [1.0, 2], [True], np.float64(1)]
    values += [np.zeros(2, name) for name in STRONG_NAMES]
    for value in values:
        expected = jnp.array(value).dtype
        assert dtypes.coerce_to_array(value).dtype == expected, value


def test_coerce_rejects_strings():
    with pytest.raises(TypeError, match="only supports number"):
        dtypes.coerce_to_array(["a", "b"])


def test_dtype_caches_follow_the_mode_of_each_call():
    # No config listener: every call reads the calling thread's mode (the context
    # managers are thread-local; see tests/test_issue13_config_dtypes.py).
    x64 = config.x64_enabled
    for _ in range(2):  # the second round reads the caches
        with enable_x64(True):
            assert dtypes.canonicalize_dtype(np.float64) == np.float64
            assert dtypes.result_type(1.0) == np.float64
        with enable_x64(False):
            assert dtypes.canonicalize_dtype(np.float64) == np.float32
            assert dtypes.result_type(1.0) == np.float32
    assert config.x64_enabled == x64
