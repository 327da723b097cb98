"""The exponential distribution (jax.scipy.stats.expon)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.numpy import ufuncs
from jaxlite.scipy.stats._common import promote_args_inexact, where

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.add(lax.div(lax.sub(x, loc), scale), lax.log(scale)))
    return where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return where(lax.lt(x, loc), lax.full_like(neg_z, 0), lax.neg(lax.expm1(neg_z)))


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("expon.logsf", x, loc, scale)
    neg_z = lax.div(lax.sub(loc, x), scale)
    return where(lax.lt(x, loc), lax.full_like(neg_z, 0), neg_z)


def sf(x, loc=0, scale=1):
    return lax.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    bad = ufuncs.isnan(q) | (q < 0) | (q > 1)
    return where(bad, np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))
