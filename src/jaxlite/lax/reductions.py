"""Reductions over static axes: reduce_sum/prod/max/min/and/or/xor, argmax/argmin and the
cumulative reductions.

`defreducer` registers the recurring shape: a NumPy reduction with `axis=axes` keeps the
operand's dtype, and the output drops the reduced axes.
"""

from __future__ import annotations

import numpy as np

from jaxlite.backend import lowering_rules
from jaxlite.core import Primitive, ShapedArray, abstract_eval_rules, impl_rules, no_effects
from jaxlite.lax.rules import ANY, INT_OR_BOOL, NUMBER, check_dtype


def _reduced_shape(name, shape, axes):
    if any(not 0 <= a < len(shape) for a in axes) or len(set(axes)) != len(axes):
        raise ValueError(f"{name}: invalid axes {axes} for operand of shape {shape}")
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def defreducer(prim, np_fn, kinds):
    """Register impl, abstract eval and lowering of a reduction `np_fn(x, axis, dtype)`."""
    name = prim.name

    def impl(x, *, axes):
        x = np.asarray(x)
        return [np.asarray(np_fn(x, axis=axes, dtype=x.dtype))[()]]

    def abstract(x, *, axes):
        check_dtype(name, x.dtype, kinds)
        shape = _reduced_shape(name, x.shape, axes)
        return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects

    def lowering(ctx, x, *, axes):
        fn = ctx.add_global(np_fn, name)
        return f"{fn}({x}, axis={axes}, dtype={x}.dtype)"

    impl_rules[prim] = impl
    abstract_eval_rules[prim] = abstract
    lowering_rules[prim] = lowering


def _np_max(x, axis, dtype):
    return np.max(x, axis=axis) if x.size else np.full(
        _reduced_shape("reduce_max", x.shape, axis), _identity_min(dtype), dtype
    )


def _np_min(x, axis, dtype):
    return np.min(x, axis=axis) if x.size else np.full(
        _reduced_shape("reduce_min", x.shape, axis), _identity_max(dtype), dtype
    )


def _identity_min(dtype):
    if dtype == np.bool_:
        return False
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).min
    return -np.inf


def _identity_max(dtype):
    if dtype == np.bool_:
        return True
    if np.issubdtype(dtype, np.integer):
        return np.iinfo(dtype).max
    return np.inf


def _np_and(x, axis, dtype):
    return np.bitwise_and.reduce(x, axis=axis, dtype=dtype) if x.dtype != np.bool_ else (
        np.all(x, axis=axis)
    )


def _np_or(x, axis, dtype):
    return np.bitwise_or.reduce(x, axis=axis, dtype=dtype) if x.dtype != np.bool_ else (
        np.any(x, axis=axis)
    )


def _np_xor(x, axis, dtype):
    return np.bitwise_xor.reduce(x, axis=axis, dtype=dtype)


reduce_sum_p = Primitive("reduce_sum")
defreducer(reduce_sum_p, np.sum, NUMBER)

reduce_prod_p = Primitive("reduce_prod")
defreducer(reduce_prod_p, np.prod, NUMBER)

reduce_max_p = Primitive("reduce_max")
defreducer(reduce_max_p, _np_max, ANY)

reduce_min_p = Primitive("reduce_min")
defreducer(reduce_min_p, _np_min, ANY)

reduce_and_p = Primitive("reduce_and")
defreducer(reduce_and_p, _np_and, INT_OR_BOOL)

reduce_or_p = Primitive("reduce_or")
defreducer(reduce_or_p, _np_or, INT_OR_BOOL)

reduce_xor_p = Primitive("reduce_xor")
defreducer(reduce_xor_p, _np_xor, INT_OR_BOOL)


def _axes(axes):
    return tuple(sorted(int(a) for a in axes))


def reduce_sum(operand, axes):
    return reduce_sum_p.bind(operand, axes=_axes(axes))


def reduce_prod(operand, axes):
    return reduce_prod_p.bind(operand, axes=_axes(axes))


def reduce_max(operand, axes):
    return reduce_max_p.bind(operand, axes=_axes(axes))


def reduce_min(operand, axes):
    return reduce_min_p.bind(operand, axes=_axes(axes))


def reduce_and(operand, axes):
    return reduce_and_p.bind(operand, axes=_axes(axes))


def reduce_or(operand, axes):
    return reduce_or_p.bind(operand, axes=_axes(axes))


def reduce_xor(operand, axes):
    return reduce_xor_p.bind(operand, axes=_axes(axes))
