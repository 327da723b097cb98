"""The Cauchy distribution (jax.scipy.stats.cauchy)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.stats._common import const, promote_args_inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    log_norm = lax.log(lax.mul(const(x, np.pi), scale))
    return lax.neg(lax.add(log_norm, lax.log1p(lax.mul(z, z))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    return lax.add(const(x, 0.5), lax.mul(const(x, 1 / np.pi), lax.atan(z)))


def logcdf(x, loc=0, scale=1):
    return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(lax.neg(x), lax.neg(loc), scale)


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(lax.neg(x), lax.neg(loc), scale)


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    unit = lax.tan(lax.sub(lax.mul(const(q, np.pi), q), const(q, np.pi / 2)))
    return lax.add(lax.mul(unit, scale), loc)


def isf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    unit = lax.tan(lax.sub(const(q, np.pi / 2), lax.mul(const(q, np.pi), q)))
    return lax.add(lax.mul(unit, scale), loc)
