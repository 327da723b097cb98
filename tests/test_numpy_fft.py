"""Tests for lax.fft (the fft primitive and its rules) and jnp.fft.

Values, shapes, dtypes and weak types are compared with NumPy and with real JAX;
derivatives with finite differences (on real parametrisations of complex inputs, since
JAX's cotangents are plain transposes); jit with eager; vmap with a loop.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from testing import check_close, check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)
Z = (X + 1j * RNG.standard_normal((3, 4, 5))).astype(np.complex64)

NORMS = [None, "backward", "ortho", "forward"]
CASES = [
    ("fft", Z, {}),
    ("fft", X, dict(n=7, axis=1)),
    ("ifft", Z, dict(n=3)),
    ("rfft", X, {}),
    ("rfft", X, dict(n=4, axis=0)),
    ("irfft", Z, {}),
    ("irfft", Z, dict(n=9, axis=1)),
    ("hfft", Z, {}),
    ("hfft", Z, dict(n=7)),
    ("ihfft", X, {}),
    ("ihfft", X, dict(n=6, axis=0)),
    ("fft2", Z, {}),
    ("ifft2", Z, dict(s=(3, 6))),
    ("rfft2", X, dict(axes=(0, 2))),
    ("irfft2", Z, dict(s=(4, 6))),
    ("fftn", Z, {}),
    ("ifftn", Z, dict(axes=(2, 0))),
    ("rfftn", X, dict(s=(5, 4))),
    ("irfftn", Z, {}),
    ("irfftn", Z, dict(axes=(0, 1))),
    ("fft", np.arange(6), {}),
    ("rfft", np.arange(6, dtype=np.int32), {}),
    ("irfft", np.ones(1, np.complex64), {}),
    ("fft", np.ones((2, 0), np.float32), {}),
]


def _id(case):
    name, a, kw = case
    return f"{name}-{a.dtype}-{'-'.join(f'{k}{v}' for k, v in kw.items())}"


@pytest.mark.filterwarnings("ignore:`axes` should not be `None`")
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_fft_matches_numpy(case, norm):
    name, a, kw = case
    if a.size == 0 or (name == "irfft" and a.shape == (1,)):
        pytest.skip("NumPy rejects empty transforms; compared with JAX below")
    out = getattr(jnp.fft, name)(a, norm=norm, **kw)
    ref = getattr(np.fft, name)(a, norm=norm, **kw)
    assert out.shape == ref.shape
    check_close(np.asarray(out), ref.astype(out.dtype), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("norm", ["ortho", None])
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_fft_matches_jax(case, norm):
    jax = pytest.importorskip("jax")
    name, a, kw = case
    out = getattr(jnp.fft, name)(a, norm=norm, **kw)
    ref = getattr(jax.numpy.fft, name)(a, norm=norm, **kw)
    assert (out.shape, out.dtype, out.weak_type) == (
        ref.shape,
        ref.dtype,
        ref.weak_type,
    )
    check_close(np.asarray(out), np.asarray(ref), atol=2e-5, rtol=2e-5)


def test_fft_x64_keeps_double_precision():
    with jaxlite.enable_x64():
        x = np.random.default_rng(1).standard_normal(16)
        out = jnp.fft.rfft(x)
        assert out.dtype == np.complex128
        np.testing.assert_allclose(np.asarray(out), np.fft.rfft(x), rtol=1e-13)
        back = jnp.fft.irfft(out, 16)
        assert back.dtype == np.float64
        np.testing.assert_allclose(np.asarray(back), x, rtol=1e-13, atol=1e-13)
        # Integers take the precision of their width, as in JAX (np.arange gives
        # int32 on 32-bit platforms).
        assert jnp.fft.fft(np.arange(4, dtype=np.int64)).dtype == np.complex128
        assert jnp.fft.fft(np.arange(4, dtype=np.int32)).dtype == np.complex64
        assert jnp.fft.fft(jnp.arange(4)).dtype == np.complex128


def test_fft_of_integers_takes_jax_precision():
    jax = pytest.importorskip("jax")
    for x64 in (False, True):
        with jax.enable_x64(x64), jaxlite.enable_x64(x64):
            for dtype in (np.bool_, np.uint8, np.int16, np.int32, np.int64):
                x = np.arange(4).astype(dtype)
                for name in ("fft", "rfft"):
                    ours = getattr(jnp.fft, name)(x).dtype
                    assert ours == getattr(jax.numpy.fft, name)(x).dtype, (name, dtype)


def test_lax_fft_types_and_shapes():
    x = np.ones((2, 8), np.float32)
    assert lax.fft(x, "fft", (8,)).dtype == np.complex64
    assert lax.fft(x, lax.FftType.RFFT, (2, 8)).shape == (2, 5)
    y = lax.fft(np.ones((2, 5), np.complex64), "irfft", (2, 8))
    assert (y.shape, y.dtype) == ((2, 8), np.float32)
    assert lax.fft(np.arange(4), "rfft", (4,)).dtype == np.complex64
    assert repr(lax.FftType.IRFFT) == "3"


def test_lax_fft_jaxpr_text():
    x = np.ones((3, 8), np.float32)
    jaxpr = jaxlite.make_jaxpr(lambda x: lax.fft(x, "rfft", (3, 8)))(x)
    assert "fft[fft_lengths=(3, 8) fft_type=2]" in str(jaxpr)


@pytest.mark.parametrize(
    "args, phrase",
    [
        ((np.ones(4, np.complex64), "rfft", (4,)), "only real valued inputs"),
        ((np.ones(4, np.complex64), "fft", (3,)), "must be equal to fft_lengths"),
        ((np.ones((2, 3), np.complex64), "fft", (2, 3, 4)), "at least as many"),
        ((np.ones(4, np.complex64), "bad", (4,)), "Unknown FFT type"),
        ((np.ones(4, np.complex64), "irfft", (4,)), "half spectrum"),
    ],
)
def test_lax_fft_errors(args, phrase):
    with pytest.raises(ValueError, match=phrase):
        lax.fft(*args)


@pytest.mark.parametrize(
    "call, phrase",
    [
        (lambda: jnp.fft.fft(Z, norm="bad"), "Invalid norm value"),
        (lambda: jnp.fft.rfft(Z), "only real valued inputs"),
        (lambda: jnp.fft.fft(Z, 0), "Shape should be positive"),
        (lambda: jnp.fft.fftn(Z, axes=(0, 0)), "does not support repeated axes"),
        (lambda: jnp.fft.rfftn(X, s=(2,), axes=(0, 1)), "different lengths"),
        (lambda: jnp.fft.fft2(Z, axes=(0,)), "only supports 2 axes"),
    ],
)
def test_jnp_fft_errors(call, phrase):
    with pytest.raises(ValueError, match=phrase):
        call()


def _parts(y):
    return jnp.real(y), jnp.imag(y)


def _c(re, im):
    """re + 1j im, complex128 when the finite differences run in x64 mode."""
    return jnp.add(re, jnp.multiply(1j, im))


@pytest.mark.parametrize(
    "name, kw",
    [
        ("fft", {}),
        ("ifft", dict(n=6)),
        ("fft2", dict(norm="ortho")),
        ("ifftn", dict(s=(2, 3), norm="forward")),
        ("hfft", {}),
    ],
)
def test_complex_transform_grads(name, kw):
    re, im = X[:2, :3, :4], X[1:, 1:, 1:]
    f = lambda a, b: _parts(getattr(jnp.fft, name)(_c(a, b), **kw))
    check_grads(f, (re, im), order=2)


@pytest.mark.parametrize(
    "name, kw",
    [
        ("rfft", {}),
        ("rfft", dict(n=5)),
        ("rfftn", dict(norm="ortho")),
        ("ihfft", dict(n=6)),
    ],
)
def test_real_to_complex_grads(name, kw):
    f = lambda a: _parts(getattr(jnp.fft, name)(a, **kw))
    check_grads(f, (X[:2, :3, :4],), order=2)


@pytest.mark.parametrize("n", [6, 7])
@pytest.mark.parametrize("name", ["irfft", "irfft2", "irfftn"])
def test_complex_to_real_grads(name, n):
    re, im = X[:2, :3, :4], X[1:, 1:, 1:]
    kw = dict(n=n) if name == "irfft" else dict(s=(3, n))
    f = lambda a, b: getattr(jnp.fft, name)(_c(a, b), **kw)
    check_grads(f, (re, im), order=2)


def test_fft_grad_matches_jax():
    jax = pytest.importorskip("jax")
    f = lambda m: (
        lambda x: m.numpy.sum(m.numpy.abs(m.numpy.fft.rfft(x * 1.5, n=6)) ** 2)
    )
    ours = jaxlite.grad(f(jaxlite))(X[0, 0])
    ref = jax.grad(f(jax))(X[0, 0])
    check_close(np.asarray(ours), np.asarray(ref), atol=1e-4, rtol=1e-4)
    g = lambda m: lambda z: m.numpy.real(m.numpy.fft.fft(z)[1] * 2j)
    ours = jaxlite.grad(g(jaxlite))(Z[0, 0])
    ref = jax.grad(g(jax))(Z[0, 0])
    check_close(np.asarray(ours), np.asarray(ref), atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fft2", "rfftn"])
def test_fft_jit_and_vmap(name):
    a = Z if name == "irfft" else X
    f = lambda v: getattr(jnp.fft, name)(v, norm="ortho")
    check_close(np.asarray(jaxlite.jit(f)(a)), np.asarray(f(a)))
    for axis in (0, 1, 2):
        out = jaxlite.vmap(f, in_axes=axis)(a)
        loop = np.stack(
            [np.asarray(f(np.take(a, i, axis))) for i in range(a.shape[axis])]
        )
        check_close(np.asarray(out), loop, atol=1e-5, rtol=1e-5)


def test_fftfreq_and_shifts_match_jax():
    jax = pytest.importorskip("jax")
    jfft = jax.numpy.fft
    for n in (1, 4, 5):
        for d in (1.0, 0.5, np.float32(2)):
            for name in ("fftfreq", "rfftfreq"):
                out, ref = getattr(jnp.fft, name)(n, d), getattr(jfft, name)(n, d)
                assert (out.dtype, out.weak_type) == (ref.dtype, ref.weak_type)
                check_close(np.asarray(out), np.asarray(ref))
    assert jnp.fft.fftfreq(4, dtype=np.float16).dtype == np.float16
    x = np.arange(30).reshape(5, 6)
    for axes in (None, 0, 1, (1, 0)):
        for name in ("fftshift", "ifftshift"):
            np.testing.assert_array_equal(
                getattr(jnp.fft, name)(x, axes), getattr(np.fft, name)(x, axes)
            )
    freq = jaxlite.jit(lambda d: jnp.fft.fftfreq(5, d))(0.5)
    check_close(np.asarray(freq), np.fft.fftfreq(5, 0.5).astype(np.float32))
