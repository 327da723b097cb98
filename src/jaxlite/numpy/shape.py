"""Shape manipulation of jax.numpy: reshape, transpose, join, split, broadcast, tile,
repeat, flip, roll and pad.

Shapes, axes, split points and pad widths are static: they are read as Python ints
when the function is called (a traced value there raises JAX's shape or concretization
error). Every function then stages only structural lax primitives, so a jitted program
contains `reshape`, `transpose`, `broadcast_in_dim`, `concatenate`, `stack`, `split`,
`tile`, `pad`, `rev` and `slice`, as in JAX. (A traced shift of `roll` and traced
counts of `repeat` with a static `total_repeat_length` use dynamic slices and gathers.)

Copy-only index patterns (static roll and repeat, the wrap, reflect and symmetric pad
modes) are computed on the host as a static index map and lowered to a few slices,
reversals and broadcasts: each maximal run of consecutive, reversed or repeated indices
becomes one slice.
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer, concrete_or_error
from jaxlite.eager_jit import eager_jit
from jaxlite.lax.indexing import slice as lax_slice
from jaxlite.lax.structural import canonicalize_shape, operand
from jaxlite.numpy.ufuncs import (
    check_arraylike,
    ensure_arraylike,
    jax_array_value,
    promote_dtypes,
)

__all__ = [
    "append",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "column_stack",
    "concat",
    "concatenate",
    "dsplit",
    "dstack",
    "expand_dims",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "matrix_transpose",
    "moveaxis",
    "ndim",
    "pad",
    "permute_dims",
    "ravel",
    "repeat",
    "reshape",
    "roll",
    "rollaxis",
    "rot90",
    "shape",
    "size",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "tile",
    "transpose",
    "unstack",
    "vsplit",
    "vstack",
]


# ----------------------------------------------------------------------------------
# Helpers: arguments, axes and static slices


def _asarray(fun_name, a):
    return operand(ensure_arraylike(fun_name, a))


def _axis(axis, ndim):
    """A non-negative axis; NumPy's AxisError (a ValueError and an IndexError)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _axes(axis, ndim):
    return tuple(_axis(a, ndim) for a in _index_tuple(axis))


def _index_tuple(axis):
    """`axis` as a tuple of ints: one int, or any iterable of them (a tuple, a list, a
    `range`, a NumPy array), as JAX accepts."""
    try:
        return (operator.index(axis),)
    except TypeError:
        if not np.iterable(axis):
            raise
    return tuple(operator.index(a) for a in axis)


def _static_ints(value, what):
    """The concrete integer contents of `value` as a NumPy int64 array."""
    arr = concrete_or_error(np.asarray, value, what)
    if not (
        arr.dtype == np.bool_ or np.issubdtype(arr.dtype, np.integer) or arr.size == 0
    ):
        raise TypeError(f"{what} must be of integral type, got dtype {arr.dtype}.")
    return arr.astype(np.int64)


def _slice_in_dim(x, start, stop, axis):
    """`x[start:stop]` along `axis` with static bounds."""
    shape = np.shape(x)
    if start == 0 and stop == shape[axis]:
        return x
    starts = [0] * len(shape)
    limits = list(shape)
    starts[axis], limits[axis] = start, stop
    return lax_slice(x, starts, limits)


def _broadcast_in_axis(x, size, axis):
    """Stretch the size-1 axis `axis` of `x` to `size`."""
    shape = list(np.shape(x))
    shape[axis] = size
    return lax.broadcast_in_dim(x, shape, tuple(range(len(shape))))


def _index_runs(idx):
    """Split a sequence of indices into maximal runs `(first, length, step)` with step
    +1 (a slice), -1 (a reversed slice) or 0 (one element repeated)."""
    runs = []
    i, n = 0, len(idx)
    while i < n:
        j = i + 1
        step = int(idx[j] - idx[i]) if j < n else 0
        if step not in (-1, 0, 1):
            step = 0
        elif j < n:
            while j < n and idx[j] - idx[j - 1] == step:
                j += 1
        runs.append((int(idx[i]), j - i, step))
        i = j
    # Greedy runs may take the first element of an ascending run (edge padding gives
    # [0, 0, 0], [1, 2, 3]); hand it back, so whole-array runs need no slice at all.
    for k in range(len(runs) - 1):
        first, length, step = runs[k]
        nxt_first, nxt_length, nxt_step = runs[k + 1]
        last = first + step * (length - 1)
        if length > 1 and nxt_step == 1 and last == nxt_first - 1:
            runs[k] = (first, length - 1, step)
            runs[k + 1] = (last, nxt_length + 1, 1)
    return runs


def _take_static(x, idx, axis):
    """`x` indexed along `axis` by the static index sequence `idx` (copies only)."""
    n = np.shape(x)[axis]
    if len(idx) == n and np.array_equal(idx, np.arange(n)):
        return x
    pieces = []
    for first, length, step in _index_runs(idx):
        if step == 1:
            pieces.append(_slice_in_dim(x, first, first + length, axis))
        elif step == -1:
            piece = _slice_in_dim(x, first - length + 1, first + 1, axis)
            pieces.append(lax.rev(piece, (axis,)))
        else:
            piece = _slice_in_dim(x, first, first + 1, axis)
            pieces.append(
                piece if length == 1 else _broadcast_in_axis(piece, length, axis)
            )
    if not pieces:
        return _slice_in_dim(x, 0, 0, axis)
    return lax.concatenate(pieces, axis)


# ----------------------------------------------------------------------------------
# shape, ndim, size


def _warn_not_arraylike(fun_name, a):
    if not (
        isinstance(a, (Array, Tracer, np.ndarray, np.generic))
        or type(a) in (bool, int, float, complex)
        or hasattr(a, "shape")  # ShapeDtypeStruct and other shape-bearing objects
    ):
        warnings.warn(
            f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at "
            "position 0. In a future JAX release this will be an error.",
            DeprecationWarning,
            stacklevel=3,
        )


def shape(a):
    """The shape of `a` as a tuple of ints."""
    a = jax_array_value(a)
    _warn_not_arraylike("shape", a)
    return tuple(np.shape(a))


def ndim(a):
    """The number of dimensions of `a`."""
    a = jax_array_value(a)
    _warn_not_arraylike("ndim", a)
    return len(np.shape(a))


def size(a, axis=None):
    """The number of elements of `a` (along `axis`, an int or a tuple, if given)."""
    a = jax_array_value(a)
    _warn_not_arraylike("size", a)
    s = np.shape(a)
    if axis is None:
        return math.prod(s)
    return math.prod([s[i] for i in _axes(axis, len(s))])


# ----------------------------------------------------------------------------------
# reshape, ravel, transpose and friends


def _compute_newshape(a_shape, newshape):
    newshape = canonicalize_shape(newshape)
    total = math.prod(a_shape)
    unknown = [i for i, d in enumerate(newshape) if d == -1]
    if len(unknown) > 1:
        raise TypeError(
            f"can only specify one unknown axis size with a `-1` value, got {newshape}"
        )
    known = math.prod([d for d in newshape if d != -1])
    if unknown:
        if known == 0 or total % known:
            raise TypeError(
                f"cannot reshape array of shape {a_shape} (size {total}) into shape "
                f"{newshape} because the product of specified axis sizes ({known}) "
                f"does not evenly divide {total}"
            )
        newshape = tuple(total // known if d == -1 else d for d in newshape)
    elif known != total or any(d < 0 for d in newshape):
        raise TypeError(
            f"cannot reshape array of shape {a_shape} (size {total}) into shape "
            f"{newshape} (size {known})"
        )
    return newshape


def reshape(a, shape, order="C", *, copy=None, out_sharding=None):
    """`a` with a new shape (one entry may be -1); `order` is 'C' or 'F'."""
    x = _asarray("reshape", a)
    if isinstance(shape, (int, np.integer)) or (
        isinstance(shape, Tracer) and not shape.shape
    ):
        shape = (shape,)
    newshape = _compute_newshape(np.shape(x), shape)
    if order == "C":
        return lax.reshape(x, newshape)
    if order == "F":
        dims = tuple(reversed(range(np.ndim(x))))
        out = lax.reshape(x, newshape[::-1], dims)
        return lax.transpose(out, tuple(reversed(range(len(newshape)))))
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a, order="C", *, out_sharding=None):
    """`a` flattened to one dimension."""
    x = _asarray("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(x, (math.prod(np.shape(x)),), order=order)


def transpose(a, axes=None):
    """Permute the axes of `a` (reverse them by default)."""
    x = _asarray("transpose", a)
    nd = np.ndim(x)
    perm = tuple(range(nd))[::-1] if axes is None else _axes(tuple(axes), nd)
    return lax.transpose(x, perm)


def permute_dims(a, /, axes):
    """Array API name of `transpose` with explicit axes."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    x = _asarray("matrix_transpose", x)
    nd = np.ndim(x)
    if nd < 2:
        raise ValueError(
            f"x must be at least two-dimensional for matrix_transpose; got ndim={nd}"
        )
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    """Exchange two axes."""
    x = _asarray("swapaxes", a)
    nd = np.ndim(x)
    perm = list(range(nd))
    i, j = _axis(axis1, nd), _axis(axis2, nd)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(x, perm)


def moveaxis(a, source, destination):
    """Move axes `source` to positions `destination`, keeping the others in order."""
    x = _asarray("moveaxis", a)
    nd = np.ndim(x)
    src = _axes(source, nd)
    dst = _axes(destination, nd)
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    if len(set(src)) != len(src):
        raise ValueError("repeated axis in `source` argument")
    if len(set(dst)) != len(dst):
        raise ValueError("repeated axis in `destination` argument")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax.transpose(x, perm)


def rollaxis(a, axis, start=0):
    """Move `axis` so it lies before `start` (NumPy's older form of moveaxis)."""
    x = _asarray("rollaxis", a)
    nd = np.ndim(x)
    axis = _axis(axis, nd)
    start = operator.index(start)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd} <= start <= {nd}")
    start = start % (nd + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(x, axis, start) if axis != start else x


def expand_dims(a, axis):
    """Insert size-1 axes at the positions `axis` (an int or a tuple) of the result."""
    x = _asarray("expand_dims", a)
    return lax.expand_dims(x, _index_tuple(axis))


def squeeze(a, axis=None):
    """Remove size-1 axes: all of them, or those named by `axis`."""
    x = _asarray("squeeze", a)
    s = np.shape(x)
    if axis is None:
        dims = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        dims = _axes(axis, len(s))
    return lax.squeeze(x, dims)


# ----------------------------------------------------------------------------------
# Joining arrays


def _sequence(fun_name, arrays):
    """The arrays of a sequence argument (an array stands for the list of its rows)."""
    if isinstance(arrays, (list, tuple)):
        if len(arrays) == 1:
            return [operand(ensure_arraylike(fun_name, arrays[0]))]
        return [operand(x) for x in ensure_arraylike(fun_name, *arrays)]
    x = operand(ensure_arraylike(fun_name, arrays))
    if not np.shape(x):
        raise TypeError(f"{fun_name}: iteration over a 0-d array")
    return unstack(x)


def _promote_to(arrays, dtype, fun_name):
    if dtype is None:
        return promote_dtypes(*arrays)
    dtype = dtypes.check_user_dtype_supported(dtype, fun_name)
    return [lax.convert_element_type(x, dtype) for x in arrays]


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along an existing axis (`axis=None` flattens them first)."""
    if not isinstance(arrays, (list, tuple)) and axis is not None:
        check_arraylike("concatenate", arrays)
        x = operand(arrays)
        if np.ndim(x) < 2:
            raise ValueError("Zero-dimensional arrays cannot be concatenated.")
        x = _promote_to([x], dtype, "concatenate")[0]
        # Joining the rows of x along axis k merges x's axes 0 and k + 1.
        k = _axis(axis, np.ndim(x) - 1)
        moved = moveaxis(x, 0, k)
        s = np.shape(moved)
        return lax.reshape(moved, (*s[:k], s[k] * s[k + 1], *s[k + 2 :]))
    xs = _sequence("concatenate", arrays)
    if not xs:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        xs = [ravel(x) for x in xs]
        axis = 0
    if any(not np.shape(x) for x in xs):
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = _axis(axis, np.ndim(xs[0]))
    xs = _promote_to(xs, dtype, "concatenate")
    return lax.concatenate(xs, axis)


def concat(arrays, /, *, axis=0):
    """Array API name of `concatenate`."""
    return concatenate(arrays, axis=axis)


def append(arr, values, axis=None):
    """`arr` with `values` appended (both flattened when `axis` is None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis)


def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays of one shape along a new axis."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if not isinstance(arrays, (list, tuple)):
        check_arraylike("stack", arrays)
        x = _promote_to([operand(arrays)], dtype, "stack")[0]
        if not np.shape(x):
            raise ValueError("Need at least one array to stack.")
        return moveaxis(x, 0, _axis(axis, np.ndim(x)))
    xs = _sequence("stack", arrays)
    if not xs:
        raise ValueError("Need at least one array to stack.")
    shapes = [np.shape(x) for x in xs]
    if any(s != shapes[0] for s in shapes):
        raise ValueError(
            "All input arrays must have the same shape. Got "
            + ", ".join(str(s) for s in shapes)
            + "."
        )
    axis = _axis(axis, len(shapes[0]) + 1)
    return lax.stack(_promote_to(xs, dtype, "stack"), axis)


def unstack(x, /, *, axis=0):
    """The slices of `x` along `axis`, as a tuple."""
    x = _asarray("unstack", x)
    nd = np.ndim(x)
    axis = _axis(axis, nd)
    n = np.shape(x)[axis]
    if n == 0:
        return ()
    return tuple(lax.squeeze(p, (axis,)) for p in lax.split(x, (1,) * n, axis))


def hstack(tup, dtype=None):
    """Join along axis 1 (axis 0 for 1-D inputs)."""
    xs = atleast_1d(*_sequence("hstack", tup))
    xs = xs if isinstance(xs, list) else [xs]
    return concatenate(xs, 0 if np.ndim(xs[0]) == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    """Join along axis 0, after making inputs at least 2-D."""
    xs = atleast_2d(*_sequence("vstack", tup))
    xs = xs if isinstance(xs, list) else [xs]
    return concatenate(xs, 0, dtype=dtype)


def dstack(tup, dtype=None):
    """Join along axis 2, after making inputs at least 3-D."""
    xs = atleast_3d(*_sequence("dstack", tup))
    xs = xs if isinstance(xs, list) else [xs]
    return concatenate(xs, 2, dtype=dtype)


def column_stack(tup):
    """Join 1-D inputs as columns (2-D inputs as they are) along axis 1."""
    cols = []
    for x in _sequence("column_stack", tup):
        nd = np.ndim(x)
        if nd < 2:
            x = lax.broadcast_in_dim(x, (int(np.size(x)), 1), (0,) if nd else ())
        cols.append(x)
    return concatenate(cols, 1)


def _atleast(fun_name, arys, shape_of):
    check_arraylike(fun_name, *arys)
    outs = []
    for a in arys:
        x = operand(a)
        s = np.shape(x)
        new_shape, dims = shape_of(s)
        outs.append(x if new_shape == s else lax.broadcast_in_dim(x, new_shape, dims))
    return outs[0] if len(outs) == 1 else outs


def atleast_1d(*arys):
    """Each input with at least one dimension (scalars become shape (1,))."""
    return _atleast(
        "atleast_1d", arys, lambda s: ((1,), ()) if not s else (s, range(len(s)))
    )


def _shape_2d(s):
    if len(s) == 0:
        return (1, 1), ()
    if len(s) == 1:
        return (1, *s), (1,)
    return s, tuple(range(len(s)))


def _shape_3d(s):
    if len(s) == 0:
        return (1, 1, 1), ()
    if len(s) == 1:
        return (1, *s, 1), (1,)
    if len(s) == 2:
        return (*s, 1), (0, 1)
    return s, tuple(range(len(s)))


def atleast_2d(*arys):
    """Each input with at least two dimensions (1-D inputs become rows)."""
    return _atleast("atleast_2d", arys, _shape_2d)


def atleast_3d(*arys):
    """Each input with at least three dimensions, as NumPy pads them."""
    return _atleast("atleast_3d", arys, _shape_3d)


# ----------------------------------------------------------------------------------
# Splitting arrays


def _split(fun_name, ary, indices_or_sections, axis, equal):
    x = _asarray(fun_name, ary)
    s = np.shape(x)
    axis = _axis(axis, len(s))
    n = s[axis]
    if (
        not isinstance(indices_or_sections, (list, tuple))
        and np.ndim(indices_or_sections) == 0
    ):
        sections = int(
            concrete_or_error(
                np.asarray, indices_or_sections, f"in jax.numpy.{fun_name} argument 1"
            )
        )
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if equal and n % sections:
            raise ValueError(
                "array split does not result in an equal division: rest is "
                f"{n % sections}"
            )
        q, r = divmod(n, sections)
        sizes = [q + 1] * r + [q] * (sections - r)
    else:
        idx = _static_ints(indices_or_sections, f"in jax.numpy.{fun_name} argument 1")
        bounds = np.concatenate([[0], idx.ravel(), [n]])
        sizes = [int(d) for d in np.diff(bounds)]
    return list(lax.split(x, sizes, axis))


@eager_jit
def split(ary, indices_or_sections, axis=0):
    """Equal sections (an int) or pieces between the given indices along `axis`."""
    return _split("split", ary, indices_or_sections, axis, equal=True)


def array_split(ary, indices_or_sections, axis=0):
    """Like `split`, but n sections need not divide the axis evenly."""
    return _split("array_split", ary, indices_or_sections, axis, equal=False)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    axis = 0 if np.ndim(ary) == 1 else 1
    return _split("hsplit", ary, indices_or_sections, axis, equal=True)


def vsplit(ary, indices_or_sections):
    """Split along axis 0."""
    return _split("vsplit", ary, indices_or_sections, 0, equal=True)


def dsplit(ary, indices_or_sections):
    """Split along axis 2."""
    return _split("dsplit", ary, indices_or_sections, 2, equal=True)


# ----------------------------------------------------------------------------------
# Broadcasting


def broadcast_shapes(*shapes):
    """The shape that all `shapes` broadcast to (ints stand for 1-D shapes)."""
    shapes = [canonicalize_shape((s,) if isinstance(s, int) else s) for s in shapes]
    if not shapes:
        return ()
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        sizes = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(array, shape, *, out_sharding=None):
    """`array` broadcast to `shape` (NumPy rules: leading axes are added)."""
    x = _asarray("broadcast_to", array)
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    return _broadcast_to(x, canonicalize_shape(shape))


def _broadcast_to(x, shape):
    s = np.shape(x)
    if s == shape:
        return x
    nlead = len(shape) - len(s)
    if nlead < 0:
        raise ValueError(
            "Cannot broadcast to shape with fewer dimensions: "
            f"arr_shape={s} shape={shape}"
        )
    if any(d not in (1, t) for d, t in zip(s, shape[nlead:])) or any(
        d < 0 for d in shape
    ):
        aval = x.aval
        raise ValueError(
            "Incompatible types for broadcasting: input type="
            f"{aval.str_short(False)} and requested type="
            f"{aval.update(shape=shape).str_short(False)}"
        )
    return lax.broadcast_in_dim(x, shape, tuple(range(nlead, len(shape))))


def broadcast_arrays(*args):
    """All arguments broadcast to their common shape."""
    args = [jax_array_value(a) for a in args]
    check_arraylike("broadcast_arrays", *args)
    xs = [operand(a) for a in args]
    shapes = [np.shape(x) for x in xs]
    if all(s == shapes[0] for s in shapes):
        return xs
    target = broadcast_shapes(*shapes)
    return [_broadcast_to(x, target) for x in xs]


# ----------------------------------------------------------------------------------
# tile and repeat


def tile(A, reps):  # noqa: N803  (NumPy's name)
    """`A` repeated `reps[i]` times along each axis i."""
    x = _asarray("tile", A)
    if isinstance(reps, (tuple, list)):
        reps = tuple(reps)
    else:
        reps = (reps,)
    reps = canonicalize_shape(reps)
    nd = np.ndim(x)
    if len(reps) > nd:
        x = lax.broadcast_to_rank(x, len(reps))
    reps = (1,) * (np.ndim(x) - len(reps)) + reps
    return lax.tile(x, reps)


@eager_jit
def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Repeat each element `repeats` times along `axis` (flattened if None).

    `repeats` is an int or a 1-D array with one count per element. It may be traced
    only when `total_repeat_length` fixes the output size. `total_repeat_length`, if
    given, truncates the result or extends it with copies of the last element.
    """
    a, repeats = ensure_arraylike("repeat", a, repeats)
    x = operand(a)
    if axis is None:
        x = ravel(x)
        axis = 0
    axis = _axis(axis, np.ndim(x))
    n = np.shape(x)[axis]
    if isinstance(repeats, Tracer) and repeats.to_concrete_value() is None:
        if total_repeat_length is None:
            from jaxlite.errors import ConcretizationTypeError

            raise ConcretizationTypeError(
                repeats,
                "When jit-compiling jnp.repeat, the total number of repeats must be "
                "static. To fix this, either specify a static value for `repeats`, or "
                "pass a static value to `total_repeat_length`.",
            )
        return _repeat_traced(x, repeats, axis, operator.index(total_repeat_length))
    reps = _static_ints(repeats, "repeats argument of jnp.repeat")
    if np.any(reps < 0):
        raise TypeError(f"repeat: repeats must be nonnegative, got {reps.tolist()}")
    if reps.ndim == 0 or reps.size == 1:
        r = int(reps.ravel()[0]) if reps.size else 0
        if total_repeat_length is None or total_repeat_length == n * r:
            return _repeat_scalar(x, r, axis)
        reps = np.full((n,), r)
    reps = np.broadcast_to(reps, (n,))
    # NumPy's repeat takes counts it can cast safely to np.intp: not int64 where
    # np.intp has 32 bits.
    idx = np.repeat(np.arange(n), reps.astype(np.intp))
    if total_repeat_length is not None and n:
        # Beyond the repeated elements, the result continues with the last element.
        total = operator.index(total_repeat_length)
        idx = np.concatenate([idx[:total], np.full(max(total - idx.size, 0), n - 1)])
    return _take_static(x, idx, axis)


def _repeat_traced(x, repeats, axis, total):
    """Output position j takes the element whose cumulative count first exceeds j
    (the last element beyond the total of the counts)."""
    from jaxlite.numpy.indexing import take
    from jaxlite.numpy.sorting import cumsum, searchsorted
    from jaxlite.numpy.ufuncs import minimum

    n = np.shape(x)[axis]
    counts = _broadcast_to(operand(repeats), (n,))
    ends = cumsum(counts)
    positions = lax.iota(ends.dtype, total)
    idx = minimum(searchsorted(ends, positions, side="right"), n - 1)
    return take(x, idx, axis=axis)


def _repeat_scalar(x, r, axis):
    s = np.shape(x)
    expanded = (*s[: axis + 1], r, *s[axis + 1 :])
    dims = tuple(i for i in range(len(expanded)) if i != axis + 1)
    out = lax.broadcast_in_dim(x, expanded, dims)
    return lax.reshape(out, (*s[:axis], s[axis] * r, *s[axis + 1 :]))


# ----------------------------------------------------------------------------------
# flip, rot90, roll


def flip(m, axis=None):
    """Reverse the order of elements along `axis` (all axes if None)."""
    x = _asarray("flip", m)
    nd = np.ndim(x)
    dims = tuple(range(nd)) if axis is None else _axes(axis, nd)
    return lax.rev(x, dims)


def fliplr(m):
    """Reverse along axis 1."""
    return flip(m, 1)


def flipud(m):
    """Reverse along axis 0."""
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees `k` times in the plane of `axes`, from the first axis
    towards the second."""
    x = _asarray("rot90", m)
    nd = np.ndim(x)
    if nd < 2:
        raise ValueError(
            "rot90 requires its first argument to have ndim at least two, but got "
            f"first argument of shape {np.shape(x)}, which has ndim {nd}"
        )
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    ax1, ax2 = _axis(axes[0], nd), _axis(axes[1], nd)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return x
    if k == 2:
        return lax.rev(x, (ax1, ax2))
    perm = list(range(nd))
    perm[ax1], perm[ax2] = ax2, ax1
    if k == 1:
        return lax.transpose(lax.rev(x, (ax2,)), perm)
    return lax.rev(lax.transpose(x, perm), (ax2,))


def roll(a, shift, axis=None):
    """Shift elements cyclically by `shift` along `axis` (the flattened array if
    None). Shifts and axes broadcast against each other."""
    x = _asarray("roll", a)
    if axis is None:
        return reshape(roll(ravel(x), shift, 0), np.shape(x))
    if isinstance(shift, Tracer) and shift.to_concrete_value() is None:
        return _roll_dynamic(x, shift, axis)
    shifts = concrete_or_error(np.asarray, shift, "shift argument of jnp.roll")
    shifts = shifts.astype(np.int64)
    axes = np.asarray(axis)
    if axes.ndim > 1 or shifts.ndim > 1:
        raise ValueError("roll: shift and axis must be at most 1-D")
    shifts, axes = np.broadcast_arrays(shifts, axes)
    nd = np.ndim(x)
    for s, ax in zip(shifts.ravel(), axes.ravel()):
        ax = _axis(int(ax), nd)
        n = np.shape(x)[ax]
        if n:
            x = _take_static(x, np.roll(np.arange(n), int(s)), ax)
    return x


def _roll_dynamic(x, shift, axis):
    """Roll by a traced shift: along each axis, a dynamic slice of the array
    concatenated with itself."""
    from jaxlite.numpy.ufuncs import remainder, subtract

    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    if np.ndim(shift) > 1:
        raise ValueError("roll: shift and axis must be at most 1-D")
    if np.ndim(shift) == 1 and np.shape(shift)[0] not in (1, len(axes)):
        raise ValueError(
            f"roll: {np.shape(shift)[0]} shifts do not match {len(axes)} axes"
        )
    if np.ndim(shift) == 1 and len(axes) == 1:
        axes = axes * np.shape(shift)[0]
    for i, ax in enumerate(axes):
        s = shift if np.ndim(shift) == 0 else shift[i % np.shape(shift)[0]]
        ax = _axis(ax, np.ndim(x))
        n = np.shape(x)[ax]
        if n == 0:
            continue
        starts = [0] * np.ndim(x)
        starts[ax] = remainder(subtract(n, s), n)
        x = lax.dynamic_slice(lax.concatenate([x, x], ax), starts, list(np.shape(x)))
    return x


# ----------------------------------------------------------------------------------
# pad

_PAD_KWARGS = {
    "constant": {"constant_values"},
    "edge": set(),
    "wrap": set(),
    "empty": set(),
    "reflect": {"reflect_type"},
    "symmetric": {"reflect_type"},
    "maximum": {"stat_length"},
    "minimum": {"stat_length"},
    "mean": {"stat_length"},
    "median": {"stat_length"},
    "linear_ramp": {"end_values"},
}


def _concrete_nested(value, context):
    """A NumPy array of `value`, a possibly nested sequence that may hold tracers."""
    if isinstance(value, (list, tuple)):
        return np.asarray([_concrete_nested(v, context) for v in value])
    return concrete_or_error(np.asarray, value, context)


def _pad_width(pad_width, nd):
    """`pad_width` as a tuple of `nd` static (before, after) pairs."""
    try:
        arr = _concrete_nested(pad_width, "pad_width argument of jnp.pad")
    except (TypeError, ValueError) as e:
        if "Abstract tracer" in str(e):
            raise
        raise TypeError("`pad_width` must be of integral type.") from None
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise TypeError("`pad_width` must be of integral type.")
    arr = arr.astype(np.int64)
    if arr.shape not in ((nd, 2), (1, 2), (2,), (1,), ()):
        raise ValueError(
            f"jnp.pad: pad_width with nd={nd} has unsupported shape {arr.shape}. Valid "
            f"shapes are ({nd}, 2), (1, 2), (2,), (1,), or ()."
        )
    arr = np.broadcast_to(arr, (nd, 2))
    if np.any(arr < 0):
        raise ValueError("index can't contain negative values")
    return tuple((int(lo), int(hi)) for lo, hi in arr)


@eager_jit
def pad(array, pad_width, mode="constant", **kwargs):
    """Pad `array` with `pad_width[i] = (before, after)` elements along axis i.

    Modes: 'constant' (with `constant_values`), 'empty', 'edge', 'wrap', 'reflect' and
    'symmetric' (with `reflect_type` 'even' or 'odd'), 'maximum', 'minimum', 'mean'.
    """
    x = _asarray("pad", array)
    nd = np.ndim(x)
    widths = _pad_width(pad_width, nd)
    if callable(mode):
        raise NotImplementedError("jnp.pad with a callable mode is not supported yet.")
    allowed = _PAD_KWARGS.get(mode)
    if allowed is None:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - allowed
    if unsupported:
        raise ValueError(
            f"unsupported keyword arguments for mode '{mode}': {unsupported}"
        )
    if mode == "constant":
        return _pad_constant(x, widths, kwargs.get("constant_values", 0))
    if mode == "empty":
        return _pad_constant(x, widths, 0)
    if mode in ("median", "linear_ramp"):
        raise NotImplementedError(f"jnp.pad mode '{mode}' is not implemented yet.")
    for ax, (lo, hi) in enumerate(widths):
        if not (lo or hi):
            continue
        if np.shape(x)[ax] == 0:
            raise ValueError(f"Cannot apply '{mode}' padding to empty axis")
        if mode in ("maximum", "minimum", "mean"):
            if kwargs.get("stat_length") is not None:
                raise NotImplementedError("jnp.pad: stat_length is not supported yet.")
            x = _pad_stat(x, ax, lo, hi, mode)
        elif mode == "edge":
            x = _pad_edge(x, ax, lo, hi)
        elif mode in ("reflect", "symmetric"):
            reflect_type = kwargs.get("reflect_type", "even")
            if reflect_type not in ("even", "odd"):
                raise ValueError(
                    f"reflect_type must be 'even' or 'odd', got {reflect_type!r}"
                )
            x = _pad_reflect(x, ax, lo, hi, mode, reflect_type == "odd")
        else:
            n = np.shape(x)[ax]
            x = _take_static(x, np.pad(np.arange(n), (lo, hi), mode=mode), ax)
    return x


def _pad_constant(x, widths, constant_values):
    from jaxlite.numpy.creation import asarray

    dtype = x.dtype
    values = asarray(constant_values)
    if np.ndim(values) == 0:
        value = lax.convert_element_type(values, dtype)
        return lax.pad(x, value, tuple((lo, hi, 0) for lo, hi in widths))
    nd = len(widths)
    values = broadcast_to(values, (nd, 2))
    for ax, (lo, hi) in enumerate(widths):
        for side, width in enumerate((lo, hi)):
            entry = _slice_in_dim(
                _slice_in_dim(values, ax, ax + 1, 0), side, side + 1, 1
            )
            value = lax.convert_element_type(lax.reshape(entry, ()), dtype)
            config = [(0, 0, 0)] * nd
            config[ax] = (width, 0, 0) if side == 0 else (0, width, 0)
            x = lax.pad(x, value, tuple(config))
    return x


def _pad_edge(x, ax, lo, hi):
    n = np.shape(x)[ax]
    pieces = [x]
    if lo:
        pieces.insert(0, _broadcast_in_axis(_slice_in_dim(x, 0, 1, ax), lo, ax))
    if hi:
        pieces.append(_broadcast_in_axis(_slice_in_dim(x, n - 1, n, ax), hi, ax))
    return lax.concatenate(pieces, ax)


def _pad_stat(x, ax, lo, hi, mode):
    from jaxlite.numpy.ufuncs import round as round_
    from jaxlite.numpy.ufuncs import true_divide

    n = np.shape(x)[ax]
    if mode == "maximum":
        stat = lax.reduce_max(x, (ax,))
    elif mode == "minimum":
        stat = lax.reduce_min(x, (ax,))
    else:
        exact = not dtypes.issubdtype(x.dtype, np.inexact)
        values = x
        if exact or np.dtype(x.dtype).itemsize < 4:
            # Integers, and 16-bit floats (as jnp.mean), are averaged in float32.
            values = lax.convert_element_type(x, np.float32)
        stat = true_divide(lax.reduce_sum(values, (ax,)), n)
        if exact:
            stat = round_(stat)  # NumPy rounds the mean of integers (half to even)
        stat = lax.convert_element_type(stat, x.dtype)
    stat = lax.expand_dims(stat, (ax,))
    pieces = [_broadcast_in_axis(stat, lo, ax), x, _broadcast_in_axis(stat, hi, ax)]
    return lax.concatenate([p for p in pieces if np.shape(p)[ax]], ax)


def _pad_reflect(x, ax, lo, hi, mode, odd):
    """Reflect or mirror (`symmetric`) padding along one axis, as NumPy does it: each
    round reflects at most one period of the values padded so far."""
    n = np.shape(x)[ax]
    if n == 1:
        mode = "edge"  # NumPy's legacy behaviour for a singleton axis
    if not odd or n == 1:
        return _take_static(x, np.pad(np.arange(n), (lo, hi), mode=mode), ax)
    symmetric = mode == "symmetric"
    from jaxlite.numpy.ufuncs import multiply, subtract

    def odd_chunk(chunk, edge):
        edge = _broadcast_in_axis(edge, np.shape(chunk)[ax], ax)
        return subtract(multiply(edge, 2), chunk)

    while lo or hi:
        length = np.shape(x)[ax]
        if symmetric:
            period = length // n * n
        else:
            period = (length - 1) // (n - 1) * (n - 1)
        if lo:
            size = min(period, lo)
            start = 0 if symmetric else 1
            chunk = lax.rev(_slice_in_dim(x, start, start + size, ax), (ax,))
            chunk = odd_chunk(chunk, _slice_in_dim(x, 0, 1, ax))
            x = lax.concatenate([chunk, x], ax)
            lo -= size
        if hi:
            size = min(period, hi)
            length = np.shape(x)[ax]
            stop = length if symmetric else length - 1
            chunk = lax.rev(_slice_in_dim(x, stop - size, stop, ax), (ax,))
            chunk = odd_chunk(chunk, _slice_in_dim(x, length - 1, length, ax))
            x = lax.concatenate([x, chunk], ax)
            hi -= size
    return x
