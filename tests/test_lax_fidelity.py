"""jaxlite.lax against real JAX where representations and casts are easy to get
subtly wrong: bitcasts of every width change (0-d included), sorting bfloat16/float16
with NaNs and signed zeros, dot_general with mixed dtypes and preferred_element_type,
casts from complex, conj of real floats and the checks on Python-scalar operands."""

import warnings

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax

jax = pytest.importorskip("jax")

bf16 = ml_dtypes.bfloat16
nan = np.nan


def _run(lib, f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(f(lib.lax))


def _same(f):
    got, want = _run(jaxlite, f), _run(jax, f)
    assert got.dtype == want.dtype and got.shape == want.shape
    wide = np.complex128 if want.dtype.kind == "c" else np.float64
    np.testing.assert_array_equal(got.astype(wide), want.astype(wide))
    return got


_WIDTHS = [np.uint8, np.int16, np.float16, bf16, np.int32, np.float32, np.uint32]


@pytest.mark.parametrize("src", _WIDTHS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("dst", _WIDTHS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(), (4,), (2, 4)], ids=str)
def test_bitcast_convert_type_matches_jax(src, dst, shape):
    x = np.arange(1, 1 + int(np.prod(shape))).reshape(shape).astype(src)
    try:
        want = _run(jax, lambda m: m.bitcast_convert_type(x, dst))
    except Exception as e:  # noqa: BLE001  (narrowing to a wider type needs the axis)
        with pytest.raises(type(e)):
            lax.bitcast_convert_type(x, dst)
        return
    got = _same(lambda m: m.bitcast_convert_type(x, dst))
    assert got.shape == want.shape  # () stays () for equal widths
    jitted = jaxlite.jit(lambda v: lax.bitcast_convert_type(v, dst))(x)
    assert np.asarray(jitted).tobytes() == want.tobytes()


def test_bitcast_0d_keeps_its_shape():
    assert lax.bitcast_convert_type(np.float32(1.0), np.int32).shape == ()
    assert lax.bitcast_convert_type(np.float32(1.0), np.uint8).shape == (4,)


_SORT_VALUES = [nan, 1.0, -0.0, 0.0, -nan, -1.0, np.inf, -np.inf, 0.0, -0.0, 2.0]


@pytest.mark.parametrize("dtype", [bf16, np.float16, np.float32], ids=str)
def test_sort_nans_last_and_zeros_stable(dtype):
    x = np.array(_SORT_VALUES, dtype)
    got = _run(jaxlite, lambda m: m.sort(x))
    want = _run(jax, lambda m: m.sort(x))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
    np.testing.assert_array_equal(
        np.signbit(got.astype(np.float32)), np.signbit(want.astype(np.float32))
    )
    perm = np.arange(len(_SORT_VALUES))
    _same(lambda m: m.sort_key_val(x, perm)[1])
    _same(lambda m: m.sort((x, x[::-1].copy()), num_keys=2)[1].astype(np.float32))
    jitted = jaxlite.jit(lax.sort)(x).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(jitted), want.astype(np.float32))


_DOT_CASES = [
    (np.int8, np.int8, np.int32),
    (np.int8, np.int8, None),
    (np.uint8, np.int8, None),
    (np.uint8, np.int8, np.int32),
    (bf16, np.float32, None),
    (bf16, bf16, np.float32),
    (np.float16, np.float16, np.float32),
    (np.float16, bf16, None),
    (np.float16, np.float16, bf16),
    (np.float32, np.float32, np.float16),
    (np.float32, np.float32, bf16),
    (np.int8, np.int8, np.float32),
    (np.float32, np.float32, np.int32),
    (np.int32, np.float32, np.float32),
    (np.bool_, np.bool_, np.int32),
]


def _dot_tolerance(lhs, rhs, dtype):
    """What two correct dot products may differ by: the summation order is the
    library's (XLA's and BLAS's blockings differ), so each result may carry a few
    roundings of the running sum, bounded by k * eps * (|lhs| @ |rhs|)."""
    magnitude = np.abs(lhs.astype(np.float64)) @ np.abs(rhs.astype(np.float64))
    return lhs.shape[-1] * float(ml_dtypes.finfo(dtype).eps) * magnitude


@pytest.mark.parametrize("a,b,pref", _DOT_CASES, ids=str)
def test_dot_general_preferred_element_type_matches_jax(a, b, pref):
    rng = np.random.default_rng(0)
    lhs = rng.uniform(-100, 100, (5, 6)).astype(a)
    rhs = rng.uniform(-100, 100, (6, 3)).astype(b)
    dims = (((1,), (0,)), ((), ()))

    def f(m):
        return m.dot_general(lhs, rhs, dims, preferred_element_type=pref)

    got, want = _run(jaxlite, f), _run(jax, f)
    jitted = jaxlite.jit(lambda x, y: lax.dot_general(x, y, dims, None, pref))
    out = np.asarray(jitted(lhs, rhs))
    for result in (got, out):
        assert result.dtype == want.dtype and result.shape == want.shape
        if want.dtype.kind in "biu":  # exact
            np.testing.assert_array_equal(result, want)
        else:
            atol = _dot_tolerance(lhs, rhs, want.dtype)
            diff = np.abs(result.astype(np.float64) - want.astype(np.float64))
            assert np.all(diff <= atol), (result, want)


_Z = np.array(
    [0, 1 + 2j, 1j, -1.5 - 0.5j, 2.7, nan, complex(0, nan), 3e10], np.complex64
)


@pytest.mark.parametrize(
    "dtype", [np.bool_, np.float32, np.float16, bf16, np.int32, np.uint8, np.int8]
)
def test_convert_element_type_from_complex_matches_jax(dtype):
    got = _same(lambda m: m.convert_element_type(_Z, dtype))
    with pytest.warns(np.exceptions.ComplexWarning, match="discards the imaginary"):
        lax.convert_element_type(_Z, dtype)
    traced = jaxlite.jit(lambda z: lax.convert_element_type(z, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        out = np.asarray(traced(_Z)).astype(np.float64)
    np.testing.assert_array_equal(out, got.astype(np.float64))


def test_convert_complex_to_bool_uses_the_real_part():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = lax.convert_element_type(np.complex64(1j), np.bool_)
    assert not bool(out)  # XLA: real part only (jnp's astype tests x != 0 itself)


@pytest.mark.parametrize("x", [np.float32(1.5), np.array([1.0, -2.0]), 0.75])
def test_conj_of_real_is_complex(x):
    got = _same(lambda m: m.conj(x))
    assert got.dtype == np.complex64
    assert lax.conj(x).weak_type == jax.lax.conj(x).weak_type
    text = str(jaxlite.make_jaxpr(lax.conj)(np.float32(1.0)))
    assert "conj[input_dtype=float32]" in text
    # Transposing conj of a real operand takes the real part of the cotangent.
    g = jaxlite.grad(lambda v: lax.real(lax.conj(v)))(1.0)
    assert float(g) == float(jax.grad(lambda v: jax.lax.real(jax.lax.conj(v)))(1.0))


def test_conj_rejects_float16_and_integers():
    for x in (np.ones(2, np.float16), np.ones(2, np.int32)):
        with pytest.raises(TypeError, match="conj does not accept dtype"):
            lax.conj(x)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.add(1.5, 2),
        lambda m: m.atan2(1, 2.0),
        lambda m: m.add(np.ones(3, np.int32), 2.5),
        lambda m: m.add(np.ones(3, np.int32), True),
        lambda m: m.bitwise_and(np.ones(3, np.float32), np.ones((2, 3), np.float32)),
        lambda m: m.shift_left(np.ones(3, np.float32), np.ones(3, np.int32)),
        lambda m: m.clamp(np.int32(0), np.ones(3, np.float32), np.int32(1)),
        lambda m: m.select_n(np.ones(3, np.float32), np.ones(3), np.ones(3)),
        lambda m: m.square(True),
    ],
)
def test_operand_errors_match_jax(call):
    with pytest.raises(Exception) as want:
        _run(jax, call)
    with pytest.raises(type(want.value)) as got:
        _run(jaxlite, call)
    phrase = " ".join(str(want.value).split()[:6])
    assert phrase in str(got.value)


def test_python_scalars_alone_keep_their_dtypes():
    out = lax.add(1, 2)
    assert out.dtype == np.int32 and out.weak_type
    assert lax.mul(np.ones(2, np.float16), 2.0).dtype == np.float16
    assert not lax.clamp(np.float32(0), 1.5, np.float32(1)).weak_type
    assert lax.clamp(0.0, 1.5, 1.0).weak_type


def test_jnp_astype_from_complex_matches_jax():
    jax = pytest.importorskip("jax")
    z = np.array([1j, 2 + 0j, 0j, -1.5 - 2j], np.complex64)
    for dt in ("bool", "float32", "int32", "complex64"):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            got = jnp.asarray(z).astype(dt)
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            want = jax.numpy.asarray(z).astype(dt)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
        assert [w.category for w in ours] == [w.category for w in theirs]


def test_correlate_and_convolve_of_real_and_complex_inputs():
    a = np.array([1 + 2j, 2, 3 - 1j], np.complex64)
    v = np.array([0, 1j, 0.5, 2], np.complex64)
    for x, y in [(a, v), (v, a), (a.real, v.real), (v.real, a.real)]:
        for mode in ("full", "same", "valid"):
            got = jnp.correlate(x, y, mode)
            assert got.dtype == np.result_type(x.dtype, y.dtype)
            np.testing.assert_allclose(got, np.correlate(x, y, mode), rtol=1e-5)
            np.testing.assert_allclose(
                jnp.convolve(x, y, mode), np.convolve(x, y, mode), rtol=1e-5
            )
