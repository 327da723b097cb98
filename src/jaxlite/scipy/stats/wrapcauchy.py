"""The wrapped Cauchy distribution on [0, 2 pi] (jax.scipy.stats.wrapcauchy)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.stats._common import promote_args_inexact, weak_const, where

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    one = weak_const(c, 1)
    c2 = lax.mul(c, c)
    value = lax.sub(
        lax.sub(lax.log(lax.sub(one, c2)), weak_const(x, np.log(2 * np.pi))),
        lax.log(
            lax.sub(lax.add(one, c2), lax.mul(lax.mul(weak_const(c, 2), c), lax.cos(x)))
        ),
    )
    inside = lax.ge(x, weak_const(x, 0)) & lax.le(x, weak_const(x, 2 * np.pi))
    valid = lax.gt(c, weak_const(c, 0)) & lax.lt(c, one)
    return where(valid, where(inside, value, -np.inf), np.nan)


def pdf(x, c):
    return lax.exp(logpdf(x, c))
