"""Editing whole arrays: `put`, `put_along_axis`, `place`, `extract`, `delete`,
`insert`, `resize` and `block`.

NumPy edits in place; JAX arrays are immutable, so the functions that NumPy defines
as in-place (`put`, `put_along_axis`, `place`) require `inplace=False` and return the
edited copy, as in JAX. Each is a scatter built from `x.at[...]`.

The output *shape* of `delete` and `insert` depends on how many indices there are,
so that count must be static; `delete` also needs the index values themselves (to
know which elements survive) unless `assume_unique_indices=True` promises there are
no repeats, in which case traced indices work. `insert` accepts traced indices: the
new position of every element is computed arithmetically and the result scattered.
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer, concrete_or_error
from jaxlite.numpy.ufuncs import check_arraylike

__all__ = [
    "block",
    "delete",
    "extract",
    "insert",
    "place",
    "put",
    "put_along_axis",
    "resize",
]


def _jnp():
    import jaxlite.numpy as jnp

    return jnp


def _inplace_error(name, extra=""):
    return ValueError(
        f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are "
        f"immutable. Pass inplace=False to instead return an updated array.{extra}"
    )


def _canonical_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def put(a, ind, v, mode=None, *, inplace=True):
    """`a` with its flattened elements at `ind` replaced by `v` (repeated cyclically
    to the number of indices). Out-of-range indices are clipped; with
    `mode="wrap"` they are taken modulo the size. Requires `inplace=False`."""
    jnp = _jnp()
    if inplace:
        raise _inplace_error("put")
    check_arraylike("put", a, ind, v)
    a = jnp.asarray(a)
    ind = jnp.ravel(jnp.asarray(ind))
    v = jnp.ravel(jnp.asarray(v))
    if not ind.size or not v.size:
        return a
    if v.size != ind.size:
        v = jnp.resize(v, ind.shape)
    size = a.size
    if mode is None:
        ind = jnp.where(ind < 0, ind + size, ind)
        ind = jnp.clip(ind, 0, size - 1)
    elif mode == "clip":
        ind = jnp.clip(ind, 0, size - 1)
    elif mode == "wrap":
        ind = jnp.remainder(ind, size)
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    flat = jnp.ravel(a).at[ind].set(v, mode="clip")
    return jnp.reshape(flat, a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """`arr` with `values` written at `indices` along `axis` (the inverse of
    `take_along_axis`; the other axes broadcast). Requires `inplace=False`."""
    jnp = _jnp()
    if inplace:
        raise _inplace_error("put_along_axis")
    check_arraylike("put_along_axis", arr, indices, values)
    arr, indices = jnp.asarray(arr), jnp.asarray(indices)
    original_shape = arr.shape
    if axis is None:
        if indices.ndim != 1:
            raise ValueError(
                "take_along_axis indices must be 1D if axis=None, got shape "
                f"{indices.shape}"
            )
        arr, axis = jnp.ravel(arr), 0
    if arr.ndim != indices.ndim:
        raise ValueError(
            "put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
            f"arr.ndim={arr.ndim} and indices.ndim={indices.ndim}."
        )
    if not dtypes.issubdtype(indices.dtype, np.integer):
        raise TypeError(
            f"put_along_axis indices must be of integer type, got {indices.dtype}"
        )
    axis = _canonical_axis(axis, arr.ndim)
    other = [d for i, d in enumerate(arr.shape) if i != axis]
    idx_other = [d for i, d in enumerate(indices.shape) if i != axis]
    shape = list(np.broadcast_shapes(tuple(other), tuple(idx_other)))
    shape.insert(axis, indices.shape[axis])
    shape = tuple(shape)
    index = []
    for d in range(arr.ndim):
        if d == axis:
            index.append(jnp.broadcast_to(indices, shape))
        elif arr.shape[d] == 1:
            index.append(jnp.zeros(shape, indices.dtype))
        else:
            index.append(lax.broadcasted_iota(indices.dtype, shape, d))
    out = arr.at[tuple(index)].set(jnp.broadcast_to(values, shape), mode=mode)
    return jnp.reshape(out, original_shape)


def place(arr, mask, vals, *, inplace=True):
    """`arr` with the elements where `mask` is true replaced, in order, by `vals`
    (repeated cyclically). The mask may be traced. Requires `inplace=False`."""
    jnp = _jnp()
    if inplace:
        raise _inplace_error("place")
    check_arraylike("place", arr, mask, vals)
    arr = jnp.asarray(arr)
    data, mask = jnp.ravel(arr), jnp.ravel(jnp.asarray(mask)).astype(bool)
    vals = jnp.ravel(jnp.asarray(vals))
    if mask.shape != data.shape:
        raise ValueError(
            f"place: arr and mask must be the same size, got {arr.size} and {mask.size}"
        )
    if not vals.size:
        return arr
    position = jnp.cumsum(mask) - 1
    fill = jnp.take(vals, jnp.remainder(position, vals.size))
    return jnp.reshape(jnp.where(mask, fill.astype(arr.dtype), data), arr.shape)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of the flattened `arr` where the flattened `condition` is
    nonzero. Under a transformation pass `size` (padding with `fill_value`)."""
    jnp = _jnp()
    check_arraylike("extract", condition, arr, fill_value)
    return jnp.compress(
        jnp.ravel(jnp.asarray(condition)),
        jnp.ravel(jnp.asarray(arr)),
        size=size,
        fill_value=fill_value,
    )


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """`arr` without the entries `obj` (an int, a slice, an integer array or a
    boolean mask) along `axis` (of the flattened array if None)."""
    jnp = _jnp()
    if isinstance(obj, slice):
        check_arraylike("delete", arr)
    else:
        check_arraylike("delete", arr, obj)
    a = jnp.asarray(arr)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = _canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, slice):
        keep = np.delete(np.arange(n), obj)
        return jnp.take(a, jnp.asarray(keep), axis=axis, mode="clip")
    obj_dtype = dtypes.dtype(obj)
    if assume_unique_indices and isinstance(obj, Tracer):
        if not dtypes.issubdtype(obj_dtype, np.integer):
            raise ValueError(
                "jnp.delete(arr, obj, assume_unique_indices=True): obj must be "
                f"integer typed, got {obj_dtype}"
            )
        obj = jnp.ravel(obj)
        obj = jnp.where(obj < 0, obj + n, obj)
        kept = jnp.ones(n, bool).at[obj].set(False)
        (idx,) = jnp.nonzero(kept, size=n - obj.size, fill_value=0)
        return jnp.take(a, idx, axis=axis, mode="clip")
    values = concrete_or_error(np.asarray, obj, "'obj' array argument of jnp.delete()")
    if values.dtype == np.bool_:
        if values.shape != (n,):
            raise ValueError(
                "np.delete(arr, obj): for boolean indices, obj must be "
                "one-dimensional with length matching specified axis."
            )
        keep = np.flatnonzero(~values)
    elif not np.issubdtype(values.dtype, np.integer):
        raise ValueError(
            f"np.delete(arr, obj): got obj.dtype={values.dtype}; must be integer or "
            "bool."
        )
    else:
        flat = values.ravel()
        bad = flat[(flat < -n) | (flat >= n)]
        if bad.size:
            raise IndexError(
                f"index {bad[0]} is out of bounds for axis {axis} with size {n}"
            )
        keep = np.delete(np.arange(n), flat)
    return jnp.take(a, jnp.asarray(keep), axis=axis, mode="clip")


def insert(arr, obj, values, axis=None):
    """`arr` with `values` inserted before the indices `obj` (an int, a slice or a
    1-D integer array, possibly traced) along `axis` (of the flattened array if
    None). Indices beyond the end append."""
    jnp = _jnp()
    if isinstance(obj, slice):
        check_arraylike("insert", arr, values)
    else:
        check_arraylike("insert", arr, obj, values)
    a = jnp.asarray(arr)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = _canonical_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(obj, slice):
        index = jnp.asarray(np.arange(*obj.indices(n)))
    else:
        index = jnp.asarray(obj)
    if index.ndim > 1:
        raise ValueError(
            "jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; "
            f"got {obj}"
        )
    if not dtypes.issubdtype(index.dtype, np.integer):
        if index.size == 0 and not isinstance(obj, (Array, Tracer)):
            index = index.astype(int)
        else:
            raise ValueError(
                f"jnp.insert(): index array must be integer typed; got {obj}"
            )
    vals = jnp.array(values, ndmin=a.ndim, dtype=a.dtype)
    if index.ndim == 0:
        vals = jnp.moveaxis(vals, 0, axis)
        count = vals.shape[axis]
        index = jnp.full((count,), index, index.dtype)
    else:
        count = index.shape[0]
    new_shape = list(a.shape)
    new_shape[axis] = count
    vals = jnp.broadcast_to(vals, tuple(new_shape))
    index = jnp.where(index < 0, index + n, index)
    index = jnp.clip(index, 0, n)
    # Inserted value k lands at index[k] + (number of values inserted before it);
    # original element j at j + (number of indices <= j).
    order = jnp.argsort(index, stable=True)
    new_index = (
        jnp.zeros(count, index.dtype)
        .at[order]
        .set(index[order] + jnp.arange(count, dtype=index.dtype))
    )
    old_index = jnp.arange(n, dtype=index.dtype)
    old_index = old_index + jnp.sum(index[None, :] <= old_index[:, None], axis=1)
    out_shape = list(a.shape)
    out_shape[axis] = n + count
    out = jnp.zeros(tuple(out_shape), a.dtype)
    where = (slice(None),) * axis
    out = out.at[(*where, new_index)].set(vals, mode="clip")
    return out.at[(*where, old_index)].set(a, mode="clip")


def resize(a, new_shape):
    """An array of `new_shape` filled with the elements of `a`, repeated cyclically
    (zeros if `a` is empty)."""
    jnp = _jnp()
    check_arraylike("resize", a)
    new_shape = (new_shape,) if np.ndim(new_shape) == 0 else tuple(new_shape)
    new_shape = tuple(operator.index(d) for d in new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    a = jnp.ravel(jnp.asarray(a))
    size = int(np.prod(new_shape))
    if a.size == 0 or size == 0:
        return jnp.zeros(new_shape, a.dtype)
    repeats = -(-size // a.size)
    if repeats > 1:
        a = jnp.concatenate([a] * repeats)
    return jnp.reshape(a[:size], new_shape)


def block(arrays):
    """An array assembled from a nested list of blocks: the innermost lists are
    joined along the last axis, the next ones along the second to last, and so on
    (arrays with fewer dimensions get leading axes of size 1)."""
    jnp = _jnp()
    out_ndim, list_depth = _block_depths(arrays)
    if list_depth == 0:
        return jnp.asarray(arrays)
    ndim = max(out_ndim, list_depth)

    def assemble(item, depth):
        if depth == list_depth:
            x = jnp.asarray(item)
            return jnp.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
        parts = [assemble(x, depth + 1) for x in item]
        return jnp.concatenate(parts, axis=depth - list_depth)

    return assemble(arrays, 0)


def _block_depths(arrays):
    """(largest ndim of a leaf, depth of the list nesting), checking the nesting."""
    if isinstance(arrays, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {arrays}")
    if not isinstance(arrays, list):
        return np.ndim(arrays), 0
    if not arrays:
        raise ValueError("jax.numpy.block does not allow empty list arguments")
    inner = [_block_depths(x) for x in arrays]
    if len({d for _, d in inner}) != 1:
        raise ValueError("Mismatched list depths in jax.numpy.block")
    return max(n for n, _ in inner), inner[0][1] + 1
