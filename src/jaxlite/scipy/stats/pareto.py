"""The Pareto distribution with shape `b` (jax.scipy.stats.pareto)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.numpy import ufuncs
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    log_norm = lax.log(lax.div(scale, b))
    log_probs = lax.neg(lax.add(log_norm, lax.mul(lax.add(b, const(x, 1)), lax.log(z))))
    return where(lax.lt(x, lax.add(loc, scale)), -np.inf, log_probs)


def pdf(x, b, loc=0, scale=1):
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.sub(const(x, 1), lax.pow(z, lax.neg(b)))
    return where(lax.lt(x, lax.add(loc, scale)), const(x, 0), value)


def logcdf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.log1p(lax.neg(lax.pow(z, lax.neg(b))))
    return where(lax.lt(x, lax.add(loc, scale)), -np.inf, value)


def logsf(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    value = lax.neg(lax.mul(b, lax.log(z)))
    return where(lax.lt(x, lax.add(loc, scale)), const(x, 0), value)


def sf(x, b, loc=0, scale=1):
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = const(q, 1)
    value = lax.add(
        loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b))))
    )
    bad = ufuncs.isnan(q) | (q < 0) | (q > 1)
    return where(bad, np.nan, value)
