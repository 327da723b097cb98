"""jaxlite.scipy.signal and jaxlite.scipy.fft against SciPy and real JAX: values,
shapes and dtypes, jit against eager, vmap against a loop, gradients against finite
differences, and JAX's error classes and phrases."""

import importlib
import warnings

import numpy as np
import pytest
from tests.testing import check_grads

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.scipy import fft as lfft
from jaxlite.scipy import signal as lsig

RNG = np.random.default_rng(0)
X2 = RNG.standard_normal((6, 9)).astype(np.float32)
K2 = RNG.standard_normal((2, 4)).astype(np.float32)
XC = (RNG.standard_normal((7, 5)) + 1j * RNG.standard_normal((7, 5))).astype(
    np.complex64
)
KC = (RNG.standard_normal((3, 2)) + 1j * RNG.standard_normal((3, 2))).astype(
    np.complex64
)
SIG = RNG.standard_normal((2, 300)).astype(np.float32)
SIG2 = RNG.standard_normal((2, 280)).astype(np.float32)


def _same(a, b, tol=1e-4):
    """Same shapes, dtypes and values (pytrees of arrays)."""
    la, lb = jaxlite.tree_util.tree_leaves(a), jaxlite.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        assert x.dtype == y.dtype, (x.dtype, y.dtype)
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol)


def _jax():
    return pytest.importorskip("jax")


def _jmod(name):
    """A submodule of real JAX (the oracle), skipping the test without JAX."""
    _jax()
    return importlib.import_module(name)


def _scipy(name):
    """A SciPy module (the reference), skipping the test without SciPy (PyPy)."""
    pytest.importorskip("scipy")
    return importlib.import_module(name)


class _Jitted:
    """A JAX module whose functions run under one `jax.jit` per call (array
    positionals traced, everything else static): one compilation instead of one
    per eager op keeps the oracle fast."""

    def __init__(self, mod):
        self.mod = mod

    def __getattr__(self, name):
        import jax

        fun = getattr(self.mod, name)

        def call(*args, **kwargs):
            arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

            def inner(*arrs):
                full = list(args)
                for i, a in zip(arrays, arrs):
                    full[i] = a
                return fun(*full, **kwargs)

            return jax.jit(inner)(*[args[i] for i in arrays])

        return call


def test_exports_match_jax():
    jsig, jfft = _jmod("jax.scipy.signal"), _jmod("jax.scipy.fft")

    for mod, ours in [(jsig, lsig), (jfft, lfft)]:
        theirs = {n for n in dir(mod) if not n.startswith("_")}
        assert theirs <= set(dir(ours)), theirs - set(dir(ours))


@pytest.mark.parametrize(
    "name", ["convolve", "correlate", "fftconvolve", "convolve2d", "correlate2d"]
)
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolutions_vs_scipy_and_jax(name, mode):
    ssig = _scipy("scipy.signal")
    jsig = _Jitted(_jmod("jax.scipy.signal"))

    cases = [(X2, K2), (XC, KC), (K2, X2), (KC, XC), (X2, X2)]
    if not name.endswith("2d"):
        cases += [(X2[0], K2[0]), (np.arange(5), np.arange(3))]
    for i, (a, b) in enumerate(cases):
        ours = getattr(lsig, name)(a, b, mode)
        if i < 2 or (i == 6 and mode == "full"):  # JAX compiles slowly: a subset
            _same(getattr(jsig, name)(a, b, mode), ours)
        ref = getattr(ssig, name)(a, b, mode)
        np.testing.assert_allclose(np.asarray(ours), ref, rtol=1e-4, atol=1e-4)


def test_convolve_method_fft_and_axes():
    ssig = _scipy("scipy.signal")
    jsig = _Jitted(_jmod("jax.scipy.signal"))

    _same(jsig.convolve(X2, K2, method="fft"), lsig.convolve(X2, K2, method="fft"))
    k = RNG.standard_normal((6, 3)).astype(np.float32)
    for mode in ["full", "same", "valid"]:
        ours = lsig.fftconvolve(X2, k, mode, axes=1)
        _same(jsig.fftconvolve(X2, k, mode, axes=1), ours)
        np.testing.assert_allclose(
            ours, ssig.fftconvolve(X2, k, mode, axes=1), rtol=1e-4, atol=1e-4
        )


def test_convolve_jit_vmap_grad():
    f = lambda a, b: lsig.convolve(a, b, "same")  # noqa: E731
    _same(jaxlite.jit(f)(X2, K2), f(X2, K2), 1e-5)
    batch = RNG.standard_normal((3, 10)).astype(np.float32)
    ker = RNG.standard_normal((3, 4)).astype(np.float32)
    out = jaxlite.vmap(f)(batch, ker)
    _same(out, jnp.stack([f(a, b) for a, b in zip(batch, ker)]), 1e-5)
    g = lambda a, b: lsig.fftconvolve(a, b, "valid")  # noqa: E731
    _same(jaxlite.vmap(g)(batch, ker), jnp.stack([g(a, b) for a, b in zip(batch, ker)]))
    with jaxlite.enable_x64():
        a, b = X2[0].astype(np.float64), K2[0].astype(np.float64)
        check_grads(lambda a, b: lsig.correlate(a, b, "full"), (a, b), order=1)
        check_grads(lambda a, b: lsig.fftconvolve(a, b, "same"), (a, b), order=1)


def test_convolution_errors():
    with pytest.raises(ValueError, match="mode must be one of"):
        lsig.convolve(X2, K2, "bogus")
    with pytest.raises(ValueError, match="same number of dimensions"):
        lsig.convolve(X2, K2[0])
    with pytest.raises(ValueError, match="smaller than the other in every dimension"):
        lsig.convolve(np.ones((2, 5)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        lsig.convolve(X2, K2, method="spline")
    with pytest.raises(NotImplementedError, match="only supports boundary='fill'"):
        lsig.convolve2d(X2, K2, boundary="wrap")
    with pytest.raises(ValueError, match="only supports 2-dimensional inputs"):
        lsig.correlate2d(X2[0], K2[0])
    with pytest.raises(ValueError, match="same dimensionality"):
        lsig.fftconvolve(X2, K2[0])
    with pytest.raises(TypeError):
        lsig.convolve([1.0, 2.0], np.ones(2))


@pytest.mark.parametrize("kind", ["linear", "constant"])
@pytest.mark.parametrize("bp", [0, [3, 7]])
def test_detrend(kind, bp):
    ssig = _scipy("scipy.signal")
    jsig = _Jitted(_jmod("jax.scipy.signal"))

    ours = lsig.detrend(X2, type=kind, bp=bp)
    _same(jsig.detrend(X2, type=kind, bp=bp), ours)
    np.testing.assert_allclose(ours, ssig.detrend(X2, type=kind, bp=bp), atol=1e-4)
    _same(jsig.detrend(X2, axis=0, type=kind), lsig.detrend(X2, axis=0, type=kind))
    _same(jaxlite.jit(lambda x: lsig.detrend(x, type=kind, bp=bp))(X2), ours)
    with pytest.raises(ValueError, match="Trend type must be 'linear' or 'constant'"):
        lsig.detrend(X2, type="cubic")


WELCH_KW = [
    {},
    dict(nperseg=64),
    dict(nperseg=50, noverlap=10, nfft=70),
    dict(window="hamming", nperseg=32, scaling="spectrum"),
    dict(nperseg=40, average="median"),
    dict(nperseg=33, return_onesided=False, detrend="linear"),
]


@pytest.mark.parametrize("kw", WELCH_KW)
def test_welch_csd(kw):
    ssig = _scipy("scipy.signal")
    jsig = _Jitted(_jmod("jax.scipy.signal"))

    if kw in (WELCH_KW[4],):  # JAX compiles slowly: a subset
        _same(jsig.welch(SIG, **kw), lsig.welch(SIG, **kw))
    if kw in (WELCH_KW[5],):
        _same(jsig.csd(SIG, SIG2, **kw), lsig.csd(SIG, SIG2, **kw))
    if kw:  # JAX defaults nperseg to the input length, SciPy to 256
        f, p = lsig.welch(SIG, **kw)
        fs, ps = ssig.welch(SIG, **kw)
        np.testing.assert_allclose(f, fs, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(p, ps, rtol=2e-3, atol=1e-5)


STFT_KW = [
    {},
    dict(nperseg=64),
    dict(nperseg=50, noverlap=10, nfft=70),
    dict(window="hamming", nperseg=32),
    dict(nperseg=40, boundary="odd"),
    dict(nperseg=40, boundary="even", padded=False),
    dict(nperseg=33, return_onesided=False),
    dict(nperseg=30, boundary=None),
]


@pytest.mark.parametrize("kw", STFT_KW)
def test_stft_istft(kw):
    ssig = _scipy("scipy.signal")
    jsig = _Jitted(_jmod("jax.scipy.signal"))

    ours = lsig.stft(SIG, **kw)
    check_jax = kw in (STFT_KW[4], STFT_KW[6])  # a subset: JAX is slow
    if check_jax:
        _same(jsig.stft(SIG, **kw), ours)
    ref = ssig.stft(SIG, **kw)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-3, atol=1e-5)
    ikw = {
        k: v for k, v in kw.items() if k in ("nperseg", "noverlap", "nfft", "window")
    }
    if "return_onesided" in kw:
        ikw["input_onesided"] = False
    if "boundary" in kw and kw["boundary"] is None:
        ikw["boundary"] = False
    back = lsig.istft(ours[2], **ikw)
    if check_jax:
        _same(jsig.istft(jsig.stft(SIG, **kw)[2], **ikw), back)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SciPy's NOLA warning without boundary
        ref = ssig.istft(ref[2], **ikw)
    np.testing.assert_allclose(np.asarray(back[1]), ref[1], rtol=1e-3, atol=1e-4)


def test_stft_axes_complex_and_roundtrip():
    jsig = _Jitted(_jmod("jax.scipy.signal"))

    _same(jsig.stft(SIG.T, nperseg=16, axis=0), lsig.stft(SIG.T, nperseg=16, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(jsig.stft(XC.T, nperseg=4), lsig.stft(XC.T, nperseg=4))
    with pytest.warns(UserWarning, match="switching to return_onesided=False"):
        lsig.stft(XC.T, nperseg=4)
    z = lsig.stft(SIG, nperseg=16)[2].transpose(2, 0, 1)
    zj = jsig.stft(SIG, nperseg=16)[2].transpose(2, 0, 1)
    kw = dict(nperseg=16, time_axis=0, freq_axis=-1)
    _same(jsig.istft(zj, **kw), lsig.istft(z, **kw))
    # stft followed by istft reconstructs the signal
    _, x = lsig.istft(lsig.stft(SIG, nperseg=32)[2], nperseg=32)
    np.testing.assert_allclose(np.asarray(x)[:, :300], SIG, atol=1e-4)


def test_spectral_jit_vmap_grad():
    def power(x):
        return lsig.welch(x, nperseg=32)[1]

    _same(jaxlite.jit(power)(SIG), power(SIG), 1e-5)
    _same(jaxlite.vmap(power)(SIG), jnp.stack([power(s) for s in SIG]), 1e-5)
    st = lambda x: lsig.stft(x, nperseg=16)[2]  # noqa: E731
    _same(jaxlite.jit(st)(SIG), st(SIG), 1e-5)
    _same(jaxlite.vmap(st)(SIG), jnp.stack([st(s) for s in SIG]), 1e-5)
    with jaxlite.enable_x64():
        x = SIG[0, :64].astype(np.float64)
        check_grads(lambda x: lsig.welch(x, nperseg=16)[1], (x,), order=1)
        check_grads(
            lambda x: lsig.istft(jnp.abs(lsig.stft(x, nperseg=16)[2]) + 0j, nperseg=16)[
                1
            ],
            (x,),
            order=1,
            modes=("rev",),
        )


def test_spectral_errors():
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        lsig.welch(SIG, nperseg=16, noverlap=16)
    with pytest.raises(
        ValueError, match="nfft must be greater than or equal to nperseg"
    ):
        lsig.welch(SIG, nperseg=16, nfft=8)
    with pytest.raises(ValueError, match="Unknown scaling"):
        lsig.welch(SIG, nperseg=16, scaling="loud")
    with pytest.raises(ValueError, match='average must be "median" or "mean"'):
        lsig.welch(SIG, nperseg=16, average="mode")
    with pytest.raises(ValueError, match="Unknown boundary option"):
        lsig.stft(SIG, nperseg=16, boundary="wrap")
    with pytest.raises(ValueError, match="Unsupported detrend type"):
        lsig.stft(SIG, nperseg=16, detrend=True)
    with pytest.raises(ValueError, match="Input stft must be at least 2d"):
        lsig.istft(jnp.ones(5))
    with pytest.raises(ValueError, match="Must specify differing time and frequency"):
        lsig.istft(jnp.ones((5, 5)), time_axis=0, freq_axis=0)
    with pytest.warns(UserWarning, match="is greater than input_length"):
        lsig.welch(SIG, nperseg=400)


# ------------------------------------------------------------------ scipy.fft DCT


@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
def test_dct_idct(norm):
    sfft = _scipy("scipy.fft")
    jfft = _Jitted(_jmod("jax.scipy.fft"))

    x = RNG.standard_normal((4, 7, 6)).astype(np.float32)
    for n in [None, 5, 9]:
        for axis in [-1, 0, 1]:
            for name in ["dct", "idct"]:
                ours = getattr(lfft, name)(x, n=n, axis=axis, norm=norm)
                if (n, axis) == (9, 0):  # a subset: JAX is slow
                    _same(getattr(jfft, name)(x, n=n, axis=axis, norm=norm), ours)
                ref = getattr(sfft, name)(x, n=n, axis=axis, norm=norm)
                np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)
    xc = (x + 1j * x[::-1]).astype(np.complex64)
    np.testing.assert_allclose(
        lfft.dct(xc, norm=norm), sfft.dct(xc, norm=norm), rtol=1e-4, atol=1e-4
    )
    _same(jfft.idct(xc[0], norm=norm), lfft.idct(xc[0], norm=norm))
    for s, axes in [(None, None), ((3, 8), None), (None, (0, 2)), ((5,), (1,))]:
        for name in ["dctn", "idctn"]:
            ours = getattr(lfft, name)(x, s=s, axes=axes, norm=norm)
            if s == (3, 8):
                _same(getattr(jfft, name)(x, s=s, axes=axes, norm=norm), ours)
            ref = getattr(sfft, name)(x, s=s, axes=axes, norm=norm)
            np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)
    if norm is None:
        _same(jfft.dct(np.arange(6)), lfft.dct(np.arange(6)))


def test_dct_transformations_and_errors():
    x = RNG.standard_normal((3, 8)).astype(np.float32)
    _same(jaxlite.jit(lfft.dctn)(x), lfft.dctn(x), 1e-5)
    _same(jaxlite.vmap(lfft.idct)(x), jnp.stack([lfft.idct(r) for r in x]), 1e-5)
    np.testing.assert_allclose(
        lfft.idct(lfft.dct(x, norm="ortho"), norm="ortho"), x, atol=1e-5
    )
    with jaxlite.enable_x64():
        x64 = x[0].astype(np.float64)
        check_grads(lambda v: lfft.dct(v, norm="ortho"), (x64,), order=1)
        check_grads(lambda v: lfft.idctn(v[None] * v[:, None]), (x64,), order=1)
    with pytest.raises(NotImplementedError, match="Only DCT type 2 is implemented"):
        lfft.dct(x, type=3)
    with pytest.raises(ValueError, match="norm='forward' is not implemented"):
        lfft.idctn(x, norm="forward")
    with pytest.raises(ValueError, match="s must have at most x.ndim"):
        lfft.dctn(x, s=(2, 2, 2))
