"""The uniform distribution on [loc, loc + scale] (jax.scipy.stats.uniform)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.numpy import ufuncs
from jaxlite.scipy.stats._common import const, promote_args_inexact, strong, where

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    outside = lax.gt(x, lax.add(loc, scale)) | lax.lt(x, loc)
    return where(outside, -np.inf, lax.neg(lax.log(scale)))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    inside = lax.div(lax.sub(x, loc), scale)
    out = where(lax.gt(x, lax.add(loc, scale)), const(x, 1), inside)
    out = where(lax.lt(x, loc), const(x, 0), out)
    return strong(where(ufuncs.isnan(inside), np.nan, out))


def ppf(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    bad = ufuncs.isnan(q) | (q < 0) | (q > 1)
    return where(bad, np.nan, lax.add(loc, lax.mul(scale, q)))
