"""The gamma distribution with shape `a` (jax.scipy.stats.gamma)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import gammainc, gammaincc, gammaln, xlogy
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = const(x, 1)
    y = where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_kernel = lax.sub(xlogy(lax.sub(a, one), y), y)
    log_probs = lax.sub(log_kernel, lax.add(gammaln(a), lax.log(scale)))
    return where(ok, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    y = lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, np.inf))
    return gammainc(a, y)


def logcdf(x, a, loc=0, scale=1):
    return lax.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return where(lax.lt(y, const(y, 0)), 1, gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    return lax.log(sf(x, a, loc, scale))
