"""jaxlite.scipy.fft: the discrete cosine transform of jax.scipy.fft (dct, idct, dctn,
idctn; type 2 only, norm None/'backward' or 'ortho', as in JAX).

The DCT-II of length N is computed with one complex FFT of the same length (Makhoul's
reordering): the even samples followed by the odd samples reversed, transformed, and
rotated by exp(-i pi k / 2N). The inverse runs the same steps backwards (un-rotate,
inverse FFT, undo the reordering). Complex inputs transform their real and imaginary
parts separately. The N-d versions apply the 1-d transform along each axis in turn.
All of it is jnp/lax on possibly-traced arrays, so it jits, vmaps and differentiates.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact
from jaxlite.util import canonicalize_axis

__all__ = ["dct", "dctn", "idct", "idctn"]


def _jnp():
    from jaxlite import numpy as jnp

    return jnp


def _check(name, x, type, norm):  # noqa: A002
    check_arraylike(name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")
    return _jnp().asarray(x)


def _resize(x, axis, n):
    """Zero-pad or truncate `x` to length n along `axis` (SciPy's `n`)."""
    if n is None:
        return x
    n = operator.index(n)
    cfg = [(0, n - x.shape[a] if a == axis else 0, 0) for a in range(x.ndim)]
    return lax.pad(x, lax.convert_element_type(0, x.dtype), cfg)


def _ortho_factor(n, axis, ndim, dtype):
    jnp = _jnp()
    f = np.full(n, np.sqrt(1.0 / (2 * n)))
    f[0] = np.sqrt(1.0 / (4 * n))
    shape = [1] * ndim
    shape[axis] = n
    return jnp.asarray(f.reshape(shape), dtype=dtype)


def _twiddle(n, axis, ndim, dtype, sign):
    jnp = _jnp()
    k = np.arange(n)
    shape = [1] * ndim
    shape[axis] = n
    # Computed in the transform's precision, as JAX does (exp of a traced-free arange).
    ang = jnp.asarray(k.reshape(shape), dtype=dtypes.finfo(dtype).dtype)
    return jnp.exp(ang * (sign * 1j * np.pi / (2 * n)))


def _dct1(x, n, axis, norm):
    jnp = _jnp()
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, axis, n)
    (x,) = promote_dtypes_inexact(x)
    N = x.shape[axis]  # noqa: N806
    xm = jnp.moveaxis(x, axis, -1)
    v = jnp.concatenate([xm[..., ::2], jnp.flip(xm[..., 1::2], -1)], -1)
    V = jnp.fft.fft(v, axis=-1)  # noqa: N806
    out = 2 * jnp.real(V * _twiddle(N, 0, 1, V.dtype, -1))
    out = jnp.moveaxis(out, -1, axis)
    if norm == "ortho":
        out = out * _ortho_factor(N, axis, x.ndim, out.dtype)
    return out


def _idct1(x, n, axis, norm):
    jnp = _jnp()
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, axis, n)
    (x,) = promote_dtypes_inexact(x)
    N = x.shape[axis]  # noqa: N806
    if norm == "ortho":
        x = x / _ortho_factor(N, axis, x.ndim, x.dtype)
    y = jnp.moveaxis(x, axis, -1)
    # y_{N-k} for k = 0..N-1, with y_N = 0.
    yr = jnp.concatenate([jnp.zeros_like(y[..., :1]), jnp.flip(y[..., 1:], -1)], -1)
    V = 0.5 * lax.complex(y, -yr) * _twiddle(N, 0, 1, y.dtype, 1)  # noqa: N806
    v = jnp.real(jnp.fft.ifft(V, axis=-1))
    half = (N + 1) // 2
    out = jnp.zeros_like(v)
    out = out.at[..., ::2].set(v[..., :half])
    out = out.at[..., 1::2].set(jnp.flip(v[..., half:], -1))
    return jnp.moveaxis(out, -1, axis)


def _split_complex(fun, x, *args):
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        jnp = _jnp()
        return lax.complex(fun(jnp.real(x), *args), fun(jnp.imag(x), *args))
    return fun(x, *args)


def dct(x, type=2, n=None, axis=-1, norm=None):  # noqa: A002
    """Discrete cosine transform of type 2 along `axis` (scipy.fft.dct)."""
    x = _check("dct", x, type, norm)
    return _split_complex(_dct1, x, n, axis, norm)


def idct(x, type=2, n=None, axis=-1, norm=None):  # noqa: A002
    """Inverse of `dct` (a scaled DCT of type 3) along `axis` (scipy.fft.idct)."""
    x = _check("idct", x, type, norm)
    return _split_complex(_idct1, x, n, axis, norm)


def _axes_and_sizes(x, s, axes):
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            assert not isinstance(s, Sequence)
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(
                f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}"
            )
    if axes is None:
        axes = (
            tuple(range(x.ndim - len(s), x.ndim))
            if s is not None
            else tuple(range(x.ndim))
        )
    else:
        axes = (axes,) if np.ndim(axes) == 0 else tuple(axes)
        axes = tuple(canonicalize_axis(operator.index(a), x.ndim) for a in axes)
    sizes = list(s) if s is not None else [None] * len(axes)
    return axes, sizes


def _nd(one, x, s, axes, norm):
    axes, sizes = _axes_and_sizes(x, s, axes)
    for a, n in zip(axes, sizes):
        x = _split_complex(one, x, n, a, norm)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):  # noqa: A002
    """Multidimensional DCT of type 2 over `axes` (scipy.fft.dctn)."""
    x = _check("dctn", x, type, norm)
    return _nd(_dct1, x, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):  # noqa: A002
    """Multidimensional inverse DCT over `axes` (scipy.fft.idctn)."""
    x = _check("idctn", x, type, norm)
    return _nd(_idct1, x, s, axes, norm)
