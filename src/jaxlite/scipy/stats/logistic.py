"""The logistic distribution (jax.scipy.stats.logistic)."""

from __future__ import annotations

from jaxlite import lax
from jaxlite.numpy import ufuncs
from jaxlite.scipy.special import expit, logit
from jaxlite.scipy.stats._common import const, promote_args_inexact

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    half_z = lax.div(lax.div(lax.sub(x, loc), scale), const(x, 2))
    # log pdf = -2 log(e**(z/2) + e**(-z/2)) - log(scale), without overflow.
    log_cosh_term = ufuncs.logaddexp(half_z, lax.neg(half_z))
    return lax.sub(lax.mul(const(x, -2), log_cosh_term), lax.log(scale))


def pdf(x, loc=0, scale=1):
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))


def sf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def ppf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def isf(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)
