"""Reductions over static axes: reduce_sum, reduce_prod, reduce_max, reduce_min and the
bitwise reduce_and, reduce_or, reduce_xor.

Each one combines the elements along `axes` with a monoid, so an empty reduction gives
the monoid's identity (0, 1, the dtype's lowest or highest value, all ones, zero), and
the result keeps the operand's dtype: NumPy's habit of summing small integers in a wider
type is undone by passing `dtype=` explicitly. Axes are kept in the order the caller
gave them, as JAX prints them (`reduce_sum[axes=(1, 0)]`); jaxlite leaves out JAX's
`out_sharding=None` because it has one device.

`defreducer` registers the recurring shape (a NumPy reduction `fn(x, axes)`, its type
check, its lowering and its batching rule); each primitive's block then names its
derivative rules.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.array import from_host
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.distributed.global_array import GlobalArray
from jaxlite.interpreters import ad, batching
from jaxlite.lax import elementwise as ew
from jaxlite.lax.constructors import full
from jaxlite.lax.structural import broadcast_in_dim

__all__ = [
    "reduce_sum",
    "reduce_prod",
    "reduce_max",
    "reduce_min",
    "reduce_and",
    "reduce_or",
    "reduce_xor",
    "reduce_sum_p",
    "reduce_prod_p",
    "reduce_max_p",
    "reduce_min_p",
    "reduce_and_p",
    "reduce_or_p",
    "reduce_xor_p",
]

# --------------------------------------------------------------------------------------
# Shared checks


def _reduced_shape(x, axes):
    """The shape of `x` (an aval) without `axes`, or JAX's error for bad axes."""
    if any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(
            f"reduction axes {axes} contains out-of-bounds indices for "
            f"{x.str_short(short_dtypes=False)}."
        )
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    return tuple(d for i, d in enumerate(x.shape) if i not in axes)


def _check_number(name, dtype):
    if dtype == np.bool_ or not dtypes.issubdtype(dtype, np.number):
        raise TypeError(
            f"{name} does not accept dtype {np.dtype(dtype).name}. Accepted dtypes are "
            "subtypes of number."
        )


def _check_any(name, dtype):
    if dtype != np.bool_ and not dtypes.issubdtype(dtype, np.number):
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name}.")


def _check_logical(name, dtype):
    if dtype != np.bool_ and not np.issubdtype(dtype, np.integer):
        raise TypeError(
            "logical reduction requires operand dtype bool or int, got "
            f"{np.dtype(dtype).name}."
        )


def defreducer(prim, reduce_fn, check):
    """Register impl, abstract eval, lowering and batching of a reduction primitive.

    `reduce_fn(x, axes)` reduces a NumPy value over a tuple of axes and returns a value
    of x's dtype; `check(name, dtype)` rejects the dtypes the primitive does not accept.
    """
    name = prim.name

    def impl(x, *, axes):
        return [reduce_fn(np.asarray(x), axes)]

    def abstract(x, *, axes):
        check(name, x.dtype)
        return [ShapedArray(_reduced_shape(x, axes), x.dtype, x.weak_type)], no_effects

    def lowering(ctx, x, *, axes):
        fn = ctx.add_global(reduce_fn, name)
        return f"{fn}({x}, {axes})"

    def batch(axis_size, vals, dims, *, axes):
        # The batch axis `bdim` stays; the reduced axes shift past it.
        (x,), (bdim,) = vals, dims
        moved = tuple(a + 1 if a >= bdim else a for a in axes)
        out_bdim = bdim - sum(1 for a in moved if a < bdim)
        return [prim.bind(x, axes=moved)], [out_bdim]

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract
    lowering_rules[prim] = lowering
    batching.batch_rules[prim] = batch
    native_rules[prim] = prim.name


# --------------------------------------------------------------------------------------
# Helpers of the derivative rules


def _expand_reduced(y, shape, axes):
    """Broadcast a reduction's result `y` back to the operand's `shape`."""
    kept = tuple(i for i in range(len(shape)) if i not in axes)
    return broadcast_in_dim(y, shape, kept)


def _lowest(dtype):
    """The identity of max: -inf, the smallest integer, or False."""
    if dtype == np.bool_:
        return False
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min
    return -np.inf


def _highest(dtype):
    """The identity of min: +inf, the largest integer, or True."""
    if dtype == np.bool_:
        return True
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).max
    return np.inf


# --------------------------------------------------------------------------------------
# reduce_sum: linear; its transpose broadcasts the cotangent back


def _np_sum(x, axes):
    return np.add.reduce(x, axis=axes, dtype=x.dtype)


def _reduce_sum_transpose(ct, x, *, axes):
    if type(ct) is ad.Zero:
        return [None]
    return [_expand_reduced(ct, x.aval.shape, axes)]


def _ufunc_reduce_lowering(ufunc, reduce_fn):
    """`ufunc.reduce` inline (for max and min only on non-empty operands, which need
    no initial value); `reduce_fn` otherwise."""

    def lowering(ctx, x, *, axes):
        (aval,) = ctx.avals_in()
        if ufunc in ("maximum", "minimum") and not all(aval.shape):
            return f"{ctx.add_global(reduce_fn, 'reduce')}({x}, {axes})"
        dtype = ctx.add_global(np.dtype(aval.dtype), "dtype")
        return f"np.{ufunc}.reduce({x}, {axes}, {dtype})"

    return lowering


reduce_sum_p = Primitive("reduce_sum")
defreducer(reduce_sum_p, _np_sum, _check_number)
lowering_rules[reduce_sum_p] = _ufunc_reduce_lowering("add", _np_sum)
ad.deflinear(reduce_sum_p, _reduce_sum_transpose)


# --------------------------------------------------------------------------------------
# reduce_prod


def _np_prod(x, axes):
    return np.multiply.reduce(x, axis=axes, dtype=x.dtype)


def _reduce_prod_jvp(primals, tangents, *, axes):
    # d(prod x) = sum_i t_i * prod_{j != i} x_j.
    (x,), (t,) = primals, tangents
    out = reduce_prod_p.bind(x, axes=axes)
    others = _prod_of_others(x, axes)
    t_out = reduce_sum_p.bind(ew.mul(ad.instantiate(t), others), axes=axes)
    return [out], [t_out]


def _prod_of_others(x, axes):
    """For each element, the product of the other elements of its reduction group.

    Without zeros in the group it is `prod / x_i`. With one zero, only the zero's entry
    is non-zero (the product of the non-zeros); with two or more zeros all are zero.
    """
    shape = tuple(np.shape(x))
    dtype = np.dtype(x.dtype)
    is_zero = ew.eq(x, 0)
    zeros = full(shape, 0, dtype)
    safe_x = ew.select(is_zero, full(shape, 1, dtype), x)
    nonzero_prod = _expand_reduced(reduce_prod_p.bind(safe_x, axes=axes), shape, axes)
    count = reduce_sum_p.bind(ew.convert_element_type(is_zero, np.int32), axes=axes)
    n_zeros = _expand_reduced(count, shape, axes)
    no_zero = ew.div(nonzero_prod, safe_x)
    one_zero = ew.select(is_zero, nonzero_prod, zeros)
    more = ew.select(ew.eq(n_zeros, 1), one_zero, zeros)
    return ew.select(ew.eq(n_zeros, 0), no_zero, more)


reduce_prod_p = Primitive("reduce_prod")
defreducer(reduce_prod_p, _np_prod, _check_number)
lowering_rules[reduce_prod_p] = _ufunc_reduce_lowering("multiply", _np_prod)
ad.jvp_rules[reduce_prod_p] = _reduce_prod_jvp


# --------------------------------------------------------------------------------------
# reduce_max and reduce_min: the tangent is the mean of the tangents at the extremum
# (ties share the derivative equally), as in JAX


def _np_max(x, axes):
    if x.size:
        return np.maximum.reduce(x, axis=axes)
    return np.maximum.reduce(x, axis=axes, initial=_lowest(x.dtype))


def _np_min(x, axes):
    if x.size:
        return np.minimum.reduce(x, axis=axes)
    return np.minimum.reduce(x, axis=axes, initial=_highest(x.dtype))


def _minmax_jvp(prim):
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        at_extremum = ew.eq(x, _expand_reduced(out, tuple(np.shape(x)), axes))
        weights = ew.convert_element_type(at_extremum, np.dtype(x.dtype))
        counts = reduce_sum_p.bind(weights, axes=axes)
        t_sum = reduce_sum_p.bind(ew.mul(ad.instantiate(t), weights), axes=axes)
        return [out], [ew.div(t_sum, counts)]

    return jvp


reduce_max_p = Primitive("reduce_max")
defreducer(reduce_max_p, _np_max, _check_any)
lowering_rules[reduce_max_p] = _ufunc_reduce_lowering("maximum", _np_max)
ad.jvp_rules[reduce_max_p] = _minmax_jvp(reduce_max_p)

reduce_min_p = Primitive("reduce_min")
defreducer(reduce_min_p, _np_min, _check_any)
lowering_rules[reduce_min_p] = _ufunc_reduce_lowering("minimum", _np_min)
ad.jvp_rules[reduce_min_p] = _minmax_jvp(reduce_min_p)


# --------------------------------------------------------------------------------------
# reduce_and, reduce_or, reduce_xor: bitwise on integers, logical on bool; no derivative


def _np_and(x, axes):
    if x.dtype == np.bool_:
        return np.logical_and.reduce(x, axis=axes)
    return np.bitwise_and.reduce(x, axis=axes, dtype=x.dtype)


def _np_or(x, axes):
    if x.dtype == np.bool_:
        return np.logical_or.reduce(x, axis=axes)
    return np.bitwise_or.reduce(x, axis=axes, dtype=x.dtype)


def _np_xor(x, axes):
    return np.bitwise_xor.reduce(x, axis=axes, dtype=x.dtype)


reduce_and_p = Primitive("reduce_and")
defreducer(reduce_and_p, _np_and, _check_logical)
ad.defjvp(reduce_and_p, None)

reduce_or_p = Primitive("reduce_or")
defreducer(reduce_or_p, _np_or, _check_logical)
ad.defjvp(reduce_or_p, None)

reduce_xor_p = Primitive("reduce_xor")
defreducer(reduce_xor_p, _np_xor, _check_logical)
ad.defjvp(reduce_xor_p, None)


# --------------------------------------------------------------------------------------
# Public functions

_PY_SCALARS = (bool, int, float, complex)


def _operand(name, x):
    """`x` as an operand: Arrays, tracers and GlobalArrays as they are, Python
    scalars as weak Arrays and NumPy values as Arrays of their canonical dtype;
    anything else is an error."""
    if type(x) is Array or isinstance(x, (Tracer, GlobalArray)):
        return x
    if type(x) in _PY_SCALARS:
        return Array(dtypes.coerce_to_array(x), type(x) is not bool)
    if isinstance(x, (np.ndarray, np.generic)):
        return from_host(x)
    raise TypeError(
        f"Error interpreting argument to {name} as a JAX value. The problematic value "
        f"is of type {type(x)} and was passed to {name} at position 0."
    )


def _axes(axes):
    return tuple(int(a.__index__()) for a in axes)


def reduce_sum(operand, axes):
    """Sum of `operand` over `axes` (a sequence of non-negative ints), in its dtype."""
    return reduce_sum_p.bind(_operand("reduce_sum", operand), axes=_axes(axes))


def reduce_prod(operand, axes):
    """Product of `operand` over `axes`, in its dtype."""
    return reduce_prod_p.bind(_operand("reduce_prod", operand), axes=_axes(axes))


def reduce_max(operand, axes):
    """Maximum over `axes` (NaN propagates; complex compares lexicographically)."""
    return reduce_max_p.bind(_operand("reduce_max", operand), axes=_axes(axes))


def reduce_min(operand, axes):
    """Minimum over `axes` (NaN propagates; complex compares lexicographically)."""
    return reduce_min_p.bind(_operand("reduce_min", operand), axes=_axes(axes))


def reduce_and(operand, axes):
    """Bitwise (logical for bool) AND over `axes`."""
    return reduce_and_p.bind(_operand("reduce_and", operand), axes=_axes(axes))


def reduce_or(operand, axes):
    """Bitwise (logical for bool) OR over `axes`."""
    return reduce_or_p.bind(_operand("reduce_or", operand), axes=_axes(axes))


def reduce_xor(operand, axes):
    """Bitwise (logical for bool) XOR over `axes`."""
    return reduce_xor_p.bind(_operand("reduce_xor", operand), axes=_axes(axes))
