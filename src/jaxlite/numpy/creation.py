"""Array creation: array/asarray/copy, zeros/ones/full/empty and their `_like` forms,
ranges (arange, linspace, logspace, geomspace), grids (meshgrid, indices) and matrices
(eye, identity, tri, tril, triu, diag, diagonal, diagflat).

Concrete inputs become constants right away (they appear in jaxprs as literals or
constvars); inputs that hold tracers are assembled with lax operations, as in JAX. Only
values may be traced: sizes, axes and counts fix shapes, so they must be static.
Matrices are built from `iota` comparisons (eye, tri, tril, triu) or from `pad` and
`reshape` (diag, diagonal), which move values without arithmetic and so keep NaNs,
infinities and every dtype exact.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.array import owned_buffer
from jaxlite.core import Array, Tracer, concrete_or_error, float0_value
from jaxlite.distributed.global_array import GlobalArray
from jaxlite.eager_jit import eager_jit
from jaxlite.lax.structural import canonicalize_shape, copy_p, operand
from jaxlite.numpy.ufuncs import check_arraylike, ensure_arraylike, jax_array_value

__all__ = [
    "arange",
    "array",
    "asarray",
    "astype",
    "copy",
    "diag",
    "diagflat",
    "diagonal",
    "empty",
    "empty_like",
    "eye",
    "fromfunction",
    "full",
    "full_like",
    "geomspace",
    "identity",
    "indices",
    "linspace",
    "logspace",
    "meshgrid",
    "ones",
    "ones_like",
    "tri",
    "tril",
    "triu",
    "zeros",
    "zeros_like",
]

_PY_SCALARS = (bool, int, float, complex)


# ----------------------------------------------------------------------------------
# array, asarray, copy


def _leaves(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    else:
        yield obj


def array(
    object,  # noqa: A002  (NumPy's name)
    dtype=None,
    copy=True,
    order="K",
    ndmin=0,
    *,
    device=None,
    out_sharding=None,
):
    """An Array of `object` (JAX semantics: 32-bit defaults, Python scalars are weak).

    `object` may be an array, a scalar, or nested lists and tuples of them; lists
    holding tracers are assembled with `broadcast_in_dim` and `concatenate`.
    """
    return _array(object, dtype, copy, order, ndmin, "array")


def _array(object, dtype, copy, order, ndmin, fun_name):  # noqa: A002
    if order not in (None, "K"):
        raise NotImplementedError("Only implemented for order='K'")
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, fun_name)
    if hasattr(object, "__jax_array__"):
        object = object.__jax_array__()  # noqa: A001
    if (
        dtype == np.bool_
        and isinstance(object, (Array, Tracer))
        and dtypes.issubdtype(object.dtype, np.complexfloating)
    ):
        object = lax.real(object)  # noqa: A001  (XLA's complex -> bool: real part)
    if object is None:
        raise ValueError("None is not a valid value for jnp.array")
    if isinstance(object, Tracer) or _built_with_lax(object):
        out = object if dtype is None else lax.convert_element_type(object, dtype)
        if copy and out is object:
            out = copy_p.bind(object)
    elif dtype is None and getattr(object, "dtype", None) == dtypes.float0:
        out = float0_value(np.shape(object))  # as JAX: float0s stay NumPy arrays
    elif type(object) is Array:
        if dtype is None:
            out = Array(object._value, object.weak_type)
        else:
            out = lax.convert_element_type(object, dtype)
    elif isinstance(object, (list, tuple)):
        leaves = list(_leaves(object))
        if any(isinstance(x, Tracer) or _built_with_lax(x) for x in leaves):
            out = _array_from_sequence(object, leaves, dtype)
        else:
            out = Array(_numpy_from_sequence(object, leaves, dtype))
    elif type(object) in _PY_SCALARS:
        weak = dtype is None and type(object) is not bool
        out = Array(dtypes.coerce_to_array(object, dtype), weak)
    else:
        out = Array(_coerce(object, dtype))
    if ndmin > np.ndim(out):
        out = lax.broadcast_to_rank(out, ndmin)
    return out


def _built_with_lax(x):
    """Whether `x` is an array of an extended dtype (keys) or one split across
    processes (a GlobalArray): such arrays are built with lax operations, as tracers
    are."""
    return type(x) is GlobalArray or dtypes.is_extended(getattr(x, "dtype", None))


def _coerce(value, dtype):
    arr = np.asarray(value)
    if not dtypes._is_supported(arr.dtype) or arr.dtype == dtypes.float0:
        raise TypeError(
            f"Value {value!r} with dtype {arr.dtype} is not a valid JAX array type. "
            "Only arrays of numeric types are supported by JAX."
        )
    # Nested lists go in as they are, so that out-of-range Python ints raise.
    out = dtypes.coerce_to_array(value if isinstance(value, list) else arr, dtype)
    # A copy unless NumPy built it afresh: later writes to the caller's buffer must
    # not change the (immutable) Array.
    return owned_buffer(out, value)


def _numpy_from_sequence(obj, leaves, dtype):
    """The NumPy array of a nested sequence of concrete values, in JAX's dtype: the
    promotion of its leaves (Python scalars are weak), not NumPy's inference."""
    if any(x is None for x in leaves):
        raise ValueError("None is not a valid value for jnp.array")
    if dtype is None and any(type(x) not in _PY_SCALARS for x in leaves):
        dtype = dtypes.result_type(*leaves)

    def to_numpy(o):
        if isinstance(o, (list, tuple)):
            return [to_numpy(x) for x in o]
        return o._value if type(o) is Array else o

    nested = to_numpy(obj)
    if dtype is None:
        return _coerce(nested, None)
    try:
        return np.array(nested, dtype=dtype)
    except TypeError:
        # NumPy cannot cast some leaves directly (e.g. complex to real): go through
        # its own inference, then convert.
        return np.asarray(nested).astype(dtype)


def _array_from_sequence(obj, leaves, dtype):
    """Every leaf converted to the common dtype, then each row given a leading axis of
    size 1 and the rows concatenated. (The order of the equations is the one the seed
    documents print for `jnp.array` of a list of tracers: all conversions first.)"""
    if dtype is None:
        dtype = dtypes.result_type(*leaves)
    converted = iter([lax.convert_element_type(x, dtype) for x in leaves])

    def build(o):
        if not isinstance(o, (list, tuple)):
            return next(converted)
        items = [build(x) for x in o]
        if not items:
            return Array(np.zeros((0,), dtype))
        rows = [
            lax.broadcast_in_dim(x, (1, *np.shape(x)), tuple(range(1, 1 + np.ndim(x))))
            for x in items
        ]
        return lax.concatenate(rows, 0)

    return build(obj)


def asarray(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None):
    """`a` as an Array; an Array (or tracer) of the requested dtype is returned as is."""
    if dtype is None and (type(a) is Array or isinstance(a, Tracer)) and not copy:
        return a
    return _array(a, dtype, bool(copy), order, 0, "asarray")


def astype(x, dtype, /, *, copy=False, device=None):
    """`x` converted to `dtype` (the array API spelling of `x.astype(dtype)`)."""
    x = ensure_arraylike("astype", x)
    if dtype is None:
        dtype = dtypes.default_float_dtype()
    dtype = dtypes.check_user_dtype_supported(dtype, "astype")
    if np.dtype(dtype) == np.bool_ and dtypes.issubdtype(
        dtypes.result_type(x), np.complexfloating
    ):
        x = operand(x)
        return lax.ne(x, lax.full((), 0, x.dtype))  # nonzero in either part, as JAX
    if dtypes.issubdtype(dtypes.result_type(x), np.complexfloating) and not (
        dtypes.issubdtype(dtype, np.complexfloating)
    ):
        warnings.warn(
            "Casting from complex to real dtypes will soon raise a ValueError. Please "
            "first use jnp.real or jnp.imag to take the real/imaginary component of "
            "your input.",
            DeprecationWarning,
            stacklevel=dtypes._user_stacklevel(),
        )
        x = lax.real(operand(x))
    out = lax.convert_element_type(x, dtype)
    if copy and out is x:
        out = array(x, copy=True)
    return out


def copy(a, order=None):
    """A copy of `a` (under a trace, a `copy` equation, as in JAX)."""
    a = ensure_arraylike("copy", a)
    return array(a, copy=True, order=order)


# ----------------------------------------------------------------------------------
# Filled arrays


def _fill(shape, value, dtype, fun_name):
    if dtype is None:
        dtype = dtypes.default_float_dtype()
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, fun_name)
    return lax.full(canonicalize_shape(shape), value, dtype)


def zeros(shape, dtype=None, *, device=None):
    return _fill(shape, 0, dtype, "zeros")


def ones(shape, dtype=None, *, device=None):
    return _fill(shape, 1, dtype, "ones")


def empty(shape, dtype=None, *, device=None):
    return _fill(shape, 0, dtype, "empty")


def full(shape, fill_value, dtype=None, *, device=None):
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "full")
    check_arraylike("full", fill_value)
    if np.ndim(fill_value) == 0:
        return lax.full(canonicalize_shape(shape), fill_value, dtype)
    from jaxlite.numpy.shape import broadcast_to

    return broadcast_to(array(fill_value, dtype=dtype), shape)


def _like(a, fill_value, dtype, shape, fun_name):
    a = jax_array_value(a)
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, fun_name)
    return lax.full_like(a, fill_value, dtype, shape)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    return _like(a, 0, dtype, shape, "zeros_like")


def ones_like(a, dtype=None, shape=None, *, device=None):
    return _like(a, 1, dtype, shape, "ones_like")


def empty_like(a, dtype=None, shape=None, *, device=None):
    return _like(a, 0, dtype, shape, "empty_like")


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    a = jax_array_value(a)
    check_arraylike("full_like", fill_value)
    if np.ndim(fill_value) == 0:
        return _like(a, fill_value, dtype, shape, "full_like")
    from jaxlite.numpy.shape import broadcast_to

    shape = np.shape(a) if shape is None else canonicalize_shape(shape)
    if dtype is None:
        dtype = dtypes.result_type(a)
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "full_like")
    return broadcast_to(array(fill_value, dtype=dtype), shape)


# ----------------------------------------------------------------------------------
# Ranges


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values; the bounds must be concrete (they fix the shape)."""

    def concrete(value, name):
        if value is None or type(value) in _PY_SCALARS:
            return value  # Python scalars stay weak: `arange(3)` has the default int
        context = f"It arose in the jnp.arange argument `{name}`"
        return concrete_or_error(np.asarray, value, context)[()]

    start, stop, step = (
        concrete(start, "start"),
        concrete(stop, "stop"),
        concrete(step, "step"),
    )
    given = [v for v in (start, stop, step) if v is not None]
    if any(np.iscomplexobj(v) for v in given):
        raise ValueError(
            "Passing complex start/stop/step to jnp.arange is no longer supported "
            "starting in JAX v0.10.0."
        )
    if dtype is None:
        dtype = dtypes.result_type(*given)
    dtype = dtypes.check_user_dtype_supported(dtype, "arange")
    if np.dtype(dtype) == np.bool_:
        raise TypeError(
            "iota does not accept dtype bool. Accepted dtypes are subtypes of "
            "integer, floating, complexfloating."
        )
    if step is not None and step == 0:
        raise ZeroDivisionError("division by zero")
    if stop is None and step is None and np.issubdtype(dtype, np.integer):
        return lax.iota(dtype, int(np.ceil(start)))
    values = np.arange(start, *(v for v in (stop, step) if v is not None))
    return Array(dtypes.coerce_to_array(values, dtype))


def _to_inexact(dtype):
    if dtypes.issubdtype(dtype, np.inexact):
        return dtype
    return dtypes.default_float_dtype()


def _static_count(num, fun_name):
    return concrete_or_error(operator.index, num, f"'num' argument of jnp.{fun_name}")


@eager_jit(n_arrays=2)
def linspace(
    start,
    stop,
    num=50,
    endpoint=True,
    retstep=False,
    dtype=None,
    axis=0,
    *,
    device=None,
):
    """`num` evenly spaced values from `start` to `stop` (inclusive if `endpoint`).

    Array bounds give one sequence per element, laid out along `axis`. Values are
    `start * (1 - t) + stop * t`, which reproduces both endpoints exactly.
    """
    num = _static_count(num, "linspace")
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    if dtype is None:
        dtype = _to_inexact(dtypes.result_type(start, stop))
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "linspace")
    out, delta = _linspace(start, stop, num, endpoint, dtype, axis)
    return (out, delta) if retstep else out


def _linspace(start, stop, num, endpoint, dtype, axis):
    from jaxlite.numpy.shape import broadcast_shapes, broadcast_to
    from jaxlite.numpy.ufuncs import add, floor, multiply, subtract, true_divide

    cdtype = _to_inexact(dtype)
    start = lax.convert_element_type(start, cdtype)
    stop = lax.convert_element_type(stop, cdtype)
    bounds = list(broadcast_shapes(np.shape(start), np.shape(stop)))
    start, stop = broadcast_to(start, bounds), broadcast_to(stop, bounds)
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    if not 0 <= axis <= len(bounds):
        raise np.exceptions.AxisError(axis, len(bounds) + 1)
    expanded = bounds[:axis] + [1] + bounds[axis:]
    div = num - 1 if endpoint else num
    nan = lax.full((), np.nan, cdtype)
    if num > 1:
        delta = true_divide(subtract(stop, start), lax.full((), div, cdtype))
        rdtype = np.dtype(dtypes.finfo(cdtype).dtype)
        iota_shape = [1] * len(expanded)
        iota_shape[axis] = div
        t = lax.reshape(lax.iota(rdtype, div), iota_shape)
        t = lax.convert_element_type(true_divide(t, lax.full((), div, rdtype)), cdtype)
        one_minus_t = subtract(lax.full((), 1, cdtype), t)
        out = add(
            multiply(lax.reshape(start, expanded), one_minus_t),
            multiply(lax.reshape(stop, expanded), t),
        )
        if endpoint:
            out = lax.concatenate([out, lax.reshape(stop, expanded)], axis)
    elif num == 1:
        delta = nan if endpoint else subtract(stop, start)
        out = lax.reshape(start, expanded)
    else:
        delta = nan
        expanded[axis] = 0
        out = lax.full(expanded, 0, cdtype)
    if dtypes.issubdtype(dtype, np.integer) and not dtypes.issubdtype(
        cdtype, np.integer
    ):
        out = floor(out)
    return lax.convert_element_type(out, dtype), delta


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """`base ** linspace(start, stop, num)`."""
    from jaxlite.numpy.ufuncs import power

    num = _static_count(num, "logspace")
    check_arraylike("logspace", start, stop, base)
    if dtype is None:
        dtype = _to_inexact(dtypes.result_type(start, stop))
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "logspace")
    cdtype = _to_inexact(dtype)
    lin = linspace(
        lax.convert_element_type(start, cdtype),
        lax.convert_element_type(stop, cdtype),
        num,
        endpoint=endpoint,
        axis=axis,
    )
    return lax.convert_element_type(power(base, lin), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """`num` values from `start` to `stop` spaced evenly on a log scale (both bounds
    must have the same sign; a zero bound gives NaNs, as in JAX)."""
    from jaxlite.numpy.shape import moveaxis
    from jaxlite.numpy.ufuncs import divide, log10, multiply, sign

    num = _static_count(num, "geomspace")
    check_arraylike("geomspace", start, stop)
    if dtype is None:
        dtype = _to_inexact(dtypes.result_type(start, stop))
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "geomspace")
    cdtype = _to_inexact(dtype)
    start = lax.convert_element_type(start, cdtype)
    stop = lax.convert_element_type(stop, cdtype)
    s = sign(start)
    res = logspace(
        log10(divide(start, s)),
        log10(divide(stop, s)),
        num,
        endpoint=endpoint,
        base=10.0,
        dtype=cdtype,
        axis=0,
    )
    res = multiply(s, res)
    if axis != 0:
        res = moveaxis(res, 0, axis)
    return lax.convert_element_type(res, dtype)


# ----------------------------------------------------------------------------------
# Grids


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate arrays of the grid spanned by the 1-D arrays `xi` ('xy' indexing
    swaps the first two output axes, as for plotting)."""
    xi = [jax_array_value(x) for x in xi]
    check_arraylike("meshgrid", *xi)
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
    xs = [operand(x) for x in xi]
    if any(np.ndim(x) != 1 for x in xs):
        shapes = [tuple(np.shape(x)) for x in xs]
        raise ValueError(
            f"Arguments to jax.numpy.meshgrid must be 1D, got shapes {shapes}"
        )
    swap = indexing == "xy" and len(xs) >= 2
    if swap:
        xs[0], xs[1] = xs[1], xs[0]
    shape = [np.shape(x)[0] for x in xs]
    outs = []
    for ax, x in enumerate(xs):
        out_shape = [1] * len(xs) if sparse else list(shape)
        out_shape[ax] = shape[ax]
        outs.append(lax.broadcast_in_dim(x, out_shape, (ax,)))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return outs


def indices(dimensions, dtype=None, sparse=False):
    """The index of every position of a grid of shape `dimensions`, stacked on a
    leading axis (or, if `sparse`, one broadcastable array per axis)."""
    dimensions = canonicalize_shape(dimensions)
    if dtype is None:
        dtype = dtypes.default_int_dtype()
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "indices")
    nd = len(dimensions)
    outs = []
    for i, n in enumerate(dimensions):
        shape = [1] * nd if sparse else list(dimensions)
        shape[i] = n
        outs.append(lax.broadcast_in_dim(lax.iota(dtype, n), shape, (i,)))
    if sparse:
        return tuple(outs)
    if not outs:
        return lax.full((0,), 0, dtype)
    return lax.stack(outs, 0)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """`function(i, j, ...)` evaluated at every index of a grid of `shape`.

    As in JAX, `function` is mapped with `vmap` over one axis at a time, so it is
    called on scalar indices (of `dtype`); it cannot branch on their values.
    """
    from jaxlite.api_vmap import vmap

    shape = canonicalize_shape(shape)
    if dtype is None:  # the indices then take arange's default dtype
        dtype = dtypes.default_int_dtype()
    dtype = dtypes.check_user_dtype_supported(dtype, "fromfunction")
    for i in range(len(shape)):
        in_axes = tuple(0 if j == i else None for j in range(len(shape)))
        function = vmap(function, in_axes=in_axes[::-1])
    return function(*(lax.iota(dtype, n) for n in shape), **kwargs)


# ----------------------------------------------------------------------------------
# Matrices


def _matrix_size(N, M):  # noqa: N803  (NumPy's names)
    n, m = (canonicalize_shape((d,))[0] if d is not None else None for d in (N, M))
    m = n if m is None else m
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
    return n, m


def _tri_mask(n, m, k):
    """`i + k >= j` over an (n, m) grid, with `k` possibly traced."""
    i = lax.broadcasted_iota(np.int32, (n, m), 0)
    i = lax.add(i, operand(k) if isinstance(k, Tracer) else int(k))
    return lax.ge(i, lax.broadcasted_iota(np.int32, (n, m), 1))


def eye(N, M=None, k=0, dtype=None, *, device=None):  # noqa: N803
    """An (N, M) matrix with ones on the k-th diagonal."""
    n, m = _matrix_size(N, M)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype(), "eye")
    i = lax.broadcasted_iota(np.int32, (n, m), 0)
    j = lax.broadcasted_iota(np.int32, (n, m), 1)
    i = lax.add(i, operand(k) if isinstance(k, Tracer) else int(k))
    mask = lax.eq(i, j)
    return lax.convert_element_type(mask, dtype)


def identity(n, dtype=None):
    """The (n, n) identity matrix."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803
    """An (N, M) matrix with ones at and below the k-th diagonal."""
    n, m = _matrix_size(N, M)
    dtype = _user_dtype(dtype, dtypes.default_float_dtype(), "tri")
    return lax.convert_element_type(_tri_mask(n, m, k), dtype)


def _user_dtype(dtype, default, fun_name):
    if dtype is None:
        return default
    return dtypes.check_user_dtype_supported(dtype, fun_name)


def _triangle(fun_name, m, k, lower):
    check_arraylike(fun_name, m)
    x = operand(m)
    s = np.shape(x)
    if len(s) < 2:
        raise ValueError(f"Argument to jax.numpy.{fun_name} must be at least 2D")
    mask = _tri_mask(s[-2], s[-1], k if lower else k - 1)
    mask = lax.broadcast_in_dim(mask, s, (len(s) - 2, len(s) - 1))
    zeros = lax.full_like(x, 0)
    if lower:
        return lax.select_n(mask, zeros, x)
    return lax.select_n(mask, x, zeros)


def tril(m, k=0):
    """`m` with the elements above the k-th diagonal zeroed (last two axes)."""
    return _triangle("tril", m, k, lower=True)


def triu(m, k=0):
    """`m` with the elements below the k-th diagonal zeroed (last two axes)."""
    return _triangle("triu", m, k, lower=False)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The `offset` diagonal of the planes spanned by `axis1` and `axis2`; it becomes
    the last axis of the result.

    Built from copies only: the (p, q) plane is flattened, padded to p * (q + 1)
    elements and reshaped to (p, q + 1), which puts the diagonal in column 0.
    """
    from jaxlite.numpy.shape import _slice_in_dim, moveaxis

    check_arraylike("diagonal", a)
    x = operand(a)
    nd = np.ndim(x)
    if nd < 2:
        raise ValueError("diagonal requires an array of at least two dimensions.")
    ax1, ax2 = _axis(axis1, nd), _axis(axis2, nd)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    offset = operator.index(offset)
    x = moveaxis(x, (ax1, ax2), (-2, -1))
    *batch, n, m = np.shape(x)
    if offset >= 0:
        x = _slice_in_dim(x, min(offset, m), m, nd - 1)
    else:
        x = _slice_in_dim(x, min(-offset, n), n, nd - 2)
    *_, p, q = np.shape(x)
    size = max(0, min(p, q))
    x = _slice_in_dim(x, 0, size, nd - 2)
    flat = lax.reshape(x, (*batch, size * q))
    config = [(0, 0, 0)] * len(batch) + [(0, size, 0)]
    flat = lax.pad(flat, lax.full_like(x, 0, shape=()), config)  # (keys too)
    rows = lax.reshape(flat, (*batch, size, q + 1))
    return lax.reshape(_slice_in_dim(rows, 0, 1, nd - 1), (*batch, size))


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def diag(v, k=0):
    """The k-th diagonal of a 2-D `v`, or the square matrix with a 1-D `v` on its k-th
    diagonal."""
    x = operand(ensure_arraylike("diag", v))
    k = operator.index(k)
    if np.ndim(x) == 2:
        return diagonal(x, k)
    if np.ndim(x) != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = np.shape(x)[0]
    zero = lax.convert_element_type(0, x.dtype, x.weak_type)
    # Each row [v_i, 0, ..., 0] of length n + 1, read back as rows of length n, puts
    # v_i at (i, i); the final crop removes the n zeros left over at the end.
    rows = lax.pad(lax.broadcast_in_dim(x, (n, 1), (0,)), zero, ((0, 0, 0), (0, n, 0)))
    flat = lax.pad(lax.reshape(rows, (n * (n + 1),)), zero, ((0, -n, 0),))
    square = lax.reshape(flat, (n, n))
    lo, hi = max(k, 0), max(-k, 0)
    if not k:
        return square
    return lax.pad(square, zero, ((hi, lo, 0), (lo, hi, 0)))


def diagflat(v, k=0):
    """The square matrix with the flattened `v` on its k-th diagonal."""
    from jaxlite.numpy.shape import ravel

    check_arraylike("diagflat", v)
    return diag(ravel(v), k)
