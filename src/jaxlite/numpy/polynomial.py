"""NumPy's legacy polynomial functions: coefficient arrays, highest power first.

Arithmetic (polyadd, polysub, polymul, polydiv), calculus (polyder, polyint),
evaluation (polyval, by Horner's rule in a `scan` over the coefficients, so a long
polynomial is one loop and not a long chain of equations), construction from roots
(poly), roots as the eigenvalues of the companion matrix (roots), least-squares
fitting on a scaled Vandermonde matrix (polyfit), and the helpers vander and
trim_zeros.

Coefficient arrays have static lengths, so leading zeros are kept unless a function
is asked to trim them (`trim_leading_zeros=True`, `strip_zeros=True`), which needs
concrete values, as in JAX. The decompositions come from jaxlite.numpy.linalg.
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Tracer, concrete_or_error
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import (
    check_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
)

__all__ = [
    "poly",
    "polyadd",
    "polysub",
    "polymul",
    "polydiv",
    "polyder",
    "polyint",
    "polyval",
    "polyfit",
    "roots",
    "trim_zeros",
    "vander",
]


def _static_int(fun_name, name, value):
    context = f"The {name} argument of jnp.{fun_name} must be a static integer."
    return concrete_or_error(operator.index, value, context)


def _pad_front(p, n):
    """`p` (1-D) with zeros in front, to length n."""
    k = p.shape[0]
    if k == n:
        return p
    return lax.pad(p, lax.full((), 0, p.dtype), [(n - k, 0, 0)])


def _pad_to(p, before, after):
    return lax.pad(p, lax.full((), 0, p.dtype), [(before, after, 0)])


# --------------------------------------------------------------------------------------
# Construction and helpers


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots (or with the
    eigenvalues of a square matrix as roots)."""
    check_arraylike("poly", seq_of_zeros)
    (a,) = promote_dtypes_inexact(asarray(seq_of_zeros))
    if a.ndim == 0:
        a = lax.reshape(a, (1,))
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] > 0:
        from jaxlite.numpy.linalg import eigvals

        a = eigvals(a)
    elif a.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    coeffs = lax.full((1,), 1, a.dtype)
    for i in range(a.shape[0]):
        root = lax.index_in_dim(a, i, 0, keepdims=False)
        # (c_0 x^k + ... + c_k) (x - r): shift the coefficients and subtract r times them.
        shifted = _pad_to(coeffs, 0, 1)
        scaled = _pad_to(
            lax.mul(coeffs, lax.broadcast_in_dim(root, coeffs.shape, ())), 1, 0
        )
        coeffs = lax.sub(shifted, scaled)
    return coeffs


def vander(x, N=None, increasing=False):  # noqa: N803 - NumPy's name
    """The Vandermonde matrix of the 1-D `x`: columns are powers of x, highest first
    (lowest first when `increasing`), `N` columns (default len(x))."""
    check_arraylike("vander", x)
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = x.shape[0]
    N = n if N is None else _static_int("vander", "N", N)  # noqa: N806
    if N < 0:
        raise ValueError("N must be nonnegative")
    if N == 0:
        return lax.full((n, 0), 0, x.dtype)
    ones = lax.full((n, 1), 1, x.dtype)
    columns = lax.broadcast_in_dim(x, (n, N - 1), (0,))
    powers = lax.cumprod(lax.concatenate([ones, columns], 1), axis=1)
    return powers if increasing else lax.rev(powers, (1,))


def trim_zeros(filt, trim="fb", axis=None):
    """`filt` without its leading ('f' in `trim`) and/or trailing ('b') zeros, along
    `axis` (default: every axis, keeping the bounding box of the nonzeros). The
    result's shape depends on the values, so they must be concrete."""
    check_arraylike("trim_zeros", filt)
    arr = asarray(filt)
    context = (
        "The error arose in jnp.trim_zeros: the result's shape depends on the values "
        "of filt, which must be concrete (call it outside of jit)."
    )
    value = concrete_or_error(np.asarray, arr, context)
    trim = trim.lower()
    front, back = "f" in trim, "b" in trim
    if axis is None:
        axes = tuple(range(arr.ndim))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(operator.index(a) % arr.ndim for a in axis)
    else:
        axes = (operator.index(axis) % arr.ndim,)
    nonzero = value != 0
    if not nonzero.any():
        if not (front or back):
            return arr
        stops = tuple(0 if d in axes else arr.shape[d] for d in range(arr.ndim))
        return lax.slice(arr, (0,) * arr.ndim, stops)
    starts, stops = [0] * arr.ndim, list(arr.shape)
    for d in axes:
        others = tuple(i for i in range(arr.ndim) if i != d)
        where = np.flatnonzero(nonzero.any(axis=others) if others else nonzero)
        if front:
            starts[d] = int(where[0])
        if back:
            stops[d] = int(where[-1]) + 1
    return lax.slice(arr, tuple(starts), tuple(stops))


# --------------------------------------------------------------------------------------
# Arithmetic


def _check_1d(fun_name, *ps):
    for p in ps:
        if p.ndim != 1:
            raise ValueError(
                f"jnp.{fun_name}: polynomial coefficients must be 1-D arrays; got "
                f"shape {p.shape}."
            )


def _add_or_sub(fun_name, op, a1, a2):
    from jaxlite.numpy.shape import atleast_1d

    check_arraylike(fun_name, a1, a2)
    a1, a2 = promote_dtypes(atleast_1d(asarray(a1)), atleast_1d(asarray(a2)))
    n = max(a1.shape[0], a2.shape[0])
    return op(_pad_first_axis(a1, n), _pad_first_axis(a2, n))


def _pad_first_axis(p, n):
    """Leading zeros along axis 0 up to length n (JAX pads there for any rank)."""
    k = p.shape[0]
    if k == n:
        return p
    config = [(n - k, 0, 0)] + [(0, 0, 0)] * (p.ndim - 1)
    return lax.pad(p, lax.full((), 0, p.dtype), config)


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter one padded with leading zeros)."""
    from jaxlite.numpy.ufuncs import add

    return _add_or_sub("polyadd", add, a1, a2)


def polysub(a1, a2):
    """The difference of two polynomials."""
    from jaxlite.numpy.ufuncs import subtract

    return _add_or_sub("polysub", subtract, a1, a2)


def _trim_front(p):
    return trim_zeros(p, trim="f")


def polymul(a1, a2, *, trim_leading_zeros=False):
    """The product of two polynomials (a full convolution of the coefficients)."""
    from jaxlite.numpy.shape import atleast_1d
    from jaxlite.numpy.signal import convolve

    check_arraylike("polymul", a1, a2)
    a1, a2 = promote_dtypes_inexact(atleast_1d(asarray(a1)), atleast_1d(asarray(a2)))
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = _trim_front(a1), _trim_front(a2)
    if a1.shape[0] == 0:
        a1 = lax.full((1,), 0, a1.dtype)
    if a2.shape[0] == 0:
        a2 = lax.full((1,), 0, a2.dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of dividing polynomial `u` by `v`. The remainder keeps
    u's length (leading zeros) unless `trim_leading_zeros` drops the entries below
    sqrt(eps) (which needs concrete values)."""
    check_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(asarray(u), asarray(v))
    _check_1d("polydiv", u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = lax.div(lax.full((), 1, v.dtype), lax.index_in_dim(v, 0, 0, keepdims=False))
    quotient = []
    remainder = u
    for k in range(max(m - n + 1, 0)):
        d = lax.mul(scale, lax.index_in_dim(remainder, k, 0, keepdims=False))
        quotient.append(lax.reshape(d, (1,)))
        step = lax.mul(lax.broadcast_in_dim(d, v.shape, ()), v)
        remainder = lax.sub(remainder, _pad_to(step, k, m - n - k))
    if quotient:
        quotient = lax.concatenate(quotient, 0)
    else:
        quotient = lax.full((1,), 0, u.dtype)
    if trim_leading_zeros:
        remainder = _trim_small_front(remainder)
    return quotient, remainder


def _trim_small_front(p):
    context = "jnp.polydiv with trim_leading_zeros=True needs concrete values."
    value = concrete_or_error(np.asarray, p, context)
    tol = np.sqrt(dtypes.finfo(p.dtype).eps)
    small = np.abs(value) < tol
    start = int(np.argmin(small)) if not small.all() else value.shape[0]
    return lax.slice_in_dim(p, start, p.shape[0], axis=0)


# --------------------------------------------------------------------------------------
# Calculus and evaluation


def polyder(p, m=1):
    """The m-th derivative of a polynomial."""
    check_arraylike("polyder", p)
    m = _static_int("polyder", "m", m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    (p,) = promote_dtypes_inexact(asarray(p))
    _check_1d("polyder", p)
    for _ in range(m):
        n = p.shape[0] - 1
        if n <= 0:
            return lax.full((0,), 0, p.dtype)
        powers = np.arange(n, 0, -1).astype(p.dtype)
        p = lax.mul(lax.slice_in_dim(p, 0, n), asarray(powers))
    return p


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial; `k` gives the integration constants
    (a scalar for all, or one per integration, the first one's first)."""
    check_arraylike("polyint", p)
    m = _static_int("polyint", "m", m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if k is None:
        k = lax.full((m,), 0, dtypes.default_float_dtype())
    else:
        check_arraylike("polyint", k)
        k = asarray(k)
        if k.ndim == 0 or k.shape == (1,):
            k = lax.broadcast_in_dim(lax.reshape(k, ()), (m,), ())
        elif k.shape != (m,):
            raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    p, k = promote_dtypes_inexact(asarray(p), k)
    _check_1d("polyint", p)
    for i in range(m):
        n = p.shape[0]
        divisors = np.arange(n, 0, -1).astype(p.dtype)
        constant = lax.slice_in_dim(k, i, i + 1)
        p = lax.concatenate([lax.div(p, asarray(divisors)), constant], 0)
    return p


def polyval(p, x, *, unroll=16):
    """The polynomial `p` evaluated at `x` by Horner's rule over p's first axis; the
    coefficients may carry trailing axes (several polynomials), which broadcast with
    `x` as in NumPy."""
    from jaxlite.lax.loops import scan

    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(asarray(p), asarray(x))
    if p.ndim == 0:
        raise ValueError("jnp.polyval: p must have at least one axis of coefficients.")
    shape = np.broadcast_shapes(x.shape, p.shape[1:])
    x = lax.broadcast_to_rank(x, len(shape)) if x.ndim < len(shape) else x
    x = lax.broadcast_in_dim(x, shape, tuple(range(len(shape))))

    def step(y, c):
        c = lax.broadcast_in_dim(
            c, shape, tuple(range(len(shape) - c.ndim, len(shape)))
        )
        return lax.add(lax.mul(y, x), c), None

    y, _ = scan(step, lax.full(shape, 0, x.dtype), p, unroll=unroll)
    return y


# --------------------------------------------------------------------------------------
# Fitting and roots


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares fit of a polynomial of degree `deg` to the points (x, y) (y may
    hold several data sets as columns), optionally weighted by `w`; with `full`, also
    the residuals, rank, singular values and rcond; with `cov`, the coefficients'
    covariance matrix."""
    from jaxlite.numpy.linalg import inv, lstsq
    from jaxlite.numpy.reductions import sum as sum_
    from jaxlite.numpy.ufuncs import multiply, sqrt, true_divide

    check_arraylike("polyfit", x, y)
    deg = _static_int("polyfit", "deg", deg)
    order = deg + 1
    x, y = promote_dtypes_inexact(asarray(x), asarray(y))
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(dtypes.finfo(x.dtype).eps)
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        check_arraylike("polyfit", w)
        (w,) = promote_dtypes_inexact(asarray(w))
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = multiply(lhs, lax.expand_dims(w, (1,)))
        rhs = multiply(rhs, w if rhs.ndim == 1 else lax.expand_dims(w, (1,)))
    scale = sqrt(sum_(multiply(lhs, lhs), axis=0))
    lhs = true_divide(lhs, scale)
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = true_divide(c, scale if c.ndim == 1 else lax.expand_dims(scale, (1,)))
    if full:
        return c, resids, rank, s, asarray(rcond)
    if not cov:
        return c
    from jaxlite.numpy.products import dot, outer

    base = inv(dot(lax.transpose(lhs, (1, 0)), lhs))
    base = true_divide(base, outer(scale, scale))
    if cov == "unscaled":
        factor = asarray(1.0)
    else:
        if x.shape[0] <= order:
            raise ValueError(
                "the number of data points must exceed order to scale the covariance "
                "matrix"
            )
        factor = true_divide(resids, x.shape[0] - order)
    if y.ndim == 1:
        return c, multiply(base, factor)
    return c, multiply(lax.expand_dims(base, (2,)), factor)


def roots(p, *, strip_zeros=True):
    """The roots of a polynomial, as the eigenvalues of its companion matrix
    (complex). With `strip_zeros`, leading zero coefficients are dropped first (which
    needs concrete values); without, they give NaN roots."""
    from jaxlite.numpy.linalg import eigvals
    from jaxlite.numpy.shape import atleast_1d

    check_arraylike("roots", p)
    (p,) = promote_dtypes_inexact(atleast_1d(asarray(p)))
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    complex_dtype = dtypes.promote_types(p.dtype, np.complex64)
    if p.shape[0] < 2:
        return lax.full((0,), 0, complex_dtype)
    if strip_zeros:
        context = (
            "The error arose in jnp.roots: strip_zeros=True needs concrete values; "
            "pass strip_zeros=False under jit."
        )
        if isinstance(p, Tracer):
            concrete_or_error(np.asarray, p, context)
        p = trim_zeros(p, "f")
        if p.shape[0] < 2:
            return lax.full((0,), 0, complex_dtype)
    n = p.shape[0] - 1
    lead = lax.index_in_dim(p, 0, 0, keepdims=False)
    first_row = lax.neg(
        lax.div(lax.slice_in_dim(p, 1, n + 1), lax.broadcast_in_dim(lead, (n,), ()))
    )
    first_row = lax.reshape(first_row, (1, n))
    if n == 1:
        companion = first_row
    else:
        shift = asarray(np.eye(n - 1, n, dtype=p.dtype))
        companion = lax.concatenate([first_row, shift], 0)
    return lax.convert_element_type(eigvals(companion), complex_dtype)
