"""The geometric distribution on 1, 2, ... (jax.scipy.stats.geom)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import xlog1py
from jaxlite.scipy.stats._common import const, promote_args_inexact, where

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = lax.sub(k, loc)
    log_probs = lax.add(xlog1py(lax.sub(x, const(x, 1)), lax.neg(p)), lax.log(p))
    return where(lax.le(x, const(x, 0)), -np.inf, log_probs)


def pmf(k, p, loc=0):
    return lax.exp(logpmf(k, p, loc))
