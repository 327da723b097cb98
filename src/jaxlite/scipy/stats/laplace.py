"""The Laplace (double exponential) distribution (jax.scipy.stats.laplace)."""

from __future__ import annotations

from jaxlite import lax
from jaxlite.scipy.stats._common import const, promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    z = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(z, lax.log(lax.mul(const(x, 2), scale))))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    half = const(x, 0.5)
    z = lax.div(lax.sub(x, loc), scale)
    lower = lax.mul(half, lax.exp(z))
    upper = lax.sub(const(x, 1), lax.mul(half, lax.exp(lax.neg(z))))
    return lax.select(lax.le(z, const(x, 0)), lower, upper)
