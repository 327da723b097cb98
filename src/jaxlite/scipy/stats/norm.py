"""The normal distribution N(loc, scale**2) (jax.scipy.stats.norm)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy import special
from jaxlite.scipy.stats._common import const, promote_args_inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale2 = lax.mul(scale, scale)
    log_normalizer = lax.log(lax.mul(const(x, 2 * np.pi), scale2))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale2)
    return lax.mul(const(x, -0.5), lax.add(log_normalizer, quadratic))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr(lax.div(lax.sub(x, loc), scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def ppf(q, loc=0, scale=1):
    from jaxlite import numpy as jnp

    return jnp.asarray(special.ndtri(q) * scale + loc, float)


def isf(q, loc=0, scale=1):
    from jaxlite import numpy as jnp

    q = jnp.asarray(q)
    return ppf(lax.sub(const(q, 1), q), loc, scale)
