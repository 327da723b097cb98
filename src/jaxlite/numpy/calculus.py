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
    from jaxlite.numpy.ufuncs import multiply, negative, subtract, true_divide

    def part(x, start, stop):
        return _slice(x, start, stop, axis)

    first = subtract(part(f, 1, 2), part(f, 0, 1))
    last = subtract(part(f, -1, None), part(f, -2, -1))
    if np.ndim(h) == 0:
        inner = true_divide(
            multiply(subtract(part(f, 2, None), part(f, None, -2)), 0.5), h
        )
        return lax.concatenate(
            [true_divide(first, h), inner, true_divide(last, h)], axis
        )
    if np.ndim(h) != 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    if h.shape[0] != f.shape[axis]:
        raise ValueError(
            "Spacing arrays must have the same length as the dimension along which "
            "the gradient is calculated."
        )
    shape = [1] * f.ndim
    shape[axis] = h.shape[0]
    h = lax.reshape(h, tuple(shape))
    first = true_divide(first, subtract(part(h, 1, 2), part(h, 0, 1)))
    last = true_divide(last, subtract(part(h, -1, None), part(h, -2, -1)))
    dx1 = subtract(part(h, 1, -1), part(h, 0, -2))
    dx2 = subtract(part(h, 2, None), part(h, 1, -1))
    # Non-uniform second-order central differences (NumPy's formula).
    total = dx1 + dx2
    a = true_divide(negative(dx2), multiply(dx1, total))
    b = true_divide(subtract(dx2, dx1), multiply(dx1, dx2))
    c = true_divide(dx1, multiply(dx2, total))
    inner = (
        multiply(a, part(f, 0, -2))
        + multiply(b, part(f, 1, -1))
        + multiply(c, part(f, 2, None))
    )
    return lax.concatenate([first, inner, last], axis)


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled `f` along each of `axis` (default: all axes), with
    spacings `varargs` (one scalar or coordinate array for all axes, or one per
    axis); a list of arrays for several axes. `f` and the spacings are promoted
    together, as in JAX (so a Python float spacing keeps an integer `f` weak)."""
    check_arraylike("gradient", f, *varargs)
    if edge_order is not None:
        raise NotImplementedError(
            "The 'edge_order' argument to jnp.gradient is not supported."
        )
    f, *spacings = promote_dtypes_inexact(f, *varargs)
    if axis is None:
        axes = tuple(range(f.ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(ax, f.ndim) for ax in axis)
    else:
        axes = (canonicalize_axis(axis, f.ndim),)
    if not axes:
        return []
    if min(f.shape[ax] for ax in axes) < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least 2 "
            "elements are required."
        )
    if not spacings:
        spacings = [1.0] * len(axes)
    elif len(spacings) == 1:
        spacings = spacings * len(axes)
    elif len(spacings) != len(axes):
        raise TypeError(
            f"Invalid number of spacing arguments {len(spacings)} for axis={axis}"
        )
    out = [_gradient_along(f, h, ax) for ax, h in zip(axes, spacings)]
    return out[0] if len(out) == 1 else out


# --------------------------------------------------------------------------------------
# Integration


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of sampled `y` along `axis` by the trapezoidal rule, at the sample
    points `x` (1-D, or broadcastable to y) or with uniform spacing `dx`. A uniform
    spacing uses `dx * (sum(y) - (y[0] + y[-1]) / 2)`, as JAX does."""
    from jaxlite.numpy.reductions import sum as sum_
    from jaxlite.numpy.shape import moveaxis
    from jaxlite.numpy.ufuncs import add, multiply, subtract

    if x is None:
        check_arraylike("trapezoid", y)
        (y,) = promote_dtypes_inexact(y)
        dx_array = asarray(dx)
        if dx_array.ndim > 0:
            dx_array = lax.expand_dims(dx_array, tuple(range(y.ndim - dx_array.ndim)))
            dx_array = moveaxis(dx_array, axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        y, x = promote_dtypes_inexact(y, x)
        if x.ndim == 1:
            dx_array = diff(x)
        else:
            dx_array = moveaxis(diff(x, axis=axis), axis, -1)
    if y.ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    y = moveaxis(y, axis, -1)
    last = y.ndim - 1
    if dx_array.ndim == 0 or dx_array.shape[-1] == 1:
        if dx_array.ndim:
            dx_array = lax.squeeze(dx_array, (dx_array.ndim - 1,))
        ends = add(_slice(y, 0, 1, last), _slice(y, -1, None, last))
        ends = lax.squeeze(ends, (last,))
        return multiply(dx_array, subtract(sum_(y, -1), multiply(0.5, ends)))
    heights = add(_slice(y, 1, None, last), _slice(y, None, -1, last))
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
    return asarray(value)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp), xp increasing, at `x`.
    Outside [xp[0], xp[-1]] the result is `left`/`right` (default fp[0], fp[-1]; or
    "extrapolate" for the end segment's line); with `period`, x and xp wrap."""
    from jaxlite.numpy.indexing import take
    from jaxlite.numpy.sorting import searchsorted
    from jaxlite.numpy.ufuncs import (
        absolute,
        add,
        less_equal,
        multiply,
        remainder,
        subtract,
        true_divide,
        where,
    )

    check_arraylike("interp", x, xp, fp)
    if np.ndim(xp) != 1 or np.ndim(fp) != 1 or np.shape(xp) != np.shape(fp):
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = promote_dtypes_inexact(x, xp)
    (fp,) = promote_dtypes_inexact(fp)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        check_arraylike("interp", period)
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = absolute(period)
        x = remainder(x, period)
        xp = remainder(xp, period)
        xp, fp = lax.sort((xp, fp), num_keys=1)
        xp = lax.concatenate(
            [
                subtract(_slice(xp, -1, None, 0), period),
                xp,
                add(_slice(xp, 0, 1, 0), period),
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
    eps = float(np.spacing(dtypes.finfo(xp.dtype).eps))
    flat = less_equal(lax.abs(dx), eps)  # guards the gradient where dx is tiny
    safe_dx = where(flat, 1, dx)
    f = where(flat, f_lo, add(f_lo, multiply(true_divide(delta, safe_dx), df)))
    if period is None:
        first, final = lax.full((), 0, np.int32), lax.full((), n - 1, np.int32)
        if not isinstance(left, str):
            left = _interp_end("left", left, take(fp, first), f)
            f = where(lax.lt(x, take(xp, first)), left, f)
        else:
            _interp_end("left", left, None, None)
        if not isinstance(right, str):
            right = _interp_end("right", right, take(fp, final), f)
            f = where(lax.gt(x, take(xp, final)), right, f)
        else:
            _interp_end("right", right, None, None)
    return f


# --------------------------------------------------------------------------------------
# Phase unwrapping


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """`p` with jumps along `axis` larger than `discont` (default period / 2) replaced
    by their remainder modulo `period`, so that a phase angle varies continuously.
    `p` and `period` are promoted together (integers stay integers, with the half
    period rounded down)."""
    from jaxlite.numpy.shape import concatenate
    from jaxlite.numpy.sorting import cumsum
    from jaxlite.numpy.ufuncs import (
        absolute,
        add,
        equal,
        floor_divide,
        greater,
        less,
        logical_and,
        negative,
        remainder,
        subtract,
        true_divide,
        where,
    )

    check_arraylike("unwrap", p, period)
    p, period = promote_dtypes(p, period)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.ndim == 0:
        raise IndexError("tuple index out of range")  # JAX indexes p.shape[axis]
    axis = canonicalize_axis(axis, p.ndim)
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = true_divide(period, 2)
    if dtypes.issubdtype(p.dtype, np.integer):
        interval = floor_divide(period, 2)
    else:
        interval = true_divide(period, 2)
    dd = diff(p, axis=axis)
    ddmod = subtract(remainder(add(dd, interval), period), interval)
    # A jump of exactly -period/2 upwards is taken as +period/2, as NumPy does.
    ambiguous = logical_and(equal(ddmod, negative(interval)), greater(dd, 0))
    ddmod = where(ambiguous, interval, ddmod)
    correction = where(less(absolute(dd), discont), 0, subtract(ddmod, dd))
    rest = add(_slice(p, 1, None, axis), cumsum(correction, axis=axis))
    return concatenate([_slice(p, 0, 1, axis), rest], axis=axis)


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
