"""Reductions of jax.numpy: sums and products, extrema, means and variances, logical
reductions, their NaN-ignoring forms, and order statistics (median, quantiles).

`_reduction` is the one recipe behind the monoid reductions, as in JAX: check the input,
canonicalise `axis`, pick the result dtype (bool and small integers sum in the default
integer type, float16 sums run in float32), apply `where=` by substituting the
reduction's identity, bind one lax reduction, then apply `initial` and `keepdims`. The
result is never weakly typed, even for a Python scalar input.

Order statistics sort the reduced axes (gathered into one) with `lax.sort`, then read
the elements at the wanted positions: with static slices when `q` is known and there
are no NaNs to skip, else by comparing an iota with the positions (a one-hot
selection), which also works for positions that depend on traced values.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Tracer, concrete_or_error
from jaxlite.eager_jit import eager_jit
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import (
    check_arraylike,
    multiply,
    promote_dtypes_numeric,
    true_divide,
)

__all__ = [
    "sum",
    "prod",
    "max",
    "amax",
    "min",
    "amin",
    "mean",
    "var",
    "std",
    "any",
    "all",
    "count_nonzero",
    "ptp",
    "average",
    "nansum",
    "nanprod",
    "nanmax",
    "nanmin",
    "nanmean",
    "nanvar",
    "nanstd",
    "median",
    "nanmedian",
    "quantile",
    "nanquantile",
    "percentile",
    "nanpercentile",
]

_AxisError = np.exceptions.AxisError  # a ValueError and an IndexError

# --------------------------------------------------------------------------------------
# Arguments


def _arraylike(fun_name, *args):
    check_arraylike(fun_name, *args)
    return [asarray(a) for a in args]


def _no_out(fun_name, out):
    if out is not None:
        raise NotImplementedError(
            f"The 'out' argument to jnp.{fun_name} is not supported."
        )


def _static_axis(axis):
    """`axis` with concrete values in place of tracers (a ConcretizationTypeError if
    they have none: axes must be static)."""
    context = "The axis argument must be known statically."
    if isinstance(axis, (tuple, list)):
        return tuple(
            concrete_or_error(operator.index, a, context)
            if isinstance(a, Tracer)
            else a
            for a in axis
        )
    if isinstance(axis, Tracer):
        return concrete_or_error(operator.index, axis, context)
    return axis


def _canonicalize_axis(axis, ndim, error=ValueError):
    try:
        i = operator.index(axis)
    except TypeError:
        raise TypeError(
            f"axis must be an integer or a tuple of integers, got {axis!r} of type "
            f"{type(axis).__name__}."
        ) from None
    if not -ndim <= i < ndim:
        raise error(f"axis {i} is out of bounds for array of dimension {ndim}")
    return i % ndim


def reduction_axes(fun_name, axis, ndim, error=ValueError):
    """`axis` (None, an int or a sequence of ints, possibly negative) as a tuple of
    non-negative ints in the caller's order; JAX's errors for bad or repeated axes
    (`error` for an out-of-bounds one: JAX's mean, var and std raise IndexError,
    for which they use NumPy's AxisError, both an IndexError and a ValueError)."""
    axis = _static_axis(axis)
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (tuple, list, np.ndarray)) else (axis,)
    out = tuple(_canonicalize_axis(a, ndim, error) for a in axes)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return out


def _check_where(fun_name, where):
    if where is None:
        return None
    check_arraylike(fun_name, where)
    where = asarray(where)
    if where.dtype != np.bool_:
        raise ValueError(
            f"jnp.{fun_name}: where must be None or a boolean array; got "
            f"where.dtype={np.dtype(where.dtype)!r}."
        )
    return where


def _broadcast_to(x, shape):
    """Broadcast `x` to exactly `shape` (NumPy rules), or JAX's ValueError."""
    x_shape = tuple(np.shape(x))
    if x_shape == shape:
        return x
    try:
        out = np.broadcast_shapes(x_shape, shape)
    except ValueError:
        out = None
    if out != shape:
        raise ValueError(
            f"Incompatible shapes for broadcasting: shapes={[x_shape, shape]}"
        )
    nd = len(shape)
    return lax.broadcast_in_dim(x, shape, tuple(range(nd - len(x_shape), nd)))


# --------------------------------------------------------------------------------------
# Dtype rules


def _is_inexact(dtype):
    return dtypes.issubdtype(dtype, np.inexact)


def _is_complex(dtype):
    return dtypes.issubdtype(dtype, np.complexfloating)


def _to_inexact(dtype):
    """The floating type a non-float dtype computes in: float32 for bool and integers
    of up to 32 bits, float64 (when x64 is on) for 64-bit integers, as in JAX."""
    if _is_inexact(dtype):
        return np.dtype(dtype)
    wide = np.dtype(dtype).itemsize >= 8
    return dtypes.canonicalize_dtype(np.float64 if wide else np.float32)


def _promote_inexact(*args):
    """Convert to the common dtype, made inexact by `_to_inexact` (weak if all were)."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = _to_inexact(dtype)
    return [lax.convert_element_type(a, dtype, weak) for a in args]


_HALF = frozenset({np.dtype(np.float16), np.dtype(dtypes.bfloat16)})
_FLOAT32 = np.dtype(np.float32)


def _upcast_f16(dtype):
    """Half-precision reductions accumulate in float32, as in JAX."""
    dtype = np.dtype(dtype)
    return _FLOAT32 if dtype in _HALF else dtype


def _promote_integer_dtype(dtype):
    """bool and integers narrower than the default integer sum in the default one."""
    dtype = np.dtype(dtype)
    kind = dtype.kind
    if kind == "b":
        return dtypes.default_int_dtype()
    if kind == "u":
        default = dtypes.default_uint_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    if kind == "i":
        default = dtypes.default_int_dtype()
        return default if dtype.itemsize < default.itemsize else dtype
    return dtype


def _identity_value(dtype, value):
    """`value` (0, 1, +-inf, True, False) as the identity of a reduction in `dtype`:
    infinities become the extreme integers, and bool takes `value > 0`."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.bool_(value > 0)
    if np.issubdtype(dtype, np.integer) and np.isinf(value):
        info = np.iinfo(dtype)
        return dtype.type(info.min if value < 0 else info.max)
    return np.array(value, dtype)[()]


def _user_dtype(dtype, fun_name):
    return dtypes.check_user_dtype_supported(dtype, fun_name)


# --------------------------------------------------------------------------------------
# The monoid reductions


def _reduction(
    a,
    name,
    reduce_fn,
    op,
    init_val,
    *,
    has_identity=True,
    preproc=None,
    bool_reduce_fn=None,
    bool_op=None,
    upcast_f16_for_computation=False,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=False,
):
    _no_out(name, out)
    (a,) = _arraylike(name, a)
    where = _check_where(name, where)
    if initial is None and not has_identity and where is not None:
        raise ValueError(
            f"reduction operation {name} does not have an identity, so to use a where "
            "mask one has to specify 'initial'"
        )
    if preproc is not None:
        a = preproc(a)
    shape = tuple(np.shape(a))
    axes = reduction_axes(name, axis, len(shape))
    if (
        initial is None
        and not has_identity
        and builtins.any(shape[d] == 0 for d in axes)
    ):
        raise ValueError(
            f"zero-size array to reduction operation {name} which has no identity"
        )
    if dtype is None:
        result_dtype = np.dtype(a.dtype)
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = _user_dtype(dtype, name)
    computation_dtype = result_dtype
    if upcast_f16_for_computation and _is_inexact(result_dtype):
        computation_dtype = _upcast_f16(result_dtype)
    a = lax.convert_element_type(a, computation_dtype)
    if computation_dtype == np.bool_ and bool_reduce_fn is not None:
        reduce_fn, op = bool_reduce_fn, bool_op
    if where is not None:
        fill_value = _identity_value(computation_dtype, init_val)
        fill = lax.full(shape, fill_value, computation_dtype)
        a = lax.select(_broadcast_to(where, shape), a, fill)
    result = reduce_fn(a, axes)
    if initial is not None:
        initial = lax.convert_element_type(initial, computation_dtype)
        if np.shape(initial) != ():
            raise ValueError(
                "initial value must be a scalar. Got array of shape "
                f"{np.shape(initial)}"
            )
        result = op(initial, result)
    if keepdims:
        result = lax.expand_dims(result, axes)
    return lax.convert_element_type(result, result_dtype)


def _cast_to_numeric(a):
    return promote_dtypes_numeric(a)[0]


def _cast_to_bool(a):
    if _is_complex(a.dtype):
        a = lax.real(a)
    return lax.convert_element_type(a, np.bool_)


@eager_jit
def sum(  # noqa: A001
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):
    """Sum of the elements over `axis`. bool and narrow integers sum in the default
    integer type unless `promote_integers=False`; float16 accumulates in float32."""
    return _reduction(
        a,
        "sum",
        lax.reduce_sum,
        lax.add,
        0,
        preproc=_cast_to_numeric,
        bool_reduce_fn=lax.reduce_or,
        bool_op=lax.bitwise_or,
        upcast_f16_for_computation=dtype is None,
        axis=axis,
        dtype=dtype,
        out=out,
        keepdims=keepdims,
        initial=initial,
        where=where,
        promote_integers=promote_integers,
    )


@eager_jit
def prod(
    a,
    axis=None,
    dtype=None,
    out=None,
    keepdims=False,
    initial=None,
    where=None,
    promote_integers=True,
):
    """Product of the elements over `axis` (dtype rules as `sum`)."""
    return _reduction(
        a,
        "prod",
        lax.reduce_prod,
        lax.mul,
        1,
        preproc=_cast_to_numeric,
        bool_reduce_fn=lax.reduce_and,
        bool_op=lax.bitwise_and,
        upcast_f16_for_computation=dtype is None,
        axis=axis,
        dtype=dtype,
        out=out,
        keepdims=keepdims,
        initial=initial,
        where=where,
        promote_integers=promote_integers,
    )


@eager_jit
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over `axis`. An empty reduction, or `where=`, needs `initial`."""
    return _reduction(
        a,
        "max",
        lax.reduce_max,
        lax.max,
        -np.inf,
        has_identity=False,
        axis=axis,
        out=out,
        keepdims=keepdims,
        initial=initial,
        where=where,
    )


@eager_jit
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over `axis`. An empty reduction, or `where=`, needs `initial`."""
    return _reduction(
        a,
        "min",
        lax.reduce_min,
        lax.min,
        np.inf,
        has_identity=False,
        axis=axis,
        out=out,
        keepdims=keepdims,
        initial=initial,
        where=where,
    )


amax = max
amin = min


@eager_jit
def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether every element over `axis` is true (non-zero)."""
    return _reduction(
        a,
        "all",
        lax.reduce_and,
        lax.bitwise_and,
        True,
        preproc=_cast_to_bool,
        axis=axis,
        out=out,
        keepdims=keepdims,
        where=where,
    )


@eager_jit
def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether some element over `axis` is true (non-zero)."""
    return _reduction(
        a,
        "any",
        lax.reduce_or,
        lax.bitwise_or,
        False,
        preproc=_cast_to_bool,
        axis=axis,
        out=out,
        keepdims=keepdims,
        where=where,
    )


def count_nonzero(a, axis=None, keepdims=False):
    """Number of non-zero elements over `axis`, in the default integer type."""
    (a,) = _arraylike("count_nonzero", a)
    return sum(
        lax.ne(a, lax.full((), 0, a.dtype)),
        axis=axis,
        dtype=dtypes.default_int_dtype(),
        keepdims=keepdims,
    )


def ptp(a, axis=None, out=None, keepdims=False):
    """Peak to peak: `max - min` over `axis`."""
    _no_out("ptp", out)
    (a,) = _arraylike("ptp", a)
    return lax.sub(
        max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims)
    )


# --------------------------------------------------------------------------------------
# Means and variances


def _count(a, axes, keepdims, where, dtype):
    """How many elements each result of a reduction over `axes` combines."""
    shape = tuple(np.shape(a))
    if where is None:
        n = math.prod(shape[d] for d in axes)
        return lax.convert_element_type(n, dtype)
    return sum(_broadcast_to(where, shape), axes, dtype=dtype, keepdims=keepdims)


@eager_jit
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over `axis`. bool and integers of up to 32 bits give float32
    (64-bit integers float64); float16 accumulates in float32."""
    return _mean(a, axis, dtype, out, keepdims, where, dtype is None, _AxisError)


def _mean(
    a, axis, dtype, out, keepdims, where, upcast_f16_for_computation, axis_error=None
):
    _no_out("mean", out)
    (a,) = _arraylike("mean", a)
    where = _check_where("mean", where)
    axes = reduction_axes("mean", axis, np.ndim(a), axis_error or ValueError)
    if dtype is None:
        result_dtype = _to_inexact(a.dtype)
    else:
        result_dtype = _user_dtype(dtype, "mean")
    computation_dtype = result_dtype
    if upcast_f16_for_computation and _is_inexact(result_dtype):
        computation_dtype = _upcast_f16(result_dtype)
    normalizer = _count(a, axes, keepdims, where, computation_dtype)
    total = sum(a, axes, dtype=computation_dtype, keepdims=keepdims, where=where)
    return lax.convert_element_type(lax.div(total, normalizer), result_dtype)


def _var_dtypes(a_dtype, dtype):
    """(computation dtype, result dtype) of var/std, as JAX chooses them."""
    if dtype is not None:
        if not _is_complex(dtype) and _is_complex(a_dtype):
            raise ValueError(
                "jax.numpy.var does not yet support real dtype parameters when "
                "computing the variance of an array of complex values. The semantics "
                "of numpy.var seem unclear in this case. Please comment on "
                "https://github.com/jax-ml/jax/issues/2283 if this behavior is "
                "important to you."
            )
        computation_dtype = dtype
    elif not _is_inexact(a_dtype):
        dtype = computation_dtype = _to_inexact(a_dtype)
    else:
        dtype = np.zeros((), a_dtype).real.dtype
        computation_dtype = a_dtype
    return _upcast_f16(computation_dtype), np.dtype(dtype)


def _correction(ddof, correction):
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _squared_magnitude(centered):
    if _is_complex(centered.dtype):
        return lax.real(lax.mul(centered, lax.conj(centered)))
    return lax.square(centered)


@eager_jit
def var(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=None,
    mean=None,  # noqa: A002 - JAX's keyword: a precomputed mean
    correction=None,
):
    """Variance over `axis`: mean squared deviation, divided by `N - correction`
    (`ddof` is the NumPy name of `correction`); NaN where that is not positive."""
    correction = _correction(ddof, correction)
    (a,) = _arraylike("var", a)
    return _var("var", a, axis, dtype, out, correction, keepdims, where, mean, False)


def _var(name, a, axis, dtype, out, correction, keepdims, where, a_mean, skip_nan):
    """var, std and (with `skip_nan`) their NaN-ignoring forms: the NaNs join the
    `where` mask, and their deviations are zeroed before squaring so that no NaN
    reaches a derivative."""
    _no_out(name, out)
    where = _check_where(name, where)
    error = _AxisError if name in ("var", "std") else ValueError
    axes = reduction_axes(name, axis, np.ndim(a), error)
    if dtype is not None:
        dtype = _user_dtype(dtype, name)
    computation_dtype, dtype = _var_dtypes(a.dtype, dtype)
    a = lax.convert_element_type(a, computation_dtype)
    not_nan = None
    if skip_nan:
        not_nan = lax.bitwise_not(_isnan(a))
        where = not_nan if where is None else _and_where(not_nan, where)
    if a_mean is None:
        a_mean = _mean(a, axes, computation_dtype, None, True, where, False)
    else:
        (a_mean,) = _arraylike(name, a_mean)
        a_mean = lax.convert_element_type(a_mean, computation_dtype)
    deviation = _sub_broadcast(a, a_mean)
    if not_nan is not None:
        deviation = _where(not_nan, deviation, 0)
    centered = _squared_magnitude(deviation)
    real_dtype = np.dtype(centered.dtype)
    if skip_nan and not _is_inexact(dtype):
        # nanvar with an integer dtype, as JAX computes it: the squares summed with
        # the default accumulation, divided in floats, NaN filled in, then cast.
        f = dtypes.default_float_dtype()
        total = lax.convert_element_type(
            sum(centered, axes, keepdims=keepdims, where=where), f
        )
        normalizer = lax.sub(_count(a, axes, keepdims, where, f), float(correction))
        quotient = lax.div(total, normalizer)
        positive = lax.gt(normalizer, lax.full((), 0, f))
        return lax.convert_element_type(_where(positive, quotient, np.nan), dtype)
    normalizer = _count(a, axes, keepdims, where, real_dtype)
    normalizer = lax.sub(normalizer, lax.convert_element_type(correction, real_dtype))
    total = sum(centered, axes, dtype=real_dtype, keepdims=keepdims, where=where)
    positive = lax.gt(normalizer, lax.full((), 0, real_dtype))
    result = lax.convert_element_type(lax.div(total, normalizer), dtype)
    if not _is_inexact(dtype):
        # JAX's NaN fill promotes an integer result to a weak float.
        result = lax.convert_element_type(result, dtypes.default_float_dtype(), True)
    return _where(positive, result, np.nan)


def _sub_broadcast(x, y):
    """`x - y` where y has x's rank and size-1 axes (a kept-dims reduction result)."""
    return lax.sub(x, _broadcast_to(y, tuple(np.shape(x))))


def _where(pred, on_true, on_false_scalar):
    """`select(pred, on_true, on_false_scalar)`, broadcasting pred and the scalar."""
    shape = tuple(np.shape(on_true))
    dtype = np.dtype(on_true.dtype)
    value = _identity_value(dtype, on_false_scalar)
    value = lax.convert_element_type(value, dtype, on_true.weak_type)
    fill = lax.broadcast_in_dim(value, shape, ())
    if np.shape(pred) not in ((), shape):
        pred = _broadcast_to(pred, shape)
    return lax.select(pred, on_true, fill)


@eager_jit
def std(
    a,
    axis=None,
    dtype=None,
    out=None,
    ddof=0,
    keepdims=False,
    *,
    where=None,
    mean=None,  # noqa: A002 - JAX's keyword: a precomputed mean
    correction=None,
):
    """Standard deviation over `axis`: the square root of `var`."""
    correction = _correction(ddof, correction)
    (a,) = _arraylike("std", a)
    if dtype is not None:
        dtype = _user_dtype(dtype, "std")
        if not _is_inexact(dtype):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    args = (axis, dtype, out, correction, keepdims, where, mean, False)
    return lax.sqrt(_var("std", a, *args))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean over `axis`; with `returned=True` also the sum of the weights."""
    if weights is None:
        (a,) = _arraylike("average", a)
        (a,) = _promote_inexact(a)
        axes = reduction_axes("average", axis, np.ndim(a))
        avg = mean(a, axis=axes, keepdims=keepdims)
        n = math.prod(np.shape(a)[d] for d in axes)
        weights_sum = lax.full((), n, avg.dtype)
    else:
        a, weights = _arraylike("average", a, weights)
        a, weights = _promote_inexact(a, weights)
        shape = tuple(np.shape(a))
        axes = reduction_axes("average", axis, len(shape))
        w_shape = tuple(np.shape(weights))
        if w_shape != shape:
            if axis is None:
                raise ValueError(
                    "Axis must be specified when shapes of a and weights differ."
                )
            if w_shape != tuple(shape[d] for d in axes):
                raise ValueError(
                    "Shape of weights must be consistent with shape of a along "
                    "specified axis."
                )
            new_shape = tuple(d if i in axes else 1 for i, d in enumerate(shape))
            order = tuple(int(i) for i in np.argsort(axes))
            weights = lax.reshape(weights, new_shape, dimensions=order)
        weights_sum = sum(weights, axis=axes, keepdims=keepdims)
        avg = true_divide(
            sum(multiply(a, weights), axis=axes, keepdims=keepdims), weights_sum
        )
    if returned:
        if np.shape(weights_sum) != np.shape(avg):
            weights_sum = _broadcast_to(weights_sum, tuple(np.shape(avg)))
        return avg, weights_sum
    return avg


# --------------------------------------------------------------------------------------
# NaN-ignoring reductions


def _isnan(x):
    return lax.ne(x, x)


def _nan_reduction(name, reduction, fill, a, axis, keepdims, where, **kwargs):
    """`reduction` with NaNs replaced by `fill` (its identity). nanmax and nanmin
    (no `initial`) give NaN where every element is NaN. Non-float inputs have no
    NaNs: the plain reduction."""
    (a,) = _arraylike(name, a)
    where = _check_where(name, where)
    if kwargs.get("dtype") is not None:
        kwargs["dtype"] = _user_dtype(kwargs["dtype"], name)
    kwargs.update(axis=axis, keepdims=keepdims, where=where)
    if not _is_inexact(a.dtype):
        return reduction(a, **kwargs)
    nan = _isnan(a)
    out = reduction(_where(lax.bitwise_not(nan), a, fill), **kwargs)
    if reduction in (max, min) and kwargs["initial"] is None:
        all_nan = all(nan, axis=axis, keepdims=keepdims)
        return _where(lax.bitwise_not(all_nan), out, np.nan)
    return out


def nansum(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None
):
    """`sum` treating NaNs as zero."""
    kw = dict(dtype=dtype, out=out, initial=initial)
    return _nan_reduction("nansum", sum, 0, a, axis, keepdims, where, **kw)


def nanprod(
    a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None
):
    """`prod` treating NaNs as one."""
    kw = dict(dtype=dtype, out=out, initial=initial)
    return _nan_reduction("nanprod", prod, 1, a, axis, keepdims, where, **kw)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`max` ignoring NaNs (NaN where all are NaN and there is no `initial`)."""
    kw = dict(out=out, initial=initial)
    return _nan_reduction("nanmax", max, -np.inf, a, axis, keepdims, where, **kw)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """`min` ignoring NaNs (NaN where all are NaN and there is no `initial`)."""
    kw = dict(out=out, initial=initial)
    return _nan_reduction("nanmin", min, np.inf, a, axis, keepdims, where, **kw)


def _and_where(mask, where):
    """`mask & where`, `where` broadcast to mask's shape."""
    return lax.bitwise_and(mask, _broadcast_to(where, tuple(np.shape(mask))))


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """`mean` of the non-NaN elements (NaN where there are none)."""
    _no_out("nanmean", out)
    (a,) = _arraylike("nanmean", a)
    where = _check_where("nanmean", where)
    if _is_inexact(a.dtype):
        not_nan = lax.bitwise_not(_isnan(a))
        where = not_nan if where is None else _and_where(not_nan, where)
    return _mean(a, axis, dtype, None, keepdims, where, False)


def nanvar(
    a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None
):  # noqa: A002
    """`var` of the non-NaN elements."""
    (a,) = _arraylike("nanvar", a)
    return _var("nanvar", a, axis, dtype, out, ddof, keepdims, where, mean, True)


def nanstd(
    a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None
):  # noqa: A002
    """`std` of the non-NaN elements."""
    (a,) = _arraylike("nanstd", a)
    args = (axis, dtype, out, ddof, keepdims, where, mean, True)
    return lax.sqrt(_var("nanstd", a, *args))


# --------------------------------------------------------------------------------------
# Order statistics

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """The `q`-th quantiles (q in [0, 1], a scalar or a vector) over `axis`; the
    result's leading axis runs over `q`. NaN where a reduced slice holds a NaN."""
    a, q = _arraylike("quantile", a, q)
    _quantile_options("quantile", out, overwrite_input)
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanquantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """`quantile` of the non-NaN elements."""
    a, q = _arraylike("nanquantile", a, q)
    _quantile_options("nanquantile", out, overwrite_input)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    out_sharding=None,
):
    """`quantile` with `q` in percent."""
    a, q = _arraylike("percentile", a, q)
    _quantile_options("percentile", out, overwrite_input)
    if out_sharding is not None:
        raise NotImplementedError("jaxlite has one device: out_sharding must be None.")
    (q,) = _promote_inexact(q)
    q = lax.div(q, 100)
    return _quantile("quantile", a, q, axis, method, keepdims, False, weights)


def nanpercentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
):
    """`nanquantile` with `q` in percent."""
    a, q = _arraylike("nanpercentile", a, q)
    _quantile_options("nanpercentile", out, overwrite_input)
    (q,) = _promote_inexact(q)
    q = lax.div(q, 100)
    return _quantile("nanquantile", a, q, axis, method, keepdims, True, weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median over `axis` (the 0.5 quantile, averaging the two middle elements)."""
    (a,) = _arraylike("median", a)
    _quantile_options("median", out, overwrite_input)
    return _quantile("quantile", a, asarray(0.5), axis, "linear", keepdims, False, None)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of the non-NaN elements over `axis`."""
    (a,) = _arraylike("nanmedian", a)
    _quantile_options("nanmedian", out, overwrite_input)
    q = asarray(0.5)
    return _quantile("nanquantile", a, q, axis, "linear", keepdims, True, None)


def _quantile_options(name, out, overwrite_input):
    if overwrite_input or out is not None:
        raise ValueError(
            f"jax.numpy.{name} does not support overwrite_input=True or out != None"
        )


def _quantile(name, a, q, axis, method, keepdims, squash_nans, weights):
    if method not in _METHODS:
        raise ValueError(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or "
            "'inverted_cdf'"
        )
    if weights is not None:
        (weights,) = _arraylike(name, weights)
        if _is_complex(weights.dtype):
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(
                f"{method} doesn't support weights. Only method 'inverted_cdf' "
                "supports weights."
            )
        a, weights = _promote_inexact(a, weights)
    else:
        (a,) = _promote_inexact(a)
    if _is_complex(a.dtype):
        raise ValueError(
            "quantile does not support complex input, as the operation is poorly "
            "defined."
        )
    if np.ndim(q) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {np.shape(q)}")
    shape = tuple(np.shape(a))
    axes = _quantile_axes(axis, len(shape))
    kept = [i for i in range(len(shape)) if i not in axes]
    batch = tuple(shape[i] for i in kept)
    n = math.prod(shape[i] for i in axes)
    # Gather the reduced axes into one last axis of length n.
    perm = (*kept, *sorted(axes))
    x = lax.reshape(a, (*batch, n), dimensions=perm)
    if weights is not None:
        weights = _weights_like(weights, shape, axes, axis)
        weights = lax.reshape(weights, (*batch, n), dimensions=perm)
    q_shape = tuple(np.shape(q))
    if n == 0:
        result = lax.full(q_shape + batch, np.nan, a.dtype)
    else:
        result = _sorted_quantile(x, q, method, squash_nans, weights)
    if keepdims:
        kept_shape = tuple(1 if i in axes else d for i, d in enumerate(shape))
        result = lax.reshape(result, q_shape + kept_shape)
    return lax.convert_element_type(result, a.dtype)


def _quantile_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        axes = tuple(_canonicalize_axis(ax, ndim) for ax in axis)
        if len(set(axes)) != len(axes):
            raise ValueError("repeated axis")
        return axes
    return (_canonicalize_axis(axis, ndim),)


def _weights_like(weights, shape, axes, axis):
    w_shape = tuple(np.shape(weights))
    if w_shape == shape:
        return weights
    if axis is None:
        raise ValueError("Weights shape must match 'a' shape when axis is None.")
    reduced = tuple(shape[d] for d in axes)
    if w_shape != reduced:
        raise ValueError(f"Weights shape {w_shape} must match reduction axes {reduced}")
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    weights = lax.transpose(weights, order)
    return lax.broadcast_in_dim(weights, shape, tuple(sorted(axes)))


def _sort(operands, dimension):
    if len(operands) == 1:
        return [lax.sort(operands[0], dimension=dimension)]
    return list(lax.sort(tuple(operands), dimension=dimension, num_keys=1))


def _sorted_quantile(x, q, method, squash_nans, weights):
    """Quantiles of `x` (shape batch + (n,), n > 0) along its last axis; the result
    has shape q.shape + batch and dtype of the interpolation (q's for 'linear')."""
    last = np.ndim(x) - 1
    batch = tuple(np.shape(x)[:-1])
    n = np.shape(x)[-1]
    nan = _isnan(x)
    if squash_nans:
        x = _where(lax.bitwise_not(nan), x, np.nan)  # one NaN (sorts last)
    else:
        any_nan = lax.reduce_or(nan, (last,))
        x = _where(lax.bitwise_not(lax.expand_dims(any_nan, (last,))), x, np.nan)
    if weights is None:
        (x,) = _sort([x], last)
    else:
        x, weights = _sort([x, weights], last)
    static = not squash_nans and weights is None and not isinstance(q, Tracer)
    if static and np.size(q) and dtypes.issubdtype(q.dtype, np.floating):
        return _static_quantile(x, np.asarray(q), method)
    q_dtype = np.dtype(q.dtype)
    q_ndim = np.ndim(q)
    out_shape = tuple(np.shape(q)) + batch
    q = lax.broadcast_in_dim(q, out_shape, tuple(range(q_ndim)))
    if squash_nans:
        count = sum(lax.bitwise_not(_isnan(x)), axis=last, dtype=q_dtype)
        count = lax.broadcast_in_dim(
            count, out_shape, tuple(range(q_ndim, len(out_shape)))
        )
    else:
        count = lax.full(out_shape, n, q_dtype)
    if method == "inverted_cdf":
        return _inverted_cdf(x, q, count, squash_nans, weights)
    last_index = lax.sub(count, 1)
    pos = lax.mul(q, last_index)
    low = lax.floor(pos)
    high = lax.ceil(pos)
    high_weight = lax.sub(pos, low)
    low_weight = lax.sub(1, high_weight)
    low = lax.max(0, lax.min(low, last_index))
    high = lax.max(0, lax.min(high, last_index))
    low_value = _take_last(x, low)
    high_value = _take_last(x, high)
    if method == "linear":
        return lax.add(
            lax.mul(lax.convert_element_type(low_value, q_dtype), low_weight),
            lax.mul(lax.convert_element_type(high_value, q_dtype), high_weight),
        )
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "nearest":
        return lax.select(lax.le(high_weight, 0.5), low_value, high_value)
    return lax.mul(lax.add(low_value, high_value), 0.5)  # midpoint


def _static_quantile(x, q, method):
    """Quantiles at positions known now (a concrete `q` and no NaNs to skip): the same
    arithmetic as the traced path, done in NumPy in q's dtype, and the elements read
    with static slices instead of a one-hot selection."""
    n = np.shape(x)[-1]
    one = q.dtype.type(1)
    if method == "inverted_cdf":
        index = np.clip(np.ceil(q * q.dtype.type(n)) - one, 0, n - 1)
        return _take_static(x, index)
    pos = q * q.dtype.type(n - 1)
    low, high = np.floor(pos), np.ceil(pos)
    high_weight = pos - low
    low_weight = one - high_weight
    low_value = _take_static(x, np.clip(low, 0, n - 1))
    high_value = _take_static(x, np.clip(high, 0, n - 1))
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "midpoint":
        return lax.mul(lax.add(low_value, high_value), 0.5)
    out_shape = tuple(np.shape(low_value))
    dims = tuple(range(q.ndim))
    if method == "nearest":
        pred = lax.broadcast_in_dim(asarray(high_weight <= 0.5), out_shape, dims)
        return lax.select(pred, low_value, high_value)
    low_weight = lax.broadcast_in_dim(asarray(low_weight), out_shape, dims)
    high_weight = lax.broadcast_in_dim(asarray(high_weight), out_shape, dims)
    return lax.add(
        lax.mul(lax.convert_element_type(low_value, q.dtype), low_weight),
        lax.mul(lax.convert_element_type(high_value, q.dtype), high_weight),
    )


def _take_static(x, index):
    """`x[..., i]` for each whole number i of the NumPy array `index`, stacked in
    front: the result has shape index.shape + x.shape[:-1]."""
    last = np.ndim(x) - 1
    picked = {}
    for i in np.ravel(index).astype(int).tolist():
        if i not in picked:
            picked[i] = lax.index_in_dim(x, i, last, keepdims=False)
    if np.ndim(index) == 0:
        return picked[int(index)]
    parts = [picked[i] for i in np.ravel(index).astype(int).tolist()]
    return lax.concatenate([lax.expand_dims(p, (0,)) for p in parts], 0)


def _take_last(x, index):
    """`x[..., index]` per result element: x has shape batch + (n,), index (a float
    array of whole numbers) has shape q_shape + batch."""
    out_shape = tuple(np.shape(index))
    n = np.shape(x)[-1]
    full_shape = (*out_shape, n)
    nd = len(full_shape)
    xb = lax.broadcast_in_dim(x, full_shape, tuple(range(nd - np.ndim(x), nd)))
    index = lax.convert_element_type(index, np.int32)
    index = lax.broadcast_in_dim(index, full_shape, tuple(range(nd - 1)))
    iota = lax.broadcasted_iota(np.int32, full_shape, nd - 1)
    picked = lax.select(lax.eq(iota, index), xb, lax.full(full_shape, -np.inf, x.dtype))
    return lax.reduce_max(picked, (nd - 1,))


def _inverted_cdf(x, q, count, squash_nans, weights):
    """The smallest element whose cumulative weight reaches `q` times the total."""
    out_shape = tuple(np.shape(q))
    q_ndim = len(out_shape) - (np.ndim(x) - 1)
    last = np.ndim(x) - 1
    if weights is None:
        target = lax.mul(q, count)
        index = lax.sub(lax.ceil(target), 1)
        any_bad = None
    else:
        index, any_bad = _weighted_cdf_index(x, q, weights, q_ndim, last)
    index = lax.max(0, lax.min(index, lax.sub(count, 1)))
    result = _take_last(x, index)
    if any_bad is not None:
        result = _where(lax.bitwise_not(any_bad), result, np.nan)
    return result


def _weighted_cdf_index(x, q, weights, q_ndim, last):
    out_shape = tuple(np.shape(q))
    bad = lax.bitwise_or(lax.lt(weights, lax.full_like(weights, 0)), _isnan(weights))
    clean = lax.select(
        lax.bitwise_or(bad, _isnan(x)), lax.full_like(weights, 0), weights
    )
    cum = lax.cumsum(clean, axis=last)
    total = lax.reduce_max(cum, (last,))
    total = lax.broadcast_in_dim(total, out_shape, tuple(range(q_ndim, len(out_shape))))
    target = lax.mul(lax.convert_element_type(q, total.dtype), total)
    full_shape = (*out_shape, np.shape(x)[-1])
    nd = len(full_shape)
    cum_b = lax.broadcast_in_dim(cum, full_shape, tuple(range(nd - np.ndim(x), nd)))
    target_b = lax.broadcast_in_dim(target, full_shape, tuple(range(nd - 1)))
    below = lax.convert_element_type(lax.lt(cum_b, target_b), q.dtype)
    index = lax.reduce_sum(below, (nd - 1,))
    any_bad = lax.reduce_or(bad, (last,))
    any_bad = lax.broadcast_in_dim(
        any_bad, out_shape, tuple(range(q_ndim, len(out_shape)))
    )
    return index, any_bad
