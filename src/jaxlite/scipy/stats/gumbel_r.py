"""The right-skewed Gumbel distribution (jax.scipy.stats.gumbel_r)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import xlogy
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _z(x, loc, scale):
    return lax.div(lax.sub(x, loc), scale)


def _valid(scale, value):
    return where(lax.gt(scale, const(scale, 0)), value, np.nan)


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    z = _z(x, loc, scale)
    value = lax.sub(xlogy(-1, scale), lax.add(z, lax.exp(lax.neg(z))))
    return _valid(scale, value)


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    return _valid(scale, lax.neg(lax.exp(lax.neg(_z(x, loc, scale)))))


def cdf(x, loc=0, scale=1):
    return lax.exp(logcdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
    value = lax.neg(lax.expm1(lax.neg(lax.exp(lax.neg(_z(x, loc, scale))))))
    # JAX computes 1 - t with a constant of x's type, so the result is strongly typed
    # unless x is a Python scalar; multiplying by that constant does the same here.
    return _valid(scale, lax.mul(value, const(x, 1)))


def logsf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
    # log(1 - exp(-t)) for t = exp(-z) > 0, stable for small and large t.
    t = lax.exp(lax.neg(_z(x, loc, scale)))
    small = lax.lt(t, const(t, np.log(2)))
    value = where(
        small,
        lax.log(lax.neg(lax.expm1(lax.neg(t)))),
        lax.log1p(lax.neg(lax.exp(lax.neg(t)))),
    )
    return _valid(scale, value)


def ppf(p, loc=0, scale=1):
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    ok = lax.gt(p, const(p, 0)) & lax.lt(p, const(p, 1))
    quantile = lax.sub(loc, lax.mul(scale, lax.log(xlogy(-1, p))))
    return where(ok, quantile, np.nan)
