"""Sorting, searching and cumulative functions of jax.numpy.

Everything here is built on a handful of lax primitives. `sort` sorts several arrays
together, so argsort sorts an iota along with the keys, lexsort passes several keys, and
a permutation is inverted by sorting an iota by it. searchsorted compares every query with
every element (`method="compare_all"`, the only one that needs no gather), using JAX's
total order in which NaN is the largest value and -0.0 equals 0.0.

argmax and argmin live here rather than with the reductions: they return positions, like
argsort, and are built on their own lax primitives; so do their NaN-skipping forms.

partition and argpartition produce JAX's arrangement (the k+1 smallest in ascending
order, then the others: values descending, indices in their original order) with
`lax.top_k` of the negated values, as JAX does, so ties, signed zeros, NaNs and a
wrapping INT_MIN land where they land in JAX.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.eager_jit import eager_jit
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes
from jaxlite.util import canonicalize_axis

__all__ = [
    "sort",
    "argsort",
    "sort_complex",
    "lexsort",
    "searchsorted",
    "argmax",
    "argmin",
    "cumsum",
    "cumprod",
    "cumulative_sum",
    "cumulative_prod",
    "nancumsum",
    "nancumprod",
    "partition",
    "argpartition",
    "nanargmax",
    "nanargmin",
]


def _ravel(x):
    return lax.reshape(x, (int(np.prod(np.shape(x), dtype=np.int64)),))


def _axis_or_ravel(a, axis):
    """`(a, axis)` with `axis=None` meaning the flattened array along axis 0."""
    if axis is None:
        return _ravel(a), 0
    return a, canonicalize_axis(axis, a.ndim)


def _check_sort_args(fun_name, kind, order):
    if kind is not None:
        raise TypeError(
            f"'kind' argument to {fun_name} is not supported. Use stable=True or "
            "stable=False to specify sort stability."
        )
    if order is not None:
        raise TypeError(f"'order' argument to {fun_name} is not supported.")


@eager_jit
def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy of `a` along `axis` (flattened when `axis=None`); NaNs sort last."""
    check_arraylike("sort", a)
    _check_sort_args("sort", kind, order)
    a, axis = _axis_or_ravel(asarray(a), axis)
    out = lax.sort(a, dimension=axis, is_stable=stable)
    return lax.rev(out, (axis,)) if descending else out


@eager_jit
def argsort(
    a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None
):
    """Indices that sort `a` along `axis`. With `descending`, equal elements keep their
    original order (the sort runs on the reversed array)."""
    check_arraylike("argsort", a)
    _check_sort_args("argsort", kind, order)
    a, axis = _axis_or_ravel(asarray(a), axis)
    index_dtype = dtypes.default_int_dtype()
    if dtype is not None:
        index_dtype = dtypes.check_user_dtype_supported(dtype, "argsort")
    iota = lax.broadcasted_iota(index_dtype, a.shape, axis)
    if descending:
        a, iota = lax.rev(a, (axis,)), lax.rev(iota, (axis,))
    _, perm = lax.sort((a, iota), dimension=axis, is_stable=stable, num_keys=1)
    return lax.rev(perm, (axis,)) if descending else perm


def sort_complex(a):
    """Sort a flattened-last-axis copy of `a` and return it as complex numbers."""
    check_arraylike("sort_complex", a)
    a = sort(asarray(a), axis=0 if np.ndim(a) == 1 else -1)
    dtype = dtypes.result_type(a)
    if not dtypes.issubdtype(dtype, np.complexfloating):
        dtype = dtypes.promote_types(dtype, dtypes.default_complex_dtype())
    return lax.convert_element_type(a, dtype)


def lexsort(keys, axis=-1):
    """Indices that sort by several keys; the LAST key is the primary one."""
    keys = tuple(keys)
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    check_arraylike("lexsort", *keys)
    keys = [asarray(k) for k in keys]
    shape = keys[0].shape
    if any(k.shape != shape for k in keys[1:]):
        raise ValueError(
            "all keys need to be the same shape, got "
            + ", ".join(str(k.shape) for k in keys)
        )
    if not shape:
        raise TypeError("lexsort keys must be at least 1-dimensional, got scalars")
    axis = canonicalize_axis(axis, len(shape))
    iota = lax.broadcasted_iota(dtypes.default_int_dtype(), shape, axis)
    outs = lax.sort((*keys[::-1], iota), dimension=axis, num_keys=len(keys))
    return outs[-1]


# ----------------------------------------------------------------------------------------
# searchsorted


def _total_lt(x, y, or_equal):
    """`x < y` (or `x <= y`) in JAX's sort order: NaN is largest, -0.0 equals 0.0."""
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        # Real parts first, then imaginary parts, each in the total order.
        xr, yr, xi, yi = lax.real(x), lax.real(y), lax.imag(x), lax.imag(y)
        both_nan = lax.bitwise_and(lax.ne(xr, xr), lax.ne(yr, yr))
        same_real = lax.bitwise_or(lax.eq(xr, yr), both_nan)
        tie = lax.bitwise_and(same_real, _total_lt(xi, yi, or_equal))
        return lax.bitwise_or(_total_lt(xr, yr, False), tie)
    compare = lax.le(x, y) if or_equal else lax.lt(x, y)
    if not dtypes.issubdtype(x.dtype, np.floating):
        return compare
    y_nan = lax.ne(y, y)
    if or_equal:
        return lax.bitwise_or(compare, y_nan)
    return lax.bitwise_or(compare, lax.bitwise_and(y_nan, lax.eq(x, x)))


def _permute(x, sorter):
    """`x[sorter]` for a permutation `sorter`: sort `x` by the inverse permutation."""
    iota = lax.iota(sorter.dtype, sorter.shape[0])
    _, inverse = lax.sort((sorter, iota), num_keys=1)
    _, out = lax.sort((inverse, x), num_keys=1)
    return out


_SEARCH_METHODS = ["compare_all", "scan", "scan_unrolled", "sort"]


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion points of `v` into the sorted 1-D array `a`, keeping it sorted."""
    check_arraylike("searchsorted", a, v)
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in _SEARCH_METHODS:
        raise ValueError(
            f"invalid argument method={method!r}, expected one of {_SEARCH_METHODS}"
        )
    a, v = asarray(a), asarray(v)
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = promote_dtypes(a, v)
    if sorter is not None:
        check_arraylike("searchsorted", sorter)
        a = _permute(a, asarray(sorter))
    n = a.shape[0]
    # int32 whenever it can hold every position (also with x64), as JAX does.
    small = max(n, v.size) < np.iinfo(np.int32).max
    index_dtype = dtypes.canonicalize_dtype(np.int32 if small else np.int64)
    if n == 0:
        return lax.full(v.shape, 0, index_dtype)
    table = lax.broadcast_in_dim(a, (*v.shape, n), (v.ndim,))
    queries = lax.broadcast_in_dim(v, (*v.shape, n), tuple(range(v.ndim)))
    before = _total_lt(table, queries, or_equal=side == "right")
    count = lax.convert_element_type(before, index_dtype)
    return lax.reduce_sum(count, (v.ndim,))


# ----------------------------------------------------------------------------------------
# argmax and argmin


def _argminmax(fun_name, lax_fn, a, axis, out, keepdims):
    if out is not None:
        raise NotImplementedError(
            f"The 'out' argument to jnp.{fun_name} is not supported."
        )
    check_arraylike(fun_name, a)
    a = asarray(a)
    in_shape = a.shape
    if axis is None:
        a = _ravel(a)
        if a.shape[0] == 0:
            raise ValueError(f"attempt to get {fun_name} of an empty sequence")
        axis = 0
    else:
        axis = canonicalize_axis(axis, a.ndim)
        if a.shape[axis] == 0:
            raise ValueError(f"attempt to get {fun_name} of an empty sequence")
    result = lax_fn(a, axis, dtypes.default_int_dtype())
    if not keepdims:
        return result
    if a.shape == in_shape:
        return lax.expand_dims(result, (axis,))
    return lax.reshape(result, (1,) * len(in_shape))


@eager_jit
def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the largest element (the first one; a NaN counts as the largest)."""
    return _argminmax("argmax", lax.argmax, a, axis, out, keepdims)


@eager_jit
def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the smallest element (the first one; a NaN counts as the smallest)."""
    return _argminmax("argmin", lax.argmin, a, axis, out, keepdims)


# ----------------------------------------------------------------------------------------
# Cumulative sums and products


def _cumulative_dtype(in_dtype, dtype, fun_name, promote_small_ints):
    if dtype is not None:
        return dtypes.check_user_dtype_supported(dtype, fun_name)
    if in_dtype == np.bool_:
        return dtypes.default_int_dtype()
    if (
        promote_small_ints
        and np.issubdtype(in_dtype, np.integer)
        and (in_dtype.itemsize < dtypes.default_int_dtype().itemsize)
    ):
        if np.issubdtype(in_dtype, np.unsignedinteger):
            return dtypes.default_uint_dtype()
        return dtypes.default_int_dtype()
    return in_dtype


def _cumulative(
    fun_name, lax_fn, a, axis, dtype, nan_value=None, promote_small_ints=False
):
    check_arraylike(fun_name, a)
    a, axis = _axis_or_ravel(asarray(a), axis)
    if nan_value is not None and dtypes.issubdtype(a.dtype, np.inexact):
        a = lax.select(lax.ne(a, a), lax.full_like(a, nan_value), a)
    if dtype is not None and np.dtype(dtype) == np.bool_:
        # A bool result accumulates the truth values in integers: "any so far" for
        # sums, "all so far" for products (never the values, which could cancel).
        if a.dtype != np.bool_:
            a = lax.ne(a, lax.full((), 0, a.dtype))
        out = lax_fn(lax.convert_element_type(a, dtypes.default_int_dtype()), axis)
        return lax.convert_element_type(out, np.bool_)
    out_dtype = _cumulative_dtype(
        np.dtype(a.dtype), dtype, fun_name, promote_small_ints
    )
    a = lax.convert_element_type(a, out_dtype)
    return lax_fn(a, axis)


@eager_jit
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along `axis` (of the flattened array when `axis=None`)."""
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype)


@eager_jit
def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along `axis` (of the flattened array when `axis=None`)."""
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype)


@eager_jit
def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaNs as zero."""
    return _cumulative("nancumsum", lax.cumsum, a, axis, dtype, nan_value=0)


@eager_jit
def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaNs as one."""
    return _cumulative("nancumprod", lax.cumprod, a, axis, dtype, nan_value=1)


def _cumulative_array_api(
    fun_name, lax_fn, identity, x, axis, dtype, include_initial, promote_small_ints=True
):
    check_arraylike(fun_name, x)
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError(
            f"The input must be non-scalar to take a cumulative "
            f"{fun_name.split('_')[1]}, however a scalar value or scalar array was given."
        )
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                f"The input array has rank {x.ndim}, however axis was not set to an "
                "explicit value. The axis argument is only optional for one-dimensional "
                "arrays."
            )
        axis = 0
    axis = canonicalize_axis(axis, x.ndim)
    out = _cumulative(
        fun_name, lax_fn, x, axis, dtype, promote_small_ints=promote_small_ints
    )
    if not include_initial:
        return out
    shape = list(out.shape)
    shape[axis] = 1
    initial = lax.full(shape, identity, out.dtype)
    return lax.concatenate([initial, out], axis)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array API cumulative sum; `include_initial` prepends the zero."""
    return _cumulative_array_api(
        "cumulative_sum", lax.cumsum, 0, x, axis, dtype, include_initial
    )


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Array API cumulative product; `include_initial` prepends the one."""
    return _cumulative_array_api(
        "cumulative_prod",
        lax.cumprod,
        1,
        x,
        axis,
        dtype,
        include_initial,
        promote_small_ints=False,
    )


# ----------------------------------------------------------------------------------------
# partition and argpartition


def _partition_setup(fun_name, a, kth, axis):
    check_arraylike(fun_name, a)
    a = asarray(a)
    if a.ndim == 0:
        raise TypeError(f"{fun_name} requires an array of at least one dimension.")
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise NotImplementedError(
            f"jnp.{fun_name} for complex dtype is not implemented."
        )
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    kth = canonicalize_axis(kth, n)
    a = lax.transpose(a, _to_last(axis, a.ndim))
    return a, kth, axis, n


def _to_last(axis, ndim):
    return (*[d for d in range(ndim) if d != axis], axis)


def _from_last(axis, ndim):
    return tuple(int(i) for i in np.argsort(_to_last(axis, ndim)))


def _smallest_first(a):
    """A key whose largest entries are `a`'s smallest, for `top_k`: `-a` (so, as in
    JAX, booleans are rejected and a wrapping INT_MIN counts as the largest), or
    `-(a + 1)` for unsigned integers, which keeps 0 the smallest."""
    if dtypes.issubdtype(a.dtype, np.unsignedinteger):
        return lax.neg(lax.add(a, lax.full((), 1, a.dtype)))
    return lax.neg(a)


def partition(a, kth, axis=-1):
    """A copy of `a` with the element that would sit at position `kth` of the sorted
    array there, the smaller ones before it (ascending) and the others after it
    (descending), along `axis`."""
    a, kth, axis, n = _partition_setup("partition", a, kth, axis)
    last = a.ndim - 1
    key, _ = lax.top_k(_smallest_first(a), kth + 1)
    if dtypes.issubdtype(a.dtype, np.unsignedinteger):
        bottom = lax.sub(lax.neg(key), lax.full((), 1, a.dtype))
    else:
        bottom = lax.neg(key)
    top, _ = lax.top_k(a, n - kth - 1)
    out = lax.concatenate([bottom, top], last)
    return lax.transpose(out, _from_last(axis, a.ndim))


def argpartition(a, kth, axis=-1):
    """Indices that partition `a` as `partition` does: those of the k+1 smallest
    elements in ascending order of value, then the others in increasing order."""
    a, kth, axis, n = _partition_setup("argpartition", a, kth, axis)
    last = a.ndim - 1
    # All positions by rank (top_k with k = n extends top_k with k = kth + 1, ties
    # included); the others follow the chosen ones in increasing order.
    _, order = lax.top_k(_smallest_first(a), n)
    bottom = lax.slice_in_dim(order, 0, kth + 1, axis=last)
    iota = lax.broadcasted_iota(order.dtype, a.shape, last)
    _, rank = lax.sort((order, iota), dimension=last, num_keys=1)
    in_bottom = lax.le(rank, lax.full(rank.shape, kth, rank.dtype))
    _, others = lax.sort((in_bottom, iota), dimension=last, num_keys=1)
    top = lax.slice_in_dim(others, 0, n - kth - 1, axis=last)
    out = lax.concatenate([bottom, top], last)
    return lax.transpose(out, _from_last(axis, a.ndim))


# ----------------------------------------------------------------------------------------
# nanargmax and nanargmin


def _nanargminmax(fun_name, lax_fn, fill, a, axis, out, keepdims):
    check_arraylike(fun_name, a)
    a = asarray(a)
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return _argminmax(fun_name, lax_fn, a, axis, out, keepdims)
    nan = lax.ne(a, a)
    clean = lax.select(nan, lax.full_like(a, fill), a)
    index = _argminmax(fun_name, lax_fn, clean, axis, out, keepdims)
    from jaxlite.numpy.reductions import all as all_

    all_nan = all_(nan, axis=axis, keepdims=bool(keepdims))
    return lax.select(all_nan, lax.full_like(index, -1), index)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """`argmax` ignoring NaNs; -1 where every element is NaN."""
    return _nanargminmax("nanargmax", lax.argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
    """`argmin` ignoring NaNs; -1 where every element is NaN."""
    return _nanargminmax("nanargmin", lax.argmin, np.inf, a, axis, out, keepdims)
