"""The Poisson distribution with mean `mu` (jax.scipy.stats.poisson)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.numpy import ufuncs
from jaxlite.scipy.special import entr, gammaincc, gammaln, xlogy
from jaxlite.scipy.stats._common import (
    const,
    promote_args_inexact,
    promote_dtypes_inexact,
    weak_const,
    where,
)

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = lax.sub(k, loc)
    log_probs = lax.sub(
        lax.sub(xlogy(x, mu), gammaln(lax.add(x, weak_const(x, 1)))), mu
    )
    invalid = lax.lt(x, weak_const(x, 0)) | lax.ne(ufuncs.round(k), k)
    return where(invalid, -np.inf, log_probs)


def pmf(k, mu, loc=0):
    return lax.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    k, mu, loc = promote_args_inexact("poisson.cdf", k, mu, loc)
    x = lax.sub(k, loc)
    p = gammaincc(lax.floor(lax.add(x, const(x, 1))), mu)
    return where(lax.lt(x, const(x, 0)), const(x, 0), p)


def entropy(mu, loc=0):
    """-sum_k pmf(k) log pmf(k): summed over the k that carry the mass for mu < 100,
    the asymptotic series 1/2 log(2 pi e mu) - 1/(12 mu) beyond."""
    from jaxlite import numpy as jnp

    mu, loc = promote_dtypes_inexact(mu, loc)
    shape = np.broadcast_shapes(np.shape(mu), np.shape(loc))
    flat = jnp.ravel(mu)
    k = jnp.arange(250, dtype=flat.dtype)[:, None]
    probs = pmf(k, flat[None, :])
    upper = jnp.ceil(flat + 10 * jnp.sqrt(flat) + 20)
    summed = jnp.sum(entr(where(k < upper[None, :], probs, 0.0)), axis=0)
    large = 0.5 * jnp.log(2 * np.pi * np.e * flat) - 1.0 / (12 * flat)
    out = where(flat == 0, 0.0, where(flat < 100, summed, large))
    return jnp.broadcast_to(jnp.reshape(out, np.shape(mu)), shape)
