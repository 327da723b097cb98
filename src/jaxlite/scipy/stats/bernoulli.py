"""The Bernoulli distribution with success probability `p` (jax.scipy.stats.bernoulli)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.numpy import ufuncs
from jaxlite.scipy.special import xlog1py, xlogy
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    one = const(k, 1)
    x = lax.sub(k, loc)
    log_probs = lax.add(xlogy(x, p), xlog1py(lax.sub(one, x), lax.neg(p)))
    return where(lax.lt(x, const(k, 0)) | lax.gt(x, one), -np.inf, log_probs)


def pmf(k, p, loc=0):
    return lax.exp(logpmf(k, p, loc))


def _bad_p(p):
    return ufuncs.isnan(p) | (p < 0) | (p > 1)


def cdf(k, p):
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    zero, one = const(k, 0), const(k, 1)
    out = where(lax.ge(k, one), one, where(lax.ge(k, zero), lax.sub(one, p), zero))
    return where(ufuncs.isnan(k) | _bad_p(p), np.nan, out)


def ppf(q, p):
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    zero, one = const(q, 0), const(q, 1)
    out = where(lax.le(q, lax.sub(one, p)), zero, one)
    bad = ufuncs.isnan(q) | _bad_p(p) | (q < 0) | (q > 1)
    return where(bad, np.nan, out)
