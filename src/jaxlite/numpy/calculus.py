"""Calculus on sampled data: finite differences (diff, ediff1d, gradient), the
trapezoidal integral (trapezoid), phase unwrapping (unwrap), piecewise-linear
interpolation (interp) and the cross product of 2- and 3-vectors (cross).

Everything is built from static slices of the sampled axis (`x[1:] - x[:-1]`), so the
results differentiate, jit and vmap like any other lax program. `interp` finds each
point's interval with `searchsorted` and reads the two end points with a gather; its
division by the interval width is guarded, so a zero-width interval gives the left
value and finite gradients, as in JAX.
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import concrete_or_error
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import (
    check_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
)
from jaxlite.util import canonicalize_axis

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "interp", "unwrap", "cross"]


def _slice(x, start, stop, axis):
    """`x[..., start:stop, ...]` along `axis` (negative bounds count from the end)."""
    n = x.shape[axis]
    start, stop, _ = slice(start, stop).indices(n)
    return lax.slice_in_dim(x, start, max(start, stop), axis=axis)


def _static_int(fun_name, name, value):
    context = f"The {name} argument of jnp.{fun_name} must be a static integer."
    return concrete_or_error(operator.index, value, context)


# --------------------------------------------------------------------------------------
# Differences


def _with_axis_length(fun_name, x, shape, axis):
    """A prepended/appended value broadcast to `shape` with length 1 (if scalar)."""
    from jaxlite.numpy.shape import broadcast_to

    x = asarray(x)
    if x.ndim == 0:
        return broadcast_to(x, (*shape[:axis], 1, *shape[axis + 1 :]))
    return x


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The n-th discrete difference `a[1:] - a[:-1]` along `axis` (`!=` for booleans),
    after concatenating `prepend` and `append`."""
    from jaxlite.numpy.shape import concatenate

    check_arraylike("diff", a)
    n = _static_int("diff", "n", n)
    arr = asarray(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return arr
    if arr.ndim == 0:
        raise ValueError(
            f"diff requires input that is at least one dimensional; got {a!r}"
        )
    axis = canonicalize_axis(axis, arr.ndim)
    parts = []
    if prepend is not None:
        check_arraylike("diff", prepend)
        parts.append(_with_axis_length("diff", prepend, arr.shape, axis))
    parts.append(arr)
    if append is not None:
        check_arraylike("diff", append)
        parts.append(_with_axis_length("diff", append, arr.shape, axis))
    if len(parts) > 1:
        arr = concatenate(parts, axis=axis)
    op = lax.ne if arr.dtype == np.bool_ else lax.sub
    for _ in range(n):
        arr = op(_slice(arr, 1, None, axis), _slice(arr, None, -1, axis))
    return arr


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened `ary`, with `to_begin`
    and `to_end` (cast to ary's dtype) around them."""
    from jaxlite.numpy.shape import ravel

    check_arraylike("ediff1d", ary)
    arr = ravel(asarray(ary))
    result = lax.sub(_slice(arr, 1, None, 0), _slice(arr, None, -1, 0))
    parts = [result]
    if to_begin is not None:
        check_arraylike("ediff1d", to_begin)
        parts.insert(0, ravel(lax.convert_element_type(asarray(to_begin), arr.dtype)))
    if to_end is not None:
        check_arraylike("ediff1d", to_end)
        parts.append(ravel(lax.convert_element_type(asarray(to_end), arr.dtype)))
    return lax.concatenate(parts, 0) if len(parts) > 1 else result


def _gradient_along(f, h, axis):
    """Second-order central differences inside, first-order ones at the two ends.
    `h` is a scalar spacing or the 1-D coordinates along `axis`."""
    n = f.shape[axis]
    if n < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least 2 "
            "elements are required."
        )
    if np.ndim(h) == 0:
        inner = lax.div(
            lax.sub(_slice(f, 2, None, axis), _slice(f, None, -2, axis)),
            lax.mul(h, lax.full((), 2, h.dtype)),
        )
        first = lax.div(lax.sub(_slice(f, 1, 2, axis), _slice(f, 0, 1, axis)), h)
        last = lax.div(lax.sub(_slice(f, -1, None, axis), _slice(f, -2, -1, axis)), h)
    else:
        if h.shape != (n,):
            raise ValueError(
                "Spacing arrays must be 1D arrays of the same length as the "
                f"corresponding dimension of f; got {h.shape} for axis length {n}."
            )
        dx = lax.sub(_slice(h, 1, None, 0), _slice(h, None, -1, 0))
        shape = [1] * f.ndim
        shape[axis] = n - 1
        dx = lax.reshape(dx, tuple(shape))
        dx1, dx2 = _slice(dx, None, -1, axis), _slice(dx, 1, None, axis)
        # Non-uniform second-order central differences (NumPy's formula).
        total = lax.add(dx1, dx2)
        a = lax.neg(lax.div(dx2, lax.mul(dx1, total)))
        b = lax.div(lax.sub(dx2, dx1), lax.mul(dx1, dx2))
        c = lax.div(dx1, lax.mul(dx2, total))
        inner = _add3(
            _bmul(a, _slice(f, None, -2, axis)),
            _bmul(b, _slice(f, 1, -1, axis)),
            _bmul(c, _slice(f, 2, None, axis)),
        )
        first = _bdiv(
            lax.sub(_slice(f, 1, 2, axis), _slice(f, 0, 1, axis)),
            _slice(dx, 0, 1, axis),
        )
        last = _bdiv(
            lax.sub(_slice(f, -1, None, axis), _slice(f, -2, -1, axis)),
            _slice(dx, -1, None, axis),
        )
    return lax.concatenate([first, inner, last], axis)


def _bmul(x, y):
    from jaxlite.numpy.ufuncs import multiply

    return multiply(x, y)


def _bdiv(x, y):
    from jaxlite.numpy.ufuncs import true_divide

    return true_divide(x, y)


def _add3(x, y, z):
    from jaxlite.numpy.ufuncs import add

    return add(add(x, y), z)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled `f` along each of `axis` (default: all axes), with
    spacings `varargs` (one scalar for all, or one scalar or coordinate array per
    axis); a list of arrays for several axes."""
    check_arraylike("gradient", f, *varargs)
    if edge_order is not None:
        raise NotImplementedError(
            "The 'edge_order' argument to jnp.gradient is not supported."
        )
    (f,) = promote_dtypes_inexact(asarray(f))
    if axis is None:
        axes = tuple(range(f.ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(ax, f.ndim) for ax in axis)
    else:
        axes = (canonicalize_axis(axis, f.ndim),)
    if not axes:
        return []
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(
            f"jnp.gradient: invalid number of spacing arguments: got {len(varargs)} "
            f"for {len(axes)} axes."
        )
    out = []
    for ax, h in zip(axes, spacings):
        h = lax.convert_element_type(asarray(h), f.dtype)
        out.append(_gradient_along(f, h, ax))
    return out[0] if len(out) == 1 else out


# --------------------------------------------------------------------------------------
# Integration


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of sampled `y` along `axis` by the trapezoidal rule, at the sample
    points `x` (1-D, or broadcastable to y) or with uniform spacing `dx`."""
    from jaxlite.numpy.reductions import sum as sum_
    from jaxlite.numpy.shape import moveaxis
    from jaxlite.numpy.ufuncs import add, multiply

    if x is None:
        check_arraylike("trapezoid", y)
        (y,) = promote_dtypes_inexact(asarray(y))
        dx_array = asarray(dx)
    else:
        check_arraylike("trapezoid", y, x)
        y, x = promote_dtypes_inexact(asarray(y), asarray(x))
        if x.ndim == 1:
            dx_array = diff(x)
        else:
            dx_array = moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    heights = add(_slice(y, 1, None, -1 % y.ndim), _slice(y, None, -1, -1 % y.ndim))
    return multiply(0.5, sum_(multiply(dx_array, heights), axis=-1))


# --------------------------------------------------------------------------------------
# Interpolation


def _interp_end(name, value, default, extrapolated):
    if value is None:
        return default
    if isinstance(value, str):
        if value != "extrapolate":
            raise ValueError(
                f"the only valid string value of `{name}` is 'extrapolate', but got: "
                f"{value!r}"
            )
        return extrapolated
    check_arraylike("interp", value)
    return lax.convert_element_type(asarray(value), default.dtype)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp), xp increasing, at `x`.
    Outside [xp[0], xp[-1]] the result is `left`/`right` (default fp[0], fp[-1]; or
    "extrapolate" for the end segment's line); with `period`, x and xp wrap."""
    from jaxlite.numpy.indexing import take
    from jaxlite.numpy.sorting import searchsorted
    from jaxlite.numpy.ufuncs import remainder, where

    check_arraylike("interp", x, xp, fp)
    if np.ndim(xp) != 1 or np.ndim(fp) != 1 or np.shape(xp) != np.shape(fp):
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promote_dtypes_inexact(asarray(x), asarray(xp))
    (fp,) = promote_dtypes_inexact(asarray(fp))
    if period is not None:
        check_arraylike("interp", period)
        period = lax.abs(lax.convert_element_type(asarray(period), x.dtype))
        x = remainder(x, period)
        xp = remainder(xp, period)
        order = lax.sort((xp, lax.iota(np.int32, xp.shape[0])), num_keys=1)[1]
        xp = take(xp, order)
        fp = take(fp, order)
        xp = lax.concatenate(
            [
                lax.sub(_slice(xp, -1, None, 0), period),
                xp,
                lax.add(_slice(xp, 0, 1, 0), period),
            ],
            0,
        )
        fp = lax.concatenate([_slice(fp, -1, None, 0), fp, _slice(fp, 0, 1, 0)], 0)
    n = xp.shape[0]
    i = searchsorted(xp, x, side="right")
    i = lax.min(lax.max(i, lax.full_like(i, 1)), lax.full_like(i, n - 1))
    im1 = lax.sub(i, lax.full((), 1, i.dtype))
    x_lo, x_hi = take(xp, im1), take(xp, i)
    f_lo, f_hi = take(fp, im1), take(fp, i)
    dx = lax.sub(x_hi, x_lo)
    df = lax.sub(f_hi, f_lo)
    delta = lax.sub(x, x_lo)
    eps = np.spacing(dtypes.finfo(dx.dtype).eps)
    flat = lax.le(lax.abs(dx), lax.full_like(dx, eps))
    safe_dx = lax.select(flat, lax.full_like(dx, 1), dx)
    slope_term = lax.mul(
        lax.convert_element_type(lax.div(delta, safe_dx), fp.dtype), df
    )
    f = where(flat, f_lo, lax.add(f_lo, slope_term))
    if period is None:
        f = where(
            lax.lt(x, take(xp, lax.full((), 0, np.int32))),
            _interp_end("left", left, take(fp, lax.full((), 0, np.int32)), f),
            f,
        )
        f = where(
            lax.gt(x, take(xp, lax.full((), n - 1, np.int32))),
            _interp_end("right", right, take(fp, lax.full((), n - 1, np.int32)), f),
            f,
        )
    return f


# --------------------------------------------------------------------------------------
# Phase unwrapping


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """`p` with jumps along `axis` larger than `discont` (default period / 2) replaced
    by their remainder modulo `period`, so that a phase angle varies continuously."""
    from jaxlite.numpy.sorting import cumsum
    from jaxlite.numpy.ufuncs import absolute, remainder, where

    check_arraylike("unwrap", p)
    (p,) = promote_dtypes_inexact(asarray(p))
    if p.ndim == 0:
        raise ValueError("unwrap requires input that is at least one dimensional.")
    axis = canonicalize_axis(axis, p.ndim)
    period = lax.convert_element_type(asarray(period), p.dtype)
    half = lax.div(period, lax.full((), 2, p.dtype))
    discont = half if discont is None else asarray(discont)
    dd = diff(p, axis=axis)
    low = lax.neg(half)
    ddmod = lax.add(remainder(lax.sub(dd, low), period), low)
    # A jump of exactly -period/2 upwards is taken as +period/2, as NumPy does.
    ambiguous = lax.bitwise_and(
        lax.eq(ddmod, _full_like(ddmod, low)), lax.gt(dd, lax.full_like(dd, 0))
    )
    ddmod = where(ambiguous, half, ddmod)
    correction = lax.sub(ddmod, dd)
    correction = where(absolute(dd) < discont, 0, correction)
    shape = list(p.shape)
    shape[axis] = 1
    zero = lax.full(tuple(shape), 0, p.dtype)
    total = cumsum(lax.concatenate([zero, correction], axis), axis=axis)
    return lax.add(p, total)


def _full_like(x, scalar):
    return lax.broadcast_in_dim(scalar, x.shape, ())


# --------------------------------------------------------------------------------------
# Cross product


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (or 2-vectors, taken with a zero z component) along
    `axisa` of `a` and `axisb` of `b`; the result's vector axis is `axisc` (there is
    none when both are 2-vectors: the z component)."""
    from jaxlite.numpy.shape import broadcast_arrays, moveaxis

    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(asarray(a), asarray(b))
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        a0, a1 = _components(a, 2)
        b0, b1 = _components(b, 2)
        a0, a1, b0, b1 = broadcast_arrays(a0, a1, b0, b1)
        return lax.sub(lax.mul(a0, b1), lax.mul(a1, b0))
    a0, a1, a2 = _components(a, 3)
    b0, b1, b2 = _components(b, 3)
    a0, a1, a2, b0, b1, b2 = broadcast_arrays(a0, a1, a2, b0, b1, b2)
    c = [
        lax.sub(lax.mul(a1, b2), lax.mul(a2, b1)),
        lax.sub(lax.mul(a2, b0), lax.mul(a0, b2)),
        lax.sub(lax.mul(a0, b1), lax.mul(a1, b0)),
    ]
    out = lax.concatenate([lax.expand_dims(ci, (ci.ndim,)) for ci in c], a0.ndim)
    return moveaxis(out, -1, axisc)


def _components(v, k):
    """The k components of vectors along the last axis (a zero z for 2-vectors)."""
    last = v.ndim - 1
    parts = [lax.index_in_dim(v, i, last, keepdims=False) for i in range(v.shape[-1])]
    if len(parts) < k:
        parts.append(lax.full(parts[0].shape, 0, v.dtype))
    return parts
