"""XLA's float32 kernels compiled natively (backend/native/xla_math.py), issue 15.

The native backend emits XLA:CPU's own float32 algorithms for exp, log, log1p, expm1,
tanh, logistic, erf and erf_inv inline, with XLA's expansions of exp2, sinh, cosh,
asinh, acosh and atanh into them (and calls sinf/cosf for sin and cos, as XLA does),
so compiled code gives the bits of the eager exact kernels
(`jaxlite.lax.xla_float32`) and of real JAX over the whole float32 range: random bit
patterns, normal and uniform values at many scales, signed zeros, infinities, NaN,
subnormals, and each kernel's branch points and clamps with their neighbours.
JAX's results depend on the array size below ~64 elements (XLA then emits other code),
so the arrays compared with JAX have a multiple of 1024 elements.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("llvmlite")

import jaxlite  # noqa: E402
from jaxlite import lax  # noqa: E402
from jaxlite.backend import native  # noqa: E402
from jaxlite.config import config  # noqa: E402
from jaxlite.lax import xla_float32  # noqa: E402

F32 = np.float32
TINY = np.finfo(F32).tiny
MAX = np.finfo(F32).max

# op -> the kernel's branch points and clamps (each is tested with its neighbours)
EDGES = {
    "exp": [-87.8, 88.8, 88.72283, 88.7228394, -87.33655, -103.972, -104.0, 0.34657359]
    + [-88.02969, -126.5 * 0.6931472, 127.5 * 0.6931472, 1e-10],
    "logistic": [87.8, -88.8, -88.72283, 87.33655, 103.972, 104.0, 16.635532, -16.6]
    + [88.02969, 1e-10, 9.0],
    "log": [TINY, 0.70710677, 0.70710677 * 2.0**-60, 0.70710677 * 2.0**70, 1.0]
    + [2.0, 0.5, MAX, 1.4142135],
    "log1p": [0.41421356, -0.41421356, -1.0, -0.99999994, TINY, 2.0 * TINY]
    + [1e-10, 3e-39, 1e38],
    "expm1": [0.5, -0.5, 2.0 * TINY, 1.5 * TINY, -2.0 * TINY, -87.8, 88.8, 88.7228]
    + [1e-10, -17.0],
    "tanh": [4e-4, -4e-4, 20.0, -20.0, 7.998812, -7.998812, 1.0842022e-19]
    + [1.0842021e-19, 1e-30, 9.01],
    "erf": [3.832507, -3.832507, 1.0842022e-19, 1.0842021e-19, 1e-30, 0.5, 2.0],
    "erf_inv": [1.0, -1.0, 0.99662542, -0.99662542, 0.99999994, 0.5, TINY, 1e-30]
    + [1e-19, 0.9999, 1.3264034e-38],
    "exp2": [128.0, -126.0, -127.0, -149.0, -150.0, 127.99, -126.67, 128.1, 0.5],
    "sinh": [1.0, -1.0, 89.41599, 88.72283, 0.6931472, 2.0 * TINY, 1e-19, 20.0],
    "cosh": [89.41599, 88.72283, 0.6931472, 1e-19, 2.0 * TINY, 1.0, 20.0],
    "asinh": [1.8446743e19, 1.0842022e-19, 1e-30, 0.41421356, 1.0, 2.0 * TINY, 1e20],
    "acosh": [1.0, 1.0000001, 0.99999994, 1.7014117e38, 1e10, 2.0, 1.0842022e-19],
    "atanh": [1.0, 0.99999994, 0.41421356, 0.5, 1e-19, 2.0 * TINY, 1e-30],
    "sin": [np.pi / 2, np.pi, 2 * np.pi, 1e4, 1e6 * np.pi, 2.0**100, 117435.99, TINY],
    "cos": [np.pi / 2, np.pi, 3 * np.pi / 2, 1e4, 1e6 * np.pi, 2.0**100, TINY],
}
KERNELS = list(EDGES)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, TINY, -TINY, MAX, -MAX]
SPECIAL += [1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-45, -1e-45, 1e-40, -1e-40]


def _neighbours(values, ulps=3):
    v = np.asarray(values, F32)
    out = [v, -v]
    for direction in (MAX, -MAX):
        w = v
        for _ in range(ulps):
            w = np.nextafter(w, F32(direction))
            out += [w, -w]
    return np.concatenate(out)


def _inputs(name, size=96 * 1024):
    rng = np.random.default_rng(sum(map(ord, name)))
    parts = [np.array(SPECIAL, F32), _neighbours(EDGES[name])]
    # Every exponent and sign, NaNs with payloads, subnormals: random bit patterns.
    parts.append(rng.integers(0, 2**32, 16384, dtype=np.uint64).astype(np.uint32))
    subnormal = rng.integers(1, 1 << 23, 1024, dtype=np.uint32)
    parts.append(subnormal | (rng.integers(0, 2, 1024, dtype=np.uint32) << 31))
    parts.append(np.array([1, 0x7FFFFF, 0x80000001, 0x807FFFFF], np.uint32))
    for scale in 10.0 ** np.arange(-8, 4):
        parts.append(rng.normal(0, scale, 1024))
    for bound in (1e-3, 0.5, 1, 4, 10, 30, 100, 1e4):
        parts.append(rng.uniform(-bound, bound, 2048))
    if name == "log":
        parts.append(np.exp(rng.uniform(-87, 88, 4096)))
    if name == "acosh":
        parts.append(1 + np.exp(rng.uniform(-24, 10, 8192)))
    if name in ("erf_inv", "atanh"):  # mostly in [-1, 1], dense near +-1
        parts.append(rng.uniform(-1, 1, 8192))
        parts.append(1 - np.exp2(-rng.uniform(1, 24, 4096)) * rng.choice([-1, 1], 4096))
    parts = [p.view(F32) if p.dtype == np.uint32 else p.astype(F32) for p in parts]
    x = np.concatenate(parts)
    x = np.concatenate([x, rng.uniform(-3, 3, size - x.size).astype(F32)])
    assert x.size == size and x.size % 1024 == 0
    return x


def _native(f, *args):
    closed = jaxlite.make_jaxpr(f)(*args)
    ex = native.compile(closed)
    assert ex is not None, "the native backend left this program to NumPy"
    return ex


def assert_bits_equal(actual, expected, inputs):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype == F32
    assert actual.shape == expected.shape
    same = actual.view(np.uint32) == expected.view(np.uint32)
    same |= np.isnan(actual) & np.isnan(expected)
    if not same.all():
        bad = np.flatnonzero(~same)[:5]
        raise AssertionError(
            f"{np.sum(~same)} of {same.size} differ, e.g. at "
            f"{np.asarray(inputs).ravel()[bad].tolist()}: "
            f"{actual.ravel()[bad].tolist()} != {expected.ravel()[bad].tolist()}"
        )


@pytest.mark.parametrize("name", KERNELS)
def test_native_kernel_bits_equal_eager_exact_kernel_and_jax(name):
    x = _inputs(name)
    ex = _native(lambda v: getattr(lax, name)(v), x)
    (got,) = ex(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_bits_equal(got, getattr(xla_float32, name)(x), x)
        jax = pytest.importorskip("jax")
        assert_bits_equal(got, np.asarray(getattr(jax.lax, name)(x)), x)


@pytest.mark.parametrize("name", KERNELS)
def test_native_kernel_on_scalars(name):
    # 0-d values live in registers; the same kernel, the same bits.
    x = _inputs(name)[:: 97 * 3]
    x = np.concatenate([np.array(SPECIAL, F32), x])
    ex = _native(lambda v: getattr(lax, name)(v), F32(1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = np.array([np.asarray(ex(v)[0]) for v in x], F32)
        want = np.array([getattr(xla_float32, name)(v) for v in x], F32)
    assert_bits_equal(got, want, x)


@pytest.mark.parametrize(
    "name", ["exp", "log", "log1p", "expm1", "tanh", "logistic", "sinh", "atanh"]
)
def test_polynomial_kernels_are_inline(name):
    # XLA's polynomials, not the C library's functions: no call is left in the loop.
    x = np.ones(4096, F32)
    ir = _native(lambda v: getattr(lax, name)(v), x).ir
    assert "llvm.fma" in ir
    for symbol in ("@tanhf", "@expf", "@logf", "@log1pf", "@expm1f", "@sinhf"):
        assert symbol not in ir


def test_erf_and_erf_inv_are_inline():
    x = np.full(4096, 0.25, F32)
    for f in (lax.erf, lax.erf_inv):
        ir = _native(f, x).ir
        assert "llvm.fma" in ir and "@erff" not in ir and "@logf" not in ir


def _tanh_loop(v):
    return lax.fori_loop(0, 100, lambda i, y: lax.tanh(y), v)


def test_fori_loop_of_tanh_equals_eager_exact_kernel():
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [np.array(SPECIAL, F32), rng.normal(0, 3, 4096 - len(SPECIAL)).astype(F32)]
    )
    (got,) = _native(_tanh_loop, x)(x)
    want = x
    for _ in range(100):
        want = xla_float32.tanh(want)
    assert_bits_equal(got, want, x)
    jax = pytest.importorskip("jax")
    expected = jax.jit(
        lambda v: jax.lax.fori_loop(0, 100, lambda i, y: jax.lax.tanh(y), v)
    )
    assert_bits_equal(got, np.asarray(expected(x)), x)


def test_loop_mixing_kernels_equals_eager_exact_kernels():
    def step(i, y):
        return lax.tanh(lax.log1p(lax.exp(y)) - lax.logistic(y) * lax.erf(y)) * 4.0

    x = np.random.default_rng(1).uniform(-5, 5, 2048).astype(F32)
    (got,) = _native(lambda v: lax.fori_loop(0, 25, step, v), x)(x)
    X = xla_float32
    want = x
    for _ in range(25):
        inner = X.log1p(X.exp(want)) - X.logistic(want) * X.erf(want)
        want = X.tanh(inner) * F32(4.0)
    assert_bits_equal(got, want, x)


def test_float64_keeps_the_c_library():
    config.update("jax_enable_x64", True)  # conftest restores the configuration
    x = np.random.default_rng(2).normal(0, 3, 1000)
    x = np.abs(x)
    for name, ref in (("tanh", np.tanh), ("exp", np.exp), ("log1p", np.log1p)):
        ex = _native(lambda v, name=name: getattr(lax, name)(v), x)
        (got,) = ex(x)
        assert np.asarray(got).dtype == np.float64
        np.testing.assert_allclose(got, ref(x), rtol=1e-15, atol=0)


# XLA flushes a tiny product to zero as x86 does: tiny after rounding to float32's
# precision. Just below twice the smallest normal, x / 2 rounds up to it (IEEE) but is
# flushed (expm1's x / 2, also in sinh); erf_inv's last product at 1.3264034e-38.
FLUSHED = {
    "expm1": np.nextafter(F32(2 * TINY), F32(0)),
    "sinh": np.nextafter(F32(2 * TINY), F32(0)),
    "erf_inv": F32(1.3264034e-38),
}


@pytest.mark.parametrize("name", list(FLUSHED))
def test_products_flush_to_zero_as_xla_does(name):
    v = FLUSHED[name]
    x = np.array([v, -v, 2 * TINY, -2 * TINY] * 256, F32)
    jax = pytest.importorskip("jax")
    expected = np.asarray(getattr(jax.lax, name)(x))
    assert_bits_equal(getattr(xla_float32, name)(x), expected, x)
    assert_bits_equal(_native(getattr(lax, name), x)(x)[0], expected, x)
    for v in x[:4]:  # 0-d: the Python-float kernels
        got = np.float32(getattr(xla_float32, name)(v))
        assert_bits_equal(got, np.float32(getattr(jax.lax, name)(v)), v)
