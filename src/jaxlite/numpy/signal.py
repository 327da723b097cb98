"""Signal processing helpers of jax.numpy: 1-D convolution and correlation, and the
classic window functions (bartlett, blackman, hamming, hanning, kaiser).

`convolve` and `correlate` are one `lax.conv_general_dilated` each, a single-channel
1-D convolution whose padding selects NumPy's mode ('full', 'same' or 'valid'); the
convolution primitive brings derivatives and batching. A convolution flips the kernel
(conv_general_dilated itself correlates), a correlation conjugates it, and a kernel
longer than the signal swaps the two, as NumPy does.

A window depends only on its static length M, so its points are computed in NumPy
in float64 and stored in the default float type; only kaiser's `beta` may be traced,
so it is the one window built from lax operations (with `i0`, the modified Bessel
function of order 0, defined here for jnp and reused by jaxlite.scipy.special).
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import concrete_or_error
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import (
    check_arraylike,
    promote_args_inexact,
    promote_dtypes_inexact,
)

__all__ = [
    "convolve",
    "correlate",
    "bartlett",
    "blackman",
    "hamming",
    "hanning",
    "i0",
    "kaiser",
]

_MODES = ("full", "same", "valid")


def _conv(fun_name, a, v, mode, precision, preferred_element_type):
    from jaxlite.lax.convolution import conv_general_dilated

    check_arraylike(fun_name, a, v)
    a, v = promote_dtypes_inexact(asarray(a), asarray(v))
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{fun_name}() only support 1-dimensional inputs.")
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(
            f"{fun_name}: inputs cannot be empty, got shapes {a.shape} and {v.shape}."
        )
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}")
    flip_output = False
    if v.shape[0] > a.shape[0]:
        a, v = v, a
        flip_output = fun_name == "correlate"
    if fun_name == "convolve":
        v = lax.rev(v, (0,))
    elif dtypes.issubdtype(v.dtype, np.complexfloating):
        v = lax.conj(v)
        if flip_output:
            # correlate(v, a) reversed and conjugated is correlate(a, v).
            a, v = lax.conj(a), lax.conj(v)
    n = v.shape[0]
    if mode == "full":
        padding = [(n - 1, n - 1)]
    elif mode == "same":
        padding = [(n // 2, n - 1 - n // 2)]
    else:
        padding = [(0, 0)]
    out = conv_general_dilated(
        lax.reshape(a, (1, 1, a.shape[0])),
        lax.reshape(v, (1, 1, n)),
        (1,),
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    out = lax.reshape(out, (out.shape[-1],))
    return lax.rev(out, (0,)) if flip_output else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D arrays: `mode` 'full' (every overlap),
    'same' (the length of the longer input, centred) or 'valid' (full overlaps)."""
    return _conv("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D arrays, `c[k] = sum_n a[n + k] conj(v[n])`, with
    `mode` as in `convolve` (default 'valid')."""
    return _conv("correlate", a, v, mode, precision, preferred_element_type)


# --------------------------------------------------------------------------------------
# Windows


def _length(fun_name, M):  # noqa: N803 - NumPy's name
    return concrete_or_error(operator.index, M, f"M argument of jnp.{fun_name}")


def _window(values):
    return asarray(np.asarray(values, np.float64).astype(dtypes.default_float_dtype()))


def _cosine_window(fun_name, M, coefficients):  # noqa: N803
    """`sum_k c_k cos(2 pi k n / (M - 1))` for n = 0..M-1 (ones for M == 1)."""
    M = _length(fun_name, M)  # noqa: N806
    if M < 1:
        return _window(np.zeros(0))
    if M == 1:
        return _window(np.ones(1))
    n = np.arange(M)
    phase = 2 * np.pi * n / (M - 1)
    return _window(sum(c * np.cos(k * phase) for k, c in enumerate(coefficients)))


def bartlett(M):  # noqa: N803
    """The triangular (Bartlett) window of length M."""
    M = _length("bartlett", M)  # noqa: N806
    if M < 1:
        return _window(np.zeros(0))
    if M == 1:
        return _window(np.ones(1))
    n = np.arange(1 - M, M, 2)
    return _window(1 - np.abs(n) / (M - 1))


def blackman(M):  # noqa: N803
    """The Blackman window of length M."""
    return _cosine_window("blackman", M, (0.42, -0.5, 0.08))


def hamming(M):  # noqa: N803
    """The Hamming window of length M."""
    return _cosine_window("hamming", M, (0.54, -0.46))


def hanning(M):  # noqa: N803
    """The Hann window of length M."""
    return _cosine_window("hanning", M, (0.5, -0.5))


def kaiser(M, beta):  # noqa: N803
    """The Kaiser window of length M and shape `beta` (which may be traced):
    `i0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / i0(beta)`."""
    M = _length("kaiser", M)  # noqa: N806
    check_arraylike("kaiser", beta)
    dtype = dtypes.default_float_dtype()
    beta = lax.convert_element_type(asarray(beta), dtype)
    if M < 1:
        return lax.full((0,), 0, dtype)
    if M == 1:
        return lax.full((1,), 1, dtype)
    n = np.arange(M)
    alpha = (M - 1) / 2.0
    radius = _window(np.sqrt(1 - ((n - alpha) / alpha) ** 2))
    beta_n = lax.broadcast_in_dim(beta, (M,), ())
    return lax.div(_i0(lax.mul(beta_n, radius)), _i0(beta_n))


# i0: the modified Bessel function of the first kind, order 0.


def i0(x):
    """jnp.i0: the modified Bessel function of order 0 for real floating inputs (its
    derivative is exactly 0 at x = 0)."""
    (x,) = promote_args_inexact("i0", x)
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
    return _i0(x)


@custom_jvp
def _i0(x):
    abs_x = lax.abs(x)
    return lax.mul(lax.exp(abs_x), lax.bessel_i0e(abs_x))


def _i0_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = _i0(x)
    slope = lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))
    zero = lax.full_like(x, 0)
    return out, lax.mul(t, lax.select(lax.eq(x, zero), zero, slope))


_i0.defjvp(_i0_jvp)
