"""`packbits` and `unpackbits`: booleans stored eight to a byte, and back.

Packing pads the axis to a multiple of 8, views it as (groups, 8) and takes the dot
product of each group with the place values (128, 64, ..., 1 for big-endian bit order).
Unpacking shifts each byte right by 7, 6, ..., 0 and keeps the lowest bit. Both are
plain array arithmetic, so they work on traced values.
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.numpy.ufuncs import check_arraylike

__all__ = ["packbits", "unpackbits"]


def _jnp():
    import jaxlite.numpy as jnp

    return jnp


def _check_order(bitorder):
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")


def _place_values(bitorder):
    bits = np.arange(8, dtype=np.uint8)
    return bits if bitorder == "little" else bits[::-1]


def packbits(a, axis=None, bitorder="big"):
    """The nonzero-ness of the elements of `a` along `axis` (the flattened array if
    None), packed into uint8 bytes, eight elements to a byte, zero-padded at the
    end."""
    jnp = _jnp()
    check_arraylike("packbits", a)
    a = jnp.asarray(a)
    if not (a.dtype == np.bool_ or dtypes.issubdtype(a.dtype, np.integer)):
        raise TypeError("Expected an input array of integer or boolean data type")
    _check_order(bitorder)
    bits = lax.convert_element_type(a != 0, np.uint8)
    if axis is None:
        bits, axis = jnp.ravel(bits), 0
    axis = operator.index(axis) % max(bits.ndim, 1)
    bits = jnp.moveaxis(bits, axis, -1)
    n = bits.shape[-1]
    pad = -n % 8
    if pad:
        bits = jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, pad)])
    groups = jnp.reshape(bits, (*bits.shape[:-1], (n + pad) // 8, 8))
    shifts = jnp.asarray(_place_values(bitorder))
    packed = jnp.sum(jnp.left_shift(groups, shifts), axis=-1, dtype=np.uint8)
    return jnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of the uint8 array `a` as a uint8 array of 0s and 1s, along `axis`
    (the flattened array if None); `count` keeps that many (negative: drops that
    many from the end; more than available: pads with zeros)."""
    jnp = _jnp()
    check_arraylike("unpackbits", a)
    a = jnp.asarray(a)
    if a.dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    _check_order(bitorder)
    shifts = jnp.asarray(_place_values(bitorder))
    bits = jnp.bitwise_and(jnp.right_shift(a[..., None], shifts), np.uint8(1))
    if axis is None:
        bits, axis = jnp.ravel(bits), 0
    else:
        axis = operator.index(axis) % a.ndim
        bits = jnp.moveaxis(bits, -1, axis + 1)
        bits = jnp.reshape(
            bits, (*a.shape[:axis], a.shape[axis] * 8, *a.shape[axis + 1 :])
        )
    if count is not None:
        n = bits.shape[axis]
        count = operator.index(count)
        keep = max(n + count, 0) if count < 0 else count
        if keep <= n:
            bits = lax.slice_in_dim(bits, 0, keep, axis=axis)
        else:
            widths = [(0, 0)] * bits.ndim
            widths[axis] = (0, keep - n)
            bits = jnp.pad(bits, widths)
    return bits
