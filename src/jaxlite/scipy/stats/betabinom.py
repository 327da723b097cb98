"""The beta-binomial distribution (jax.scipy.stats.betabinom)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import betaln
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one, zero = const(y, 1), const(y, 0)
    log_comb = lax.neg(
        lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one), lax.add(y, one)))
    )
    log_beta = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(log_comb, log_beta)
    log_probs = where(lax.eq(y, zero) & lax.eq(n, zero), 0.0, log_probs)
    outside = lax.lt(y, lax.neg(loc)) | lax.gt(y, n) | lax.le(lax.add(y, a), zero)
    log_probs = where(outside, -np.inf, log_probs)
    invalid = lax.lt(n, zero) | lax.le(a, zero) | lax.le(b, zero)
    return where(invalid, np.nan, log_probs)


def pmf(k, n, a, b, loc=0):
    return lax.exp(logpmf(k, n, a, b, loc))
