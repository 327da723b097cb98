"""The generalized normal distribution with shape `beta` (jax.scipy.stats.gennorm)."""

from __future__ import annotations

from jaxlite import lax
from jaxlite.scipy.stats._common import promote_args_inexact, weak_const, where

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, beta):
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    log_norm = lax.sub(
        lax.log(lax.mul(weak_const(x, 0.5), beta)),
        lax.lgamma(lax.div(weak_const(x, 1), beta)),
    )
    return lax.sub(log_norm, lax.pow(lax.abs(x), beta))


def pdf(x, beta):
    return lax.exp(logpdf(x, beta))


def cdf(x, beta):
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    # The tail mass beyond |x| is Q(1/beta, |x|**beta) / 2: take it directly rather
    # than as 1 - P, which would cancel in the left tail.
    tail = lax.mul(
        weak_const(x, 0.5),
        lax.igammac(lax.div(weak_const(x, 1), beta), lax.pow(lax.abs(x), beta)),
    )
    return where(lax.lt(x, weak_const(x, 0)), tail, lax.sub(weak_const(x, 1), tail))
