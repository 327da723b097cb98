"""The chi-squared distribution with `df` degrees of freedom (jax.scipy.stats.chi2)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import gammainc, gammaincc
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    one, two = const(x, 1), const(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    half_df = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(half_df, one), lax.log(y)), lax.div(y, two))
    log_norm = lax.neg(lax.add(lax.lgamma(half_df), lax.mul(half_df, lax.log(two))))
    log_probs = lax.add(lax.sub(log_norm, lax.log(scale)), kernel)
    return where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, df, loc=0, scale=1):
    return lax.exp(logpdf(x, df, loc, scale))


def _half_y(x, loc, scale):
    y = lax.div(lax.sub(x, loc), lax.mul(scale, const(scale, 2)))
    return lax.clamp(const(x, 0), y, const(x, np.inf))


def cdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(lax.div(df, const(df, 2)), _half_y(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    return lax.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(lax.div(df, const(df, 2)), _half_y(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
    return lax.log(sf(x, df, loc, scale))
