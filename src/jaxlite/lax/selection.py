"""Picking elements by rank or by index: `approx_max_k`, `approx_min_k` and
`index_take`.

The approximate top-k operations are exact on CPU, as in JAX (XLA's CPU fallback
sorts): the k largest (smallest) elements along one axis with their indices, ties
going to the lower index. With `aggregate_to_topk=False` they return as many
elements as the approximate TPU algorithm would keep, by the same size formula, so
shapes match JAX. Both are written with `top_k` and `sort`, whose rules give
derivatives and batching. `index_take` is one `gather` of whole slices.
"""

from __future__ import annotations

import math

import numpy as np

from jaxlite import dtypes
from jaxlite.lax import elementwise as ew
from jaxlite.lax.indexing import GatherDimensionNumbers, gather, slice_in_dim
from jaxlite.lax.sorting import sort, top_k
from jaxlite.lax.structural import (
    broadcasted_iota,
    concatenate,
    expand_dims,
    operand,
)
from jaxlite.util import canonicalize_axis

__all__ = ["approx_max_k", "approx_min_k", "index_take"]


def _output_size(size, rank, k, recall_target, aggregate_to_topk, size_override):
    """How many elements approximate top-k keeps (XLA's reduction output size)."""
    if aggregate_to_topk:
        return k
    tiling = 1024 if rank == 1 else 128
    if size <= tiling or recall_target >= 1:
        return size
    if size_override >= 0 and size > size_override:
        raise ValueError(
            f"reduction_input_size_override {size_override} is smaller than the "
            f"reduction dimension size {size}."
        )
    logical = size_override if size_override >= 0 else size
    windows = min(max(int((1.0 - k) / math.log(recall_target)), tiling), size)
    log2_reduction = (
        int(math.floor(math.log2(logical // windows))) if logical >= windows else 0
    )
    if log2_reduction <= 0:
        return size
    reduced = -(-size // (1 << min(log2_reduction, 31)))
    return max(tiling, -(-reduced // tiling) * tiling)


def _approx_k(name, x, k, axis, recall_target, size_override, aggregate, largest):
    x = operand(x)
    if not dtypes.issubdtype(x.dtype, np.floating):
        raise ValueError(
            f"{name}: operand must be a floating type, got {np.dtype(x.dtype).name} "
            "(use lax.top_k for integer operands)."
        )
    ndim = np.ndim(x)
    axis = canonicalize_axis(axis, ndim)
    size = np.shape(x)[axis]
    if not 0 <= k <= size:
        raise ValueError(
            f"{name}: k must be between 0 and the reduction dimension size {size}, "
            f"got k={k}."
        )
    if not 0 < recall_target <= 1:
        raise ValueError(
            f"{name}: recall_target must be in (0, 1], got {recall_target}."
        )
    k = _output_size(size, ndim, k, recall_target, aggregate, size_override)
    if largest:
        return top_k(x, k, axis=axis)
    indices = broadcasted_iota(np.int32, np.shape(x), axis)
    values, indices = sort((x, indices), dimension=axis, num_keys=1)
    return [
        slice_in_dim(values, 0, k, axis=axis),
        slice_in_dim(indices, 0, k, axis=axis),
    ]


def approx_max_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
):
    """The `k` largest elements along `reduction_dimension` and their indices
    (exact on CPU)."""
    return _approx_k(
        "approx_max_k",
        operand,
        k,
        reduction_dimension,
        recall_target,
        reduction_input_size_override,
        aggregate_to_topk,
        True,
    )


def approx_min_k(
    operand,
    k,
    reduction_dimension=-1,
    recall_target=0.95,
    reduction_input_size_override=-1,
    aggregate_to_topk=True,
):
    """The `k` smallest elements along `reduction_dimension` and their indices
    (exact on CPU)."""
    return _approx_k(
        "approx_min_k",
        operand,
        k,
        reduction_dimension,
        recall_target,
        reduction_input_size_override,
        aggregate_to_topk,
        False,
    )


def index_take(src, idxs, axes):
    """`src[idxs[0], idxs[1], ...]` along `axes` (one 1-D index array per axis, all of
    one length), keeping the other axes whole: shape (len, other axes...)."""
    src = operand(src)
    axes = tuple(int(a) for a in axes)
    idxs = [operand(i) for i in idxs]
    if len(idxs) != len(axes):
        raise ValueError(
            f"index_take needs one index array per axis, got {len(idxs)} index arrays "
            f"for axes {axes}."
        )
    # Indices wrap around (as `jnp.remainder` does), then stay in bounds.
    wrapped = []
    for i, a in zip(idxs, axes):
        size = np.asarray(np.shape(src)[a], np.dtype(i.dtype))[()]
        r = ew.rem(i, size)
        wrapped.append(ew.select(ew.lt(r, ew.full_of(r, 0)), ew.add(r, size), r))
    indices = concatenate([expand_dims(i, (1,)) for i in wrapped], 1)
    slice_sizes = list(np.shape(src))
    for a in axes:
        slice_sizes[a] = 1
    offset_dims = tuple(range(1, np.ndim(src) - len(axes) + 1))
    dnums = GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=axes, start_index_map=axes
    )
    return gather(src, indices, dnums, tuple(slice_sizes))
