"""Numbers as bits and parts: `bitcast_convert_type`, `population_count`, `clz`,
`mulhi`, `reduce_precision` and `complex`.

These look at or rebuild the representation of numbers rather than their values:
reinterpreting a buffer as another dtype (a 32-bit float as four bytes, or two
16-bit halves as one int32), counting set bits and leading zeros, the high half of a
double-width product (the building block of fast integer division and of PRNGs),
rounding a float to fewer exponent and mantissa bits (to simulate bfloat16 or fp8 in
float32), and assembling a complex number from its real and imaginary parts.

The bit operations are piecewise constant, so their derivatives are zero, as in JAX.
`reduce_precision` is treated as linear (its tangent is rounded the same way), and
`complex` is linear in each part: its transposes are `real` and `-imag`.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import elementwise as ew
from jaxlite.lax.rules import broadcast_shapes, check_same_dtypes
from jaxlite.lax.structural import operand

__all__ = [
    "bitcast_convert_type",
    "bitcast_convert_type_p",
    "population_count",
    "population_count_p",
    "clz",
    "clz_p",
    "mulhi",
    "mulhi_p",
    "reduce_precision",
    "reduce_precision_p",
    "complex",
    "complex_p",
]


def _is_integer(dtype):
    return dtype != np.bool_ and np.issubdtype(dtype, np.integer)


def _check_kind(name, dtype, ok, kind, position=None):
    if ok:
        return
    at = "" if position is None else f" at position {position}"
    raise TypeError(
        f"{name} does not accept dtype {np.dtype(dtype).name}{at}. Accepted dtypes"
        f"{at} are subtypes of {kind}."
    )


def _unsigned(x):
    """The bits of NumPy integer array `x` as the unsigned type of its width."""
    return x.view(np.dtype(f"u{x.dtype.itemsize}"))


def _zero_jvp(prim):
    """A piecewise-constant primitive: zero tangents."""

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        return [out], [ad.Zero(ad.tangent_aval(out.aval))]

    return jvp


# --------------------------------------------------------------------------------------
# bitcast_convert_type


def _bitcast_shape(shape, old, new):
    old_bits, new_bits = dtypes.itemsize_bits(old), dtypes.itemsize_bits(new)
    if old_bits == new_bits:
        return tuple(shape)
    if old_bits > new_bits:
        return (*shape, old_bits // new_bits)
    if not shape or shape[-1] * old_bits != new_bits:
        last = shape[-1] if shape else 1
        raise ValueError(
            f"Attempting to convert array of shape {tuple(shape)} from {old.name} of "
            f"size {old_bits} bits to {new.name} of size {new_bits}, bits but "
            f"{last} * {old_bits} != {new_bits}"
        )
    return tuple(shape[:-1])


def _bitcast_impl(x, *, new_dtype):
    x = np.asarray(x)
    shape = _bitcast_shape(x.shape, x.dtype, new_dtype)  # before ascontiguousarray,
    x = np.ascontiguousarray(x)  # which makes a 0-d array 1-d
    return [x.view(new_dtype).reshape(shape)]


def _bitcast_abstract(x, *, new_dtype):
    special = (np.bool_, np.complexfloating)
    if x.dtype != new_dtype and any(
        np.issubdtype(d, k) for d in (x.dtype, new_dtype) for k in special
    ):
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless "
            f"the operand and destination types match. Got operand dtype={x.dtype}, "
            f"new_dtype={new_dtype!r}. Consider using the arr.view() method instead."
        )
    shape = _bitcast_shape(x.shape, x.dtype, new_dtype)
    return [ShapedArray(shape, new_dtype)], no_effects


def _bitcast_batch(axis_size, vals, dims, *, new_dtype):
    # The last axis may change size or vanish: keep the batch axis first.
    x = batching.moveaxis(vals[0], dims[0], 0)
    return [bitcast_convert_type_p.bind(x, new_dtype=new_dtype)], [0]


bitcast_convert_type_p = Primitive("bitcast_convert_type")
impl_rules[bitcast_convert_type_p] = _bitcast_impl
abstract_eval_rules[bitcast_convert_type_p] = _bitcast_abstract
ad.jvp_rules[bitcast_convert_type_p] = _zero_jvp(bitcast_convert_type_p)
batching.batch_rules[bitcast_convert_type_p] = _bitcast_batch
native_rules[bitcast_convert_type_p] = "bitcast_convert_type"


def bitcast_convert_type(operand_, new_dtype):
    """Reinterpret the bits of `operand_` as `new_dtype`. A narrower dtype adds a last
    axis (bytes of one element); a wider one consumes the last axis."""
    x = operand(operand_)
    new_dtype = dtypes.canonicalize_user_dtype(new_dtype, "bitcast_convert_type")
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype)


# --------------------------------------------------------------------------------------
# population_count and clz


def _popcount_impl(x):
    x = np.asarray(x)
    return [np.bitwise_count(_unsigned(x)).astype(x.dtype)]


def _clz_impl(x):
    x = np.asarray(x)
    u = _unsigned(x)
    width = 8 * x.dtype.itemsize
    length = np.zeros(x.shape, np.int64)  # the bit length, by halving
    shift = width // 2
    while shift:
        high = u >> u.dtype.type(shift)
        nonzero = high != 0
        length += shift * nonzero
        u = np.where(nonzero, high, u)
        shift //= 2
    length += u != 0
    return [(width - length).astype(x.dtype)]


def _integer_unary_abstract(name):
    def abstract(x):
        _check_kind(name, x.dtype, _is_integer(x.dtype), "integer")
        return [ShapedArray(x.shape, x.dtype, x.weak_type)], no_effects

    return abstract


population_count_p = Primitive("population_count")
impl_rules[population_count_p] = _popcount_impl
abstract_eval_rules[population_count_p] = _integer_unary_abstract("population_count")
ad.jvp_rules[population_count_p] = _zero_jvp(population_count_p)
batching.defvectorized(population_count_p)
native_rules[population_count_p] = "population_count"

clz_p = Primitive("clz")
impl_rules[clz_p] = _clz_impl
abstract_eval_rules[clz_p] = _integer_unary_abstract("clz")
ad.jvp_rules[clz_p] = _zero_jvp(clz_p)
batching.defvectorized(clz_p)
native_rules[clz_p] = "clz"


def population_count(x):
    """The number of set bits of each element (of an integer array)."""
    return population_count_p.bind(operand(x))


def clz(x):
    """The number of leading zero bits of each element (of an integer array)."""
    return clz_p.bind(operand(x))


# --------------------------------------------------------------------------------------
# mulhi: the high half of the double-width product


def _mulhi_unsigned64(a, b):
    """High 64 bits of the 128-bit product of uint64 arrays, from 32-bit halves."""
    mask = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    a_lo, a_hi = a & mask, a >> s32
    b_lo, b_hi = b & mask, b >> s32
    lo_lo, hi_lo = a_lo * b_lo, a_hi * b_lo
    lo_hi, hi_hi = a_lo * b_hi, a_hi * b_hi
    middle = (lo_lo >> s32) + (hi_lo & mask) + (lo_hi & mask)
    return hi_hi + (hi_lo >> s32) + (lo_hi >> s32) + (middle >> s32)


def _mulhi_impl(x, y):
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    dtype = x.dtype
    bits = 8 * dtype.itemsize
    if bits < 64:
        wide = np.int64 if np.issubdtype(dtype, np.signedinteger) else np.uint64
        product = x.astype(wide) * y.astype(wide)
        return [(product >> wide(bits)).astype(dtype)]
    with np.errstate(over="ignore"):
        high = _mulhi_unsigned64(_unsigned(x), _unsigned(y))
        if np.issubdtype(dtype, np.signedinteger):
            # Two's complement: subtract the other operand where one is negative.
            high = high - np.where(x < 0, _unsigned(y), 0).astype(np.uint64)
            high = high - np.where(y < 0, _unsigned(x), 0).astype(np.uint64)
    return [high.view(dtype)]


def _mulhi_abstract(x, y):
    shape = broadcast_shapes("mulhi", x.shape, y.shape)
    for i, a in enumerate((x, y)):
        _check_kind("mulhi", a.dtype, _is_integer(a.dtype), "integer", i)
    check_same_dtypes("mulhi", (x, y))
    return [ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)], no_effects


mulhi_p = Primitive("mulhi")
impl_rules[mulhi_p] = _mulhi_impl
abstract_eval_rules[mulhi_p] = _mulhi_abstract
ad.jvp_rules[mulhi_p] = _zero_jvp(mulhi_p)
batching.defbroadcasting(mulhi_p)


def mulhi(x, y, /):
    """The high half of the double-width product of integers `x` and `y`."""
    return mulhi_p.bind(*ew.lax_operands(operand(x), operand(y)))


# --------------------------------------------------------------------------------------
# reduce_precision: round to a float format with fewer exponent and mantissa bits


def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
    x = np.asarray(x)
    info = dtypes.finfo(x.dtype)
    src_mantissa = int(info.nmant)
    src_exponent = dtypes.itemsize_bits(x.dtype) - src_mantissa - 1
    utype = np.dtype(f"u{x.dtype.itemsize}").type
    bits = x.view(utype)
    with np.errstate(over="ignore"):
        if mantissa_bits < src_mantissa:
            # Round to nearest, ties to even, at the new last mantissa bit.
            drop = src_mantissa - mantissa_bits
            last_bit = utype(1) << utype(drop)
            bias = (last_bit >> utype(1)) - utype(1)
            odd = (bits & last_bit) >> utype(drop)
            bits = (bits + odd + bias) & ~(last_bit - utype(1))
        if exponent_bits < src_exponent:
            total = dtypes.itemsize_bits(x.dtype)
            sign = bits & (utype(1) << utype(total - 1))
            exp_mask = ((utype(1) << utype(src_exponent)) - utype(1)) << utype(
                src_mantissa
            )
            src_bias = (1 << (src_exponent - 1)) - 1
            new_bias = (1 << (exponent_bits - 1)) - 1
            exponent = bits & exp_mask
            overflow = exponent > utype(src_bias + new_bias) << utype(src_mantissa)
            underflow = exponent <= utype(src_bias - new_bias) << utype(src_mantissa)
            bits = np.where(overflow, sign | exp_mask, np.where(underflow, sign, bits))
    out = np.asarray(bits, utype).view(x.dtype)
    nan = np.isnan(x)
    if nan.any():  # NaNs stay NaN, whatever rounding did to their bits
        out = np.where(nan, x, out)
    return [out.astype(x.dtype, copy=False)]


def _reduce_precision_abstract(x, *, exponent_bits, mantissa_bits):
    floating = dtypes.issubdtype(x.dtype, np.floating)
    _check_kind("reduce_precision", x.dtype, floating, "floating")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(
            "reduce_precision needs exponent_bits >= 1 and mantissa_bits >= 0, got "
            f"exponent_bits={exponent_bits} and mantissa_bits={mantissa_bits}."
        )
    return [ShapedArray(x.shape, x.dtype, x.weak_type)], no_effects


def _reduce_precision_transpose(ct, x, **params):
    if type(ct) is ad.Zero:
        return [None]
    return [reduce_precision_p.bind(ct, **params)]


reduce_precision_p = Primitive("reduce_precision")
impl_rules[reduce_precision_p] = _reduce_precision_impl
abstract_eval_rules[reduce_precision_p] = _reduce_precision_abstract
ad.deflinear(reduce_precision_p, _reduce_precision_transpose)
batching.defvectorized(reduce_precision_p)


def reduce_precision(operand_, exponent_bits, mantissa_bits):
    """Round floats to the nearest value of a format with `exponent_bits` and
    `mantissa_bits` (overflow to inf, underflow to zero), keeping the dtype."""
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    return reduce_precision_p.bind(
        operand(operand_), exponent_bits=exponent_bits, mantissa_bits=mantissa_bits
    )


# --------------------------------------------------------------------------------------
# complex: x + i y


_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _complex_impl(x, y):
    x, y = np.asarray(x), np.asarray(y)
    out = np.empty(np.broadcast_shapes(x.shape, y.shape), _COMPLEX_OF[x.dtype])
    out.real, out.imag = x, y
    return [out]


def _complex_abstract(x, y):
    shape = broadcast_shapes("complex", x.shape, y.shape)
    for i, a in enumerate((x, y)):
        ok = a.dtype in _COMPLEX_OF
        _check_kind("complex", a.dtype, ok, "float32, float64", i)
    check_same_dtypes("complex", (x, y))
    dtype = np.dtype(_COMPLEX_OF[x.dtype])
    return [ShapedArray(shape, dtype, x.weak_type and y.weak_type)], no_effects


def _complex_transpose(ct, x, y):
    if type(ct) is ad.Zero:
        return [None, None]
    ct_x = ew.unbroadcast(x.aval, ew.real(ct)) if ad.is_undefined(x) else None
    ct_y = ew.unbroadcast(y.aval, ew.neg(ew.imag(ct))) if ad.is_undefined(y) else None
    return [ct_x, ct_y]


def _complex_jvp(primals, tangents):
    x, y = primals
    tx, ty = (
        ew.full_of(p, 0) if type(t) is ad.Zero else t for p, t in zip(primals, tangents)
    )
    return [complex_p.bind(x, y)], [complex_p.bind(tx, ty)]


complex_p = Primitive("complex")
impl_rules[complex_p] = _complex_impl
abstract_eval_rules[complex_p] = _complex_abstract
ad.jvp_rules[complex_p] = _complex_jvp
ad.transpose_rules[complex_p] = _complex_transpose
batching.defbroadcasting(complex_p)


def complex(x, y):  # noqa: A001  (JAX's name)
    """`x + 1j * y` from real arrays of one dtype (float32 -> complex64)."""
    return complex_p.bind(*ew.lax_operands(operand(x), operand(y)))
