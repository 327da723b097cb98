"""jaxlite.scipy.ndimage: `map_coordinates` of jax.scipy.ndimage, interpolation of an
N-d array at arbitrary (traced) coordinates, with spline orders 0 (nearest) and 1
(linear) and the boundary modes constant, nearest, wrap, mirror and reflect.

Each axis contributes one (order 0) or two (order 1) integer indices with weights; the
result sums, over every combination of per-axis nodes, the product of the weights
times the gathered input value. Out-of-range indices are folded back by the mode, or
(mode 'constant') replaced by `cval`. Gradients flow to the input and the
coordinates through the weights.
"""

from __future__ import annotations

import itertools

import numpy as np

from jaxlite import dtypes, lax

__all__ = ["map_coordinates"]


def _jnp():
    from jaxlite import numpy as jnp

    return jnp


def _mirror(index, size):
    s = size - 1  # a triangular wave of half-period s
    if s == 0:
        return index * 0
    return _jnp().abs((index + s) % (2 * s) - s)


def _reflect(index, size):
    return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2


_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: _jnp().clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round(a):
    return a if dtypes.issubdtype(a.dtype, np.integer) else lax.round(a)


def _nodes(coordinate, order):
    jnp = _jnp()
    if order == 0:
        return [(_round(coordinate).astype(np.int32), None)]
    lower = jnp.floor(coordinate)
    upper_w = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_w), (index + 1, upper_w)]


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):  # noqa: A002
    """Map `input` to new coordinates by interpolation (scipy.ndimage.map_coordinates
    restricted to order <= 1)."""
    jnp = _jnp()
    x = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, x.dtype)
    if len(coords) != x.ndim:
        raise ValueError(
            "coordinates must be a sequence of length input.ndim, but "
            f"{len(coords)} != {x.ndim}"
        )
    fixer = _FIXERS.get(mode)
    if fixer is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_FIXERS)}."
        )
    if order not in (0, 1):
        raise NotImplementedError(
            "jax.scipy.ndimage.map_coordinates currently requires order<=1"
        )
    per_axis = []
    for c, size in zip(coords, x.shape):
        nodes = []
        for index, weight in _nodes(c, order):
            valid = (index >= 0) & (index < size) if mode == "constant" else None
            nodes.append((fixer(index, size), valid, weight))
        per_axis.append(nodes)
    total = None
    for combo in itertools.product(*per_axis):
        idx = tuple(n[0] for n in combo)
        valids = [n[1] for n in combo if n[1] is not None]
        weights = [n[2] for n in combo if n[2] is not None]
        if valids:
            ok = valids[0]
            for v in valids[1:]:
                ok = ok & v
            # Clamp so the gather itself stays in range; invalid points take cval.
            safe = tuple(jnp.clip(i, 0, s - 1) for i, s in zip(idx, x.shape))
            val = jnp.where(ok, x[safe], cval)
        else:
            val = x[idx]
        if weights:
            w = weights[0]
            for v in weights[1:]:
                w = w * v
            val = w * val
        total = val if total is None else total + val
    if dtypes.issubdtype(x.dtype, np.integer):
        total = _round(total)
    return total.astype(x.dtype)
