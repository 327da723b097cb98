"""The fast Fourier transform primitive: `fft_p`, over the trailing axes of an array.

One primitive covers the four transforms XLA knows, named by `FftType`: complex to
complex forward (FFT) and inverse (IFFT, scaled by 1/N), real to half-spectrum (RFFT,
the last axis shrinks to n//2 + 1) and half-spectrum to real (IRFFT). `fft_lengths`
are the sizes of the transformed trailing axes, as in JAX; jnp.fft reshapes, pads and
scales around it. The implementation is NumPy's pocketfft, which keeps single precision.

Every transform is linear over the reals, so the JVP applies the primitive to the
tangent and reverse mode needs only transposes, themselves written with `fft_p`:

- FFT and IFFT are symmetric matrices (F[j, k] = w^(jk)), so each is its own transpose.
- RFFT is "full FFT, then keep the first half" on a real input: its transpose pads the
  cotangent back to full length, applies the full FFT and keeps the real part (the
  transpose of embedding the reals in the complex numbers).
- IRFFT extends the half spectrum Hermitian-symmetrically, so term k (0 < k < n/2) is
  counted twice and the imaginary parts at k = 0 and k = n/2 are dropped: its transpose
  is the conjugated RFFT of the cotangent weighted by (1, 2, ..., 2, 1) / N.

Cotangents follow JAX's convention (a plain transpose, no conjugation), so gradients
agree with JAX's.
"""

from __future__ import annotations

import enum
import operator

import numpy as np

from jaxlite import dtypes
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import elementwise as ew
from jaxlite.lax.constructors import full
from jaxlite.lax.structural import broadcast_in_dim, operand, pad

__all__ = ["FftType", "fft", "fft_p"]


class FftType(enum.IntEnum):
    """Which transform `fft_p` computes (JAX's numbering, printed as a number)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __repr__(self):
        return str(int(self))

    __str__ = __repr__


_COMPLEX_OF = {
    np.dtype(np.float32): np.dtype(np.complex64),
    np.dtype(np.float64): np.dtype(np.complex128),
}
_REAL_OF = {c: r for r, c in _COMPLEX_OF.items()}


def _transformed_axes(ndim, fft_lengths):
    return tuple(range(ndim - len(fft_lengths), ndim))


# --------------------------------------------------------------------------------------
# Implementation and abstract evaluation


def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    axes = _transformed_axes(x.ndim, fft_lengths)
    if x.size == 0 or 0 in fft_lengths:
        # pocketfft rejects empty transforms; every output element is an empty sum.
        (aval,), _ = _fft_abstract(
            ShapedArray(x.shape, x.dtype), fft_type=fft_type, fft_lengths=fft_lengths
        )
        return [np.zeros(aval.shape, aval.dtype)]
    if fft_type == FftType.FFT:
        out = np.fft.fftn(x, axes=axes) if axes else x.copy()
        return [out.astype(x.dtype, copy=False)]
    if fft_type == FftType.IFFT:
        out = np.fft.ifftn(x, axes=axes) if axes else x.copy()
        return [out.astype(x.dtype, copy=False)]
    if fft_type == FftType.RFFT:
        return [np.fft.rfftn(x, axes=axes).astype(_COMPLEX_OF[x.dtype], copy=False)]
    out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
    return [out.astype(_REAL_OF[x.dtype], copy=False)]


def _check_lengths(x, fft_type, fft_lengths):
    k = len(fft_lengths)
    if fft_type in (FftType.RFFT, FftType.IRFFT) and k == 0:
        raise ValueError(
            f"fft: {fft_type.name} needs at least one transformed axis; got "
            "fft_lengths=()."
        )
    if x.ndim < k:
        raise ValueError(
            f"FFT input shape {x.shape} must have at least as many input dimensions "
            f"as fft_lengths {fft_lengths}."
        )
    minor = x.shape[x.ndim - k :]
    if fft_type == FftType.IRFFT:
        expected = (*fft_lengths[:-1], fft_lengths[-1] // 2 + 1)
        if minor != expected:
            raise ValueError(
                f"IRFFT input shape {x.shape}: the minor dimensions must be "
                f"{expected} for fft_lengths {fft_lengths} (the last one n // 2 + 1, "
                "a half spectrum)."
            )
    elif minor != fft_lengths:
        raise ValueError(
            f"FFT input shape {x.shape} minor dimensions must be equal to fft_lengths "
            f"{fft_lengths}"
        )


def _fft_abstract(x, *, fft_type, fft_lengths):
    dtype = np.dtype(x.dtype)
    if fft_type == FftType.RFFT:
        if dtype not in _COMPLEX_OF:
            raise ValueError(f"RFFT input must be float32 or float64, got {dtype}")
    elif dtype not in _REAL_OF:
        raise ValueError(
            f"{fft_type.name} input must be complex64 or complex128, got {dtype}"
        )
    _check_lengths(x, fft_type, fft_lengths)
    shape = x.shape
    if fft_type == FftType.RFFT:
        shape = (*shape[:-1], shape[-1] // 2 + 1)
        dtype = _COMPLEX_OF[dtype]
    elif fft_type == FftType.IRFFT:
        shape = (*shape[:-1], fft_lengths[-1])
        dtype = _REAL_OF[dtype]
    return [ShapedArray(shape, dtype)], no_effects


# --------------------------------------------------------------------------------------
# Transposes (the JVP is the primitive itself: `ad.deflinear`)


def _rfft_transpose(ct, fft_lengths):
    # Pad the half spectrum with zeros to the full length, full FFT, real part.
    n = fft_lengths[-1]
    m = ct.shape[-1]
    config = [(0, 0, 0)] * (ct.ndim - 1) + [(0, n - m, 0)]
    full_ct = pad(ct, full((), 0, ct.dtype), config)
    return ew.real(fft_p.bind(full_ct, fft_lengths=fft_lengths, fft_type=FftType.FFT))


def _irfft_weights(fft_lengths, dtype):
    """(1, 2, ..., 2, 1 or 2) / N: how often IRFFT counts each half-spectrum term."""
    n = fft_lengths[-1]
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    return (weights / np.prod(fft_lengths)).astype(dtype)


def _irfft_transpose(ct, fft_lengths):
    z = fft_p.bind(ct, fft_lengths=fft_lengths, fft_type=FftType.RFFT)
    weights = _irfft_weights(fft_lengths, z.dtype)
    weights = broadcast_in_dim(weights, z.shape, (z.ndim - 1,))
    return ew.mul(ew.conj(z), weights)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if type(ct) is ad.Zero:
        return [None]
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(ct, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(ct, fft_lengths)]
    return [fft_p.bind(ct, fft_lengths=fft_lengths, fft_type=fft_type)]


# --------------------------------------------------------------------------------------
# Batching: the transform acts on trailing axes, so a leading batch axis stays put.


def _fft_batch(axis_size, vals, dims, *, fft_type, fft_lengths):
    (x,), (bdim,) = vals, dims
    if bdim >= x.ndim - len(fft_lengths):
        x, bdim = batching.moveaxis(x, bdim, 0), 0
    return [fft_p.bind(x, fft_lengths=fft_lengths, fft_type=fft_type)], [bdim]


fft_p = Primitive("fft")
impl_rules[fft_p] = _fft_impl
abstract_eval_rules[fft_p] = _fft_abstract
ad.deflinear(fft_p, _fft_transpose)
batching.batch_rules[fft_p] = _fft_batch


# --------------------------------------------------------------------------------------
# The public function


def _fft_type(fft_type):
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        try:
            return FftType[fft_type.upper()]
        except KeyError:
            pass
    elif isinstance(fft_type, int) and not isinstance(fft_type, bool):
        try:
            return FftType(fft_type)
        except ValueError:
            pass
    raise ValueError(f"Unknown FFT type {fft_type!r}")


def fft(x, fft_type, fft_lengths):
    """The `fft_type` transform ('fft', 'ifft', 'rfft', 'irfft' or an `FftType`) of the
    trailing `len(fft_lengths)` axes of `x`. Real inputs of FFT/IFFT are made complex,
    integer inputs of RFFT floating; the result is never weakly typed."""
    fft_type = _fft_type(fft_type)
    fft_lengths = tuple(operator.index(n) for n in fft_lengths)
    x = operand(x)
    dtype = np.dtype(x.dtype)
    if fft_type == FftType.RFFT:
        if dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError("only real valued inputs supported for rfft")
        if not dtypes.issubdtype(dtype, np.floating) or dtype.itemsize < 4:
            dtype = dtypes.canonicalize_dtype(
                np.float64 if dtype.itemsize == 8 else np.float32
            )
    elif not dtypes.issubdtype(dtype, np.complexfloating):
        wide = dtype.itemsize == 8
        dtype = dtypes.canonicalize_dtype(np.complex128 if wide else np.complex64)
    x = ew.convert_element_type(x, dtype)
    return fft_p.bind(x, fft_lengths=fft_lengths, fft_type=fft_type)
