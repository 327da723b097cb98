"""Index tricks and index arithmetic: `r_`, `c_`, `mgrid`, `ogrid`, `s_`,
`index_exp`, `ix_`, the `*_indices` helpers, `fill_diagonal`, `ravel_multi_index`
and `unravel_index`.

Everything that decides a *shape* (slice bounds in `mgrid`, `n` and `k` in
`tril_indices`, the dims of `ravel_multi_index`) must be concrete, and is computed
with NumPy; only index *values* may be traced, and they are combined with jaxlite
operations. `ravel_multi_index(mode="raise")` must look at the values, so it needs
concrete indices (under `jit`, use `mode="wrap"` or `"clip"`), as in JAX.
`unravel_index` never raises: negative indices wrap once and the rest is clipped.
"""

from __future__ import annotations

import operator

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import concrete_or_error
from jaxlite.numpy.ufuncs import check_arraylike

__all__ = [
    "c_",
    "diag_indices",
    "diag_indices_from",
    "fill_diagonal",
    "index_exp",
    "ix_",
    "mask_indices",
    "mgrid",
    "ogrid",
    "r_",
    "ravel_multi_index",
    "s_",
    "tril_indices",
    "tril_indices_from",
    "triu_indices",
    "triu_indices_from",
    "unravel_index",
]

s_ = np.s_
index_exp = np.index_exp


def _jnp():
    import jaxlite.numpy as jnp

    return jnp


def _static(value, what):
    return concrete_or_error(_identity, value, f"The error arose in {what}.")


def _identity(value):
    return value


# ----------------------------------------------------------------------------------
# Grids and concatenation from slices: mgrid, ogrid, r_, c_


def _grid_from_slice(s, op_name):
    """`start:stop:step` as an arange, or as a linspace of `|step|` points
    (endpoint included) when `step` is imaginary."""
    jnp = _jnp()
    start = _static(s.start, f"the slice start of jnp.{op_name}") or 0
    stop = _static(s.stop, f"the slice stop of jnp.{op_name}")
    step = _static(s.step, f"the slice step of jnp.{op_name}") or 1
    if np.iscomplex(step):
        return jnp.linspace(start, stop, int(abs(step)))
    return jnp.arange(start, stop, step)


def _grids(key, op_name):
    from jaxlite.numpy.ufuncs import promote_dtypes

    return promote_dtypes(*(_grid_from_slice(k, op_name) for k in key))


class _Mgrid:
    """`jnp.mgrid[0:3, 0:2]`: the dense grid of the slices, stacked on axis 0."""

    def __getitem__(self, key):
        jnp = _jnp()
        if isinstance(key, slice):
            return _grid_from_slice(key, "mgrid")
        if not key:
            return jnp.arange(0)
        grids = jnp.meshgrid(*_grids(key, "mgrid"), indexing="ij")
        if not grids:
            return jnp.arange(0)
        return jnp.stack(grids, 0)


class _Ogrid:
    """`jnp.ogrid[0:3, 0:2]`: the open (broadcastable) grid of the slices."""

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_from_slice(key, "ogrid")
        return _jnp().meshgrid(*_grids(key, "ogrid"), indexing="ij", sparse=True)


mgrid = _Mgrid()
ogrid = _Ogrid()


class _AxisConcat:
    """Concatenation by indexing, `jnp.r_[...]` and `jnp.c_[...]`: slices become
    ranges, scalars and sequences become arrays of at least `ndmin` dimensions
    (their own axes placed by `trans1d`), and all are joined along `axis`. A first
    string item overrides these: `"axis,ndmin,trans1d"`, or `"r"` / `"c"` to make a
    1-D result a row / a column."""

    def __init__(self, axis, ndmin, trans1d, op_name):
        self.axis, self.ndmin, self.trans1d, self.op_name = (
            axis,
            ndmin,
            trans1d,
            op_name,
        )

    def __getitem__(self, key):
        jnp = _jnp()
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, -1
        if items and isinstance(items[0], str):
            directive, items = items[0], items[1:]
            if directive in ("r", "c"):
                matrix = 0 if directive == "r" else 1
            else:
                fields = directive.split(",")[:3]
                try:
                    values = [int(f) for f in fields]
                except ValueError:
                    raise ValueError(
                        f"could not understand directive {directive!r}"
                    ) from None
                axis, ndmin, trans1d = values + [axis, ndmin, trans1d][len(values) :]
        parts = []
        for item in items:
            if isinstance(item, str):
                raise ValueError("string directive must be placed at the beginning")
            if isinstance(item, slice):
                arr, item_ndim = _grid_from_slice(item, self.op_name), 0
            else:
                arr = jnp.array(item, copy=False)
                item_ndim = arr.ndim
            arr = jnp.array(arr, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                shift = ndmin - abs(ndmin + trans1d + 1) % ndmin
                order = tuple(range(ndmin))
                arr = jnp.transpose(arr, order[shift:] + order[:shift])
            parts.append(arr)
        out = jnp.concatenate(parts, axis=axis)
        if matrix != -1 and out.ndim == 1:
            out = jnp.expand_dims(out, matrix)
        return out

    def __len__(self):
        return 0

    def __repr__(self):
        return f"<jnp.{self.op_name}>"


r_ = _AxisConcat(0, 1, -1, "r_")
c_ = _AxisConcat(-1, 2, 0, "c_")


# ----------------------------------------------------------------------------------
# Index arrays: ix_, diag_indices, tril/triu_indices, mask_indices


def ix_(*args):
    """Open-mesh index arrays from 1-D integer sequences: `x[jnp.ix_(rows, cols)]`
    selects the cross product of `rows` and `cols`."""
    jnp = _jnp()
    check_arraylike("ix_", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = jnp.asarray(a)
        if a.ndim != 1:
            raise ValueError(
                f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a.shape}"
            )
        if a.dtype == np.bool_:
            raise NotImplementedError(
                "Boolean arguments to jax.numpy.ix_ are not implemented"
            )
        shape = [1] * n
        shape[i] = a.shape[0]
        out.append(
            lax.broadcast_in_dim(a, tuple(shape), (i,))
            if a.size
            else jnp.zeros(tuple(shape), a.dtype)
        )
    return tuple(out)


def _static_int(value, what):
    return operator.index(_static(value, what))


def _index_arrays(np_arrays):
    jnp = _jnp()
    return tuple(jnp.asarray(a.astype(dtypes.default_int_dtype())) for a in np_arrays)


def diag_indices(n, ndim=2):
    """The indices `(i, i, ..., i)` of the main diagonal of an `n`-sided array of
    `ndim` dimensions."""
    n = _static_int(n, "the 'n' argument of jnp.diag_indices")
    ndim = _static_int(ndim, "the 'ndim' argument of jnp.diag_indices")
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(
            f"ndim argument to diag_indices must be nonnegative, got {ndim}"
        )
    return (lax.iota(dtypes.default_int_dtype(), n),) * ndim


def diag_indices_from(arr):
    """`diag_indices` for `arr`, whose dimensions must all have the same length."""
    check_arraylike("diag_indices_from", arr)
    shape = np.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def _tri_indices(fun_name, n, k, m, lower):
    n = _static_int(n, f"the 'n' argument of jnp.{fun_name}")
    k = _static_int(k, f"the 'k' argument of jnp.{fun_name}")
    m = n if m is None else _static_int(m, f"the 'm' argument of jnp.{fun_name}")
    np_fun = np.tril_indices if lower else np.triu_indices
    return _index_arrays(np_fun(n, k, m))


def tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle (at and below diagonal `k`) of
    an (n, m) matrix."""
    return _tri_indices("tril_indices", n, k, m, lower=True)


def triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle (at and above diagonal `k`) of
    an (n, m) matrix."""
    return _tri_indices("triu_indices", n, k, m, lower=False)


def _tri_from(fun_name, arr, k, lower):
    shape = arr.shape if hasattr(arr, "shape") else np.shape(arr)
    if len(shape) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return _tri_indices(fun_name, shape[0], k, shape[1], lower)


def tril_indices_from(arr, k=0):
    """`tril_indices` for the shape of the 2-D `arr`."""
    return _tri_from("tril_indices_from", arr, k, lower=True)


def triu_indices_from(arr, k=0):
    """`triu_indices` for the shape of the 2-D `arr`."""
    return _tri_from("triu_indices_from", arr, k, lower=False)


def mask_indices(n, mask_func, k=0, *, size=None):
    """The indices where `mask_func(ones((n, n)), k)` is nonzero (e.g. `jnp.triu`).
    Under a transformation pass `size` (the number of indices) to fix the shape."""
    jnp = _jnp()
    mask = mask_func(jnp.ones((n, n)), k)
    return jnp.nonzero(mask, size=size)


# ----------------------------------------------------------------------------------
# fill_diagonal, ravel_multi_index, unravel_index


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """`a` with its main diagonal set to `val` (repeated cyclically as needed).
    JAX arrays are immutable: pass `inplace=False` and use the result."""
    jnp = _jnp()
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a = jnp.asarray(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    idx = diag_indices(n, a.ndim)
    values = jnp.ravel(jnp.asarray(val))
    if values.size == 0:
        return a
    if values.size != n:
        values = jnp.resize(values, (n,))
    return a.at[idx].set(values)


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices into an array of shape `dims` from a tuple of index arrays.

    `mode`: "raise" (out-of-bounds indices raise; needs concrete indices), "wrap"
    (modulo each dimension) or "clip". `order`: "C" (row-major) or "F".
    """
    jnp = _jnp()
    dims = tuple(
        _static_int(d, "the 'dims' argument of jnp.ravel_multi_index") for d in dims
    )
    if len(multi_index) != len(dims):
        raise ValueError(
            f"parameter multi_index must be a sequence of length {len(dims)}"
        )
    check_arraylike("ravel_multi_index", *multi_index)
    index = [jnp.asarray(i) for i in multi_index]
    for i in index:
        if not dtypes.issubdtype(i.dtype, np.integer):
            raise TypeError("only int indices permitted")
    if dtype is None:
        dtype = dtypes.default_int_dtype()
    else:
        dtype = dtypes.check_user_dtype_supported(dtype, "ravel_multi_index")
    if mode == "raise":
        context = (
            "The error occurred because ravel_multi_index was jit-compiled with "
            "mode='raise'. Use mode='wrap' or mode='clip' instead."
        )
        values = [concrete_or_error(np.asarray, i, context) for i in index]
        if any(np.any((v < 0) | (v >= d)) for v, d in zip(values, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        index = [jnp.clip(i, 0, d - 1) for i, d in zip(index, dims)]
    elif mode == "wrap":
        index = [jnp.remainder(i, d) for i, d in zip(index, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    out = jnp.zeros((), dtype)
    for i, s in zip(index, strides):
        out = out + lax.convert_element_type(i, dtype) * int(s)
    return out


def unravel_index(indices, shape):
    """The coordinate arrays of the flat `indices` in an array of `shape`.
    Negative indices count from the end; out-of-range indices are clipped."""
    jnp = _jnp()
    check_arraylike("unravel_index", indices)
    indices = jnp.asarray(indices)
    shape = tuple(
        _static_int(d, "the 'shape' argument of jnp.unravel_index") for d in shape
    )
    if any(d < 0 for d in shape):
        raise ValueError(f"unravel_index: shape must be nonnegative, got {shape}")
    if not shape:
        return ()
    size = int(np.prod(shape))
    flat = indices
    if size:
        flat = jnp.where(flat < 0, flat + size, flat)
        flat = jnp.clip(flat, 0, size - 1)
    out = []
    for d in shape[::-1]:
        if d:
            out.append(jnp.remainder(flat, d))
            flat = jnp.floor_divide(flat, d)
        else:
            out.append(jnp.zeros_like(flat))
    return tuple(out[::-1])
