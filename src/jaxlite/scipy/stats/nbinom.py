"""The negative binomial distribution (jax.scipy.stats.nbinom)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import gammaln, xlogy
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = const(k, 1)
    y = lax.sub(k, loc)
    log_comb = lax.sub(
        lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one))
    )
    log_kernel = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    return where(lax.lt(k, loc), -np.inf, lax.add(log_comb, log_kernel))


def pmf(k, n, p, loc=0):
    return lax.exp(logpmf(k, n, p, loc))
