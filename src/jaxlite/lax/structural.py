"""Structural primitives: they move elements around without computing new values.

broadcast_in_dim, reshape, squeeze, expand_dims, transpose, concatenate, iota, rev, pad,
slice. Shapes and axes are static parameters, checked at abstract evaluation with errors
that name the primitive, the argument and the shapes.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.backend.numpy_backend import inline
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    concrete_or_error,
    impl_rules,
    no_effects,
    weak_type_rules,
)


def canonicalize_shape(shape, context=""):
    """A tuple of Python ints, or JAX's TypeError explaining that shapes must be static.

    Every dimension must be an integer known at trace time: a Python int, a NumPy integer,
    an integer Array or a tracer with a concrete value (e.g. a JVP primal).
    """
    try:
        dims = tuple(shape)
    except TypeError:
        dims = (shape,)
    out = []
    for d in dims:
        if isinstance(d, Tracer) and d.to_concrete_value() is None:
            raise TypeError(_shape_error(dims) + _tracing_context(d))
        try:
            out.append(operator.index(d))
        except TypeError:
            raise TypeError(_shape_error(dims)) from None
    return tuple(out)


def _shape_error(dims):
    return (
        f"Shapes must be 1D sequences of concrete values of integer type, got {dims}.\n"
        "If using `jit`, try using `static_argnums` or applying `jit` to smaller "
        "subfunctions.\n"
    )


def _tracing_context(tracer):
    describe = getattr(tracer._trace, "describe_tracer", None)
    return describe(tracer) if describe is not None else ""


def operand(x):
    """`x` as a lax operand: Python scalars and NumPy values become Arrays with a
    canonical dtype (so that 64-bit NumPy inputs do not leak into eager results)."""
    t = type(x)
    if t is Array or isinstance(x, Tracer):
        return x
    if t in _PY_SCALARS:
        return Array(dtypes.coerce_to_array(x), t is not bool)
    if hasattr(x, "__jax_array__"):
        return operand(x.__jax_array__())
    return Array(dtypes.coerce_to_array(x))


_PY_SCALARS = (bool, int, float, complex)


def _check_nonnegative(name, what, shape):
    if any(d < 0 for d in shape):
        raise TypeError(f"{name} {what} must have every element be nonnegative, got {shape}.")


# ----------------------------------------------------------------------------------------
# broadcast_in_dim


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, sharding):
    x = np.asarray(x)
    expanded = [1] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        expanded[dst] = x.shape[src]
    return [np.broadcast_to(x.reshape(expanded), shape)]


def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions, sharding):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand "
            f"ndim; got broadcast_dimensions {broadcast_dimensions} for operand ndim "
            f"{x.ndim}."
        )
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape) or x.shape[src] not in (1, shape[dst]):
            raise TypeError(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal "
                f"to their corresponding dimensions in the target broadcast shape; got "
                f"operand of shape {x.shape}, target broadcast shape {shape}, "
                f"broadcast_dimensions {broadcast_dimensions}"
            )
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must be strictly increasing; got "
            f"broadcast_dimensions {broadcast_dimensions}"
        )
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


broadcast_in_dim_p = Primitive("broadcast_in_dim")
impl_rules[broadcast_in_dim_p] = _broadcast_in_dim_impl
abstract_eval_rules[broadcast_in_dim_p] = _broadcast_in_dim_abstract


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    shape = canonicalize_shape(shape)
    dims = tuple(int(d) for d in broadcast_dimensions)
    if np.shape(operand) == shape and dims == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(
        operand, broadcast_dimensions=dims, shape=shape, sharding=None
    )


def broadcast(operand, sizes):
    """Add leading dimensions of the given sizes."""
    sizes = canonicalize_shape(sizes)
    nd = np.ndim(operand)
    shape = sizes + tuple(np.shape(operand))
    return broadcast_in_dim(operand, shape, tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to_rank(x, rank):
    nd = np.ndim(x)
    if nd >= rank:
        return x
    shape = (1,) * (rank - nd) + tuple(np.shape(x))
    return broadcast_in_dim(x, shape, tuple(range(rank - nd, rank)))


# ----------------------------------------------------------------------------------------
# reshape


def _reshape_impl(x, *, new_sizes, dimensions, sharding):
    x = np.asarray(x)
    if dimensions is not None:
        x = np.transpose(x, dimensions)
    return [x.reshape(new_sizes)]


def _reshape_abstract(x, *, new_sizes, dimensions, sharding):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {new_sizes} for shape "
            f"{x.shape}."
        )
    return [ShapedArray(new_sizes, x.dtype, x.weak_type)], no_effects


reshape_p = Primitive("reshape")
impl_rules[reshape_p] = _reshape_impl
abstract_eval_rules[reshape_p] = _reshape_abstract


def reshape(operand, new_sizes, dimensions=None):
    new_sizes = canonicalize_shape(new_sizes)
    dims = None if dimensions is None else tuple(int(d) for d in dimensions)
    if dims == tuple(range(np.ndim(operand))):
        dims = None
    if np.shape(operand) == new_sizes and dims is None:
        return operand
    return reshape_p.bind(operand, dimensions=dims, new_sizes=new_sizes, sharding=None)


# ----------------------------------------------------------------------------------------
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


squeeze_p = Primitive("squeeze")
impl_rules[squeeze_p] = lambda x, *, dimensions: [np.squeeze(x, dimensions)]
abstract_eval_rules[squeeze_p] = _squeeze_abstract
lowering_rules[squeeze_p] = lambda ctx, x, *, dimensions: f"np.squeeze({x}, {dimensions})"


def squeeze(array, dimensions):
    ndim = np.ndim(array)
    dims = tuple(sorted(int(d) % ndim for d in dimensions)) if ndim else ()
    if not dims:
        return array
    return squeeze_p.bind(array, dimensions=dims)


def expand_dims(array, dimensions):
    """Insert size-1 axes at `dimensions` (positions in the result)."""
    shape = list(np.shape(array))
    ndim_out = len(shape) + len(dimensions)
    dims = sorted(int(d) % ndim_out for d in dimensions)
    for d in dims:
        shape.insert(d, 1)
    kept = [i for i in range(ndim_out) if i not in dims]
    return broadcast_in_dim(array, shape, kept)


# ----------------------------------------------------------------------------------------
# transpose


def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for operand shape {x.shape}."
        )
    shape = tuple(x.shape[p] for p in permutation)
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


transpose_p = Primitive("transpose")
impl_rules[transpose_p] = lambda x, *, permutation: [np.transpose(x, permutation)]
abstract_eval_rules[transpose_p] = _transpose_abstract
lowering_rules[transpose_p] = lambda ctx, x, *, permutation: (
    f"np.transpose({x}, {permutation})"
)


def transpose(operand, permutation):
    perm = tuple(int(p) for p in permutation)
    if perm == tuple(range(np.ndim(operand))):
        return operand
    return transpose_p.bind(operand, permutation=perm)


# ----------------------------------------------------------------------------------------
# concatenate


def _concatenate_abstract(*xs, dimension):
    if not xs:
        raise TypeError("concatenate requires at least one operand")
    first = xs[0]
    if not 0 <= dimension < first.ndim:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            + ", ".join(str(x.shape) for x in xs)
        )
    for x in xs[1:]:
        if x.dtype != first.dtype:
            raise TypeError(
                "concatenate requires operands to have the same dtype, got "
                + ", ".join(x.dtype.name for x in xs)
            )
        if x.ndim != first.ndim or any(
            a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != dimension
        ):
            raise TypeError(
                "concatenate operands must have equal shapes except in dimension "
                f"{dimension}, got shapes " + ", ".join(str(x.shape) for x in xs)
            )
    shape = list(first.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    weak = all(x.weak_type for x in xs)
    return [ShapedArray(shape, first.dtype, weak)], no_effects


concatenate_p = Primitive("concatenate")
impl_rules[concatenate_p] = lambda *xs, dimension: [np.concatenate(xs, dimension)]
abstract_eval_rules[concatenate_p] = _concatenate_abstract
lowering_rules[concatenate_p] = lambda ctx, *xs, dimension: (
    f"np.concatenate(({', '.join(xs)},), {dimension})"
)


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


# ----------------------------------------------------------------------------------------
# iota


def _iota_impl(*, dtype, shape, dimension, sharding):
    r = np.arange(shape[dimension], dtype=dtype)
    expanded = [1] * len(shape)
    expanded[dimension] = shape[dimension]
    return [np.broadcast_to(r.reshape(expanded), shape)]


def _iota_abstract(*, dtype, shape, dimension, sharding):
    if not 0 <= dimension < len(shape):
        raise ValueError(f"iota dimension {dimension} out of range for shape {shape}")
    return [ShapedArray(shape, dtype)], no_effects


iota_p = Primitive("iota")
impl_rules[iota_p] = _iota_impl
abstract_eval_rules[iota_p] = _iota_abstract
weak_type_rules[iota_p] = lambda in_weak, **_: False


def iota(dtype, size):
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension):
    dtype = dtypes.canonicalize_dtype(dtype)
    shape = canonicalize_shape(shape)
    return iota_p.bind(dimension=int(dimension), dtype=dtype, shape=shape, sharding=None)


# ----------------------------------------------------------------------------------------
# rev


def _rev_abstract(x, *, dimensions):
    if any(not 0 <= d < x.ndim for d in dimensions):
        raise TypeError(f"rev dimensions {dimensions} out of range for shape {x.shape}")
    return [x], no_effects


rev_p = Primitive("rev")
impl_rules[rev_p] = lambda x, *, dimensions: [np.flip(x, dimensions)]
abstract_eval_rules[rev_p] = _rev_abstract
lowering_rules[rev_p] = inline("np.flip({0}, {dimensions})")


def rev(operand, dimensions):
    dims = tuple(int(d) for d in dimensions)
    if not dims:
        return operand
    return rev_p.bind(operand, dimensions=dims)
