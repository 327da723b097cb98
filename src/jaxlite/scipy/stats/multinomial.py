"""The multinomial distribution (jax.scipy.stats.multinomial)."""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.numpy.ufuncs import promote_args_numeric
from jaxlite.scipy.special import gammaln, xlogy
from jaxlite.scipy.stats._common import promote_args_inexact, where

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    from jaxlite import numpy as jnp

    (p,) = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(
            f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}"
        )
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return where(jnp.sum(x) == n, log_probs, -np.inf)


def pmf(x, n, p):
    return lax.exp(logpmf(x, n, p))
