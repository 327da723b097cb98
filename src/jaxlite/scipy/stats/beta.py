"""The beta distribution on [loc, loc + scale] (jax.scipy.stats.beta)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import betainc, betaln, xlog1py, xlogy
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    one = const(x, 1)
    y = lax.div(lax.sub(x, loc), scale)
    log_kernel = lax.add(
        xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y))
    )
    log_probs = lax.sub(lax.sub(log_kernel, betaln(a, b)), lax.log(scale))
    outside = lax.gt(x, lax.add(loc, scale)) | lax.lt(x, loc)
    out = where(outside, -np.inf, log_probs)
    zero = const(a, 0)
    invalid = lax.le(a, zero) | lax.le(b, zero) | lax.le(scale, zero)
    return where(invalid, np.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    return lax.exp(logpdf(x, a, b, loc, scale))


def _unit(x, loc, scale):
    return lax.clamp(const(x, 0), lax.div(lax.sub(x, loc), scale), const(x, 1))


def cdf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, _unit(x, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, lax.sub(const(x, 1), _unit(x, loc, scale)))


def logsf(x, a, b, loc=0, scale=1):
    return lax.log(sf(x, a, b, loc, scale))
