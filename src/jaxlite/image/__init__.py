"""`jaxlite.image`: image resampling (`resize`, `scale_and_translate`) as in JAX.

Resampling along one axis is linear in the input, so each resized axis becomes
one dense weight matrix of shape (input size, output size): output pixel `j`
samples the input at `(j + 0.5) / scale - translation / scale - 0.5` (pixel
centres at half-integers) and weighs the input pixels with a kernel
(triangle, Keys cubic, Lanczos, box for "area"), widened by 1/scale when
antialiasing a downsample, and normalised to sum to one.  The image is then
contracted with the matrices one axis at a time.  Everything is
`jaxlite.numpy`, so it is differentiable and jit/vmap-able like JAX's.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

import numpy as np

import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.api import jit
from jaxlite.numpy.ufuncs import promote_dtypes_inexact

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Resampling methods: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC,
    CUBIC_PYTORCH and AREA (as `jax.image.ResizeMethod`)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        names = {
            "nearest": ResizeMethod.NEAREST,
            "linear": ResizeMethod.LINEAR,
            "bilinear": ResizeMethod.LINEAR,
            "trilinear": ResizeMethod.LINEAR,
            "triangle": ResizeMethod.LINEAR,
            "lanczos3": ResizeMethod.LANCZOS3,
            "lanczos5": ResizeMethod.LANCZOS5,
            "cubic": ResizeMethod.CUBIC,
            "bicubic": ResizeMethod.CUBIC,
            "tricubic": ResizeMethod.CUBIC,
            "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
            "area": ResizeMethod.AREA,
        }
        if s not in names:
            raise ValueError(f'Unknown resize method "{s}"')
        return names[s]


# ----------------------------------------------------------------- kernels
# Each takes |distance| (already divided by the kernel scale).


def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


def _keys_cubic(x):  # Keys (1981) with a = -0.5
    inner = ((1.5 * x - 2.5) * x) * x + 1.0
    outer = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, outer, inner))


def _opencv_cubic(x, a=-0.75):  # PyTorch / OpenCV cubic
    inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    outer = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, outer, inner))


def _lanczos(radius):
    def kernel(x):
        num = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        val = jnp.where(
            x > 1e-3, jnp.divide(num, jnp.where(x != 0, np.pi**2 * x**2, 1)), 1
        )
        return jnp.where(x > radius, 0.0, val)

    return kernel


_AREA = "area"  # marker: weights are overlap lengths, not a kernel

_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

_TINY = 1000.0 * float(np.finfo(np.float32).eps)


def _normalise(w):
    total = jnp.sum(w, axis=0, keepdims=True)
    return jnp.where(
        jnp.abs(total) > _TINY, jnp.divide(w, jnp.where(total != 0, total, 1)), 0
    )


def _weights(m, n, scale, translation, kernel, antialias, edge_padding, radius):
    """(m, n) matrix taking an axis of length m to one of length n."""
    dtype = jnp.result_type(scale, translation)
    inv = 1.0 / scale
    kscale = jnp.maximum(inv, 1.0) if antialias else 1.0
    centres = (jnp.arange(n, dtype=dtype) + 0.5) * inv - translation * inv - 0.5
    if edge_padding:
        if antialias:
            try:
                s = float(scale)
            except Exception as e:
                raise TypeError(
                    "Antialiasing with edge padding requires a static scale."
                ) from e
            pad = math.ceil(radius * max(1.0 / s, 1.0))
        else:
            pad = radius
    else:
        pad = 0
    src = jnp.arange(-pad, m + pad, dtype=dtype)
    if kernel is _AREA:
        left = jnp.arange(n, dtype=dtype) * inv - translation * inv
        right = left + inv
        lo = jnp.arange(m, dtype=dtype)
        w = jnp.maximum(
            0.0,
            jnp.minimum(right[None, :], (lo + 1.0)[:, None])
            - jnp.maximum(left[None, :], lo[:, None]),
        )
    else:
        w = kernel(jnp.abs(centres[None, :] - src[:, None]) / kscale)
    if edge_padding:
        rows = jnp.clip(src.astype(jnp.int32), 0, m - 1)
        cols = lax.broadcast_in_dim(jnp.arange(n), (src.shape[0], n), (1,))
        w = jnp.zeros((m, n), dtype=dtype).at[rows[:, None], cols].add(w)
        return _normalise(w)
    w = _normalise(w)
    inside = (centres >= -0.5) & (centres <= m - 0.5)
    return jnp.where(inside[None, :], w, 0)


def _apply(x, shape, dims, scale, translation, kernel, antialias, precision,
           edge_padding=False, radius=None):  # fmt: skip
    for i, d in enumerate(dims):
        d = d + x.ndim if d < 0 else d
        w = _weights(
            x.shape[d], shape[d], scale[i], translation[i], kernel, antialias,
            edge_padding, radius,
        ).astype(x.dtype)  # fmt: skip
        x = jnp.tensordot(x, w, axes=([d], [0]), precision=precision)
        x = jnp.moveaxis(x, -1, d)
    return x


def _check_shape(shape, image):
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError(
            "shape must have length equal to the number of dimensions of x; "
            f" {shape} vs {image.shape}"
        )
    return shape


def scale_and_translate(
    image, shape, spatial_dims: Sequence[int], scale, translation, method,
    antialias: bool = True, precision=lax.Precision.HIGHEST,
):  # fmt: skip
    """Resample `image` to `shape` under the map `x -> x * scale + translation`
    on `spatial_dims` (half-centred pixels), like `jax.image.scale_and_translate`.

    Output pixels that map outside the input are zero. `method` is a
    `ResizeMethod` or its name; NEAREST is not supported here.
    """
    image = jnp.asarray(image)
    shape = _check_shape(shape, image)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError(
            "Nearest neighbor resampling is not currently supported "
            "for scale_and_translate."
        )
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    (image,) = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    return _apply(
        image, shape, tuple(spatial_dims), scale, translation, kernel, antialias,
        precision, edge_padding=method == ResizeMethod.CUBIC_PYTORCH, radius=radius,
    )  # fmt: skip


def _nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m == n:
            continue
        pos = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
        idx = jnp.floor(pos.astype(np.float32)).astype(np.int32)
        index = [slice(None)] * x.ndim
        index[d] = idx
        x = x[tuple(index)]
    return x


def _resize(image, shape, method, antialias, precision):
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    if method == ResizeMethod.NEAREST:
        return _nearest(image, shape)
    (image,) = promote_dtypes_inexact(image)
    dims = tuple(i for i in range(len(shape)) if image.shape[i] != shape[i])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _apply(
        image, shape, dims, scale, [0.0] * len(dims), kernel, antialias, precision,
        edge_padding=method == ResizeMethod.CUBIC_PYTORCH and not antialias,
        radius=radius,
    )  # fmt: skip


_resize_jit = jit(_resize, static_argnums=(1, 2, 3, 4))


def resize(
    image, shape, method, antialias: bool = True, precision=lax.Precision.HIGHEST
):
    """Resize `image` to `shape` (every axis, batch/channel axes included),
    like `jax.image.resize`.

    `method`: "nearest", "linear"/"bilinear"/"trilinear", "cubic", "lanczos3",
    "lanczos5", "cubic-pytorch", "area", or a `ResizeMethod`. `antialias`
    widens the kernel when downsampling.
    """
    image = jnp.asarray(image)
    shape = _check_shape(shape, image)
    if isinstance(method, str):
        method = ResizeMethod.from_string(method)
    return _resize_jit(image, shape, method, antialias, precision)
