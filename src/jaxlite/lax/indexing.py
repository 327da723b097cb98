"""Indexing primitives: static and dynamic slices and gather (the scatter family, which
transposes gather, lives in `lax/scatter.py`).

These are XLA's indexing operations with JAX's names, parameters and printed form, so that
`x[1:3]`, `x[i]` and `x[idx]` stage as the same jaxprs they do in JAX. Every
out-of-bounds rule is XLA's, because jnp's indexing semantics are defined by them:

- `dynamic_slice` and `dynamic_update_slice` clamp their start indices so the window
  stays inside the operand (`x[11]` of ten elements reads the last one);
- `gather` clamps too (CLIP, and PROMISE_IN_BOUNDS, which runs as CLIP here) or, in
  FILL_OR_DROP mode, returns `fill_value` for every window that is not fully inside.

Gather is written once, in general form (index vector in the last dimension of the
indices, offset/window dimensions, operand batching dimensions), on NumPy fancy
indexing; the common one, which picks whole sub-arrays, has a fast path.

Derivatives. Each primitive is linear in its operand (the indices are integers), so
its JVP applies it to the tangent and its transpose puts the cotangent back where the
elements came from: `slice` pads, `dynamic_slice` writes into zeros with
`dynamic_update_slice`, `gather` scatter-adds (repeated indices accumulate) in the
gather's mode, so clipped windows send their cotangent to the clipped position and
dropped ones send none. Batching moves the batch axis to the front and makes it one
more dimension of the window (batched operand) or of the indices (batched indices,
which turns dynamic slices into gathers and scatters), or an operand batching
dimension when both are batched.
"""

from __future__ import annotations

import builtins
import enum
import functools
import math
import operator
from typing import NamedTuple

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    find_cur_trace_is_eval,
    has_data,
    impl_rules,
    no_effects,
    physical_rules,
)
from jaxlite.interpreters import ad, batching, physical
from jaxlite.interpreters.batching import not_mapped
from jaxlite.lax import elementwise as ew
from jaxlite.lax.constructors import full
from jaxlite.lax.structural import (
    broadcast_in_dim,
    canonicalize_shape,
    concatenate,
    expand_dims,
    operand,
    pad,
    squeeze,
)
from jaxlite.util import canonicalize_axis

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "dynamic_update_slice_p",
    "gather",
    "gather_p",
    "index_in_dim",
    "slice",
    "slice_in_dim",
    "slice_p",
]


def _is_int_dtype(dtype):
    return np.issubdtype(dtype, np.integer)


# ----------------------------------------------------------------------------------------
# slice


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    idx = tuple(map(builtins.slice, start_indices, limit_indices, strides))
    return [np.asarray(x)[idx]]


def _slice_abstract(x, *, start_indices, limit_indices, strides):
    if len(start_indices) != x.ndim:
        raise TypeError(
            "slice start_indices must have length equal to the number of dimensions "
            f"of the operand, got indices {start_indices} for operand shape {x.shape}."
        )
    if len(limit_indices) != len(start_indices):
        raise TypeError(
            "slice limit_indices must have the same length as start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    if any(lim > d for lim, d in zip(limit_indices, x.shape)):
        raise TypeError(
            "slice limit_indices must be less than or equal to operand shape, got "
            f"limit_indices {limit_indices} for operand shape {x.shape}."
        )
    if any(s < 0 for s in start_indices):
        raise TypeError(
            "slice start_indices must be greater than or equal to zero, got "
            f"start_indices {start_indices}."
        )
    if any(lim < s for s, lim in zip(start_indices, limit_indices)):
        raise TypeError(
            "slice limit_indices must be greater than or equal to start_indices, got "
            f"start_indices {start_indices} and limit_indices {limit_indices}."
        )
    if strides is None:
        strides = (1,) * x.ndim
    elif len(strides) != x.ndim:
        raise TypeError(
            "slice strides must have length equal to the number of dimensions of the "
            f"operand, got strides {strides} for operand shape {x.shape}."
        )
    if any(s <= 0 for s in strides):
        raise TypeError(f"slice strides must be positive, got {strides}")
    shape = tuple(
        (lim - s + st - 1) // st
        for s, lim, st in zip(start_indices, limit_indices, strides)
    )
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


def _slice_lowering(ctx, x, *, start_indices, limit_indices, strides):
    strides = strides or (1,) * len(start_indices)
    parts = [
        f"{s}:{lim}" if st == 1 else f"{s}:{lim}:{st}"
        for s, lim, st in zip(start_indices, limit_indices, strides)
    ]
    return f"{x}[{', '.join(parts)},]" if parts else f"{x}[()]"


def _zero_scalar(dtype):
    return np.zeros((), np.dtype(dtype))[()]


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    # Pad the cotangent back: `start` zeros before, the rest after, `stride - 1` between.
    if type(ct) is ad.Zero:
        return [None]
    shape = x.aval.shape
    strides = strides or (1,) * len(shape)
    config = []
    for lo, n, m, st in zip(start_indices, shape, np.shape(ct), strides):
        last = lo + (m - 1) * st + 1 if m else lo
        config.append((lo, n - last, st - 1))
    return [pad(ct, _zero_scalar(ct.dtype), config)]


def _slice_batch(axis_size, vals, dims, *, start_indices, limit_indices, strides):
    (x,), (bdim,) = vals, dims
    starts, limits = list(start_indices), list(limit_indices)
    starts.insert(bdim, 0)
    limits.insert(bdim, np.shape(x)[bdim])
    if strides is not None:
        strides = list(strides)
        strides.insert(bdim, 1)
        strides = tuple(strides)
    out = slice_p.bind(
        x, limit_indices=tuple(limits), start_indices=tuple(starts), strides=strides
    )
    return [out], [bdim]


slice_p = Primitive("slice")
impl_rules[slice_p] = _slice_impl
abstract_eval_rules[slice_p] = _slice_abstract
lowering_rules[slice_p] = _slice_lowering
native_rules[slice_p] = "slice"
ad.deflinear(slice_p, _slice_transpose)
batching.batch_rules[slice_p] = _slice_batch
physical_rules[slice_p] = physical.by_elements(slice_p)


def slice(operand_, start_indices, limit_indices, strides=None):  # noqa: A001
    """`operand[start:limit:stride, ...]` with static bounds (no clamping)."""
    x = operand(operand_)
    params = dict(
        limit_indices=tuple(map(operator.index, limit_indices)),
        start_indices=tuple(map(operator.index, start_indices)),
        strides=None if strides is None else tuple(map(operator.index, strides)),
    )
    return slice_p.bind(x, **params)


def slice_in_dim(operand_, start_index, limit_index, stride=1, axis=0):
    """`lax.slice` along one axis; None and negative bounds count as in Python."""
    x = operand(operand_)
    shape = np.shape(x)
    axis = canonicalize_axis(axis, len(shape))
    size = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = size if limit_index is None else operator.index(limit_index)
    start = start + size if start < 0 else start
    limit = limit + size if limit < 0 else limit
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand_, index, axis=0, keepdims=True):
    """Element `index` (static, negative counts from the end) along `axis`."""
    x = operand(operand_)
    shape = np.shape(x)
    axis = canonicalize_axis(axis, len(shape))
    size = shape[axis]
    index = operator.index(index)
    wrapped = index + size if index < 0 else index
    if not 0 <= wrapped < size:
        raise IndexError(
            f"index {index} is out of bounds for axis {axis} with size {size}"
        )
    out = slice_in_dim(x, wrapped, wrapped + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# ----------------------------------------------------------------------------------------
# dynamic_slice and dynamic_update_slice: start indices are operands, clamped by XLA


def _clamped_starts(shape, sizes, starts):
    return [
        builtins.min(builtins.max(int(s), 0), d - n)
        for s, d, n in zip(starts, shape, sizes)
    ]


def _dynamic_slice_impl(x, *starts, slice_sizes):
    x = np.asarray(x)
    starts = _clamped_starts(x.shape, slice_sizes, starts)
    idx = tuple(builtins.slice(s, s + n) for s, n in zip(starts, slice_sizes))
    return [x[idx]]


def _check_start_indices(name, x, starts):
    if len(starts) != x.ndim:
        raise TypeError(
            f"{name}: the number of start indices must match the number of operand "
            f"dimensions, got {len(starts)} start indices for operand shape {x.shape}."
        )
    if any(s.shape for s in starts):
        got = tuple(s.str_short() for s in starts)
        raise TypeError(
            f"start_indices arguments to {name} must be scalars, got indices {got}"
        )
    kinds = {s.dtype for s in starts}
    if any(not _is_int_dtype(k) for k in kinds) or len(kinds) > 1:
        got = ", ".join(s.dtype.name for s in starts)
        raise TypeError(
            f"index arguments to {name} must be integers of the same type, got: {got}"
        )


def _dynamic_slice_abstract(x, *starts, slice_sizes):
    _check_start_indices("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim:
        raise TypeError(
            "dynamic_slice slice_sizes must have length equal to the number of "
            f"dimensions of the operand, got slice_sizes {slice_sizes} for operand "
            f"shape {x.shape}."
        )
    if any(n > d for n, d in zip(slice_sizes, x.shape)):
        raise TypeError(
            "dynamic_slice slice_sizes must be less than or equal to operand shape, "
            f"got slice_sizes {slice_sizes} for operand shape {x.shape}."
        )
    if any(n < 0 for n in slice_sizes):
        raise TypeError(
            "dynamic_slice slice_sizes must be greater than or equal to zero, got "
            f"slice_sizes {slice_sizes}."
        )
    return [ShapedArray(slice_sizes, x.dtype, x.weak_type)], no_effects


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    out = dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    t = tangents[0]
    if type(t) is ad.Zero:
        return [out], [ad.Zero.from_primal_value(out)]
    return [out], [dynamic_slice_p.bind(t, *starts, slice_sizes=slice_sizes)]


def _dynamic_slice_transpose(ct, x, *starts, slice_sizes):
    # The cotangent goes back into the (clamped) window; zeros elsewhere.
    assert not any(ad.is_undefined(s) for s in starts)
    cts = [None] * (1 + len(starts))
    if type(ct) is ad.Zero:
        return cts
    zeros = full(x.aval.shape, 0, x.aval.dtype)
    cts[0] = dynamic_update_slice_p.bind(zeros, ct, *starts)
    return cts


def _start_indices_dtype(starts):
    return np.dtype(starts[0].dtype) if starts else np.dtype(np.int32)


def _stacked_starts(starts, dims, axis_size):
    """The scalar start operands, some batched, as one index array (batch, ndim)."""
    columns = []
    for s, d in zip(starts, dims):
        kept = () if d is not_mapped else (0,)
        columns.append(broadcast_in_dim(s, (axis_size, 1), kept))
    return concatenate(columns, 1)


def _dynamic_slice_batch(axis_size, vals, dims, *, slice_sizes):
    x, *starts = vals
    x_dim, *start_dims = dims
    if all(d is not_mapped for d in start_dims):
        # Only the operand is batched: the window covers the whole batch axis.
        starts.insert(x_dim, _index_const(0, _start_indices_dtype(starts)))
        sizes = list(slice_sizes)
        sizes.insert(x_dim, axis_size)
        out = dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(sizes))
        return [out], [x_dim]
    # Batched starts: one window per batch element is a gather (clamped as here).
    dims_all = tuple(range(len(slice_sizes)))
    dnums = GatherDimensionNumbers(
        offset_dims=dims_all, collapsed_slice_dims=(), start_index_map=dims_all
    )
    index = _stacked_starts(starts, start_dims, axis_size)
    return _gather_batch(
        axis_size,
        [x, index],
        [x_dim, 0],
        dimension_numbers=dnums,
        fill_value=None,
        indices_are_sorted=True,
        mode=GatherScatterMode.CLIP,
        slice_sizes=slice_sizes,
        unique_indices=True,
    )


dynamic_slice_p = Primitive("dynamic_slice")
impl_rules[dynamic_slice_p] = _dynamic_slice_impl
abstract_eval_rules[dynamic_slice_p] = _dynamic_slice_abstract
ad.jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
ad.transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose
batching.batch_rules[dynamic_slice_p] = _dynamic_slice_batch
physical_rules[dynamic_slice_p] = physical.by_elements(dynamic_slice_p)
native_rules[dynamic_slice_p] = "dynamic_slice"


def _dynamic_update_slice_impl(x, update, *starts):
    x, update = np.asarray(x), np.asarray(update)
    starts = _clamped_starts(x.shape, update.shape, starts)
    out = np.array(x, copy=True)
    out[tuple(builtins.slice(s, s + n) for s, n in zip(starts, update.shape))] = update
    return [out]


def _dynamic_update_slice_abstract(x, update, *starts):
    if update.dtype != x.dtype:
        raise TypeError(
            "lax.dynamic_update_slice requires arguments to have the same dtypes, got "
            f"{x.dtype.name}, {update.dtype.name}."
        )
    if update.ndim != x.ndim:
        raise TypeError(
            "dynamic_update_slice update must have the same rank as operand, got "
            f"update shape {update.shape} for operand shape {x.shape}."
        )
    if any(u > d for u, d in zip(update.shape, x.shape)):
        raise TypeError(
            "dynamic_update_slice update shape must be smaller than operand shape, got "
            f"update shape {update.shape} for operand shape {x.shape}."
        )
    _check_start_indices("dynamic_update_slice", x, starts)
    weak = all(a.weak_type for a in (x, update, *starts))
    return [ShapedArray(x.shape, x.dtype, weak)], no_effects


def _dynamic_update_slice_jvp(primals, tangents):
    x, update, *starts = primals
    t_x, t_update = tangents[:2]
    out = dynamic_update_slice_p.bind(x, update, *starts)
    if type(t_x) is ad.Zero and type(t_update) is ad.Zero:
        return [out], [ad.Zero.from_primal_value(out)]
    t_x, t_update = ad.instantiate(t_x), ad.instantiate(t_update)
    return [out], [dynamic_update_slice_p.bind(t_x, t_update, *starts)]


def _dynamic_update_slice_transpose(ct, x, update, *starts):
    # The operand's cotangent is ct with the window zeroed; the update's is the window.
    assert not any(ad.is_undefined(s) for s in starts)
    cts = [None] * (2 + len(starts))
    if type(ct) is ad.Zero:
        return cts
    update_shape = update.aval.shape if ad.is_undefined(update) else np.shape(update)
    if ad.is_undefined(x):
        zeros = full(update_shape, 0, ct.dtype)
        cts[0] = dynamic_update_slice_p.bind(ct, zeros, *starts)
    if ad.is_undefined(update):
        cts[1] = dynamic_slice_p.bind(ct, *starts, slice_sizes=update_shape)
    return cts


def _dynamic_update_slice_batch(axis_size, vals, dims):
    x, update, *starts = vals
    x_dim, update_dim, *start_dims = dims
    if all(d is not_mapped for d in start_dims):
        x = batching.bdim_at_front(x, x_dim, axis_size)
        update = batching.bdim_at_front(update, update_dim, axis_size)
        zero = _index_const(0, _start_indices_dtype(starts))
        return [dynamic_update_slice_p.bind(x, update, zero, *starts)], [0]
    # Batched starts: one window per batch element is a scatter (clamped as here).
    from jaxlite.lax.scatter import scatter_batch_rule, scatter_p

    dims_all = tuple(range(len(starts)))
    dnums = ScatterDimensionNumbers(
        update_window_dims=dims_all,
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=dims_all,
    )
    index = _stacked_starts(starts, start_dims, axis_size)
    return scatter_batch_rule(scatter_p)(
        axis_size,
        [x, index, update],
        [x_dim, 0, update_dim],
        dimension_numbers=dnums,
        indices_are_sorted=True,
        mode=GatherScatterMode.CLIP,
        unique_indices=True,
        update_consts=(),
        update_jaxpr=None,
    )


dynamic_update_slice_p = Primitive("dynamic_update_slice")
impl_rules[dynamic_update_slice_p] = _dynamic_update_slice_impl
abstract_eval_rules[dynamic_update_slice_p] = _dynamic_update_slice_abstract
ad.jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.transpose_rules[dynamic_update_slice_p] = _dynamic_update_slice_transpose
batching.batch_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch
physical_rules[dynamic_update_slice_p] = physical.by_elements(dynamic_update_slice_p)
native_rules[dynamic_update_slice_p] = "dynamic_update_slice"


def _index_const(value, dtype):
    return Array(np.asarray(value, dtype)[()])


def normalize_index(index, size, allow_negative=True):
    """A start index with negative values counted from the end (`i + size` if `i < 0`).

    Python integers are normalised here; an array index gets `select_n(i < 0, i, i +
    size)`, staged when tracing (as JAX stages it) and computed right away when eager.
    """
    if not isinstance(index, (Array, Tracer)):
        i = operator.index(index)
        if i < 0 and not allow_negative:
            raise ValueError(
                f"Index {i} is out of bounds for dimension {size} if "
                "allow_negative_indices=False"
            )
        return i + size if i < 0 and allow_negative else i
    dtype = np.dtype(index.dtype)
    if not allow_negative or not np.issubdtype(dtype, np.signedinteger):
        return index
    if type(index) is Array and find_cur_trace_is_eval():
        v = index._value
        return Array(np.where(v < 0, v + np.asarray(size, dtype), v).astype(dtype)[()])
    is_negative = ew.lt_p.bind(index, _index_const(0, dtype))
    strong = ew.convert_element_type(index, dtype) if index.weak_type else index
    wrapped = ew.add_p.bind(strong, _index_const(size, dtype))
    return ew.select_n_p.bind(is_negative, index, wrapped)


def _start_operands(starts, shape, allow_negative):
    """Start indices as operands of one integer dtype (Python ints become int32)."""
    if isinstance(starts, (Array, Tracer, np.ndarray)):
        if np.ndim(starts) != 1:
            raise TypeError(
                f"start_indices must be a 1D sequence of scalars, got shape "
                f"{np.shape(starts)}"
            )
        starts = [starts[i] for i in range(np.shape(starts)[0])]
    starts = list(starts)
    if len(starts) != len(shape):
        raise TypeError(
            "Length of slice indices must match number of operand dimensions "
            f"({len(starts)} vs {tuple(shape)})"
        )
    if isinstance(allow_negative, bool):
        allow_negative = [allow_negative] * len(starts)
    out = [
        normalize_index(s if isinstance(s, (int, np.integer)) else operand(s), d, neg)
        for s, d, neg in zip(starts, shape, allow_negative)
    ]
    arrays = [s for s in out if isinstance(s, (Array, Tracer))]
    dtype = arrays[0].dtype if arrays else np.dtype(np.int32)
    if any(a.dtype != dtype for a in arrays):
        dtype = np.dtype(np.int32)
    return [
        _index_const(s, dtype) if not isinstance(s, (Array, Tracer)) else s for s in out
    ]


def dynamic_slice(operand_, start_indices, slice_sizes, *, allow_negative_indices=True):
    """`operand[s0:s0+n0, ...]` with traced starts, clamped so the window fits."""
    x = operand(operand_)
    sizes = canonicalize_shape(slice_sizes)
    starts = _start_operands(start_indices, np.shape(x), allow_negative_indices)
    return dynamic_slice_p.bind(x, *starts, slice_sizes=sizes)


def dynamic_slice_in_dim(
    operand_, start_index, slice_size, axis=0, *, allow_negative_indices=True
):
    x = operand(operand_)
    shape = list(np.shape(x))
    axis = canonicalize_axis(axis, len(shape))
    starts = [0] * len(shape)
    starts[axis] = start_index
    shape[axis] = operator.index(slice_size)
    negs = [True] * len(shape)
    negs[axis] = allow_negative_indices
    return dynamic_slice(x, starts, shape, allow_negative_indices=negs)


def dynamic_index_in_dim(
    operand_, index, axis=0, keepdims=True, *, allow_negative_indices=True
):
    out = dynamic_slice_in_dim(
        operand_, index, 1, axis, allow_negative_indices=allow_negative_indices
    )
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice(
    operand_, update, start_indices, *, allow_negative_indices=True
):
    """`operand` with `update` written at the (clamped) start indices."""
    x, update = operand(operand_), operand(update)
    starts = _start_operands(start_indices, np.shape(x), allow_negative_indices)
    return dynamic_update_slice_p.bind(x, update, *starts)


def dynamic_update_slice_in_dim(
    operand_, update, start_index, axis, *, allow_negative_indices=True
):
    x = operand(operand_)
    ndim = np.ndim(x)
    axis = canonicalize_axis(axis, ndim)
    starts = [0] * ndim
    starts[axis] = start_index
    negs = [True] * ndim
    negs[axis] = allow_negative_indices
    return dynamic_update_slice(x, update, starts, allow_negative_indices=negs)


def dynamic_update_index_in_dim(
    operand_, update, index, axis, *, allow_negative_indices=True
):
    x, update = operand(operand_), operand(update)
    axis = canonicalize_axis(axis, np.ndim(x))
    if np.ndim(update) == np.ndim(x) - 1:
        update = expand_dims(update, (axis,))
    elif np.ndim(update) != np.ndim(x):
        raise TypeError(
            "dynamic_update_index_in_dim: update must have the operand's rank or one "
            f"less, got update shape {np.shape(update)} for operand shape {np.shape(x)}."
        )
    return dynamic_update_slice_in_dim(
        x, update, index, axis, allow_negative_indices=allow_negative_indices
    )


# ----------------------------------------------------------------------------------------
# Dimension numbers and modes


class GatherScatterMode(enum.Enum):
    """What gather and scatter do with windows that are not fully in bounds."""

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3

    def __repr__(self):
        return f"GatherScatterMode.{self.name}"

    __str__ = __repr__

    @staticmethod
    def from_any(s):
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        raise ValueError(f'Unknown gather mode "{s}"')


class GatherDimensionNumbers(NamedTuple):
    """How a gather maps index vectors (the last axis of the indices) to windows."""

    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps index vectors and update windows into the operand."""

    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


def _tuple_fields(nt):
    return type(nt)(*(tuple(operator.index(d) for d in f) for f in nt))


def _check_dims(prim, name, dims, rank, sort=True):
    if sort and list(dims) != sorted(dims):
        raise TypeError(f"{name} in {prim} op must be sorted; got {dims}")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} in {prim} op must not repeat; got: {dims}.")
    for d in dims:
        if not 0 <= d < rank:
            raise TypeError(
                f"Invalid {name} set in {prim} op; valid range is [0, {rank}); got: {d}."
            )


def _window_starts(idx, batch_shape, ndim, index_map, operand_bdims, indices_bdims):
    """Full start vectors, shape (N, ndim), of N index vectors `idx` (N, K)."""
    starts = np.zeros((idx.shape[0], ndim), np.int64)
    if index_map:
        starts[:, list(index_map)] = idx
    if operand_bdims:
        grid = np.indices(batch_shape).reshape(len(batch_shape), -1)
        for od, idim in zip(operand_bdims, indices_bdims):
            starts[:, od] = grid[idim]
    return starts


def _window_coords(starts, window):
    """Per operand dimension, the coordinates (N, *window) of every window element."""
    n, ndim = starts.shape
    coords = []
    for d in range(ndim):
        shape = [1] * (ndim + 1)
        shape[d + 1] = window[d]
        base = starts[:, d].reshape((n,) + (1,) * ndim)
        coords.append(base + np.arange(window[d]).reshape(shape))
    return coords


def _in_bounds(starts, upper, dims=None):
    """Rows of `starts` whose window fits: 0 <= start <= operand_dim - window_dim."""
    if dims is not None:
        starts, upper = starts[:, list(dims)], upper[list(dims)]
    return np.all((starts >= 0) & (starts <= upper), axis=1)


# ----------------------------------------------------------------------------------------
# gather


def default_fill_value(dtype):
    """JAX's fill for out-of-bounds gathers: NaN, the lowest signed or highest unsigned
    integer, or True; keys get that of their data (uint32: the highest)."""
    if has_data(dtype):
        dtype = dtype._rules.physical_element_aval(dtype)[1]
    dtype = np.dtype(dtype)
    if dtypes.issubdtype(dtype, np.inexact):
        return np.nan
    if np.issubdtype(dtype, np.signedinteger):
        return int(np.iinfo(dtype).min)
    if np.issubdtype(dtype, np.unsignedinteger):
        return int(np.iinfo(dtype).max)
    if dtype == np.bool_:
        return True
    raise ValueError(f"Unsupported dtype for gather fill_value {dtype}")


def _gather_impl(
    x,
    indices,
    *,
    dimension_numbers,
    fill_value,
    indices_are_sorted,
    mode,
    slice_sizes,
    unique_indices,
):
    x, indices = np.asarray(x), np.asarray(indices)
    dn = dimension_numbers
    batch_shape = indices.shape[:-1]
    fill = mode is GatherScatterMode.FILL_OR_DROP
    take_axes = _take_axes(x.shape, dn, tuple(slice_sizes))
    if take_axes is not None:
        out = _take_along(x, indices, take_axes, fill, fill_value)
        perm = _positions_perm(out.ndim, len(batch_shape), dn.offset_dims)
        return [out if perm is None else out.transpose(perm)]
    n = int(np.prod(batch_shape, dtype=np.int64))
    idx = indices.reshape(n, indices.shape[-1]).astype(np.int64)
    upper = np.asarray(x.shape, np.int64) - np.asarray(slice_sizes, np.int64)
    ok = _in_bounds(idx, upper[list(dn.start_index_map)]) if fill else None
    if _is_take(x.shape, dn, slice_sizes):
        out = _take_rows(x, idx, dn.start_index_map, upper)
    else:
        starts = _window_starts(
            idx,
            batch_shape,
            x.ndim,
            dn.start_index_map,
            dn.operand_batching_dims,
            dn.start_indices_batching_dims,
        )
        starts = np.clip(starts, 0, np.maximum(upper, 0))
        coords = _window_coords(starts, slice_sizes)
        out = x[tuple(coords)] if coords else np.broadcast_to(x, (idx.shape[0],))
        dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
        kept = tuple(n for d, n in enumerate(slice_sizes) if d not in dropped)
        out = out.reshape((idx.shape[0],) + kept)
    if fill and not ok.all():
        value = np.asarray(fill_value).astype(x.dtype)
        out = np.where(ok.reshape((-1,) + (1,) * (out.ndim - 1)), out, value)
    out = out.reshape(batch_shape + out.shape[1:])
    return [_offsets_to_positions(out, len(batch_shape), dn.offset_dims)]


@functools.lru_cache(maxsize=1024)
def _take_axes(shape, dn, slice_sizes):
    """The operand dimensions a gather indexes (`start_index_map`) when it is NumPy
    integer-array indexing of them (those dimensions collapsed, the others taken
    whole, no batching dimensions), else None."""
    if not dn.start_index_map or not _is_take(shape, dn, slice_sizes):
        return None
    return dn.start_index_map


def _take_along(x, indices, axes, fill, fill_value):
    """`_gather_impl` for a `_take_axes` gather: `x` indexed at `axes` by the index
    vectors (clamped; out of bounds filled with `fill_value` if `fill`), batch dims
    first."""
    front = tuple(range(len(axes)))
    moved = x if axes == front else np.moveaxis(x, axes, front)
    # The common case, all in bounds: plain NumPy indexing.
    if len(axes) == 1:
        i = indices[..., 0]
        if not i.size or (i.min() >= 0 and i.max() < x.shape[axes[0]]):
            return moved[i]
    else:
        dims = moved.shape[: len(axes)]
        try:  # raises for an index out of bounds
            flat = np.ravel_multi_index(tuple(indices[..., k] for k in front), dims)
        except (ValueError, TypeError):
            pass
        else:
            rows = math.prod(dims)
            return moved.reshape((rows, *moved.shape[len(axes) :]))[flat]
    i = indices.astype(np.int64, copy=False)
    if len(axes) == 1:
        i = i[..., 0]
        upper = x.shape[axes[0]] - 1
        ok = (i >= 0) & (i <= upper)
    else:
        upper = np.array([x.shape[d] - 1 for d in axes], np.int64)
        ok = ((i >= 0) & (i <= upper)).all(axis=-1)
    all_ok = ok.all()
    if not all_ok:
        i = np.minimum(np.maximum(i, 0), upper)
    out = moved[i] if len(axes) == 1 else moved[tuple(i[..., k] for k in front)]
    if fill and not all_ok:
        value = np.asarray(fill_value).astype(x.dtype)
        out = np.where(ok.reshape(ok.shape + (1,) * (out.ndim - ok.ndim)), out, value)
    return out


@functools.lru_cache(maxsize=1024)
def _positions_perm(rank, n_batch, offset_dims):
    """The transpose `_offsets_to_positions` applies, or None for the identity."""
    batch_positions = [p for p in range(rank) if p not in offset_dims]
    perm = [0] * rank
    for i, p in enumerate(batch_positions):
        perm[p] = i
    for j, p in enumerate(offset_dims):
        perm[p] = n_batch + j
    return None if perm == list(range(rank)) else tuple(perm)


def _is_take(shape, dn, slice_sizes):
    """Whether the gather picks whole sub-arrays: indexed dimensions collapsed with size
    1, every other dimension taken whole, no batching dimensions."""
    if dn.operand_batching_dims or set(dn.collapsed_slice_dims) != set(
        dn.start_index_map
    ):
        return False
    return all(
        n == 1 if d in dn.start_index_map else n == shape[d]
        for d, n in enumerate(slice_sizes)
    )


def _take_rows(x, idx, index_map, upper):
    if not index_map:
        return np.broadcast_to(x, (idx.shape[0],) + x.shape)
    idx = np.clip(idx, 0, upper[list(index_map)])
    moved = np.moveaxis(x, list(index_map), list(range(len(index_map))))
    return moved[tuple(idx[:, k] for k in range(len(index_map)))]


def _offsets_to_positions(out, n_batch, offset_dims):
    """Reorder `out` (batch dims first, then offset dims) so offset dims sit at
    `offset_dims` and batch dims fill the other positions in order."""
    rank = out.ndim
    batch_positions = [p for p in range(rank) if p not in offset_dims]
    perm = [0] * rank
    for i, p in enumerate(batch_positions):
        perm[p] = i
    for j, p in enumerate(offset_dims):
        perm[p] = n_batch + j
    return out if perm == list(range(rank)) else np.transpose(out, perm)


def _gather_abstract(
    x,
    indices,
    *,
    dimension_numbers,
    fill_value,
    indices_are_sorted,
    mode,
    slice_sizes,
    unique_indices,
):
    dn = dimension_numbers
    if not _is_int_dtype(indices.dtype):
        raise ValueError(
            f"gather indices must have an integer type, got {indices.dtype.name}"
        )
    if indices.ndim < 1:
        raise TypeError(
            "gather indices must have at least one dimension (the index vector is "
            f"the last), got shape {indices.shape}"
        )
    batch_rank = indices.ndim - 1
    out_rank = len(dn.offset_dims) + batch_rank
    _check_dims("gather", "offset_dims", dn.offset_dims, out_rank)
    if len(dn.start_index_map) != indices.shape[-1]:
        raise TypeError(
            f"Gather op has {len(dn.start_index_map)} elements in start_index_map and "
            f"the bound of dimension index_vector_dim={batch_rank} of indices is "
            f"{indices.shape[-1]}. These two numbers must be equal."
        )
    _check_dims("gather", "start_index_map", dn.start_index_map, x.ndim, sort=False)
    _check_dims("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, x.ndim)
    _check_dims("gather", "operand_batching_dims", dn.operand_batching_dims, x.ndim)
    _check_dims(
        "gather",
        "start_indices_batching_dims",
        dn.start_indices_batching_dims,
        batch_rank,
        sort=False,
    )
    _check_batching(
        "Gather",
        x,
        indices,
        dn.operand_batching_dims,
        dn.start_indices_batching_dims,
        "start_indices",
    )
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims) or set(
        dn.start_index_map
    ) & set(dn.operand_batching_dims):
        raise TypeError(
            "gather: operand_batching_dims must be disjoint from collapsed_slice_dims "
            f"and start_index_map; got {dn}."
        )
    if len(slice_sizes) != x.ndim:
        raise TypeError(
            "Gather op must have one slice size for every input dimension; got: "
            f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={x.ndim}"
        )
    n_window = len(dn.offset_dims) + len(dn.collapsed_slice_dims)
    if n_window + len(dn.operand_batching_dims) != x.ndim:
        raise TypeError(
            "All components of the offset index in a gather op must either be a offset "
            f"dimension or explicitly collapsed/batching; got len(slice_sizes)="
            f"{len(slice_sizes)}, output_slice_sizes={dn.offset_dims}, "
            f"collapsed_slice_dims={dn.collapsed_slice_dims}, operand_batching_dims="
            f"{dn.operand_batching_dims}."
        )
    for i, (n, d) in enumerate(zip(slice_sizes, x.shape)):
        if indices.size and not 0 <= n <= d:
            raise TypeError(
                f"Slice size at index {i} in gather op is out of range, must be within "
                f"[0, {d} + 1), got {n}."
            )
    for pos, d in enumerate(dn.collapsed_slice_dims):
        if slice_sizes[d] != 1:
            raise TypeError(
                "Gather op can only collapse slice dims with bound 1, but bound is "
                f"{slice_sizes[d]} for index {d} at position {pos}."
            )
    for pos, d in enumerate(dn.operand_batching_dims):
        if slice_sizes[d] > 1:
            raise TypeError(
                "Gather op can only have operand batching dims with bound 0/1, but "
                f"bound is {slice_sizes[d]} for index {d} at position {pos}."
            )
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sizes = iter(n for d, n in enumerate(slice_sizes) if d not in dropped)
    batch_sizes = iter(indices.shape[:-1])
    shape = tuple(
        next(offset_sizes) if p in dn.offset_dims else next(batch_sizes)
        for p in range(out_rank)
    )
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


def _check_batching(op, x, indices, operand_bdims, indices_bdims, indices_name):
    if len(operand_bdims) != len(indices_bdims):
        raise TypeError(
            f"{op} op requires equal numbers of operand_batching_dims and "
            f"{indices_name}_batching_dims, got {operand_bdims} and {indices_bdims}."
        )
    x_batch = tuple(x.shape[d] for d in operand_bdims)
    i_batch = tuple(indices.shape[d] for d in indices_bdims)
    if x_batch != i_batch:
        raise TypeError(
            f"{op} op requires operand batching dimensions and indices batching "
            f"dimensions to have the same shape, got {x_batch} and {i_batch}."
        )


def _gather_jvp(primals, tangents, **params):
    x, indices = primals
    out = gather_p.bind(x, indices, **params)
    t = tangents[0]
    if type(t) is ad.Zero:
        return [out], [ad.Zero.from_primal_value(out)]
    if params["mode"] is GatherScatterMode.FILL_OR_DROP:
        params = dict(params, fill_value=0)
    return [out], [gather_p.bind(t, indices, **params)]


def _gather_transpose(
    ct,
    x,
    indices,
    *,
    dimension_numbers,
    fill_value,
    indices_are_sorted,
    mode,
    slice_sizes,
    unique_indices,
):
    # Every window's cotangent is added back where the window was read, in the same
    # mode: clipped windows at their clipped start, dropped (filled) ones nowhere.
    assert not ad.is_undefined(indices)
    if type(ct) is ad.Zero:
        return [None, None]
    from jaxlite.lax.scatter import scatter_add

    dn = dimension_numbers
    scatter_dnums = ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )
    zeros = full(x.aval.shape, 0, ct.dtype)
    out = scatter_add(
        zeros,
        indices,
        ct,
        scatter_dnums,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )
    return [out, None]


def _shifted(dims, by=1):
    return tuple(d + by for d in dims)


def _gather_batch(
    axis_size,
    vals,
    dims,
    *,
    dimension_numbers,
    fill_value,
    indices_are_sorted,
    mode,
    slice_sizes,
    unique_indices,
):
    x, indices = vals
    x_dim, indices_dim = dims
    dn = dimension_numbers
    if indices_dim is not_mapped:
        # The batch axis is one more window dimension, taken whole.
        x = batching.moveaxis(x, x_dim, 0)
        dnums = GatherDimensionNumbers(
            offset_dims=(0, *_shifted(dn.offset_dims)),
            collapsed_slice_dims=_shifted(dn.collapsed_slice_dims),
            start_index_map=_shifted(dn.start_index_map),
            operand_batching_dims=_shifted(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims,
        )
        sizes = (np.shape(x)[0], *slice_sizes)
    elif x_dim is not_mapped:
        # The batch axis is one more (leading) batch dimension of the indices.
        indices = batching.moveaxis(indices, indices_dim, 0)
        dnums = dn._replace(
            offset_dims=_shifted(dn.offset_dims),
            start_indices_batching_dims=_shifted(dn.start_indices_batching_dims),
        )
        sizes = slice_sizes
    else:
        # Element b of the batch reads operand b: an operand batching dimension.
        x = batching.moveaxis(x, x_dim, 0)
        indices = batching.moveaxis(indices, indices_dim, 0)
        dnums = GatherDimensionNumbers(
            offset_dims=_shifted(dn.offset_dims),
            collapsed_slice_dims=_shifted(dn.collapsed_slice_dims),
            start_index_map=_shifted(dn.start_index_map),
            operand_batching_dims=(0, *_shifted(dn.operand_batching_dims)),
            start_indices_batching_dims=(
                0,
                *_shifted(dn.start_indices_batching_dims),
            ),
        )
        sizes = (1, *slice_sizes)
    out = gather_p.bind(
        x,
        indices,
        dimension_numbers=dnums,
        fill_value=fill_value,
        indices_are_sorted=indices_are_sorted,
        mode=mode,
        slice_sizes=sizes,
        unique_indices=unique_indices,
    )
    return [out], [0]


def _take_lowered(x, indices, *, axes, fill, fill_value, perm):
    out = _take_along(x, indices, axes, fill, fill_value)
    return out if perm is None else out.transpose(perm)


def _gather_lowering(ctx, x, indices, **params):
    """A gather that is integer-array indexing (`_take_axes`, decided here once from
    the avals) calls `_take_along` directly; any other calls the implementation."""
    x_aval, i_aval = ctx.avals_in()
    (out_aval,) = [v.aval for v in ctx.eqn.outvars]
    dn, sizes = params["dimension_numbers"], tuple(params["slice_sizes"])
    axes = _take_axes(tuple(x_aval.shape), dn, sizes)
    if axes is None:
        fn = ctx.add_global(functools.partial(_gather_impl, **params), "gather")
        return f"{fn}({x}, {indices})[0]"
    perm = _positions_perm(len(out_aval.shape), len(i_aval.shape) - 1, dn.offset_dims)
    fill = params["mode"] is GatherScatterMode.FILL_OR_DROP
    take = functools.partial(
        _take_lowered, axes=axes, fill=fill, fill_value=params["fill_value"], perm=perm
    )
    return f"{ctx.add_global(take, 'take')}({x}, {indices})"


gather_p = Primitive("gather")
impl_rules[gather_p] = _gather_impl
lowering_rules[gather_p] = _gather_lowering
native_rules[gather_p] = "gather"
abstract_eval_rules[gather_p] = _gather_abstract
ad.jvp_rules[gather_p] = _gather_jvp
ad.transpose_rules[gather_p] = _gather_transpose
batching.batch_rules[gather_p] = _gather_batch
physical_rules[gather_p] = physical.by_elements(gather_p)


def gather(
    operand_,
    start_indices,
    dimension_numbers,
    slice_sizes,
    *,
    unique_indices=False,
    indices_are_sorted=False,
    mode=None,
    fill_value=None,
):
    """XLA's gather: for each index vector (last axis of `start_indices`), the window
    of `slice_sizes` at that start. `mode=None` promises in-bounds starts (clamped);
    'fill' returns `fill_value` (default: NaN, int min, uint max, True) for windows that
    do not fit."""
    x, indices = operand(operand_), operand(start_indices)
    mode = GatherScatterMode.from_any(
        GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode
    )
    if mode is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = default_fill_value(x.dtype)
        elif (
            isinstance(fill_value, (np.ndarray, np.generic))
            or type(fill_value) is Array
        ):
            fill_value = np.asarray(fill_value).item()
    else:
        fill_value = None
    params = dict(
        dimension_numbers=_tuple_fields(dimension_numbers),
        fill_value=fill_value,
        indices_are_sorted=bool(indices_are_sorted),
        mode=mode,
        slice_sizes=canonicalize_shape(slice_sizes),
        unique_indices=bool(unique_indices),
    )
    return gather_p.bind(x, indices, **params)
