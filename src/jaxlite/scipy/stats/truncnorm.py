"""The normal distribution truncated to [a, b] in standard units
(jax.scipy.stats.truncnorm). Masses of the normal between two points are computed in
log space, from the tail nearer to the interval, so they stay accurate far out."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import log_ndtr, ndtr
from jaxlite.scipy.stats import norm
from jaxlite.scipy.stats._common import promote_args_inexact, where

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(log_x, log_y):
    """log(x - y) from log x >= log y."""
    from jaxlite import numpy as jnp

    diff = jnp.minimum(log_y - log_x, 0.0)
    return log_x + jnp.log(-jnp.expm1(diff))


def _log_gauss_mass(a, b):
    """log(ndtr(b) - ndtr(a)) for a <= b."""
    from jaxlite import numpy as jnp

    a, b = jnp.broadcast_arrays(a, b)
    left = b <= 0
    right = a > 0
    central = ~(left | right)
    lo = jnp.where(right, -b, a)
    hi = jnp.where(right, -a, b)
    tail = _log_diff(log_ndtr(hi), log_ndtr(lo))
    middle = jnp.log1p(
        -ndtr(jnp.where(central, a, 0.0)) - ndtr(-jnp.where(central, b, 0.0))
    )
    return jnp.where(central, middle, tail)


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    value = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    z = lax.div(lax.sub(x, loc), scale)
    value = where((z < a) | (z > b), -np.inf, value)
    return where(a >= b, np.nan, value)


def pdf(x, a, b, loc=0, scale=1):
    return lax.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    from jaxlite import numpy as jnp

    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    z = lax.div(lax.sub(x, loc), scale)
    zc = jnp.clip(z, a, b)
    total = _log_gauss_mass(a, b)
    below = _log_gauss_mass(a, zc) - total
    above = _log_gauss_mass(zc, b) - total
    value = jnp.where(below > -0.1, jnp.log1p(-jnp.exp(above)), below)
    value = jnp.where(z <= a, -np.inf, value)
    value = jnp.where(z >= b, 0.0, value)
    return jnp.where(a >= b, np.nan, value)


def cdf(x, a, b, loc=0, scale=1):
    return lax.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(lax.neg(x), lax.neg(b), lax.neg(a), lax.neg(loc), scale)


def sf(x, a, b, loc=0, scale=1):
    return lax.exp(logsf(x, a, b, loc, scale))
