"""Statistics of samples: covariance and correlation (cov, corrcoef) and counting
(bincount, digitize, histogram, histogram2d, histogramdd, histogram_bin_edges).

Counting is a scatter-add of ones (or weights) into a fixed number of bins, so it
works under jit as long as that number is static: `bincount` needs `length=` there,
histograms need `bins` as a count or as explicit edges. Bin edges come from
`linspace` over the data's range (traced values are fine), and a sample's bin is its
`searchsorted` position among the edges, the last edge counting as inside the last
bin, as in NumPy.
"""

from __future__ import annotations

import builtins
import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Tracer, concrete_or_error
from jaxlite.numpy.creation import asarray
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact

__all__ = [
    "cov",
    "corrcoef",
    "bincount",
    "digitize",
    "histogram_bin_edges",
    "histogram",
    "histogram2d",
    "histogramdd",
]


# --------------------------------------------------------------------------------------
# Covariance and correlation


def _weights_1d(name, w, n, integer):
    check_arraylike("cov", w)
    w = asarray(w)
    if w.ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if w.shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if integer and not dtypes.issubdtype(w.dtype, np.integer):
        raise TypeError(f"{name} must be integer")
    return w


def cov(
    m,
    y=None,
    rowvar=True,
    bias=False,
    ddof=None,
    fweights=None,
    aweights=None,
    dtype=None,
):
    """Covariance matrix of the variables in the rows of `m` (columns if not
    `rowvar`), stacked with `y`; frequency and analytic weights as in NumPy. One
    variable gives a scalar."""
    from jaxlite.numpy.products import dot
    from jaxlite.numpy.reductions import average
    from jaxlite.numpy.shape import atleast_2d, concatenate, squeeze
    from jaxlite.numpy.ufuncs import conjugate, multiply, subtract, true_divide

    if y is not None:
        check_arraylike("cov", m, y)
    else:
        check_arraylike("cov", m)
    m = asarray(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = atleast_2d(m)
    if not rowvar and x.shape[0] != 1:
        x = lax.transpose(x, (1, 0))
    if x.shape[0] == 0:
        return lax.full((0, 0), np.nan, dtypes.default_float_dtype())
    if y is not None:
        y = asarray(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        y = atleast_2d(y)
        if not rowvar and y.shape[0] != 1:
            y = lax.transpose(y, (1, 0))
        x = concatenate([x, y], axis=0)
    if dtype is None:
        (x,) = promote_dtypes_inexact(x)
    else:
        x = lax.convert_element_type(x, dtypes.check_user_dtype_supported(dtype, "cov"))
    if ddof is None:
        ddof = 0 if bias else 1
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = _weights_1d("fweights", fweights, n, True)
    if aweights is not None:
        aw = _weights_1d("aweights", aweights, n, False)
        w = aw if w is None else multiply(w, aw)
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = lax.index_in_dim(w_sum, 0, 0, keepdims=False)
    if w is None:
        f = lax.sub(w_sum, lax.convert_element_type(ddof, w_sum.dtype))
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = subtract(w_sum, ddof)
    else:
        from jaxlite.numpy.reductions import sum as sum_

        f = subtract(w_sum, true_divide(multiply(ddof, sum_(multiply(w, aw))), w_sum))
    xc = subtract(x, lax.expand_dims(avg, (1,)))
    xw = xc if w is None else multiply(xc, w)
    c = dot(xw, conjugate(lax.transpose(xc, (1, 0))))
    return squeeze(true_divide(c, f))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients: `cov` normalised by the standard deviations,
    the real (and imaginary) parts clipped to [-1, 1]."""
    from jaxlite.numpy.ufuncs import clip, imag, real, sqrt, true_divide

    check_arraylike("corrcoef", x)
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return true_divide(c, c)
    from jaxlite.numpy.creation import diagonal

    d = diagonal(c)
    stddev = sqrt(real(d))
    c = true_divide(c, lax.broadcast_in_dim(stddev, c.shape, (0,)))
    c = true_divide(c, lax.broadcast_in_dim(stddev, c.shape, (1,)))
    if dtypes.issubdtype(c.dtype, np.complexfloating):
        re = clip(real(c), -1, 1)
        im = clip(imag(c), -1, 1)
        return lax.add(
            lax.convert_element_type(re, c.dtype),
            lax.mul(lax.convert_element_type(im, c.dtype), lax.full((), 1j, c.dtype)),
        )
    return clip(c, -1, 1)


# --------------------------------------------------------------------------------------
# Counting


def bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None):
    """How often each value 0, 1, ..., length - 1 occurs in the 1-D integer array `x`
    (summing `weights` instead of ones). Negative values count as 0 and values past
    the end are dropped. Under jit, pass a static `length`; otherwise it is
    `max(minlength, max(x) + 1)`."""
    check_arraylike("bincount", x)
    if out_sharding is not None:
        raise NotImplementedError("jaxlite has one device: out_sharding must be None.")
    x = asarray(x)
    if x.dtype == np.bool_:
        x = lax.convert_element_type(x, np.int32)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(
            f"x argument to bincount must have an integer type; got {x.dtype}"
        )
    if x.ndim != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = concrete_or_error(
        operator.index,
        minlength,
        "The error occurred because of argument 'minlength' of jnp.bincount.",
    )
    if length is None:
        context = (
            "The error occurred because of argument 'x' of jnp.bincount. To avoid "
            "this error, pass a static `length` argument."
        )
        top = concrete_or_error(np.asarray, x, context)
        length = builtins.max(minlength, int(top.max()) + 1 if top.size else 0)
    else:
        length = concrete_or_error(
            operator.index,
            length,
            "The error occurred because of argument 'length' of jnp.bincount.",
        )
    if weights is None:
        weights = lax.full(x.shape, 1, dtypes.default_int_dtype())
    else:
        check_arraylike("bincount", weights)
        weights = asarray(weights)
        if weights.shape != x.shape:
            weights = lax.broadcast_in_dim(weights, x.shape, ())
    zero = lax.full((), 0, x.dtype)
    index = lax.max(x, lax.broadcast_in_dim(zero, x.shape, ()))
    out = lax.full((length,), 0, weights.dtype)
    return out.at[index].add(weights, mode="drop")


def digitize(x, bins, right=False, *, method=None):
    """The index of the bin of each element of `x` among the monotonic 1-D `bins`
    (increasing or decreasing), as NumPy's digitize."""
    from jaxlite.numpy.sorting import searchsorted
    from jaxlite.numpy.ufuncs import where

    check_arraylike("digitize", x, bins)
    x, bins = asarray(x), asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got {bins}")
    if bins.shape[0] == 0:
        return lax.full(x.shape, 0, np.int32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    n = bins.shape[0]
    increasing = searchsorted(bins, x, side=side, **kw)
    decreasing = lax.sub(
        lax.full(x.shape, n, increasing.dtype),
        searchsorted(lax.rev(bins, (0,)), x, side=side, **kw),
    )
    first = lax.index_in_dim(bins, 0, 0, keepdims=False)
    last = lax.index_in_dim(bins, n - 1, 0, keepdims=False)
    return where(lax.ge(last, first), increasing, decreasing)


# --------------------------------------------------------------------------------------
# Histograms


def _static_bins(bins):
    """`bins` as a Python int if it is a count, else None (it holds the edges)."""
    if isinstance(bins, (list, tuple, Tracer)) or np.ndim(bins) != 0:
        return None
    return operator.index(bins)


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The edges of the histogram bins: `bins` itself if it is an array, else
    `bins + 1` evenly spaced edges over `range` (default: the data's min and max,
    widened by 0.5 on each side when they are equal)."""
    from jaxlite.numpy.creation import linspace
    from jaxlite.numpy.reductions import max as max_
    from jaxlite.numpy.reductions import min as min_

    check_arraylike("histogram_bin_edges", a)
    (arr,) = promote_dtypes_inexact(asarray(a))
    dtype = arr.dtype
    count = _static_bins(bins)
    if count is None:
        check_arraylike("histogram_bin_edges", bins)
        return lax.convert_element_type(asarray(bins), dtype)
    if count < 1:
        raise ValueError("`bins` must be positive, when an integer")
    if range is None:
        if arr.size == 0:
            first, last = lax.full((), 0, dtype), lax.full((), 1, dtype)
        else:
            first, last = min_(arr), max_(arr)
    else:
        if np.shape(range) != (2,):
            raise ValueError(f"`range` must be a pair (min, max); got {range!r}")
        first = lax.convert_element_type(asarray(range[0]), dtype)
        last = lax.convert_element_type(asarray(range[1]), dtype)
    equal = lax.eq(first, last)
    half = lax.full((), 0.5, dtype)
    first = lax.select(equal, lax.sub(first, half), first)
    last = lax.select(equal, lax.add(last, half), last)
    return linspace(first, last, count + 1, dtype=dtype)


def _bin_index(values, edges):
    """Each value's bin (1..len(edges)-1 inside, 0 below, len(edges) above); the
    last edge belongs to the last bin."""
    from jaxlite.numpy.sorting import searchsorted

    n = edges.shape[0]
    index = searchsorted(edges, values, side="right")
    last = lax.index_in_dim(edges, n - 1, 0, keepdims=False)
    on_last = lax.eq(values, lax.broadcast_in_dim(last, values.shape, ()))
    return lax.select(on_last, lax.full(index.shape, n - 1, index.dtype), index)


def histogram(a, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Histogram of the flattened `a`: `(counts, bin_edges)`. Counts are floats;
    with `density`, they are normalised to integrate to 1 over the range."""
    from jaxlite.numpy.shape import ravel
    from jaxlite.numpy.ufuncs import true_divide

    check_arraylike("histogram", a)
    if weights is None:
        (arr,) = promote_dtypes_inexact(ravel(asarray(a)))
        weights = lax.full(arr.shape, 1, arr.dtype)
    else:
        check_arraylike("histogram", weights)
        weights = asarray(weights)
        if weights.shape != np.shape(a):
            raise ValueError("weights should have the same shape as a.")
        # a and weights are promoted together: the counts take the common dtype.
        arr, weights = promote_dtypes_inexact(ravel(asarray(a)), ravel(weights))
    edges = histogram_bin_edges(arr, bins, range, weights)
    n = edges.shape[0]
    index = _bin_index(arr, edges)
    counts = lax.full((n + 1,), 0, weights.dtype).at[index].add(weights)
    counts = lax.slice_in_dim(counts, 1, n)
    if density:
        from jaxlite.numpy.calculus import diff
        from jaxlite.numpy.reductions import sum as sum_

        counts = true_divide(true_divide(counts, diff(edges)), sum_(counts))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """Two-dimensional histogram of the points (x, y): `(counts, x_edges,
    y_edges)`."""
    from jaxlite.numpy.shape import stack

    check_arraylike("histogram2d", x, y)
    try:
        n_bins = len(bins)
    except TypeError:
        n_bins = 1
    if n_bins not in (1, 2):
        bins = [bins, bins]  # one array of edges for both dimensions
    sample = stack([asarray(x), asarray(y)], axis=1)
    counts, edges = histogramdd(sample, bins, range, weights, density)
    return counts, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """D-dimensional histogram of N points given as an (N, D) array: `(counts,
    [edges per dimension])`. Counts are integers, or floats with weights or
    `density`."""
    from jaxlite.numpy.calculus import diff
    from jaxlite.numpy.reductions import sum as sum_
    from jaxlite.numpy.ufuncs import true_divide

    check_arraylike("histogramdd", sample)
    sample = asarray(sample)
    if sample.ndim == 1:
        sample = lax.reshape(sample, (sample.shape[0], 1))
    if sample.ndim != 2:
        raise ValueError(
            f"histogramdd: sample must have shape (N, D); got {sample.shape}"
        )
    n_points, n_dims = sample.shape
    if weights is not None:
        check_arraylike("histogramdd", weights)
        weights = asarray(weights)
        if weights.shape != (n_points,):
            raise ValueError("should have one weight for each sample.")
    if range is not None and len(range) != n_dims:
        raise ValueError(
            f"range argument must have one entry per dimension, got {len(range)}"
        )
    bins_per_dim = _bins_per_dim(bins, n_dims)
    edges, flat_index, sizes = [], None, []
    for d in builtins.range(n_dims):
        column = lax.index_in_dim(sample, d, 1, keepdims=False)
        dim_range = None if range is None else range[d]
        e = histogram_bin_edges(column, bins_per_dim[d], dim_range, weights)
        edges.append(e)
        (column,) = promote_dtypes_inexact(column)
        index = _bin_index(column, e)
        size = e.shape[0] + 1
        sizes.append(size)
        if flat_index is None:
            flat_index = index
        else:
            flat_index = lax.add(
                lax.mul(flat_index, lax.full((), size, flat_index.dtype)), index
            )
    total = int(np.prod(sizes))
    if weights is None:
        values = lax.full((n_points,), 1, dtypes.default_int_dtype())
    else:
        values = weights
    counts = lax.full((total,), 0, values.dtype).at[flat_index].add(values)
    counts = lax.reshape(counts, tuple(sizes))
    for d in builtins.range(n_dims):
        counts = lax.slice_in_dim(counts, 1, sizes[d] - 1, axis=d)
    if density:
        counts = true_divide(counts, sum_(counts))
        for d in builtins.range(n_dims):
            widths = diff(edges[d])
            shape = [1] * n_dims
            shape[d] = widths.shape[0]
            counts = true_divide(counts, lax.reshape(widths, tuple(shape)))
    return counts, edges


def _bins_per_dim(bins, n_dims):
    count = _static_bins(bins)
    if count is not None:
        return [count] * n_dims
    if isinstance(bins, (list, tuple)):
        if len(bins) != n_dims:
            raise ValueError(
                "The dimension of bins must be equal to the dimension of the sample x."
            )
        return list(bins)
    return [bins] * n_dims
