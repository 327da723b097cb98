"""Set operations of jax.numpy: unique (and the Array API's unique_*), union1d,
intersect1d, setdiff1d, setxor1d and isin.

A result's length is the number of distinct values, which depends on the data. So,
as in JAX, every function computes on fixed-size arrays and only the final step picks
the wanted elements: with `size=` that step is a fixed-size `nonzero` (padded with
`fill_value`, by default the first element of the result), so it works under `jit` and
`vmap`; without `size` the count must be concrete (eager mode), else a
ConcretizationTypeError asks for `size`.

Distinct values come from one stable sort: an element starts a new group when it
differs from its predecessor (NaNs are one group when `equal_nan`, and -0.0 equals
0.0), the stable order makes the group's first element its first occurrence, and the
running count of group starts, sorted back by the permutation, is the inverse index.
Membership tests compare every pair (`isin`), which needs no sort and no gather.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Tracer, concrete_or_error
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import check_arraylike, ensure_arraylike, promote_dtypes
from jaxlite.util import canonicalize_axis

__all__ = [
    "unique",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "union1d",
    "intersect1d",
    "setdiff1d",
    "setxor1d",
    "isin",
]


def _int_dtype():
    return dtypes.default_int_dtype()


def _ravel(x):
    return lax.reshape(x, (int(np.prod(np.shape(x), dtype=np.int64)),))


def _isnan(x):
    return lax.ne(x, x)


def _index(x, i):
    """`x[i]` along axis 0 for an integer vector `i` already in bounds."""
    from jaxlite.numpy.indexing import take

    return take(x, i, axis=0, mode="clip")


def _size_context(fun_name):
    return (
        f"The error arose for the first argument of jnp.{fun_name}(). To make "
        f"jnp.{fun_name}() compatible with JIT and other transforms, you can specify "
        "a concrete value for the size argument, which will determine the output size."
    )


def _static_size(fun_name, size, mask):
    """The output length: `size`, or the (concrete) number of True entries of mask."""
    if size is not None:
        return concrete_or_error(operator.index, size, _size_context(fun_name))
    if isinstance(mask, Tracer) and mask.to_concrete_value() is None:
        count = lax.reduce_sum(lax.convert_element_type(mask, np.int32), (0,))
        concrete_or_error(int, count, _size_context(fun_name))
    return int(np.count_nonzero(np.asarray(mask)))


def _positions(mask, size):
    """Indices of the True entries of a 1-D mask, padded with 0 to length `size`."""
    from jaxlite.numpy.indexing import nonzero

    if size == 0:
        return lax.full((0,), 0, _int_dtype())
    return lax.convert_element_type(nonzero(mask, size=size)[0], _int_dtype())


def _count(mask):
    return lax.reduce_sum(lax.convert_element_type(mask, _int_dtype()), (0,))


def _valid(count, size):
    """`arange(size) < count`: which result slots hold a real element."""
    return lax.lt(
        lax.iota(_int_dtype(), size), lax.broadcast_in_dim(count, (size,), ())
    )


def _fill(values, valid, fill_value, default="first"):
    """`values` with the slots after the real elements set to `fill_value`. Its
    default is JAX's: the first element ("first"), the smallest one with NaN winning
    ("min"), or 0 ("zero"); 0 where there is no element."""
    size = values.shape[0]
    if size == 0:
        return values
    shape = values.shape
    if fill_value is None:
        first = lax.index_in_dim(values, 0, 0, keepdims=False)
        fill = lax.full_like(first, 0)
        if default != "zero":
            any_valid = lax.index_in_dim(valid, 0, 0, keepdims=False)
            fill = lax.select(_broadcast(any_valid, first), first, fill)
        if default == "min" and dtypes.issubdtype(values.dtype, np.inexact):
            has_nan = lax.reduce_or(lax.bitwise_and(valid, _isnan(values)), (0,))
            fill = lax.select(has_nan, lax.full_like(fill, np.nan), fill)
    else:
        from jaxlite.numpy.shape import broadcast_to

        check_arraylike("fill_value", fill_value)
        fill = lax.convert_element_type(asarray(fill_value), values.dtype)
        fill = broadcast_to(fill, shape[1:])
    dims = tuple(range(1, len(shape)))
    fill = lax.broadcast_in_dim(fill, shape, dims)
    return lax.select(lax.broadcast_in_dim(valid, shape, (0,)), values, fill)


def _broadcast(pred, like):
    return lax.broadcast_in_dim(pred, like.shape, ())


def _compress(fun_name, values, mask, size, fill_value, default="first"):
    """The elements of `values` (sorted along axis 0) where `mask` holds, padded or cut
    to `size`."""
    size = _static_size(fun_name, size, mask)
    ind = _positions(mask, size)
    if values.shape[0] == 0:
        out = lax.full((size, *values.shape[1:]), 0, values.dtype)
    else:
        out = _index(values, ind)
    return _fill(out, _valid(_count(mask), size), fill_value, default)


# --------------------------------------------------------------------------------------
# Sorting into groups


def _sort_with_index(keys, n):
    iota = lax.iota(_int_dtype(), n)
    if not keys:
        return [], iota
    outs = lax.sort((*keys, iota), dimension=0, num_keys=len(keys))
    return list(outs[:-1]), outs[-1]


def _group_starts(sorted_keys, n, equal_nan):
    """True where a sorted row differs from the previous one (always at 0)."""
    if n == 0:
        return lax.full((0,), False, np.bool_)
    differs = lax.full((n - 1,), False, np.bool_)
    for k in sorted_keys:
        hi, lo = lax.slice_in_dim(k, 1, n), lax.slice_in_dim(k, 0, n - 1)
        ne = lax.ne(hi, lo)
        if equal_nan and dtypes.issubdtype(k.dtype, np.inexact):
            ne = lax.bitwise_and(
                ne, lax.bitwise_not(lax.bitwise_and(_isnan(hi), _isnan(lo)))
            )
        differs = lax.bitwise_or(differs, ne)
    return lax.concatenate([lax.full((1,), True, np.bool_), differs], 0)


def _rows(arr, axis):
    """`arr` as a list of 1-D key columns of its slices along `axis`, and the shape of
    one slice."""
    if axis is None:
        return [_ravel(arr)], ()
    moved = lax.transpose(arr, (axis, *[d for d in range(arr.ndim) if d != axis]))
    n, rest = moved.shape[0], moved.shape[1:]
    m = int(np.prod(rest, dtype=np.int64))
    flat = lax.reshape(moved, (n, m))
    return [lax.index_in_dim(flat, j, 1, keepdims=False) for j in range(m)], rest


def unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    size=None,
    fill_value=None,
    sorted=True,  # noqa: A002 - NumPy's keyword; results are always sorted
):
    """The sorted distinct values of `ar` (or distinct slices along `axis`), and
    optionally the index of each one's first occurrence, the inverse index and counts.

    With a static `size` the results are cut or padded to that length (values with
    `fill_value`, by default the smallest value; indices with the first one's index;
    counts with 0), which works under jit.
    """
    arr = asarray(ensure_arraylike("unique", ar))
    if size is None and isinstance(arr, Tracer):
        # JAX asks for the input itself to be concrete (its error names ar's type).
        concrete_or_error(np.asarray, arr, _size_context("unique"))
    if axis is not None:
        axis = canonicalize_axis(axis, arr.ndim)
    in_shape = arr.shape
    keys, rest = _rows(arr, axis)
    n = arr.size if axis is None else in_shape[axis]
    sorted_keys, perm = _sort_with_index(keys, n)
    starts = _group_starts(sorted_keys, n, equal_nan)
    size = _static_size("unique", size, starts)
    if n == 0 and size and fill_value is None:
        raise ValueError(
            "jnp.unique: for zero-sized input with nonzero size argument, fill_value "
            "must be specified"
        )
    ind = _positions(starts, size)
    count = _count(starts)
    valid = _valid(count, size)
    if n == 0:
        values = lax.full((size, *rest), 0, arr.dtype)
    elif axis is None:
        values = _index(sorted_keys[0], ind)
    else:
        table = _stack_columns(sorted_keys, n, arr.dtype)
        values = lax.reshape(_index(table, ind), (size, *rest))
    values = _fill(values, valid, fill_value)
    if axis is not None:
        values = lax.transpose(values, _move_first_to(axis, values.ndim))
    outs = [values]
    if return_index:
        # As in JAX, an empty input gives empty indices and counts whatever `size`.
        outs.append(_index(perm, ind) if n else perm)
    if return_inverse:
        group = lax.sub(_cumsum(starts), lax.full((n,), 1, _int_dtype()))
        _, inverse = lax.sort((perm, group), dimension=0, num_keys=1)
        if axis is None:
            inverse = lax.reshape(inverse, in_shape)
        outs.append(inverse)
    if return_counts:
        # The next group's start may lie past `size`: find size + 1 starts.
        starts_ext = _positions(starts, size + 1)
        outs.append(_counts(starts_ext, valid, count, n, size) if n else perm)
    return outs[0] if len(outs) == 1 else tuple(outs)


def _stack_columns(columns, n, dtype):
    if not columns:
        return lax.full((n, 0), 0, dtype)
    return lax.concatenate([lax.broadcast_in_dim(c, (n, 1), (0,)) for c in columns], 1)


def _move_first_to(axis, ndim):
    perm = list(range(1, ndim))
    perm.insert(axis, 0)
    return tuple(perm)


def _cumsum(mask):
    return lax.cumsum(lax.convert_element_type(mask, _int_dtype()), axis=0)


def _counts(starts_ext, valid, count, n, size):
    """Group sizes: the distance from each group's start to the next one's (or n);
    `starts_ext` holds the first size + 1 group starts."""
    int_dtype = _int_dtype()
    if size == 0:
        return lax.full((0,), 0, int_dtype)
    ind = lax.slice_in_dim(starts_ext, 0, size)
    shifted = lax.slice_in_dim(starts_ext, 1, size + 1)
    has_next = lax.lt(
        lax.add(lax.iota(int_dtype, size), lax.full((size,), 1, int_dtype)),
        lax.broadcast_in_dim(count, (size,), ()),
    )
    nxt = lax.select(has_next, shifted, lax.full((size,), n, int_dtype))
    zeros = lax.full((size,), 0, int_dtype)
    return lax.select(valid, lax.sub(nxt, ind), zeros)


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def unique_all(x, /, *, size=None, fill_value=None):
    """Array API: distinct values (NaNs all distinct), first indices, inverse indices
    and counts, as a named tuple."""
    check_arraylike("unique_all", x)
    return _UniqueAllResult(
        *unique(
            x,
            return_index=True,
            return_inverse=True,
            return_counts=True,
            equal_nan=False,
            size=size,
            fill_value=fill_value,
        )
    )


def unique_counts(x, /, *, size=None, fill_value=None):
    """Array API: distinct values (NaNs all distinct) and their counts."""
    check_arraylike("unique_counts", x)
    return _UniqueCountsResult(
        *unique(
            x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value
        )
    )


def unique_inverse(x, /, *, size=None, fill_value=None):
    """Array API: distinct values (NaNs all distinct) and the inverse indices, shaped
    like `x`."""
    check_arraylike("unique_inverse", x)
    return _UniqueInverseResult(
        *unique(
            x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value
        )
    )


def unique_values(x, /, *, size=None, fill_value=None):
    """Array API: the distinct values (NaNs all distinct)."""
    check_arraylike("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# --------------------------------------------------------------------------------------
# Membership and the two-set operations


def _pairs_equal(x, y):
    """`x[i] == y[j]` for 1-D x and y, shape (len(x), len(y))."""
    shape = (x.shape[0], y.shape[0])
    return lax.eq(
        lax.broadcast_in_dim(x, shape, (0,)), lax.broadcast_in_dim(y, shape, (1,))
    )


def _in(x, y):
    """Whether each element of the 1-D `x` equals some element of the 1-D `y`."""
    if y.shape[0] == 0 or x.shape[0] == 0:
        return lax.full(x.shape, False, np.bool_)
    return lax.reduce_or(_pairs_equal(x, y), (1,))


_ISIN_METHODS = ("auto", "compare_all", "binary_search", "sort")


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Whether each element of `element` is in `test_elements` (shaped like
    `element`); `invert=True` negates it. NaN is in nothing."""
    check_arraylike("isin", element, test_elements)
    if method not in _ISIN_METHODS:
        raise ValueError(
            f"method={method!r} is not supported; use one of {list(_ISIN_METHODS)}"
        )
    element, test_elements = promote_dtypes(asarray(element), asarray(test_elements))
    shape = element.shape
    out = lax.reshape(_in(_ravel(element), _ravel(test_elements)), shape)
    out = lax.bitwise_not(out) if invert else out
    return lax.convert_element_type(out, np.bool_, False)


def _sorted_distinct(ar):
    """A 1-D array's sorted values, the permutation, and the group-start mask."""
    flat = _ravel(ar)
    n = flat.shape[0]
    (values,), perm = _sort_with_index([flat], n)
    return values, perm, _group_starts([values], n, True)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """The sorted distinct values found in either array."""
    check_arraylike("union1d", ar1, ar2)
    ar1, ar2 = promote_dtypes(asarray(ar1), asarray(ar2))
    both = lax.concatenate([_ravel(ar1), _ravel(ar2)], 0)
    values, _, starts = _sorted_distinct(both)
    return _compress("union1d", values, starts, size, fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The distinct values of `ar1` not in `ar2`, sorted (in `ar1`'s order when
    `assume_unique`); padding defaults to 0."""
    check_arraylike("setdiff1d", ar1, ar2)
    ar1, ar2 = asarray(ar1), asarray(ar2)
    a, b = promote_dtypes(ar1, ar2)
    if assume_unique:
        values, keep = _ravel(a), lax.bitwise_not(_in(_ravel(a), _ravel(b)))
    else:
        values, _, starts = _sorted_distinct(a)
        keep = lax.bitwise_and(starts, lax.bitwise_not(_in(values, _ravel(b))))
    values = lax.convert_element_type(values, ar1.dtype, ar1.weak_type)
    return _compress("setdiff1d", values, keep, size, fill_value, "zero")


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """The sorted distinct values found in exactly one of the arrays."""
    check_arraylike("setxor1d", ar1, ar2)
    a, b = promote_dtypes(asarray(ar1), asarray(ar2))
    a, b = _ravel(a), _ravel(b)
    if assume_unique:
        v1, v2 = a, b
        s1 = lax.full(a.shape, True, np.bool_)
        s2 = lax.full(b.shape, True, np.bool_)
    else:
        v1, _, s1 = _sorted_distinct(a)
        v2, _, s2 = _sorted_distinct(b)
    keep = lax.concatenate(
        [
            lax.bitwise_and(s1, lax.bitwise_not(_in(v1, b))),
            lax.bitwise_and(s2, lax.bitwise_not(_in(v2, a))),
        ],
        0,
    )
    values = lax.concatenate([v1, v2], 0)
    # Kept values first, in sorted order.
    dropped, values = lax.sort((lax.bitwise_not(keep), values), dimension=0, num_keys=2)
    keep = lax.bitwise_not(dropped)
    return _compress("setxor1d", values, keep, size, fill_value, "min")


def intersect1d(
    ar1, ar2, assume_unique=False, return_indices=False, *, size=None, fill_value=None
):
    """The sorted distinct values found in both arrays; with `return_indices`, also
    the index of each one's first occurrence in either array (padded with the arrays'
    lengths)."""
    check_arraylike("intersect1d", ar1, ar2)
    a, b = promote_dtypes(asarray(ar1), asarray(ar2))
    a, b = _ravel(a), _ravel(b)
    values, perm, starts = _sorted_distinct(a)
    if b.shape[0] and a.shape[0]:
        equal = _pairs_equal(values, b)
        keep = lax.bitwise_and(starts, lax.reduce_or(equal, (1,)))
    else:
        keep = lax.full(values.shape, False, np.bool_)
    out = _compress("intersect1d", values, keep, size, fill_value)
    if not return_indices:
        return out
    size = out.shape[0]
    ind = _positions(keep, size)
    valid = _valid(_count(keep), size)
    int_dtype = _int_dtype()
    if a.shape[0] and b.shape[0]:
        index1 = _index(perm, ind)
        first_in_b = lax.argmax(lax.convert_element_type(equal, np.int32), 1, int_dtype)
        index2 = _index(first_in_b, ind)
    else:
        index1 = index2 = lax.full((size,), 0, int_dtype)
    index1 = lax.select(valid, index1, lax.full((size,), a.shape[0], int_dtype))
    index2 = lax.select(valid, index2, lax.full((size,), b.shape[0], int_dtype))
    return out, index1, index2
