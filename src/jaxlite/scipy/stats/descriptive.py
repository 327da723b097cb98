"""Descriptive statistics of jax.scipy.stats: `mode`, `rankdata` and `sem`.

All three work on sorted data. Sorting an axis puts equal values next to each other,
so ties are runs: a run starts where a value differs from its left neighbour and ends
where it differs from its right one. The mode is the first longest run (the smallest
modal value, as SciPy), counted with a scatter-add over run numbers; ranks of tied
values come from the index of the run's first and last element (running maximum and
minimum of the start and end positions). NaNs count as equal to each other, as in
`jnp.unique`. Everything is lax on possibly-traced values, so the functions jit, vmap
and (for `sem`) differentiate; only shapes and axes are static.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array
from jaxlite.numpy import creation, reductions, sorting, ufuncs
from jaxlite.numpy.indexing import take_along_axis
from jaxlite.numpy.shape import atleast_1d, moveaxis, ravel
from jaxlite.numpy.ufuncs import check_arraylike, promote_args_inexact
from jaxlite.util import canonicalize_axis

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_NAN_POLICIES = ("propagate", "omit", "raise")


class ModeResult(NamedTuple):
    mode: Array
    count: Array


def _check_nan_policy(nan_policy):
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(
            f"Illegal nan_policy value {nan_policy!r}; expected one of "
            "{'propagate', 'omit', 'raise'}"
        )


def _only_propagate(name, nan_policy):
    """mode and rankdata support nan_policy='propagate' only (as JAX)."""
    _check_nan_policy(nan_policy)
    if nan_policy == "omit":
        raise NotImplementedError(
            f"Logic for `nan_policy` of {nan_policy} is not implemented"
        )
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` "
            "contains nans. Please check if nans exist in `x` outside of the "
            f"`{name}` function."
        )


def _differs(a, b):
    """a != b elementwise, with NaN equal to NaN (as `jnp.unique` groups them)."""
    ne = ufuncs.not_equal(a, b)
    if dtypes.issubdtype(a.dtype, np.inexact):
        ne = ufuncs.logical_and(ne, ~(ufuncs.isnan(a) & ufuncs.isnan(b)))
    return ne


def _run_bounds(s):
    """For data `s` sorted along its last axis (length n >= 1): booleans marking where
    each run of equal values starts and ends."""
    ones = creation.ones(s.shape[:-1] + (1,), bool)
    step = _differs(s[..., 1:], s[..., :-1])
    starts = lax.concatenate([ones, step], s.ndim - 1)
    ends = lax.concatenate([step, ones], s.ndim - 1)
    return starts, ends


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along `axis` (the smallest one on ties) and its count."""
    check_arraylike("mode", a)
    x = atleast_1d(a)
    _only_propagate("mode", nan_policy)
    if axis is not None:
        axis = canonicalize_axis(axis, x.ndim)
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        x, axis = ravel(x), 0
    else:
        out_shape = tuple(
            1 if i == axis else d
            for i, d in enumerate(x.shape)
            if keepdims or i != axis
        )
    n = x.shape[axis]
    if n == 0:  # JAX's answer for an empty axis: NaN modes with a count of 0.
        fdtype = dtypes.default_float_dtype()
        return ModeResult(
            creation.full(out_shape, np.nan, fdtype), creation.zeros(out_shape, fdtype)
        )
    # One row per result, the data of the row along the last axis, sorted.
    rows = moveaxis(x, axis, -1).reshape((math.prod(out_shape), n))
    s = lax.sort(rows, dimension=1)
    starts, _ = _run_bounds(s)
    run = lax.cumsum(starts.astype(np.int32), axis=1) - 1  # run number of each element
    row = lax.broadcasted_iota(np.int32, run.shape, 0)
    counts = creation.zeros(run.shape, dtypes.default_int_dtype())
    counts = counts.at[row, run].add(1)  # counts[r, k]: length of run k of row r
    best = sorting.argmax(counts, axis=1)
    first = sorting.argmax(ufuncs.equal(run, best[:, None]), axis=1)
    values = take_along_axis(s, first[:, None].astype(np.int32), axis=1)[:, 0]
    count = reductions.max(counts, axis=1)
    return ModeResult(values.reshape(out_shape), count.reshape(out_shape))


def _ranks_last_axis(x, method, out_dtype):
    """Ranks (1-based) of the data along the last axis of x, ties by `method`."""
    n = x.shape[-1]
    last = x.ndim - 1
    iota = lax.broadcasted_iota(np.int32, x.shape, last)
    s, order = lax.sort((x, iota), dimension=last, num_keys=1)
    # position[i] = where element i landed in the sorted order (inverse permutation)
    _, position = lax.sort((order, iota), dimension=last, num_keys=1)

    def back(sorted_values):  # a quantity of the sorted order, read in the input order
        return take_along_axis(sorted_values, position, axis=last)

    if method == "ordinal":
        return (position + 1).astype(out_dtype)
    starts, ends = _run_bounds(s)
    if method == "dense":
        return back(lax.cumsum(starts.astype(np.int32), axis=last)).astype(out_dtype)
    first = lax.cummax(ufuncs.where(starts, iota, 0), axis=last)
    final = lax.cummin(ufuncs.where(ends, iota, n - 1), axis=last, reverse=True)
    low, high = (back(v).astype(out_dtype) + 1 for v in (first, final))
    if method == "min":
        return low
    if method == "max":
        return high
    return (low + high) * lax.full((), 0.5, out_dtype)


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of the data (from 1), ties by `method` ('average', 'min', 'max', 'dense'
    or 'ordinal'); the whole array (axis=None) or each slice along `axis` is ranked
    on its own, and a slice with a NaN ranks as all NaN."""
    check_arraylike("rankdata", a)
    _only_propagate("rankdata", nan_policy)
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"unknown method '{method}'")
    x = creation.asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    else:
        axis = canonicalize_axis(axis, x.ndim)
    x = moveaxis(x, axis, -1)
    out_dtype = dtypes.default_float_dtype()
    if x.shape[-1] == 0:
        return moveaxis(creation.zeros(x.shape, out_dtype), -1, axis)
    ranks = _ranks_last_axis(x, method, out_dtype)
    if dtypes.issubdtype(x.dtype, np.inexact):
        has_nan = reductions.any(ufuncs.isnan(x), axis=-1, keepdims=True)
        ranks = ufuncs.where(has_nan, lax.full((), np.nan, out_dtype), ranks)
    return moveaxis(ranks, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """Standard error of the mean: the standard deviation (with `ddof`) over the
    square root of the number of values; nan_policy='omit' leaves NaNs out."""
    (b,) = promote_args_inexact("sem", a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        spread = reductions.std(b, axis, ddof=ddof, keepdims=keepdims)
        return spread / ufuncs.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = reductions.sum(~ufuncs.isnan(b), axis, keepdims=keepdims)
        spread = reductions.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
        return spread / ufuncs.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported")
