"""jaxlite.scipy.interpolate: `RegularGridInterpolator` of jax.scipy.interpolate,
linear or nearest-neighbour interpolation on a rectilinear grid.

Each query coordinate finds its cell with `searchsorted` (clamped to the first and
last cells, so points outside extrapolate linearly unless `fill_value` replaces
them), then linear interpolation sums the 2**ndim corner values weighted by the
normalised distances. Axes must be strictly increasing, as in JAX. The interpolator
is a pytree (grid, values and fill_value are its leaves; method and bounds_error
static), so it can be passed through jit and vmap.
"""

from __future__ import annotations

import itertools

import numpy as np

from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact
from jaxlite.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]


def _jnp():
    from jaxlite import numpy as jnp

    return jnp


def _coords_array(points, ndim):
    """A tuple of coordinate arrays, or an array (..., ndim), as a (..., ndim) array."""
    jnp = _jnp()
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        arrs = jnp.broadcast_arrays(*points)
        return jnp.stack([jnp.asarray(a, dtype=float) for a in arrs], axis=-1)
    check_arraylike("_ndim_coords_from_arrays", points)
    points = jnp.asarray(points)
    if points.ndim == 1:
        points = points.reshape(-1, ndim)
    return points


class RegularGridInterpolator:
    """Interpolate `values` sampled on the grid `points` (scipy.interpolate)."""

    def __init__(
        self, points, values, method="linear", bounds_error=False, fill_value=np.nan
    ):
        jnp = _jnp()
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        values = jnp.asarray(values)
        if len(points) > values.ndim:
            raise ValueError(
                f"there are {len(points)} point arrays, but values has "
                f"{values.ndim} dimensions"
            )
        (values,) = promote_dtypes_inexact(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not np.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError(
                    "fill_value must be either 'None' or of a type compatible with "
                    "values"
                )
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        jnp = _jnp()
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _coords_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(
                "the requested sample points xi have dimension "
                f"{xi.shape[1]}, but this RegularGridInterpolator has dimension {ndim}"
            )
        shape = xi.shape
        xi = xi.reshape(-1, shape[-1])
        indices, dists, outside = [], [], None
        for x, g in zip(xi.T, self.grid):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
            indices.append(i)
            dists.append((x - g[i]) / (g[i + 1] - g[i]))
            out = (x < g[0]) | (x > g[-1])
            outside = out if outside is None else outside | out
        trail = (slice(None),) + (None,) * (self.values.ndim - ndim)
        if method == "linear":
            result = jnp.asarray(0.0)
            for corner in itertools.product(*[[i, i + 1] for i in indices]):
                w = jnp.asarray(1.0)
                for ci, i, t in zip(corner, indices, dists):
                    w = w * jnp.where(ci == i, 1 - t, t)
                result = result + self.values[corner] * w[trail]
        else:
            near = tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(indices, dists))
            result = self.values[near]
        if self.fill_value is not None:
            mask = outside.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
            result = jnp.where(mask, self.fill_value, result)
        return result.reshape(shape[:-1] + self.values.shape[ndim:])


def _flatten(obj):
    return (obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)


def _unflatten(aux, children):
    obj = object.__new__(RegularGridInterpolator)
    obj.grid, obj.values, obj.fill_value = children
    obj.method, obj.bounds_error = aux
    return obj


register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
