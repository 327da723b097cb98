"""jaxlite.numpy.fft: NumPy's discrete Fourier transforms on jaxlite arrays.

Every transform is one `lax.fft` on the trailing axes: the transformed axes are moved
to the end, cut or zero-padded to the requested lengths `s` (or `n`), transformed, and
moved back. `norm` only scales the result ("backward": the inverse divides by N, which
`lax.fft` already does; "ortho": both directions by sqrt(N); "forward": the forward
transform by N). The Hermitian transforms are the real ones with the direction of the
scaling swapped: hfft(a) = irfft(conj(a)) and ihfft(a) = conj(rfft(a)), as in NumPy.

Because `lax.fft` is linear with transpose and batching rules, all of these can be
differentiated, jitted and vmapped.
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import concrete_or_error
from jaxlite.lax.fft import FftType
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import check_arraylike
from jaxlite.util import canonicalize_axis

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_NORMS = (None, "backward", "ortho", "forward")
_FORWARD = (FftType.FFT, FftType.RFFT)


def _check_norm(norm):
    if norm not in _NORMS:
        raise ValueError(
            f'Invalid norm value {norm}; should be "backward","ortho" or "forward".'
        )


def _swap_direction(norm):
    """The norm giving the same scaling to a transform of the opposite direction."""
    _check_norm(norm)
    return {None: "forward", "backward": "forward", "ortho": "ortho"}.get(
        norm, "backward"
    )


def _scale(y, fft_type, norm, lengths):
    """Apply `norm` to the (unnormalised forward, 1/N-scaled inverse) result `y`."""
    n = float(np.prod(lengths))
    if norm is None or norm == "backward" or n == 0:
        return y
    if norm == "ortho":
        factor = 1 / np.sqrt(n) if fft_type in _FORWARD else np.sqrt(n)
    else:  # forward
        factor = 1 / n if fft_type in _FORWARD else n
    return lax.mul(y, lax.full((), factor, y.dtype))


def _resize(a, axis, n):
    """`a` cut or zero-padded at the end of `axis` to length n."""
    size = a.shape[axis]
    if n == size:
        return a
    if n < size:
        return lax.slice_in_dim(a, 0, n, axis=axis)
    config = [(0, 0, 0)] * a.ndim
    config[axis] = (0, n - size, 0)
    return lax.pad(a, lax.full((), 0, a.dtype), config)


def _canonical_axes(func_name, a, s, axes):
    """Axes and lengths of an n-dimensional transform, with NumPy's defaults."""
    if axes is None:
        ndim = a.ndim if s is None else len(s)
        axes = tuple(range(a.ndim - ndim, a.ndim))
    else:
        axes = tuple(operator.index(ax) for ax in axes)
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    axes = tuple(canonicalize_axis(ax, a.ndim) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(
            f"jax.numpy.fft.{func_name} does not support repeated axes. Got axes "
            f"{tuple(axes)}."
        )
    return axes, s


def _fft_core(func_name, fft_type, a, s, axes, norm):
    check_arraylike(func_name, a)
    _check_norm(norm)
    a = asarray(a)
    if fft_type == FftType.RFFT and dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError("only real valued inputs supported for rfft")
    axes, s = _canonical_axes(func_name, a, s, axes)
    if s is not None and any(n < 1 for n in s):
        raise ValueError("Shape should be positive.")
    a = _to_transform_dtype(a, fft_type)
    if s is None:
        s = tuple(a.shape[ax] for ax in axes)
        if fft_type == FftType.IRFFT and axes:
            s = (*s[:-1], 2 * (s[-1] - 1))
    # Input lengths: the half spectrum of IRFFT has n // 2 + 1 entries on the last axis.
    in_lengths = s
    if fft_type == FftType.IRFFT and axes:
        in_lengths = (*s[:-1], s[-1] // 2 + 1)
    for ax, n in zip(axes, in_lengths):
        a = _resize(a, ax, n)
    if not axes:
        return a
    rest = [d for d in range(a.ndim) if d not in axes]
    perm = (*rest, *axes)
    y = lax.fft(lax.transpose(a, perm), fft_type, s)
    y = lax.transpose(y, tuple(int(i) for i in np.argsort(perm)))
    return _scale(y, fft_type, norm, s)


def _to_transform_dtype(a, fft_type):
    wide = np.dtype(a.dtype).itemsize == 8 or np.dtype(a.dtype).itemsize == 16
    if fft_type == FftType.RFFT:
        dtype = np.float64 if wide else np.float32
    elif dtypes.issubdtype(a.dtype, np.complexfloating):
        return lax.convert_element_type(a, a.dtype)
    else:
        dtype = np.complex128 if wide else np.complex64
    return lax.convert_element_type(a, dtypes.canonicalize_dtype(dtype))


def _axis_1d(func_name, a, n, axis):
    if isinstance(axis, (tuple, list)):
        raise ValueError(
            f"jax.numpy.fft.{func_name} does not support multiple axes. Please use "
            f"jax.numpy.fft.{func_name}n. Got axis = {list(axis)}."
        )
    return None if n is None else (n,), (axis,)


def _fft_1d(func_name, fft_type, a, n, axis, norm):
    s, axes = _axis_1d(func_name, a, n, axis)
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a, n=None, axis=-1, norm=None):
    """One-dimensional discrete Fourier transform along `axis` (length `n`)."""
    return _fft_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """One-dimensional inverse discrete Fourier transform along `axis`."""
    return _fft_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """Fourier transform of a real input: the n // 2 + 1 non-negative frequencies."""
    return _fft_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """Inverse of `rfft`: a real signal of length `n` (default 2 * (m - 1))."""
    return _fft_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """Fourier transform of a Hermitian-symmetric signal given by its first half: a
    real spectrum of length `n` (default 2 * (m - 1))."""
    check_arraylike("hfft", a)
    conj_a = lax.conj(_to_transform_dtype(asarray(a), FftType.FFT))
    return _fft_1d("hfft", FftType.IRFFT, conj_a, n, axis, _swap_direction(norm))


def ihfft(a, n=None, axis=-1, norm=None):
    """Inverse of `hfft`: the half spectrum of a real signal's inverse transform."""
    y = _fft_1d("ihfft", FftType.RFFT, a, n, axis, _swap_direction(norm))
    return lax.conj(y)


def _axes_2d(func_name, axes):
    if len(axes) != 2:
        raise ValueError(
            f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes={axes}."
        )
    return axes


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional discrete Fourier transform over `axes`."""
    return _fft_core("fft2", FftType.FFT, a, s, _axes_2d("fft2", axes), norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional inverse discrete Fourier transform over `axes`."""
    return _fft_core("ifft2", FftType.IFFT, a, s, _axes_2d("ifft2", axes), norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional Fourier transform of a real input (the last axis halved)."""
    return _fft_core("rfft2", FftType.RFFT, a, s, _axes_2d("rfft2", axes), norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of `rfft2`."""
    return _fft_core("irfft2", FftType.IRFFT, a, s, _axes_2d("irfft2", axes), norm)


def fftn(a, s=None, axes=None, norm=None):
    """N-dimensional discrete Fourier transform over `axes` (default: all, or the
    last len(s))."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """N-dimensional inverse discrete Fourier transform."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """N-dimensional Fourier transform of a real input (the last axis halved)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of `rfftn`."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


# --------------------------------------------------------------------------------------
# Frequencies and shifts


def _freq(func_name, n, d, dtype, k):
    if dtype is None:
        dtype = dtypes.default_float_dtype()
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, func_name)
    check_arraylike(func_name, d)
    d = asarray(d)
    if d.ndim:
        raise TypeError(
            f"jax.numpy.fft.{func_name}: the sample spacing d must be a scalar, got "
            f"shape {d.shape}."
        )
    k = asarray(np.asarray(k).astype(dtype))
    return lax.div(k, lax.convert_element_type(lax.mul(d, n), dtype))


def _static_n(func_name, n):
    context = f"The n argument of jnp.fft.{func_name} must be a static integer."
    return concrete_or_error(operator.index, n, context)


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point `fft` with sample spacing `d`:
    [0, 1, ..., n//2 - 1 (or (n-1)//2), -(n//2), ..., -1] / (d n)."""
    n = _static_n("fftfreq", n)
    k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _freq("fftfreq", n, d, dtype, k)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an n-point `rfft`: [0, 1, ..., n // 2] / (d n)."""
    n = _static_n("rfftfreq", n)
    return _freq("rfftfreq", n, d, dtype, np.arange(0, n // 2 + 1))


def _shift(func_name, x, axes, sign):
    check_arraylike(func_name, x)
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, (tuple, list)):
        axes = tuple(canonicalize_axis(ax, x.ndim) for ax in axes)
    else:
        axes = (canonicalize_axis(axes, x.ndim),)
    for ax in axes:
        n = x.shape[ax]
        shift = (n // 2) % n if n else 0
        if sign < 0 and n:
            shift = (n - shift) % n
        if shift:
            x = lax.concatenate(
                [
                    lax.slice_in_dim(x, n - shift, n, axis=ax),
                    lax.slice_in_dim(x, 0, n - shift, axis=ax),
                ],
                ax,
            )
    return x


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (roll each axis by n // 2)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """Inverse of `fftshift` (roll each axis by -(n // 2))."""
    return _shift("ifftshift", x, axes, -1)
