"""NumPy indexing on immutable arrays: `x[idx]`, `x.at[idx].set(y)` and friends, and the
index functions take, take_along_axis, nonzero, argwhere, flatnonzero, compress, choose.

An index is parsed once into one entry per indexed dimension, with NumPy's rules
(Ellipsis, None, negative integers, slices with steps, integer arrays that broadcast
together, concrete boolean masks turned into integer arrays on the host). The cheapest
lax operation that can express it is then chosen, as JAX chooses, so jaxprs read alike:
static integers and slices become `slice` (+ `rev`, `squeeze`, `broadcast_in_dim`),
scalar traced integers `dynamic_slice`, everything else one `gather`. An indexed update
builds the same gather description and turns it into the matching `scatter`.

Out-of-bounds accesses follow XLA, not NumPy, because an index may be traced: reads
clamp (`jnp.arange(10)[11]` is 9), negative indices wrap once, updates out of bounds are
dropped. `mode=` ('clip', 'fill'/'drop', 'promise_in_bounds') picks another rule.
"""

from __future__ import annotations

import builtins
import operator
import warnings

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.config import config
from jaxlite.core import (
    Array,
    Tracer,
    _extended_value_types,
    concrete_or_error,
    find_cur_trace_is_eval,
    from_physical,
    has_data,
    physical_value,
)
from jaxlite.eager_jit import eager_jit
from jaxlite.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from jaxlite.lax import elementwise as ew
from jaxlite.lax.indexing import GatherScatterMode, normalize_index
from jaxlite.numpy import ufuncs
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import check_arraylike, ensure_arraylike, promote_dtypes
from jaxlite.util import canonicalize_axis

__all__ = [
    "argwhere",
    "choose",
    "compress",
    "flatnonzero",
    "nonzero",
    "take",
    "take_along_axis",
]

_NONE, _INT, _SLICE, _ARRAY = "none", "int", "slice", "array"


class _Entry:
    """One parsed index element: its kind, its value and its position in the index
    tuple (advanced indices in consecutive positions keep their place in the result)."""

    __slots__ = ("kind", "value", "pos")

    def __init__(self, kind, value, pos):
        self.kind = kind
        self.value = value
        self.pos = pos


# ----------------------------------------------------------------------------------------
# Parsing


def _list_index_error():
    return TypeError(
        "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
        "`arr[array(seq)]` instead of `arr[seq]`."
    )


def _static_slice_part(v, s, pos):
    if v is None:
        return None
    if isinstance(v, Tracer):
        val = v.to_concrete_value()
        if val is None:
            raise IndexError(
                f"Slice entries must be static integers. Got {s} at position {pos}"
            )
        v = val
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(
            f"slice indices must be integers or None, got {s} at position {pos}"
        ) from None


def _as_index_array(i):
    """A list or tuple inside an index tuple, as an array (NumPy's rule)."""
    if any(isinstance(v, Tracer) for v in _leaves(i)):
        return asarray(i)
    value = np.asarray(i)
    if value.size == 0:
        value = value.astype(np.int32)
    return value


def _leaves(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    else:
        yield obj


def _classify(i, pos):
    """(kind, value) of one raw index element; booleans are ('bool', value)."""
    if i is None:
        return _NONE, None
    if i is Ellipsis:
        return "ellipsis", None
    if isinstance(i, builtins.slice):
        parts = (_static_slice_part(v, i, pos) for v in (i.start, i.stop, i.step))
        s = builtins.slice(*parts)
        if s.step == 0:
            raise ValueError("slice step cannot be zero")
        return _SLICE, s
    if isinstance(i, (bool, np.bool_)):
        return "bool", bool(i)
    if isinstance(i, (int, np.integer)):
        return _INT, int(i)
    if isinstance(i, str):
        raise TypeError(f"JAX does not support string indexing; got idx={i!r}")
    if isinstance(i, (list, tuple)):
        i = _as_index_array(i)
    if isinstance(i, (Array, Tracer, np.ndarray, np.generic)) or type(i) is float:
        dtype = np.dtype(i.dtype) if hasattr(i, "dtype") else np.dtype(type(i))
        if dtype == np.bool_:
            return "bool", i
        if not np.issubdtype(dtype, np.integer):
            raise TypeError(
                "Indexer must have integer or boolean type, got indexer with type "
                f"{dtype.name}"
            )
        if isinstance(i, (np.ndarray, np.generic)) and np.ndim(i) == 0:
            return _INT, int(i)
        return _ARRAY, i
    try:
        return _INT, operator.index(i)
    except TypeError:
        raise TypeError(
            "Indexer must be an integer, slice, None, Ellipsis, an integer or boolean "
            f"array, or a tuple of these; got {i!r} of type {type(i).__name__}"
        ) from None


def _concrete_mask(mask):
    if isinstance(mask, Tracer):
        val = mask.to_concrete_value()
        if val is None:
            raise NonConcreteBooleanIndexError(mask)
        return np.asarray(val)
    return np.asarray(mask)


def _parse_index(shape, idx):
    """Entries (one per dimension of the operand, plus None entries), and the positions
    where scalar booleans insert a new axis into the operand."""
    if isinstance(idx, list):
        raise _list_index_error()
    if not isinstance(idx, tuple):
        idx = (idx,)
    raw = [(pos, *_classify(i, pos)) for pos, i in enumerate(idx)]
    if sum(kind == "ellipsis" for _, kind, _ in raw) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = 0
    for _, kind, value in raw:
        if kind in (_INT, _SLICE, _ARRAY):
            consumed += 1
        elif kind == "bool":
            consumed += np.ndim(value)
    if consumed > len(shape):
        raise IndexError(
            f"Too many indices: array is {len(shape)}-dimensional, but {consumed} were "
            "indexed"
        )
    n_ellipsis = len(shape) - consumed
    shape = list(shape)
    entries, bool_dims = [], []
    d = 0
    for pos, kind, value in raw:
        if kind == "ellipsis":
            for _ in range(n_ellipsis):
                entries.append(_Entry(_SLICE, builtins.slice(None), pos))
            d += n_ellipsis
        elif kind == "bool":
            d = _parse_bool(value, pos, shape, d, entries, bool_dims)
        else:
            entries.append(_Entry(kind, value, pos))
            d += kind != _NONE
    for j in range(len(shape) - d):
        entries.append(_Entry(_SLICE, builtins.slice(None), len(idx) + j))
    return entries, tuple(shape), tuple(bool_dims)


def _parse_bool(value, pos, shape, d, entries, bool_dims):
    mask = _concrete_mask(value)
    if mask.ndim == 0:
        # A scalar boolean indexes a new axis of size 1 with [0] (True) or [] (False).
        shape.insert(d, 1)
        bool_dims.append(d)
        entries.append(_Entry(_ARRAY, np.arange(int(mask), dtype=np.int32), pos))
        return d + 1
    expected = shape[d : d + mask.ndim]
    if any(m not in (0, s) for m, s in zip(mask.shape, expected)):
        raise IndexError(
            "boolean index did not match shape of indexed array in index "
            f"{pos}: got {mask.shape}, expected {list(expected)}"
        )
    for where in np.nonzero(mask):
        entries.append(_Entry(_ARRAY, where.astype(np.int32), pos))
    return d + mask.ndim


def _canonical_mode(mode):
    return None if mode is None else GatherScatterMode.from_any(mode)


def _index_dtype(shape):
    return np.dtype(np.int64) if any(d >= 2**31 for d in shape) else np.dtype(np.int32)


# ----------------------------------------------------------------------------------------
# Reading: x[idx] and x.at[idx].get()


def getitem(x, idx):
    """`x[idx]` with NumPy's indexing rules and XLA's out-of-bounds rules."""
    out = _basic_fast_path(x, idx)
    if out is not None:
        return out
    if type(idx) is Array and idx._value.dtype.kind in "iu":
        return _take_by_array(x, idx)  # x[int_array]: a compiled gather when eager
    return rewriting_take(x, idx)


@eager_jit(n_arrays=2)
def _take_by_array(x, idx):
    return rewriting_take(x, idx)


def _basic_fast_path(x, idx):
    """Eagerly, basic indexing (ints in bounds, slices, None, Ellipsis) of an Array is
    NumPy's own view indexing: same values as `slice`/`squeeze`, one step. Keys are
    indexed so through their data, whose trailing element axes stay whole."""
    if type(x) is not Array:
        if (
            type(x) in _extended_value_types
            and has_data(x.dtype)  # keys (not a GlobalArray: its jit indexes it)
            and find_cur_trace_is_eval()
        ):
            return _key_fast_path(x, idx)
        return None
    if not find_cur_trace_is_eval():
        return None
    items = idx if type(idx) is tuple else (idx,)
    shape = x._value.shape
    consuming = 0
    for i in items:
        t = type(i)
        if t is int:
            consuming += 1
        elif t is builtins.slice:
            if i.step == 0 or not all(
                type(v) is int or v is None for v in (i.start, i.stop, i.step)
            ):
                return None
            consuming += 1
        elif i is not None and i is not Ellipsis:
            return None
    if consuming > len(shape):
        return None
    d = 0
    for i in items:
        if i is Ellipsis:
            d += len(shape) - consuming
        elif type(i) is int:
            if not -shape[d] <= i < shape[d]:
                return None
            d += 1
        elif i is not None:
            d += 1
    return _fast(x, idx)


def _key_fast_path(keys, idx):
    aval = keys.aval
    data = physical_value(keys, aval)
    items = idx if type(idx) is tuple else (idx,)
    if sum(type(i) in (int, builtins.slice) for i in items) > aval.ndim:
        return None  # too many indices: the general path raises IndexError
    element = (builtins.slice(None),) * (data.ndim - aval.ndim)
    out = _basic_fast_path(data, (*items, *element))
    if out is None:
        return None
    return from_physical(out, aval.update(shape=out.shape[: out.ndim - len(element)]))


def _fast(x, idx):
    try:
        return Array(np.asarray(x._value)[idx][()], x.weak_type)
    except IndexError:
        return None


def rewriting_take(
    x,
    idx,
    *,
    indices_are_sorted=False,
    unique_indices=False,
    mode=None,
    fill_value=None,
    wrap_negative_indices=True,
):
    """`x[idx]` through the cheapest lax operation: slice, dynamic_slice or gather."""
    x = asarray(x)
    entries, shape, bool_dims = _parse_index(np.shape(x), idx)
    if bool_dims:
        x = lax.expand_dims(x, bool_dims)
    parsed_mode = _canonical_mode(mode)
    sliceable = parsed_mode is not GatherScatterMode.FILL_OR_DROP
    if sliceable and all(e.kind in (_NONE, _INT, _SLICE) for e in entries):
        clip = parsed_mode is GatherScatterMode.CLIP
        if clip or _static_ints_in_bounds(entries, shape, wrap_negative_indices):
            return _static_slice(x, entries, shape, wrap_negative_indices)
    if sliceable and _dynamic_sliceable(entries):
        return _dynamic_slice(x, entries, shape, wrap_negative_indices)
    if fill_value is not None:
        fill_value = concrete_or_error(
            np.asarray, fill_value, "fill_value argument to indexed get()"
        )
        if fill_value.ndim != 0:
            raise ValueError("fill_value argument to indexed get() must be a scalar")
        fill_value = fill_value.item()
    plan = _GatherPlan(entries, shape, wrap_negative_indices)
    if plan.empty:
        return lax.full_like(x, 0, shape=plan.slice_shape)
    y = lax.gather(
        x,
        plan.indices,
        plan.dnums,
        plan.slice_sizes,
        unique_indices=unique_indices or plan.unique,
        indices_are_sorted=indices_are_sorted or plan.unique,
        mode=mode,
        fill_value=fill_value,
    )
    if plan.rev_dims:
        y = lax.rev(y, plan.rev_dims)
    if plan.newaxis_dims:
        y = lax.expand_dims(y, plan.newaxis_dims)
    return y


def _wrap(i, size, wrap_negative):
    return i + size if i < 0 and wrap_negative else i


def _static_ints_in_bounds(entries, shape, wrap_negative):
    d = 0
    for e in entries:
        if e.kind == _NONE:
            continue
        if (
            e.kind == _INT
            and not 0 <= _wrap(e.value, shape[d], wrap_negative) < shape[d]
        ):
            return False
        d += 1
    return True


def _check_nonempty_axis(size, d):
    if size == 0:
        raise IndexError(f"index is out of bounds for axis {d} with size 0")


def _positive_slice(s, size):
    """(start, length, stride, reversed): the elements of `s` as a forward slice."""
    start, stop, step = s.indices(size)
    n = len(range(start, stop, step))
    if step > 0:
        return start, n, step, False
    if n == 0:
        return builtins.min(size, stop + 1), 0, -step, True
    return start + (n - 1) * step, n, -step, True


def _static_slice(x, entries, shape, wrap_negative):
    starts, limits, strides = [], [], []
    rev_dims, squeeze_dims, newaxis_dims = [], [], []
    d = 0
    for e in entries:
        if e.kind == _NONE:
            newaxis_dims.append(len(starts) - len(squeeze_dims) + len(newaxis_dims))
            continue
        size = shape[d]
        if e.kind == _INT:
            _check_nonempty_axis(size, d)
            i = builtins.min(
                builtins.max(_wrap(e.value, size, wrap_negative), 0), size - 1
            )
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            squeeze_dims.append(d)
        else:
            start, n, stride, reverse = _positive_slice(e.value, size)
            if reverse:
                limit = e.value.indices(size)[0] + 1 if n else start
                rev_dims.append(d)
            else:
                limit = builtins.max(start, e.value.indices(size)[1])
            starts.append(start)
            limits.append(limit)
            strides.append(stride)
        d += 1
    trivial = (
        all(s == 1 for s in strides)
        and starts == [0] * len(starts)
        and (tuple(limits) == tuple(shape))
    )
    y = x
    if not trivial:
        y = lax.slice(
            x, starts, limits, None if all(s == 1 for s in strides) else strides
        )
    if rev_dims:
        y = lax.rev(y, rev_dims)
    if squeeze_dims:
        y = lax.squeeze(y, squeeze_dims)
    if newaxis_dims:
        y = lax.expand_dims(y, newaxis_dims)
    return y


def _dynamic_sliceable(entries):
    for e in entries:
        if e.kind == _ARRAY and np.ndim(e.value) != 0:
            return False
        if e.kind == _SLICE and e.value.step not in (None, 1, -1):
            return False
    return True


def _dynamic_slice(x, entries, shape, wrap_negative):
    starts, sizes = [], []
    rev_dims, squeeze_dims, newaxis_dims = [], [], []
    d = 0
    for e in entries:
        if e.kind == _NONE:
            newaxis_dims.append(len(starts) - len(squeeze_dims) + len(newaxis_dims))
            continue
        size = shape[d]
        if e.kind in (_INT, _ARRAY):
            _check_nonempty_axis(size, d)
            value = e.value
            if e.kind == _INT:
                value = Array(np.asarray(value, np.int32)[()], True)
            starts.append(value)
            sizes.append(1)
            squeeze_dims.append(d)
        else:
            start, stop, step = e.value.indices(size)
            if step < 0:
                new_start = stop + 1
                starts.append(new_start)
                sizes.append(builtins.max(0, start + 1 - new_start))
                rev_dims.append(d)
            else:
                starts.append(start)
                sizes.append(builtins.max(0, stop - start))
        d += 1
    if len(starts) > 1:
        dtype = _index_dtype(shape)
        starts = [lax.convert_element_type(s, dtype) for s in starts]
    y = lax.dynamic_slice(x, starts, sizes, allow_negative_indices=wrap_negative)
    if rev_dims:
        y = lax.rev(y, rev_dims)
    if squeeze_dims:
        y = lax.squeeze(y, squeeze_dims)
    if newaxis_dims:
        y = lax.expand_dims(y, newaxis_dims)
    return y


# ----------------------------------------------------------------------------------------
# The general case: one gather


class _OutDims:
    """A group of consecutive output dims of a gather plan: 'offset' (a unit-stride
    slice, a window dim), 'iota' (a strided slice, a batch dim), 'adv' (the broadcast
    advanced indices, batch dims) or 'new' (None, added after the gather)."""

    __slots__ = ("kind", "shape", "reverse", "batch_start")

    def __init__(self, kind, shape, reverse=False):
        self.kind = kind
        self.shape = shape
        self.reverse = reverse
        self.batch_start = None


class _GatherPlan:
    """How `x[idx]` is one gather: the index array (batch dims, then the index vector),
    dimension numbers and slice sizes, plus the `rev` and new axes applied after.

    Output dims, in NumPy order: each slice gives one dim (a window dim for unit
    strides, a batch dim of `start + stride * iota` otherwise); the advanced indices
    (integer arrays, and integers when arrays are present) give their broadcast shape
    as batch dims, in place when they are consecutive in the index, else first.
    """

    def __init__(self, entries, shape, wrap_negative):
        self.index_dtype = _index_dtype(shape)
        self.unique = not any(e.kind == _ARRAY and np.ndim(e.value) for e in entries)
        adv = [] if self.unique else [e for e in entries if e.kind in (_INT, _ARRAY)]
        adv_dims = _OutDims("adv", self._broadcast_adv(adv))
        positions = sorted({e.pos for e in adv})
        in_place = not adv or positions == list(range(positions[0], positions[-1] + 1))
        layout = [] if in_place else [adv_dims]
        # Index vector components, in operand-dimension order: (dim, kind, value, dims).
        components, collapsed, slice_sizes = [], [], []
        d = 0
        for e in entries:
            if e.kind == _NONE:
                layout.append(_OutDims("new", (1,)))
                continue
            size = shape[d]
            if e.kind in (_INT, _ARRAY):
                if e.kind == _INT:
                    _check_nonempty_axis(size, d)
                if adv and adv_dims not in layout:
                    layout.append(adv_dims)
                value = self._normalized(e.value, size, wrap_negative)
                components.append((d, "adv" if adv else "scalar", value, adv_dims))
                collapsed.append(d)
                slice_sizes.append(1)
            else:
                start, n, stride, reverse = _positive_slice(e.value, size)
                if stride == 1 or n <= 1:
                    if start != 0 or n != size:
                        components.append((d, "scalar", start, None))
                    dims = _OutDims("offset", (n,), reverse)
                    slice_sizes.append(n)
                else:
                    dims = _OutDims("iota", (n,), reverse)
                    components.append((d, "iota", (start, stride, n), dims))
                    collapsed.append(d)
                    slice_sizes.append(1)
                layout.append(dims)
            d += 1
        self.slice_shape = tuple(n for dims in layout for n in dims.shape)
        self.empty = 0 in self.slice_shape
        self.slice_sizes = tuple(slice_sizes)
        self._number_dims(layout)
        if not self.empty:
            self.indices = self._index_array(components)
            self.dnums = lax.GatherDimensionNumbers(
                offset_dims=self.offset_dims,
                collapsed_slice_dims=tuple(collapsed),
                start_index_map=tuple(c[0] for c in components),
            )

    def _number_dims(self, layout):
        """Positions of the offset, reversed and new dims; the batch shape."""
        offset_dims, rev_dims, newaxis_dims, batch_shape = [], [], [], []
        p = q = 0  # position in the gather output / in the final result
        for dims in layout:
            if dims.kind == "new":
                newaxis_dims.append(q)
                q += 1
                continue
            if dims.kind == "offset":
                offset_dims.append(p)
            else:
                dims.batch_start = len(batch_shape)
                batch_shape.extend(dims.shape)
            if dims.reverse:
                rev_dims.append(p)
            p += len(dims.shape)
            q += len(dims.shape)
        self.offset_dims, self.rev_dims = tuple(offset_dims), tuple(rev_dims)
        self.newaxis_dims, self.batch_shape = tuple(newaxis_dims), tuple(batch_shape)

    def _index_array(self, components):
        """Each component broadcast to (*batch_shape, 1), concatenated on the last axis."""
        shape = (*self.batch_shape, 1)
        dtype = self.index_dtype
        cols = []
        for _, kind, value, dims in components:
            if kind == "iota":
                start, stride, n = value
                iota = ew.mul_p.bind(_const(stride, dtype), lax.iota(dtype, n))
                iota = ew.add_p.bind(_const(start, dtype), iota)
                cols.append(lax.broadcast_in_dim(iota, shape, (dims.batch_start,)))
                continue
            if isinstance(value, (int, np.ndarray)):
                value = Array(np.asarray(value, dtype))
            else:
                value = lax.convert_element_type(value, dtype)
            k = np.ndim(value)
            end = dims.batch_start + len(dims.shape) if kind == "adv" else 0
            cols.append(lax.broadcast_in_dim(value, shape, tuple(range(end - k, end))))
        if not cols:
            return Array(np.zeros((*self.batch_shape, 0), dtype))
        return cols[0] if len(cols) == 1 else lax.concatenate(cols, len(shape) - 1)

    @staticmethod
    def _broadcast_adv(adv):
        shapes = [np.shape(e.value) for e in adv]
        try:
            return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
        except ValueError:
            raise IndexError(
                "shape mismatch: indexing arrays could not be broadcast together with "
                "shapes " + " ".join(str(s) for s in shapes)
            ) from None

    def _normalized(self, value, size, wrap_negative):
        if isinstance(value, int):
            return value + size if value < 0 and wrap_negative else value
        if isinstance(value, np.ndarray):
            v = value.astype(self.index_dtype)
            return np.where(v < 0, v + size, v) if wrap_negative else v
        return normalize_index(value, size, wrap_negative)


def _const(value, dtype):
    return Array(np.asarray(value, dtype)[()])


# ----------------------------------------------------------------------------------------
# Updates: x.at[idx].set(y) and friends


def _safe_to_cast(y, dtype):
    """Whether JAX's promotion of `y` (weak or not) with `dtype` gives `dtype`."""
    try:
        return dtypes.result_type(y, dtype) == dtype
    except TypeError:
        return False


def _scatter_update(
    x,
    idx,
    y,
    scatter_op,
    indices_are_sorted,
    unique_indices,
    mode,
    wrap_negative_indices,
):
    """`x` with `x[idx] op= y` applied, as one scatter (computed in the promoted dtype
    of x and y, then cast back to x's dtype and weak type, as JAX does)."""
    x = asarray(x)
    dtype, weak = x.dtype, x.weak_type
    if type(y) is int and dtypes.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        y = asarray(y, dtype=dtype) if info.min <= y <= info.max else asarray(y)
    else:
        y = asarray(ensure_arraylike("scatter", y))
    if y.dtype != dtype and not _safe_to_cast(y, dtype):
        warnings.warn(
            "scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={y.dtype} to dtype={dtype} with jax_numpy_dtype_promotion="
            f"{config.read('jax_numpy_dtype_promotion')}. In future JAX releases this "
            "will result in an error.",
            FutureWarning,
            stacklevel=4,
        )
    entries, shape, bool_dims = _parse_index(np.shape(x), idx)
    plan = _GatherPlan(entries, shape, wrap_negative_indices)
    if plan.empty:
        return x
    operand, y = promote_dtypes(x, y)
    if bool_dims:
        operand = lax.expand_dims(operand, bool_dims)
    y = _broadcast_to(y, plan.slice_shape)
    if plan.newaxis_dims:
        y = lax.squeeze(y, plan.newaxis_dims)
    if plan.rev_dims:
        y = lax.rev(y, plan.rev_dims)
    dn = plan.dnums
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
    )
    out = scatter_op(
        operand,
        plan.indices,
        y,
        dnums,
        indices_are_sorted=indices_are_sorted or plan.unique,
        unique_indices=unique_indices or plan.unique,
        mode=mode,
    )
    if bool_dims:
        out = lax.squeeze(out, bool_dims)
    return lax.convert_element_type(out, dtype, weak)


def _broadcast_to(y, shape):
    y_shape = tuple(np.shape(y))
    if y_shape == tuple(shape):
        return y
    k = len(y_shape)
    if k > len(shape) or any(
        a not in (1, b) for a, b in zip(y_shape, shape[len(shape) - k :])
    ):
        from jaxlite.numpy.shape import broadcast_to

        broadcast_to(y, tuple(shape))  # raises jnp.broadcast_to's ValueError
    return lax.broadcast_in_dim(
        y, tuple(shape), tuple(range(len(shape) - k, len(shape)))
    )


def _compiled_update_ok(x, idx, y):
    """Whether an eager `x.at[idx].op(y)` may run compiled (`eager_jit`): an int or
    integer-array index, and a `y` that casts to x's dtype without a warning."""
    if type(x) is not Array or not find_cur_trace_is_eval():
        return False
    t = type(idx)
    if t is not int and not (t is Array and idx._value.dtype.kind in "iu"):
        return False
    dtype = x._value.dtype
    t = type(y)
    if t is Array:
        return y._value.dtype == dtype
    if t is float:
        return dtype.kind in "fc"
    if t is int:
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return bool(info.min <= y <= info.max)
        return dtype.kind in "fc" and -(2**31) <= y < 2**31
    return False


@eager_jit(n_arrays=2)
def _update_at_int(x, y, idx, op, args):
    return _scatter_update(x, idx, y, op, *args)


@eager_jit(n_arrays=3)
def _update_at_array(x, y, idx, op, args):
    return _scatter_update(x, idx, y, op, *args)


def _apply_op(func):
    def op(x, indices, y, dnums, **kwargs):
        return lax.scatter_apply(
            x, indices, func, dnums, update_shape=np.shape(y), **kwargs
        )

    return op


class IndexUpdateHelper:
    """`x.at`: index it (`x.at[idx]`) to get an `IndexUpdateRef` with the functional
    updates `set`, `add`, ... and the indexed read `get`."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


def _update_method(name, op, combine=None):
    """An `IndexUpdateRef` method: the scatter `op` of `values` into `x[idx]`, or, with
    `combine`, `combine(x, scatter op of values into ones)` (divide, power)."""

    def method(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        x = self.array if combine is None else lax.full_like(self.array, 1)
        args = (indices_are_sorted, unique_indices, mode, wrap_negative_indices)
        if _compiled_update_ok(x, self.index, values):
            idx = self.index
            if type(idx) is int:
                out = _update_at_int(x, values, idx, op, args)
            else:
                out = _update_at_array(x, values, idx, op, args)
            return out if combine is None else combine(self.array, out)
        out = _scatter_update(x, self.index, values, op, *args)
        return out if combine is None else combine(self.array, out)

    method.__name__ = name
    method.__qualname__ = f"IndexUpdateRef.{name}"
    return method


class IndexUpdateRef:
    """`x.at[idx]`: each method returns a new array, `x` with `x[idx]` updated.

    `set(v)` is `x[idx] = v`; `add`, `subtract`, `multiply` (`mul`), `divide`, `power`,
    `min` and `max` combine `x[idx]` with `v`; `apply(f)` sets `f(x[idx])`; `get()` reads.
    `mode` says what happens to out-of-bounds indices: updates are dropped by default
    ('drop'/'fill'), or clamped ('clip'); 'promise_in_bounds' promises there are none.
    Indices are assumed neither sorted nor unique unless `indices_are_sorted` /
    `unique_indices` say so; repeated indices accumulate (`add`, `multiply`, ...) or
    one of the writes wins (`set`). Updates are cast to `x`'s dtype.
    """

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(
        self,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        fill_value=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """`x[idx]`, with `mode='fill'` giving `fill_value` (default NaN, or the
        integer dtype's extreme value) where the index is out of bounds."""
        return rewriting_take(
            self.array,
            self.index,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            fill_value=fill_value,
            wrap_negative_indices=wrap_negative_indices,
        )

    def apply(
        self,
        func,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        wrap_negative_indices=True,
    ):
        """`x[idx] = func(x[idx])` for a unary elementwise `func`."""
        zero = Array(np.zeros((), self.array.dtype))
        args = (indices_are_sorted, unique_indices, mode, wrap_negative_indices)
        return _scatter_update(self.array, self.index, zero, _apply_op(func), *args)

    set = _update_method("set", lax.scatter)
    add = _update_method("add", lax.scatter_add)
    subtract = _update_method("subtract", lax.scatter_sub)
    multiply = mul = _update_method("multiply", lax.scatter_mul)
    divide = _update_method("divide", lax.scatter_mul, ufuncs.divide)
    power = _update_method("power", lax.scatter_mul, ufuncs.power)
    min = _update_method("min", lax.scatter_min)
    max = _update_method("max", lax.scatter_max)


# ----------------------------------------------------------------------------------------
# take and take_along_axis


def _ravel(a):
    return lax.reshape(a, (int(np.prod(np.shape(a), dtype=np.int64)),))


def _check_integer_indices(fun_name, indices):
    if not np.issubdtype(np.dtype(indices.dtype), np.integer):
        raise TypeError(
            f"{fun_name} requires integer indices, got indices of dtype "
            f"{np.dtype(indices.dtype).name}"
        )


@eager_jit(n_arrays=2)
def take(
    a,
    indices,
    axis=None,
    out=None,
    mode=None,
    unique_indices=False,
    indices_are_sorted=False,
    fill_value=None,
):
    """Elements of `a` at `indices` along `axis` (flattened `a` if None).

    `mode`: 'fill' (the default, as in JAX: out-of-bounds indices give `fill_value`,
    default NaN or the integer dtype's extreme), 'clip' or 'wrap'; 'raise' cannot be
    supported for traced indices."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    check_arraylike("take", a, indices)
    a, indices = asarray(a), asarray(indices)
    _check_integer_indices("take", indices)
    if axis is None:
        a, axis = _ravel(a), 0
    axis = canonicalize_axis(axis, np.ndim(a))
    if mode is None or mode == "fill":
        gather_mode = "fill"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        indices = ufuncs.remainder(indices, np.shape(a)[axis])
        gather_mode = "promise_in_bounds"
    elif mode == "clip":
        gather_mode = "clip"
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    if np.shape(a)[axis] == 0 and np.size(indices):
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    idx = (builtins.slice(None),) * axis + (indices,)
    return rewriting_take(
        a,
        idx,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=gather_mode,
        fill_value=fill_value,
        wrap_negative_indices=mode != "clip",
    )


@eager_jit(n_arrays=2)
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """`arr` indexed along `axis` by `indices` of the same rank (other axes
    broadcast), as `np.take_along_axis`; out-of-bounds indices give `fill_value` by
    default (`mode='fill'`)."""
    check_arraylike("take_along_axis", arr, indices)
    arr, indices = asarray(arr), asarray(indices)
    _check_integer_indices("take_along_axis", indices)
    if axis is None:
        if np.ndim(indices) != 1:
            raise ValueError(
                "take_along_axis indices must be 1D if axis=None, got shape "
                f"{np.shape(indices)}"
            )
        arr, axis = _ravel(arr), 0
    ndim = np.ndim(arr)
    if np.ndim(indices) != ndim:
        raise ValueError(
            "indices and arr must have the same number of dimensions; "
            f"{np.ndim(indices)} vs. {ndim}"
        )
    axis = canonicalize_axis(axis, ndim)
    a_shape, i_shape = np.shape(arr), np.shape(indices)
    idx = []
    for d in range(ndim):
        if d == axis:
            idx.append(indices)
            continue
        if a_shape[d] not in (1, i_shape[d]) and i_shape[d] != 1:
            raise ValueError(
                "Incompatible shapes for broadcasting in take_along_axis: arr shape "
                f"{a_shape} and indices shape {i_shape} at axis {d}"
            )
        n = a_shape[d] if i_shape[d] == 1 or a_shape[d] == i_shape[d] else 1
        grid_shape = [1] * ndim
        grid_shape[d] = n
        grid = (
            np.arange(n, dtype=np.int32) if n == a_shape[d] else np.zeros(n, np.int32)
        )
        idx.append(grid.reshape(grid_shape))
    return rewriting_take(
        arr, tuple(idx), mode="fill" if mode is None else mode, fill_value=fill_value
    )


# ----------------------------------------------------------------------------------------
# nonzero and friends: data-dependent shapes, so concrete inputs or a static `size`

_SIZE_MESSAGE = (
    "The size argument of jnp.nonzero must be statically specified to use jnp.nonzero "
    "within JAX transformations."
)


def _concrete_value(a):
    if isinstance(a, Tracer):
        return a.to_concrete_value()
    return np.asarray(a)


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per dimension. Under a
    transformation pass a static `size`: the result is truncated or padded with
    `fill_value` (default 0; a scalar or one value per dimension)."""
    a = asarray(ensure_arraylike("nonzero", a))
    ndim = np.ndim(a)
    if ndim == 0:
        raise ValueError(
            "Calling nonzero on 0d arrays is not allowed. Use "
            "jnp.atleast_1d(scalar).nonzero() instead."
        )
    int_dtype = dtypes.default_int_dtype()
    if dtypes.is_extended(a.dtype):
        ufuncs.not_equal(a, 0)  # keys are not numbers: JAX's error
    value = _concrete_value(a)
    if size is None:
        if value is None:
            # JAX's error is about the traced count of nonzero elements, int32[].
            mask = a if a.dtype == np.bool_ else ufuncs.not_equal(a, 0)
            count = lax.reduce_sum(
                lax.convert_element_type(mask, int_dtype), range(ndim)
            )
            raise ConcretizationTypeError(count, _SIZE_MESSAGE)
        return tuple(Array(w.astype(int_dtype)) for w in np.nonzero(value))
    size = concrete_or_error(operator.index, size, _SIZE_MESSAGE)
    fills = _fill_values(fill_value, ndim)
    if value is not None:
        out = []
        for w, fill in zip(np.nonzero(value), fills):
            w = w[:size]
            pad = np.full(size - len(w), fill, dtype=int_dtype)
            out.append(Array(np.concatenate([w.astype(int_dtype), pad])))
        return tuple(out)
    return _nonzero_traced(a, size, fills, int_dtype)


def _fill_values(fill_value, ndim):
    if fill_value is None:
        return [0] * ndim
    if isinstance(fill_value, (tuple, list)):
        if len(fill_value) != ndim:
            raise ValueError(
                f"fill_value must be a scalar or a tuple of length {ndim}; got "
                f"{fill_value}"
            )
        return [
            concrete_or_error(np.asarray, f, "nonzero fill_value").item()
            for f in fill_value
        ]
    value = concrete_or_error(np.asarray, fill_value, "nonzero fill_value")
    if value.ndim:
        raise ValueError(f"fill_value must be a scalar or a tuple of length {ndim}")
    return [value.item()] * ndim


def _cumsum_1d(x):
    """Inclusive prefix sum of a 1-D array in log2(n) shifted additions."""
    n = np.shape(x)[0]
    k = 1
    while k < n:
        zeros = lax.full((k,), 0, x.dtype)
        x = ew.add_p.bind(x, lax.concatenate([zeros, lax.slice(x, (0,), (n - k,))], 0))
        k *= 2
    return x


def _nonzero_traced(a, size, fills, int_dtype):
    """Scatter each nonzero element's coordinates to its rank among the nonzeros;
    ranks past `size` are dropped, unused slots keep the fill value."""
    shape = np.shape(a)
    n = int(np.prod(shape, dtype=np.int64))
    flat = _ravel(a)
    mask = ufuncs.not_equal(flat, lax.full_like(flat, 0))
    rank = _cumsum_1d(lax.convert_element_type(mask, int_dtype))
    one = Array(np.asarray(1, int_dtype)[()])
    past_end = lax.full((n,), size, int_dtype)
    target = lax.select(mask, ew.sub_p.bind(rank, one), past_end)
    target = lax.broadcast_in_dim(target, (n, 1), (0,))
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(0,),
        scatter_dims_to_operand_dims=(0,),
    )
    coords = np.unravel_index(np.arange(n), shape)
    return tuple(
        lax.scatter(
            lax.full((size,), fill, int_dtype),
            target,
            Array(c.astype(int_dtype)),
            dnums,
            mode="drop",
        )
        for c, fill in zip(coords, fills)
    )


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of the flattened array."""
    check_arraylike("flatnonzero", a)
    return nonzero(_ravel(asarray(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Coordinates of the nonzero elements, one row each: shape (count, ndim)."""
    a = asarray(ensure_arraylike("argwhere", a))
    ndim = np.ndim(a)
    parts = nonzero(
        a if ndim else lax.reshape(a, (1,)), size=size, fill_value=fill_value
    )
    count = np.shape(parts[0])[0]
    if ndim == 0:
        return lax.full((count, 0), 0, parts[0].dtype)
    cols = [lax.broadcast_in_dim(p, (count, 1), (0,)) for p in parts]
    return lax.concatenate(cols, 1)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of `a` along `axis` where the 1-D `condition` is true."""
    if out is not None:
        raise NotImplementedError(
            "The 'out' argument to jnp.compress is not supported."
        )
    check_arraylike("compress", condition, a)
    condition, a = asarray(condition), asarray(a)
    if np.ndim(condition) != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        a, axis = _ravel(a), 0
    axis = canonicalize_axis(axis, np.ndim(a))
    n = np.shape(a)[axis]
    if np.dtype(condition.dtype) != np.bool_:
        condition = ufuncs.not_equal(condition, 0)
    if np.shape(condition)[0] > n:
        extra = _concrete_value(lax.slice(condition, (n,), (np.shape(condition)[0],)))
        if extra is not None and extra.any():
            raise ValueError("condition contains entries that are out of bounds")
        condition = lax.slice(condition, (0,), (n,))
    if size is not None and not 0 < size <= n:
        raise ValueError(
            "size must be positive and not greater than the size of the array axis; "
            f"got size={size} for a.shape[axis]={n}"
        )
    (idx,) = nonzero(condition, size=size, fill_value=n)
    return take(a, idx, axis=axis, mode="fill", fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """`choices[a[i]][i]` elementwise, with `a`, and the choices broadcast together."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    choices = list(choices)
    check_arraylike("choose", a, *choices)
    a = asarray(a)
    if not np.issubdtype(np.dtype(a.dtype), np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        value = concrete_or_error(
            np.asarray,
            a,
            "The error occurred because jnp.choose was jit-compiled "
            "with mode='raise'. Use mode='wrap' or mode='clip' instead.",
        )
        if np.any((value < 0) | (value >= n)):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = ufuncs.remainder(a, n)
    elif mode == "clip":
        a = ufuncs.minimum(ufuncs.maximum(a, 0), n - 1)
    else:
        raise ValueError(
            f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'"
        )
    # Stacked into one array as in JAX, so the result is never weakly typed.
    choices = [
        lax.convert_element_type(c, c.dtype, False) for c in promote_dtypes(*choices)
    ]
    shape = np.broadcast_shapes(np.shape(a), *(np.shape(c) for c in choices))
    which = lax.convert_element_type(_broadcast_to(a, shape), np.int32)
    return lax.select_n(which, *(_broadcast_to(c, shape) for c in choices))
