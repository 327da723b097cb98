"""Reductions of jax.numpy: sum, prod, max, min, mean, var, std, any, all, argmax, ...

`_reduction` is the one recipe: check the input, canonicalise `axis`, promote the dtype as
JAX does (bool and small integers sum in the default integer type), apply `where=` by
substituting the reduction's identity, bind the lax reduction, and restore `keepdims`.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.numpy.ufuncs import check_arraylike
from jaxlite.util import canonicalize_axis

__all__ = [
    "sum",
    "prod",
]



def canonicalize_axes(axis, ndim, fun_name):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    try:
        out = tuple(sorted(canonicalize_axis(a, ndim) for a in axes))
    except ValueError as e:
        raise ValueError(f"{fun_name}: {e}") from None
    if len(set(out)) != len(out):
        raise ValueError(f"{fun_name}: repeated axis in {axis}")
    return out


def _keepdims(x, axes, in_shape):
    shape = [1 if i in axes else d for i, d in enumerate(in_shape)]
    return lax.reshape(x, shape)


def _sum_dtype(dtype, promote_integers):
    if not promote_integers:
        return dtype
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    if np.issubdtype(dtype, np.unsignedinteger) and dtype.itemsize < 4:
        return dtypes.default_uint_dtype()
    if np.issubdtype(dtype, np.signedinteger) and dtype.itemsize < 4:
        return dtypes.default_int_dtype()
    return dtype


def _reduction(
    a, fun_name, reduce_fn, identity, axis, dtype, keepdims, initial, where,
    combine=None, promote=None,
):
    from jaxlite.numpy.creation import asarray

    check_arraylike(fun_name, a)
    a = asarray(a)
    in_dtype = np.dtype(a.dtype)
    if dtype is not None:
        out_dtype = dtypes.check_user_dtype_supported(dtype, fun_name)
    else:
        out_dtype = promote(in_dtype) if promote is not None else in_dtype
    weak = a.weak_type and dtype is None
    a = lax.convert_element_type(a, out_dtype, weak)
    axes = canonicalize_axes(axis, np.ndim(a), fun_name)
    if where is not None:
        from jaxlite.numpy.shape import broadcast_to

        where = broadcast_to(asarray(where), np.shape(a))
        a = lax.select(where, a, lax.full_like(a, identity(out_dtype)))
    out = reduce_fn(a, axes)
    if initial is not None:
        out = combine(out, lax.convert_element_type(initial, out_dtype, weak))
    if keepdims:
        out = _keepdims(out, axes, np.shape(a))
    return out


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,  # noqa: A001
        promote_integers=True):
    return _reduction(
        a, "sum", lax.reduce_sum, lambda dt: 0, axis, dtype, keepdims, initial, where,
        combine=lax.add, promote=lambda dt: _sum_dtype(dt, promote_integers),
    )


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    return _reduction(
        a, "prod", lax.reduce_prod, lambda dt: 1, axis, dtype, keepdims, initial, where,
        combine=lax.mul, promote=lambda dt: _sum_dtype(dt, promote_integers),
    )
