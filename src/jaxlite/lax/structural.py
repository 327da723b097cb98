"""Structural primitives: they move elements around without computing new values.

broadcast_in_dim, reshape, squeeze, transpose, concatenate, stack, split, tile, pad,
rev, iota and copy (`slice` and the dynamic slices live in `lax/indexing.py`). Shapes
and axes are static parameters. Each primitive's abstract evaluation checks them and
raises JAX's error, naming the primitive, the argument and the shapes (eager calls run
it too, so they fail exactly as traced ones do).
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

from jaxlite import dtypes
from jaxlite.array import real_buffer
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.backend.numpy_backend import inline
from jaxlite.core import (
    Literal,
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    as_value,
    impl_rules,
    no_effects,
    physical_rules,
)
from jaxlite.errors import JaxRuntimeError
from jaxlite.interpreters import ad, batching, physical
from jaxlite.lax.rules import check_same_dtypes
from jaxlite.util import canonicalize_axis

__all__ = [
    "broadcast",
    "broadcast_in_dim",
    "broadcast_shapes",
    "broadcast_to_rank",
    "broadcasted_iota",
    "collapse",
    "concatenate",
    "expand_dims",
    "iota",
    "pad",
    "reshape",
    "rev",
    "split",
    "squeeze",
    "stack",
    "tile",
    "transpose",
    "unstack",
]


# --------------------------------------------------------------------------------------
# Static arguments and operands


def canonicalize_shape(shape, context=""):
    """A tuple of Python ints, or JAX's TypeError explaining that shapes are static.

    Every dimension must be an integer known at trace time: a Python int, a NumPy
    integer, an integer Array or a tracer with a concrete value (e.g. a JVP primal).
    """
    if type(shape) is tuple and all(type(d) is int for d in shape):
        return shape
    try:
        dims = tuple(shape)
    except TypeError:
        dims = (shape,)
    out = []
    for d in dims:
        if isinstance(d, Tracer) and d.to_concrete_value() is None:
            raise TypeError(_shape_error(dims, context) + _tracing_context(d))
        try:
            out.append(operator.index(d))
        except TypeError:
            raise TypeError(_shape_error(dims, context)) from None
    return tuple(out)


def _shape_error(dims, context):
    msg = (
        f"Shapes must be 1D sequences of concrete values of integer type, got {dims}.\n"
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller "
        "subfunctions.\n"
    )
    return msg + (context + "\n" if context else "")


def _tracing_context(tracer):
    describe = getattr(tracer._trace, "describe_tracer", None)
    return describe(tracer) if describe is not None else ""


# `x` as a lax operand: Python scalars and NumPy values become Arrays of a canonical
# dtype (weak for Python scalars) owning their memory; core's one conversion.
operand = as_value


def _axes_tuple(axes):
    return tuple(operator.index(a) for a in axes)


def _inverse_permutation(perm):
    return tuple(int(i) for i in np.argsort(perm))


def _shape_of(x):
    """Shape of a transpose-rule argument: a value or an `UndefinedPrimal`."""
    return x.aval.shape if ad.is_undefined(x) else np.shape(x)


def _sum_axes(x, axes):
    from jaxlite.lax.reductions import reduce_sum_p

    return reduce_sum_p.bind(x, axes=tuple(sorted(axes))) if axes else x


def _at_front(vals, dims, axis_size):
    """Every operand with its batch axis first (unbatched ones broadcast)."""
    return [batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)]


# --------------------------------------------------------------------------------------
# broadcast_in_dim


# The most bytes a NumPy array may span on this platform, a view included (2 GiB on
# 32-bit platforms, where NumPy raises ValueError past it).
_MAX_NBYTES = np.iinfo(np.intp).max


def _broadcast_view(x, shape, broadcast_dimensions, where="broadcast_in_dim"):
    """`x` broadcast to `shape` as a view (zero strides on the new axes). A shape
    that NumPy cannot index on this platform raises XLA's RESOURCE_EXHAUSTED error
    (`where` names the operation), as laying it out would on a 64-bit one."""
    x = np.asarray(x)
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    expanded = tuple(expanded)
    if expanded == shape:  # only new unit axes: a reshape (np.broadcast_to is slow)
        return x.reshape(shape)
    nbytes = math.prod(shape) * x.dtype.itemsize
    if nbytes > _MAX_NBYTES:
        raise JaxRuntimeError.out_of_memory(shape, x.dtype, nbytes, where)
    return np.broadcast_to(x.reshape(expanded), shape)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, sharding):
    # The result is an Array's buffer: laid out, as XLA's are (see `real_buffer`).
    out = _broadcast_view(x, shape, broadcast_dimensions)
    return [real_buffer(out, "broadcast_in_dim")]


def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions, sharding):
    if any(d < 0 for d in shape):
        raise TypeError(
            "broadcast_in_dim shape must have every element be nonnegative, got "
            f"{shape}."
        )
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand "
            f"ndim; got broadcast_dimensions {broadcast_dimensions} for operand ndim "
            f"{x.ndim}."
        )
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape) or x.shape[src] not in (1, shape[dst]):
            raise TypeError(
                "broadcast_in_dim operand dimension sizes must either be 1, or be "
                "equal to their corresponding dimensions in the target broadcast "
                f"shape; got operand of shape {x.shape}, target broadcast shape "
                f"{shape}, "
                f"broadcast_dimensions {broadcast_dimensions}"
            )
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
            f"broadcast_dimensions {broadcast_dimensions}"
        )
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding):
    if type(ct) is ad.Zero:
        return [None]
    in_shape = x.aval.shape
    new_dims = [d for d in range(len(shape)) if d not in broadcast_dimensions]
    stretched = [
        d
        for i, d in enumerate(broadcast_dimensions)
        if in_shape[i] == 1 and shape[d] != 1
    ]
    return [reshape(_sum_axes(ct, new_dims + stretched), in_shape)]


def _broadcast_in_dim_batch(
    axis_size, vals, dims, *, shape, broadcast_dimensions, sharding
):
    (x,) = _at_front(vals, dims, axis_size)
    out = broadcast_in_dim_p.bind(
        x,
        broadcast_dimensions=(0, *(d + 1 for d in broadcast_dimensions)),
        shape=(np.shape(x)[0], *shape),
        sharding=sharding,
    )
    return [out], [0]


def _broadcast_small(x, expanded, shape):
    """A fresh array of `shape` holding `x` reshaped to `expanded`, broadcast (for
    small outputs, one copy costs less than `np.broadcast_to`)."""
    out = np.empty(shape, x.dtype)
    out[...] = x.reshape(expanded)
    return out


def _constant(value, shape, broadcast_dimensions, where):
    """A read-only broadcast shared by every call of compiled code: laid out when small
    (the function may return it), a view when large (only used inside the function; an
    output is laid out by the backend, see `numpy_backend`)."""
    out = _broadcast_view(value, shape, broadcast_dimensions, where)
    if math.prod(shape) <= _SMALL:
        out = np.array(out, order="C")
    else:
        out = out.view()
    out.flags.writeable = False
    return out


_SMALL = 4096  # elements: below it, a copy costs less than a view


def _broadcast_in_dim_lowering(ctx, x, *, shape, broadcast_dimensions, sharding):
    (var,) = ctx.eqn.invars
    if type(var) is Literal:  # a constant: broadcast once, when compiling
        value = np.asarray(var.val, var.aval.dtype)
        return ctx.add_global(
            _constant(value, shape, broadcast_dimensions, "broadcast_in_dim"), "bcast"
        )
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = var.aval.shape[src]
    expanded = tuple(expanded)
    if expanded == tuple(shape):
        return f"{x}.reshape({expanded})"
    if math.prod(shape) <= _SMALL:
        fn = ctx.add_global(_broadcast_small, "broadcast_small")
        return f"{fn}({x}, {expanded}, {tuple(shape)})"
    return f"np.broadcast_to({x}.reshape({expanded}), {tuple(shape)})"


broadcast_in_dim_p = Primitive("broadcast_in_dim")
impl_rules[broadcast_in_dim_p] = _broadcast_in_dim_impl
lowering_rules[broadcast_in_dim_p] = _broadcast_in_dim_lowering
native_rules[broadcast_in_dim_p] = "broadcast_in_dim"
abstract_eval_rules[broadcast_in_dim_p] = _broadcast_in_dim_abstract
ad.deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)
batching.batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch
physical_rules[broadcast_in_dim_p] = physical.by_elements(broadcast_in_dim_p)


def broadcast_in_dim(operand_, shape, broadcast_dimensions):
    """Broadcast `operand_` to `shape`; its axis i becomes `broadcast_dimensions[i]`."""
    x = operand(operand_)
    shape = canonicalize_shape(shape)
    dims = _axes_tuple(broadcast_dimensions)
    if np.shape(x) == shape and dims == tuple(range(len(shape))):
        return x
    params = dict(broadcast_dimensions=dims, shape=shape, sharding=None)
    return broadcast_in_dim_p.bind(x, **params)


def broadcast(operand_, sizes):
    """Add leading dimensions of the given sizes."""
    sizes = canonicalize_shape(sizes)
    nd = np.ndim(operand_)
    shape = sizes + tuple(np.shape(operand_))
    return broadcast_in_dim(operand_, shape, tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to_rank(x, rank):
    """Give `x` leading size-1 axes up to `rank` dimensions."""
    nd = np.ndim(x)
    if nd >= rank:
        return operand(x)
    shape = (1,) * (rank - nd) + tuple(np.shape(x))
    return broadcast_in_dim(x, shape, tuple(range(rank - nd, rank)))


# --------------------------------------------------------------------------------------
# reshape


def _reshape_impl(x, *, new_sizes, dimensions, sharding):
    x = np.asarray(x)
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return [x.reshape(new_sizes)]


def _reshape_abstract(x, *, new_sizes, dimensions, sharding):
    if any(d < 0 for d in new_sizes):
        raise TypeError(f"reshape new_sizes must all be positive, got {new_sizes}.")
    if math.prod(new_sizes) != math.prod(x.shape):
        raise TypeError(
            "reshape total size must be unchanged, got new_sizes "
            f"{new_sizes} for shape {x.shape}."
        )
    if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
        raise TypeError(
            "reshape dimensions must be a permutation of operand dimensions, got "
            f"dimensions {dimensions} for shape {x.shape}."
        )
    return [ShapedArray(new_sizes, x.dtype, x.weak_type)], no_effects


def _reshape_transpose(ct, x, *, new_sizes, dimensions, sharding):
    if type(ct) is ad.Zero:
        return [None]
    in_shape = x.aval.shape
    if dimensions is None:
        return [reshape(ct, in_shape)]
    permuted = reshape(ct, tuple(in_shape[d] for d in dimensions))
    return [transpose(permuted, _inverse_permutation(dimensions))]


def _reshape_batch(axis_size, vals, dims, *, new_sizes, dimensions, sharding):
    (x,) = _at_front(vals, dims, axis_size)
    if dimensions is not None:
        dimensions = (0, *(d + 1 for d in dimensions))
    out = reshape_p.bind(
        x,
        dimensions=dimensions,
        new_sizes=(np.shape(x)[0], *new_sizes),
        sharding=sharding,
    )
    return [out], [0]


reshape_p = Primitive("reshape")
impl_rules[reshape_p] = _reshape_impl
abstract_eval_rules[reshape_p] = _reshape_abstract
ad.deflinear(reshape_p, _reshape_transpose)
batching.batch_rules[reshape_p] = _reshape_batch
physical_rules[reshape_p] = physical.by_elements(reshape_p)
native_rules[reshape_p] = "reshape"


def reshape(operand_, new_sizes, dimensions=None):
    """Reshape (in row-major order), after transposing by `dimensions` if given."""
    x = operand(operand_)
    new_sizes = canonicalize_shape(new_sizes)
    dims = None if dimensions is None else _axes_tuple(dimensions)
    if dims == tuple(range(np.ndim(x))):
        dims = None
    if np.shape(x) == new_sizes and dims is None:
        return x
    params = dict(dimensions=dims, new_sizes=new_sizes, sharding=None)
    return reshape_p.bind(x, **params)


def collapse(operand_, start_dimension, stop_dimension=None):
    """Merge the axes `start_dimension:stop_dimension` into one."""
    x = operand(operand_)
    shape = np.shape(x)
    start = canonicalize_axis(start_dimension, len(shape))
    stop = len(shape) if stop_dimension is None else stop_dimension
    stop = canonicalize_axis(stop, len(shape) + 1) if stop >= 0 else stop + len(shape)
    size = math.prod(shape[start:stop])
    return reshape(x, (*shape[:start], size, *shape[stop:]))


# --------------------------------------------------------------------------------------
# squeeze and expand_dims


def _squeeze_abstract(x, *, dimensions):
    for d in dimensions:
        if not 0 <= d < x.ndim or x.shape[d] != 1:
            raise ValueError(
                "cannot select an axis to squeeze out which has size not equal to one, "
                f"got shape={x.shape} and dimensions={dimensions}"
            )
    shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


def _squeeze_transpose(ct, x, *, dimensions):
    return [None if type(ct) is ad.Zero else reshape(ct, x.aval.shape)]


def _squeeze_batch(axis_size, vals, dims, *, dimensions):
    (x,) = _at_front(vals, dims, axis_size)
    return [squeeze_p.bind(x, dimensions=tuple(d + 1 for d in dimensions))], [0]


squeeze_p = Primitive("squeeze")
impl_rules[squeeze_p] = lambda x, *, dimensions: [np.squeeze(x, dimensions)]
abstract_eval_rules[squeeze_p] = _squeeze_abstract
lowering_rules[squeeze_p] = inline("np.squeeze({0}, {dimensions})")
native_rules[squeeze_p] = "squeeze"
ad.deflinear(squeeze_p, _squeeze_transpose)
batching.batch_rules[squeeze_p] = _squeeze_batch
physical_rules[squeeze_p] = physical.by_elements(squeeze_p)


def squeeze(array, dimensions):
    """Remove the size-1 axes `dimensions` (negative axes count from the end)."""
    x = operand(array)
    ndim = np.ndim(x)
    dims = tuple(canonicalize_axis(d, ndim) for d in dimensions)
    if len(set(dims)) != len(dims):
        raise ValueError(f"dimensions are not unique: {tuple(dimensions)}")
    dims = tuple(sorted(dims))
    if not dims:
        return x
    return squeeze_p.bind(x, dimensions=dims)


def expand_dims(array, dimensions):
    """Insert size-1 axes at `dimensions` (positions in the result)."""
    x = operand(array)
    shape = list(np.shape(x))
    ndim_out = len(shape) + len(dimensions)
    dims = [canonicalize_axis(d, ndim_out) for d in dimensions]
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {tuple(dimensions)}")
    for d in sorted(dims):
        shape.insert(d, 1)
    kept = [i for i in range(ndim_out) if i not in dims]
    return broadcast_in_dim(x, shape, kept)


# --------------------------------------------------------------------------------------
# transpose


def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for operand shape {x.shape}."
        )
    shape = tuple(x.shape[p] for p in permutation)
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


def _transpose_transpose(ct, x, *, permutation):
    if type(ct) is ad.Zero:
        return [None]
    return [transpose(ct, _inverse_permutation(permutation))]


def _transpose_batch(axis_size, vals, dims, *, permutation):
    (x,) = _at_front(vals, dims, axis_size)
    perm = (0, *(p + 1 for p in permutation))
    return [transpose_p.bind(x, permutation=perm)], [0]


transpose_p = Primitive("transpose")
impl_rules[transpose_p] = lambda x, *, permutation: [np.transpose(x, permutation)]
abstract_eval_rules[transpose_p] = _transpose_abstract
lowering_rules[transpose_p] = inline("np.transpose({0}, {permutation})")
native_rules[transpose_p] = "transpose"
ad.deflinear(transpose_p, _transpose_transpose)
batching.batch_rules[transpose_p] = _transpose_batch
physical_rules[transpose_p] = physical.by_elements(transpose_p)


def transpose(operand_, permutation):
    """Permute the axes: output axis i is input axis `permutation[i]`."""
    x = operand(operand_)
    perm = _axes_tuple(permutation)
    if perm == tuple(range(np.ndim(x))):
        return x
    return transpose_p.bind(x, permutation=perm)


# --------------------------------------------------------------------------------------
# concatenate


def _concatenate_abstract(*xs, dimension):
    if not xs:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    check_same_dtypes("concatenate", xs)
    first = xs[0]
    shapes = ", ".join(str(x.shape) for x in xs)
    if any(x.ndim != first.ndim for x in xs):
        raise TypeError(
            "Cannot concatenate arrays with different numbers of dimensions: got "
            f"{shapes}."
        )
    if not 0 <= dimension < first.ndim:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            f"{shapes}."
        )
    for x in xs[1:]:
        if any(
            a != b
            for i, (a, b) in enumerate(zip(x.shape, first.shape))
            if i != dimension
        ):
            raise TypeError(
                "Cannot concatenate arrays with shapes that differ in dimensions other "
                f"than the one being concatenated: concatenating along dimension "
                f"{dimension} for shapes {shapes}."
            )
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    weak = all(x.weak_type for x in xs)
    return [ShapedArray(shape, first.dtype, weak)], no_effects


def _concatenate_lowering(ctx, *xs, dimension):
    return f"np.concatenate(({', '.join(xs)},), {dimension})"


def _concatenate_transpose(ct, *xs, dimension):
    if type(ct) is ad.Zero:
        return [None] * len(xs)
    sizes = tuple(_shape_of(x)[dimension] for x in xs)
    pieces = split_p.bind(ct, axis=dimension, sizes=sizes)
    return [p if ad.is_undefined(x) else None for p, x in zip(pieces, xs)]


def _concatenate_batch(axis_size, vals, dims, *, dimension):
    xs = _at_front(vals, dims, axis_size)
    return [concatenate_p.bind(*xs, dimension=dimension + 1)], [0]


concatenate_p = Primitive("concatenate")
impl_rules[concatenate_p] = lambda *xs, dimension: [np.concatenate(xs, dimension)]
abstract_eval_rules[concatenate_p] = _concatenate_abstract
lowering_rules[concatenate_p] = _concatenate_lowering
native_rules[concatenate_p] = "concatenate"
ad.deflinear(concatenate_p, _concatenate_transpose)
batching.batch_rules[concatenate_p] = _concatenate_batch
physical_rules[concatenate_p] = physical.by_elements(concatenate_p)


def concatenate(operands, dimension):
    """Join arrays of one dtype along the existing axis `dimension`."""
    xs = [operand(x) for x in operands]
    if not xs:
        raise ValueError("concatenate requires a non-empty sequences of arrays")
    dimension = operator.index(dimension)
    if len(xs) == 1:
        return xs[0]
    return concatenate_p.bind(*xs, dimension=dimension)


# --------------------------------------------------------------------------------------
# stack: join arrays of one shape along a new axis


def _stack_abstract(*xs, axis):
    if not xs:
        raise ValueError("Need at least one array to stack.")
    check_same_dtypes("stack", xs)
    first = xs[0]
    if any(x.shape != first.shape for x in xs):
        shapes = ", ".join(str(x.shape) for x in xs)
        raise ValueError(f"All input arrays must have the same shape. Got {shapes}.")
    if not 0 <= axis <= first.ndim:
        raise ValueError(
            f"axis {axis} is out of bounds for array of dimension {first.ndim + 1}"
        )
    shape = (*first.shape[:axis], len(xs), *first.shape[axis:])
    return [ShapedArray(shape, first.dtype, all(x.weak_type for x in xs))], no_effects


def _stack_lowering(ctx, *xs, axis):
    return f"np.stack(({', '.join(xs)},), {axis})"


def _stack_transpose(ct, *xs, axis):
    if type(ct) is ad.Zero:
        return [None] * len(xs)
    pieces = split_p.bind(ct, axis=axis, sizes=(1,) * len(xs))
    return [
        reshape(p, x.aval.shape) if ad.is_undefined(x) else None
        for p, x in zip(pieces, xs)
    ]


def _stack_batch(axis_size, vals, dims, *, axis):
    xs = _at_front(vals, dims, axis_size)
    return [stack_p.bind(*xs, axis=axis + 1)], [0]


stack_p = Primitive("stack")
impl_rules[stack_p] = lambda *xs, axis: [np.stack(xs, axis)]
abstract_eval_rules[stack_p] = _stack_abstract
lowering_rules[stack_p] = _stack_lowering
native_rules[stack_p] = "stack"
ad.deflinear(stack_p, _stack_transpose)
batching.batch_rules[stack_p] = _stack_batch
physical_rules[stack_p] = physical.by_elements(stack_p)


def stack(operands, axis=0):
    """Join arrays of one shape and dtype along a new axis `axis`."""
    xs = [operand(x) for x in operands]
    if not xs:
        raise ValueError("Need at least one array to stack.")
    axis = canonicalize_axis(axis, np.ndim(xs[0]) + 1)
    return stack_p.bind(*xs, axis=axis)


# --------------------------------------------------------------------------------------
# split: consecutive pieces of given sizes along one axis


def _split_abstract(x, *, axis, sizes):
    if not 0 <= axis < x.ndim:
        raise ValueError(
            f"axis {axis} is out of bounds for array of dimension {x.ndim}"
        )
    if any(s < 0 for s in sizes):
        raise ValueError(
            f"Sizes passed to split must be nonnegative, got {list(sizes)}"
        )
    if sum(sizes) != x.shape[axis]:
        raise ValueError(
            f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
            f"operand shape {list(x.shape)}"
        )
    outs = []
    for s in sizes:
        shape = (*x.shape[:axis], s, *x.shape[axis + 1 :])
        outs.append(ShapedArray(shape, x.dtype, x.weak_type))
    return outs, no_effects


def _split_impl(x, *, axis, sizes):
    x = np.asarray(x)
    lead = (slice(None),) * axis
    outs, start = [], 0
    for s in sizes:  # basic slicing: views, as np.split gives (which is slower)
        outs.append(x[(*lead, slice(start, start + s))])
        start += s
    return outs


def _split_transpose(cts, x, *, axis, sizes):
    if all(type(ct) is ad.Zero for ct in cts):
        return [None]
    return [concatenate_p.bind(*(ad.instantiate(ct) for ct in cts), dimension=axis)]


def _split_batch(axis_size, vals, dims, *, axis, sizes):
    (x,) = _at_front(vals, dims, axis_size)
    return split_p.bind(x, axis=axis + 1, sizes=sizes), [0] * len(sizes)


split_p = Primitive("split", multiple_results=True)
impl_rules[split_p] = _split_impl
abstract_eval_rules[split_p] = _split_abstract
ad.deflinear(split_p, _split_transpose)
batching.batch_rules[split_p] = _split_batch
physical_rules[split_p] = physical.by_elements(split_p)
native_rules[split_p] = "split"


def split(operand_, sizes, axis=0):
    """Consecutive pieces of `operand_` along `axis` with the given sizes."""
    x = operand(operand_)
    sizes = tuple(operator.index(s) for s in sizes)
    axis = canonicalize_axis(axis, np.ndim(x))
    return split_p.bind(x, axis=axis, sizes=sizes)


def unstack(x, axis=0):
    """The slices of `x` along `axis`, as a tuple (the inverse of `stack`)."""
    x = operand(x)
    axis = canonicalize_axis(axis, np.ndim(x))
    pieces = split(x, (1,) * np.shape(x)[axis], axis)
    return tuple(squeeze(p, (axis,)) for p in pieces)


def broadcast_shapes(*shapes):
    """The NumPy-style broadcast of `shapes` (ranks are aligned on the right)."""
    shapes = [tuple(operator.index(d) for d in s) for s in shapes]
    if not shapes:
        raise ValueError("broadcast_shapes needs at least one shape.")
    rank = max(len(s) for s in shapes)
    out = []
    for ds in zip(*((1,) * (rank - len(s)) + s for s in shapes)):
        sizes = {d for d in ds if d != 1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


# --------------------------------------------------------------------------------------
# tile


def _tile_abstract(x, *, reps):
    if len(reps) != x.ndim:
        raise TypeError(
            "reps length must be equal to the ndim of x, got "
            f"len(reps)={len(reps)} and x.ndim={x.ndim}."
        )
    if any(r < 0 for r in reps):
        raise ValueError(f"tile reps must be nonnegative, got reps={reps}.")
    shape = tuple(d * r for d, r in zip(x.shape, reps))
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


def _tile_transpose(ct, x, *, reps):
    if type(ct) is ad.Zero:
        return [None]
    # Axis i of the tiled array is (rep, element) in row-major order: sum over reps.
    in_shape = x.aval.shape
    split_shape = [n for pair in zip(reps, in_shape) for n in pair]
    summed = _sum_axes(reshape(ct, split_shape), range(0, 2 * len(reps), 2))
    return [reshape(summed, in_shape)]


def _tile_batch(axis_size, vals, dims, *, reps):
    (x,) = _at_front(vals, dims, axis_size)
    return [tile_p.bind(x, reps=(1, *reps))], [0]


tile_p = Primitive("tile")
impl_rules[tile_p] = lambda x, *, reps: [np.tile(x, reps)]
abstract_eval_rules[tile_p] = _tile_abstract
lowering_rules[tile_p] = inline("np.tile({0}, {reps})")
ad.deflinear(tile_p, _tile_transpose)
batching.batch_rules[tile_p] = _tile_batch
physical_rules[tile_p] = physical.by_elements(tile_p)


def tile(operand_, reps):
    """Repeat the whole array `reps[i]` times along each axis i (len(reps) == ndim)."""
    x = operand(operand_)
    reps = tuple(operator.index(r) for r in reps)
    return tile_p.bind(x, reps=reps)


# --------------------------------------------------------------------------------------
# pad: low, high and interior padding per axis; negative low/high padding crops


def _padded_size(n, lo, hi, interior):
    return lo + hi + n + max(n - 1, 0) * interior


def _pad_abstract(x, padding_value, *, padding_config):
    if x.dtype != padding_value.dtype:
        raise TypeError(
            "pad operand and padding_value must be same dtype: got "
            f"{x.dtype.name} and {padding_value.dtype.name}."
        )
    if padding_value.shape:
        raise ValueError(
            "padding_value must be a scalar; got "
            f"np.shape(padding_value)={padding_value.shape}"
        )
    if len(padding_config) != x.ndim:
        raise ValueError(
            "length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {x.shape}"
        )
    if any(interior < 0 for _, _, interior in padding_config):
        raise ValueError(
            "interior padding in padding_config must be nonnegative, got "
            f"padding_config {padding_config}"
        )
    shape = tuple(_padded_size(n, *cfg) for n, cfg in zip(x.shape, padding_config))
    if any(d < 0 for d in shape):
        raise ValueError(
            "Dimension size after padding is not at least 0, got result shape "
            f"{shape}, for padding_config {padding_config} and operand shape {x.shape}"
        )
    weak = x.weak_type and padding_value.weak_type
    return [ShapedArray(shape, x.dtype, weak)], no_effects


def _pad_impl(x, padding_value, *, padding_config):
    x = np.asarray(x)
    full_shape, interior_slices, crop = [], [], []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        lo_pos, hi_pos = max(lo, 0), max(hi, 0)
        size = _padded_size(n, lo_pos, hi_pos, interior)
        full_shape.append(size)
        interior_slices.append(slice(lo_pos, size - hi_pos, interior + 1))
        crop.append(slice(lo_pos - lo, size - (hi_pos - hi)))
    out = np.full(full_shape, padding_value, dtype=x.dtype)
    out[tuple(interior_slices)] = x
    return [out[tuple(crop)]]


def _pad_transpose(ct, x, padding_value, *, padding_config):
    if type(ct) is ad.Zero:
        return [None, None]
    from jaxlite.lax.indexing import slice as lax_slice

    zero = np.zeros((), ct.dtype)[()]
    # Undo the low/high padding (negative padding there comes back as zeros), then
    # keep every (interior + 1)-th element.
    unpadded = pad_p.bind(
        ct, zero, padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    )
    t_operand = unpadded
    if any(interior for _, _, interior in padding_config):
        strides = tuple(interior + 1 for _, _, interior in padding_config)
        t_operand = lax_slice(
            unpadded, (0,) * len(strides), np.shape(unpadded), strides
        )
    t_value = None
    if ad.is_undefined(padding_value):
        from jaxlite.lax.elementwise import sub

        everything = tuple(range(len(padding_config)))
        t_value = sub(_sum_axes(ct, everything), _sum_axes(t_operand, everything))
    return [t_operand if ad.is_undefined(x) else None, t_value]


def _pad_batch(axis_size, vals, dims, *, padding_config):
    x, value = vals
    x = batching.bdim_at_front(x, dims[0], axis_size)
    config = ((0, 0, 0), *padding_config)
    if dims[1] is batching.not_mapped:
        return [pad_p.bind(x, value, padding_config=config)], [0]
    # One padding value per batch element: pad with zeros, then select the values
    # where the mask of padded positions says so.
    from jaxlite.lax.elementwise import select_n_p

    zero = np.zeros((), np.dtype(x.dtype))[()]
    padded = pad_p.bind(x, zero, padding_config=config)
    inside = np.ones(np.shape(x), np.bool_)
    mask = pad_p.bind(inside, np.False_, padding_config=config)
    values = broadcast_in_dim(
        batching.moveaxis(value, dims[1], 0), np.shape(padded), (0,)
    )
    return [select_n_p.bind(mask, values, padded)], [0]


pad_p = Primitive("pad")
impl_rules[pad_p] = _pad_impl
native_rules[pad_p] = "pad"
abstract_eval_rules[pad_p] = _pad_abstract
ad.deflinear(pad_p, _pad_transpose)
batching.batch_rules[pad_p] = _pad_batch
physical_rules[pad_p] = physical.by_elements(pad_p)


def pad(operand_, padding_value, padding_config):
    """Pad with a scalar: `padding_config[i] = (low, high, interior)` for axis i.

    Interior padding goes between elements; negative low or high padding removes
    elements from that end.
    """
    x, value = operand(operand_), operand(padding_value)
    config = tuple(tuple(operator.index(p) for p in cfg) for cfg in padding_config)
    if any(len(cfg) != 3 for cfg in config):
        raise ValueError(
            "padding_config must be a sequence of (low, high, interior) triples, got "
            f"{padding_config}"
        )
    return pad_p.bind(x, value, padding_config=config)


# --------------------------------------------------------------------------------------
# iota


def _iota_impl(*, dtype, shape, dimension, sharding):
    r = np.arange(shape[dimension], dtype=dtype)
    out = _broadcast_view(r, shape, (dimension,), "iota")
    return [real_buffer(out, "iota")]


def _iota_abstract(*, dtype, shape, dimension, sharding):
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension {dimension} out of range for shape {shape}")
    if any(d < 0 for d in shape):
        raise TypeError(
            f"iota shape must have every element be nonnegative, got {shape}."
        )
    return [ShapedArray(shape, dtype)], no_effects


def _iota_lowering(ctx, *, dtype, shape, dimension, sharding):
    if shape[dimension] > _LARGE_IOTA:
        # A long range (random bits count 0..n-1): made when the code runs, so that
        # the compiled function does not hold its memory between calls.
        dtype_name = ctx.add_global(np.dtype(dtype), "dtype")
        r = f"{ctx.add_global(np.arange, 'arange')}({shape[dimension]}, dtype={dtype_name})"
        if len(shape) == 1:
            ctx.fresh_output = True
            return r
        view = ctx.add_global(functools.partial(_broadcast_view, where="iota"), "view")
        return f"{view}({r}, {tuple(shape)!r}, ({dimension},))"
    r = np.arange(shape[dimension], dtype=dtype)  # computed once, when compiling
    return ctx.add_global(_constant(r, shape, (dimension,), "iota"), "iota")


_LARGE_IOTA = 1 << 16  # elements along the iota's dimension


iota_p = Primitive("iota")
impl_rules[iota_p] = _iota_impl
abstract_eval_rules[iota_p] = _iota_abstract
lowering_rules[iota_p] = _iota_lowering
native_rules[iota_p] = "iota"


def iota(dtype, size):
    """`[0, 1, ..., size - 1]` in `dtype`."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension):
    """An array of `shape` whose entries are their index along `dimension`."""
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = canonicalize_shape(shape)
    dimension = canonicalize_axis(dimension, len(shape))
    return iota_p.bind(dimension=dimension, dtype=dtype, shape=shape, sharding=None)


# --------------------------------------------------------------------------------------
# rev


def _rev_abstract(x, *, dimensions):
    if any(d < 0 for d in dimensions):
        raise TypeError(
            f"rev dimensions must have every element be nonnegative, got {dimensions}."
        )
    if any(d >= x.ndim for d in dimensions):
        raise TypeError(
            f"rev dimensions must all be less than operand ndim, got dimensions "
            f"{dimensions} for operand ndim {x.ndim}."
        )
    if len(set(dimensions)) != len(dimensions):
        raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
    return [x], no_effects


def _rev_transpose(ct, x, *, dimensions):
    return [None if type(ct) is ad.Zero else rev_p.bind(ct, dimensions=dimensions)]


def _rev_batch(axis_size, vals, dims, *, dimensions):
    (x,) = _at_front(vals, dims, axis_size)
    return [rev_p.bind(x, dimensions=tuple(d + 1 for d in dimensions))], [0]


rev_p = Primitive("rev")
impl_rules[rev_p] = lambda x, *, dimensions: [np.flip(x, dimensions)]
abstract_eval_rules[rev_p] = _rev_abstract
lowering_rules[rev_p] = inline("np.flip({0}, {dimensions})")
native_rules[rev_p] = "rev"
ad.deflinear(rev_p, _rev_transpose)
batching.batch_rules[rev_p] = _rev_batch
physical_rules[rev_p] = physical.by_elements(rev_p)


def rev(operand_, dimensions):
    """Reverse the order of elements along each axis in `dimensions`."""
    x = operand(operand_)
    dims = _axes_tuple(dimensions)
    if not dims:
        return x
    return rev_p.bind(x, dimensions=dims)


# --------------------------------------------------------------------------------------
# copy: a fresh buffer with the same contents (what `jnp.array(x)` stages for a tracer)

copy_p = Primitive("copy")
impl_rules[copy_p] = lambda x: [np.array(x, copy=True)]
abstract_eval_rules[copy_p] = lambda x: ([x], no_effects)
lowering_rules[copy_p] = inline("{0}")
native_rules[copy_p] = "identity"
ad.deflinear(copy_p, lambda ct, x: [None if type(ct) is ad.Zero else copy_p.bind(ct)])
batching.defvectorized(copy_p)
physical_rules[copy_p] = physical.by_elements(copy_p)


def copy(operand_):
    return copy_p.bind(operand(operand_))
