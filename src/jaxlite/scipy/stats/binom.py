"""The binomial distribution (jax.scipy.stats.binom)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import gammaln, xlog1py, xlogy
from jaxlite.scipy.stats._common import promote_args_inexact, weak_const, where

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    one = weak_const(k, 1)
    y = lax.sub(k, loc)
    log_comb = lax.sub(
        gammaln(lax.add(n, one)),
        lax.add(gammaln(lax.add(y, one)), gammaln(lax.add(lax.sub(n, y), one))),
    )
    log_kernel = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(log_comb, log_kernel)
    zero = weak_const(k, 0)
    certain = (lax.eq(y, zero) & lax.eq(n, zero)) | lax.eq(log_kernel, zero)
    log_probs = where(certain, 0.0, log_probs)
    inside = lax.ge(k, loc) & lax.lt(k, lax.add(lax.add(loc, n), one))
    return where(inside, log_probs, -np.inf)


def pmf(k, n, p, loc=0):
    return lax.exp(logpmf(k, n, p, loc))
