"""jaxlite.scipy.signal: the jax.scipy.signal API (N-d convolution and correlation,
FFT convolution, detrending and the windowed-FFT family stft/istft/csd/welch).

Direct convolution is one `lax.conv_general_dilated` with a single batch and feature
dimension: the kernel is flipped (the primitive correlates) and the padding picks
SciPy's 'full', 'same' or 'valid' output. `fftconvolve` multiplies N-d FFTs of the
zero-padded inputs and slices the centred result; mapped axes are handled with vmap.

The spectral functions cut the (boundary-extended, padded) signal into overlapping
frames with a strided gather, detrend and window each frame, then FFT along the last
axis; the averages, one-sided doubling and scalings are SciPy's. `istft` undoes it by
overlap-add, normalised by the summed squared window. Everything is written with jnp
and lax on possibly-traced arrays, so it jits, vmaps and differentiates; only shapes,
segment lengths and windows given by name are static (window points come from NumPy,
or from SciPy for names other than 'hann').
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.api_vmap import vmap
from jaxlite.core import concrete_or_error
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact
from jaxlite.util import canonicalize_axis

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]

_MODES = ("full", "same", "valid")


def _complex_dtype(dtype):
    """The complex type holding `dtype` (float32 -> complex64, float64 -> complex128)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return dtype
    if dtype.kind == "f" and dtype.itemsize == 8:
        return np.dtype(np.complex128)
    return np.dtype(np.complex64)


def _jnp():
    from jaxlite import numpy as jnp

    return jnp


# --------------------------------------------------------------------------- direct


def _convolve_nd(in1, in2, mode, precision):
    jnp = _jnp()
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(
            "zero-size arrays not supported in convolutions, got shapes "
            f"{in1.shape} and {in2.shape}."
        )
    in1, in2 = promote_dtypes_inexact(in1, in2)
    bigger = all(a >= b for a, b in zip(in1.shape, in2.shape))
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (bigger or smaller):
        raise ValueError("One input must be smaller than the other in every dimension.")
    orig_kernel_shape = in2.shape
    if smaller and not bigger:
        in1, in2 = in2, in1
    kshape = in2.shape
    kernel = jnp.flip(in2)
    if mode == "full":
        padding = [(k - 1, k - 1) for k in kshape]
    elif mode == "valid":
        padding = [(0, 0)] * len(kshape)
    else:
        # 'same' keeps in1's original shape, centred as SciPy centres it.
        padding = [
            (k - 1 - (ko - 1) // 2, k - ko + (ko - 1) // 2)
            for k, ko in zip(kshape, orig_kernel_shape)
        ]
    out = lax.conv_general_dilated(
        in1[None, None],
        kernel[None, None],
        (1,) * in1.ndim,
        padding,
        precision=precision,
    )
    return out[0, 0]


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional convolution of `in1` and `in2` (scipy.signal.convolve)."""
    check_arraylike("convolve", in1, in2)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("direct", "auto"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    jnp = _jnp()
    return _convolve_nd(jnp.asarray(in1), jnp.asarray(in2), mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional cross-correlation (scipy.signal.correlate)."""
    check_arraylike("correlate", in1, in2)
    jnp = _jnp()
    in2 = jnp.flip(jnp.conj(jnp.asarray(in2)))
    return convolve(in1, in2, mode, method=method, precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(
            f"{name}() only supports boundary='fill', fillvalue=0"
        )
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D convolution (scipy.signal.convolve2d); only boundary='fill', fillvalue=0."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    check_arraylike("convolve2d", in1, in2)
    jnp = _jnp()
    return _convolve_nd(jnp.asarray(in1), jnp.asarray(in2), mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D cross-correlation (scipy.signal.correlate2d)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    check_arraylike("correlate2d", in1, in2)
    jnp = _jnp()
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    same = in1.shape == in2.shape
    # SciPy's correlate2d swaps the operands when in2 is the larger one (and then
    # returns the conjugated, unflipped result) except in 'same' mode.
    if mode == "same" or (mode == "valid" and (not swap or same)) or not swap:
        return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision))
    out = _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision)
    return out if mode == "valid" else jnp.conj(out)


# --------------------------------------------------------------------------- FFT


def _fftconvolve_core(in1, in2, mode):
    jnp = _jnp()
    full = tuple(a + b - 1 for a, b in zip(in1.shape, in2.shape))
    if mode == "valid":
        bigger = all(a >= b for a, b in zip(in1.shape, in2.shape))
        smaller = all(a <= b for a, b in zip(in1.shape, in2.shape))
        if not (bigger or smaller):
            raise ValueError(
                "For 'valid' mode, One input must be at least as "
                "large as the other in every dimension."
            )
        if smaller:
            in1, in2 = in2, in1
    if all(a == 1 or b == 1 for a, b in zip(in1.shape, in2.shape)):
        conv = in1 * in2
    elif dtypes.issubdtype(in1.dtype, np.complexfloating):
        axes = tuple(range(in1.ndim))
        conv = jnp.fft.ifftn(
            jnp.fft.fftn(in1, full, axes) * jnp.fft.fftn(in2, full, axes), full, axes
        )
    else:
        axes = tuple(range(in1.ndim))
        conv = jnp.fft.irfftn(
            jnp.fft.rfftn(in1, full, axes) * jnp.fft.rfftn(in2, full, axes), full, axes
        )
    if mode == "full":
        out = full
    elif mode == "same":
        out = in1.shape
    else:
        out = tuple(a - b + 1 for a, b in zip(in1.shape, in2.shape))
    starts = tuple((f - o) // 2 for f, o in zip(full, out))
    return lax.slice(conv, starts, tuple(s + o for s, o in zip(starts, out)))


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolution through N-d FFTs (scipy.signal.fftconvolve)."""
    check_arraylike("fftconvolve", in1, in2)
    jnp = _jnp()
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")

    def fun(a, b):
        return _fftconvolve_core(a, b, mode)

    if axes is None:
        return fun(in1, in2)
    axes = (axes,) if np.ndim(axes) == 0 else tuple(axes)
    axes = tuple(canonicalize_axis(operator.index(a), in1.ndim) for a in axes)
    mapped = sorted(set(range(in1.ndim)) - set(axes))
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(
            f"mapped axes must have same shape; got in1.shape={in1.shape} "
            f"in2.shape={in2.shape} axes={axes}"
        )
    for ax in mapped:
        fun = vmap(fun, in_axes=ax, out_axes=ax)
    return fun(in1, in2)


# --------------------------------------------------------------------------- detrend


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):  # noqa: A002
    """Remove a constant or (piecewise) linear trend along `axis` (scipy.signal)."""
    jnp = _jnp()
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    check_arraylike("detrend", data)
    (x,) = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return x - jnp.mean(x, axis, keepdims=True)
    axis = canonicalize_axis(axis, x.ndim)
    n = x.shape[axis]
    bps = np.sort(np.unique(np.r_[0, bp, n]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError(
            "Breakpoints must be non-negative and less than length of data along "
            "given axis."
        )
    x = jnp.moveaxis(x, axis, -1)
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        seg = x[..., int(lo) : int(hi)]
        m = int(hi - lo)
        # Least-squares line through the segment, in closed form.
        t = jnp.arange(m, dtype=dtypes.finfo(x.dtype).dtype)
        t = (t - (m - 1) / 2).astype(x.dtype)
        mean = jnp.mean(seg, -1, keepdims=True)
        denom = jnp.sum(t * t)
        slope = jnp.sum(seg * t, -1, keepdims=True) / jnp.where(denom == 0, 1, denom)
        pieces.append(seg - mean - slope * t)
    x = jnp.concatenate(pieces, axis=-1) if len(pieces) > 1 else pieces[0]
    return jnp.moveaxis(x, -1, axis)


# --------------------------------------------------------------------------- spectral


def _window(window, nperseg, input_length, dtype, name):
    """SciPy's window/nperseg triage: a named window takes nperseg (default 256,
    clipped to the input length); an array window fixes nperseg."""
    jnp = _jnp()
    if isinstance(window, (str, tuple)):
        # JAX (unlike SciPy) defaults nperseg to the whole input.
        nperseg = input_length if nperseg is None else int(nperseg)
        if nperseg > input_length:
            warnings.warn(
                f"nperseg={nperseg} is greater than input_length={input_length},"
                f" using nperseg={input_length}",
                stacklevel=4,
            )
            nperseg = input_length
        if window == "hann":
            win = np.sin(np.linspace(0, np.pi, nperseg, endpoint=False)) ** 2
            if nperseg == 1:
                win = np.ones(1)
        else:
            try:
                from scipy.signal import get_window
            except ImportError as err:  # pragma: no cover
                raise ImportError(
                    f"scipy must be available to use window={window!r}"
                ) from err
            win = get_window(window, nperseg)
        return jnp.asarray(np.asarray(win), dtype=dtype), nperseg
    win = jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.shape[-1]:
        raise ValueError("window is longer than input signal")
    if nperseg is None:
        nperseg = win.shape[0]
    elif nperseg != win.shape[0]:
        raise ValueError(
            "value specified for nperseg is different from length of window"
        )
    return win.astype(dtype), nperseg


def _extend(x, n, boundary):
    jnp = _jnp()
    if boundary is None or n < 1:
        return x
    if boundary == "zeros":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)])
    if boundary == "even":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode="reflect")
    if boundary == "constant":
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode="edge")
    # 'odd': point reflection about the end samples.
    if n > x.shape[-1] - 1:
        raise ValueError(
            f"The extension length n ({n}) is too big. It must not exceed "
            f"x.shape[axis]-1, which is {x.shape[-1] - 1}."
        )
    left = 2 * x[..., :1] - jnp.flip(x[..., 1 : n + 1], -1)
    right = 2 * x[..., -1:] - jnp.flip(x[..., -n - 1 : -1], -1)
    return jnp.concatenate([left, x, right], -1)


_BOUNDARIES = ["even", "odd", "constant", "zeros", None]


def _frames(x, win, detrend_func, nperseg, noverlap, nfft, onesided):
    jnp = _jnp()
    if nperseg == 1 and noverlap == 0:
        frames = x[..., None]
    else:
        step = nperseg - noverlap
        starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
        idx = starts[:, None] + np.arange(nperseg)[None, :]
        frames = x[..., idx]
    frames = detrend_func(frames)
    if dtypes.issubdtype(win.dtype, np.complexfloating) and not dtypes.issubdtype(
        frames.dtype, np.complexfloating
    ):
        frames = frames.astype(win.dtype)
    frames = win * frames
    if onesided:
        return jnp.fft.rfft(jnp.real(frames), n=nfft)
    return jnp.fft.fft(frames, n=nfft)


def _spectral(
    x,
    y,
    fs,
    window,
    nperseg,
    noverlap,
    nfft,
    detrend_type,
    return_onesided,
    scaling,
    axis,
    mode,
    boundary=None,
    padded=False,
):
    jnp = _jnp()
    if boundary not in _BOUNDARIES:
        raise ValueError(
            f"Unknown boundary option '{boundary}', must be one of: {_BOUNDARIES}"
        )
    axis = concrete_or_error(operator.index, axis, "axis of windowed-FFT")
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(jnp.asarray(x))
        axis = canonicalize_axis(axis, x.ndim)
        outer = x.shape[:axis] + x.shape[axis + 1 :]
    else:
        check_arraylike("spectral_helper", x, y)
        x, y = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(y))
        if x.ndim != y.ndim:
            raise ValueError(
                f"two-arguments must have the same rank ({x.ndim} vs {y.ndim})."
            )
        axis = canonicalize_axis(axis, x.ndim)
        try:
            outer = np.broadcast_shapes(
                x.shape[:axis] + x.shape[axis + 1 :],
                y.shape[:axis] + y.shape[axis + 1 :],
            )
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None:
        nperseg = concrete_or_error(int, nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window(window, nperseg, x.shape[axis], x.dtype, "spectral")
    if noverlap is None:
        noverlap = nperseg // 2
    else:
        noverlap = concrete_or_error(int, noverlap, "noverlap of windowed-FFT")
    nfft = (
        nperseg
        if nfft is None
        else concrete_or_error(int, nfft, "nfft of windowed-FFT")
    )
    if x.size == 0 or (y is not None and y.size == 0):
        n = x.shape[axis] if y is None else min(x.shape[axis], y.shape[axis])
        shape = outer[:axis] + (n,) + outer[axis:]
        return (
            jnp.zeros(shape, freq_dtype),
            jnp.zeros(shape, freq_dtype),
            jnp.zeros(shape, result_dtype),
        )
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
        d = x.shape[-1] - y.shape[-1]
        if d < 0:
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, -d)])
        elif d > 0:
            y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, d)])
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    x = _extend(x, nperseg // 2, boundary)
    if y is not None:
        y = _extend(y, nperseg // 2, boundary)
    if padded:
        nadd = (-(x.shape[-1] - nperseg) % step) % nperseg
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, nadd)])
        if y is not None:
            y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, nadd)])
    if isinstance(detrend_type, str):

        def detrend_func(d):
            return detrend(d, axis=-1, type=detrend_type)
    elif callable(detrend_type):
        # As JAX does: the user's function sees the frames with the (canonical)
        # signal axis moved last.
        def detrend_func(d):
            return jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis)
    elif not detrend_type:

        def detrend_func(d):
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    onesided = bool(return_onesided)
    is_complex = dtypes.issubdtype(x.dtype, np.complexfloating) or (
        y is not None and dtypes.issubdtype(y.dtype, np.complexfloating)
    )
    if onesided and is_complex:
        onesided = False
        warnings.warn(
            "Input data is complex, switching to return_onesided=False", stacklevel=3
        )
    if onesided:
        freqs = jnp.fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp.fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype)
    res = _frames(x, win, detrend_func, nperseg, noverlap, nfft, onesided)
    if y is not None:
        res_y = _frames(y, win, detrend_func, nperseg, noverlap, nfft, onesided)
        res = jnp.conj(res) * res_y
    elif mode == "psd":
        res = jnp.conj(res) * res
    res = res * scale.astype(res.dtype) if hasattr(scale, "astype") else res * scale
    if onesided and mode == "psd":
        end = None if nfft % 2 else -1
        res = res.at[..., 1:end].multiply(2)
    time = (
        jnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step, dtype=freq_dtype)
        / fs
    )
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    res = res.astype(result_dtype)
    if y is None and mode != "stft":
        res = jnp.real(res)
    return freqs, time, jnp.moveaxis(res, -1, axis)


def stft(
    x,
    fs=1.0,
    window="hann",
    nperseg=256,
    noverlap=None,
    nfft=None,
    detrend=False,
    return_onesided=True,
    boundary="zeros",
    padded=True,
    axis=-1,
):
    """Short-time Fourier transform (scipy.signal.stft): (freqs, times, Zxx)."""
    return _spectral(
        x,
        None,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        "spectrum",
        axis,
        "stft",
        boundary,
        padded,
    )


def csd(
    x,
    y,
    fs=1.0,
    window="hann",
    nperseg=None,
    noverlap=None,
    nfft=None,
    detrend="constant",
    return_onesided=True,
    scaling="density",
    axis=-1,
    average="mean",
):
    """Cross power spectral density by Welch's method (scipy.signal.csd)."""
    jnp = _jnp()
    freqs, _, pxy = _spectral(
        x,
        y,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        scaling,
        axis,
        "psd",
    )
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                k = pxy.shape[-1]
                ii = 2 * np.arange(1.0, (k - 1) // 2 + 1)
                bias = 1 + np.sum(1.0 / (ii + 1) - 1.0 / ii)
                if dtypes.issubdtype(pxy.dtype, np.complexfloating):
                    pxy = jnp.median(jnp.real(pxy), -1) + 1j * jnp.median(
                        jnp.imag(pxy), -1
                    )
                else:
                    pxy = jnp.median(pxy, -1)
                pxy = pxy / jnp.asarray(bias, dtype=pxy.dtype)
            elif average == "mean":
                pxy = jnp.mean(pxy, -1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(
    x,
    fs=1.0,
    window="hann",
    nperseg=None,
    noverlap=None,
    nfft=None,
    detrend="constant",
    return_onesided=True,
    scaling="density",
    axis=-1,
    average="mean",
):
    """Power spectral density by Welch's method (scipy.signal.welch)."""
    jnp = _jnp()
    freqs, pxx = csd(
        x,
        None,
        fs=fs,
        window=window,
        nperseg=nperseg,
        noverlap=noverlap,
        nfft=nfft,
        detrend=detrend,
        return_onesided=return_onesided,
        scaling=scaling,
        axis=axis,
        average=average,
    )
    return freqs, jnp.real(pxx)


def _overlap_add(frames, step):
    """Sum frames (..., nframes, seglen) placed `step` apart into one signal."""
    jnp = _jnp()
    *batch, nframes, seglen = frames.shape
    total = step * (nframes - 1) + seglen
    pos = (np.arange(nframes)[:, None] * step + np.arange(seglen)[None, :]).ravel()
    flat = jnp.reshape(frames, (*batch, nframes * seglen))
    out = jnp.zeros((*batch, total), frames.dtype)
    return out.at[..., pos].add(flat)


def istft(
    Zxx,
    fs=1.0,
    window="hann",
    nperseg=None,
    noverlap=None,
    nfft=None,  # noqa: N803
    input_onesided=True,
    boundary=True,
    time_axis=-1,
    freq_axis=-2,
):
    """Inverse short-time Fourier transform (scipy.signal.istft): (times, x)."""
    jnp = _jnp()
    check_arraylike("istft", Zxx)
    z = jnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, z.ndim)
    time_axis = canonicalize_axis(time_axis, z.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    cdt = _complex_dtype(z.dtype)
    z = z.astype(cdt)
    n_default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    nperseg = concrete_or_error(
        int, nperseg or n_default, "nperseg: segment length of STFT"
    )
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    else:
        nfft_int = concrete_or_error(int, nfft, "nfft of STFT")
    if nfft_int < nperseg:
        raise ValueError(
            f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg})."
        )
    noverlap = concrete_or_error(int, noverlap or nperseg // 2, "noverlap of STFT")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    outer = tuple(i for i in range(z.ndim) if i not in (time_axis, freq_axis))
    z = jnp.transpose(z, outer + (freq_axis, time_axis))
    # The inverse FFT has length nfft_int (SciPy's choice; JAX 0.10.2 passes the raw
    # `nfft` and so fails for an odd nperseg with nfft=None).
    if input_onesided:
        xsubs = jnp.fft.irfft(z, axis=-2, n=nfft_int)[..., :nperseg, :]
    else:
        xsubs = jnp.fft.ifft(z, axis=-2, n=nfft_int)[..., :nperseg, :]
    if isinstance(window, (str, tuple)):
        if window == "hann":
            w = (
                np.ones(1)
                if nperseg == 1
                else (np.sin(np.linspace(0, np.pi, nperseg, endpoint=False)) ** 2)
            )
        else:
            from scipy.signal import get_window

            w = get_window(window, nperseg)
        win = jnp.asarray(np.asarray(w), dtype=xsubs.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
        win = win.astype(xsubs.dtype)
    xsubs = xsubs * jnp.sum(win)
    frames = jnp.swapaxes(xsubs * win[:, None], -2, -1)
    x = _overlap_add(frames, step)
    nfr = xsubs.shape[-1]
    norm = _overlap_add(jnp.broadcast_to(win * win, (nfr, nperseg)), step)
    if boundary:
        h = nperseg // 2
        x = x[..., h : x.shape[-1] - h]
        norm = norm[..., h : norm.shape[-1] - h]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
