"""Spherical harmonics (jax.scipy.special.sph_harm_y).

`Y_n^m(theta, phi) = N_n^m P_n^m(cos theta) exp(i m phi)`, orthonormal on the sphere,
with the Condon-Shortley phase as in SciPy. The normalised associated Legendre
functions `Pbar_l^m = N_l^m P_l^m` are computed by the standard stable recurrences,
which never form the huge factorials of N and P separately:
  Pbar_0^0 = 1 / sqrt(4 pi),
  Pbar_m^m = -sqrt((2m + 1) / (2m)) sin(theta) Pbar_{m-1}^{m-1},
  Pbar_{m+1}^m = sqrt(2m + 3) cos(theta) Pbar_m^m,
  Pbar_l^m = a_lm (cos(theta) Pbar_{l-1}^m - b_lm Pbar_{l-2}^m),
with a_lm = sqrt((4l^2 - 1) / (l^2 - m^2)) and
b_lm = sqrt(((l - 1)^2 - m^2) / (4 (l - 1)^2 - 1)). Negative orders use
Y_n^-m = (-1)^m conj(Y_n^m). The recurrence runs over every degree and order up to the
static `n_max` (as JAX, which needs it concrete), and each element then picks its own
(n, |m|) entry, clipped to `n_max` as JAX does.
"""

from __future__ import annotations

import math

import numpy as np

from jaxlite import lax
from jaxlite.core import concrete_or_error

__all__ = ["sph_harm_y"]


def _legendre_table(n_max, x, s):
    """{(l, m): Pbar_l^m} for 0 <= m <= l <= n_max at cos = x, sin = s."""
    table = {(0, 0): lax.full_like(x, 1 / math.sqrt(4 * math.pi))}
    for m in range(1, n_max + 1):
        factor = -math.sqrt((2 * m + 1) / (2 * m))
        table[m, m] = factor * s * table[m - 1, m - 1]
    for m in range(n_max):
        table[m + 1, m] = math.sqrt(2 * m + 3) * x * table[m, m]
        for l in range(m + 2, n_max + 1):  # noqa: E741
            a = math.sqrt((4 * l * l - 1) / (l * l - m * m))
            b = math.sqrt(((l - 1) ** 2 - m * m) / (4 * (l - 1) ** 2 - 1))
            table[l, m] = a * (x * table[l - 1, m] - b * table[l - 2, m])
    return table


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """Spherical harmonics Y_n^m(theta, phi), theta the polar (colatitude) and phi
    the azimuthal angle; `n_max` (static) bounds the degrees, default max(n)."""
    from jaxlite import numpy as jnp

    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported."
        )
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(n)
    n_max = concrete_or_error(
        int,
        n_max,
        "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically "
        "specified to use `sph_harm` within JAX transformations.",
    )
    n, m = jnp.asarray(n), jnp.asarray(m)
    theta, phi = jnp.asarray(theta), jnp.asarray(phi)
    table = _legendre_table(n_max, jnp.cos(theta), jnp.sin(theta))
    size = n.shape[0] if n.ndim else 1
    degree = jnp.clip(n, 0, n_max)
    order = jnp.clip(abs(m), 0, n_max)
    value = jnp.zeros(jnp.broadcast_shapes(theta.shape, (size,)), theta.dtype)
    if not jnp.issubdtype(value.dtype, jnp.inexact):
        value = value.astype(jnp.result_type(float))
    for (l, k), entry in table.items():  # noqa: E741
        value = jnp.where((degree == l) & (order == k), entry, value)
    angle = abs(m) * phi
    harmonic = lax.complex(value * jnp.cos(angle), value * jnp.sin(angle))
    sign = (-1.0) ** abs(m)
    return jnp.where(m < 0, sign * jnp.conjugate(harmonic), harmonic)
