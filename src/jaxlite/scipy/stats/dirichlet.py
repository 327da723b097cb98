"""The Dirichlet distribution on the simplex (jax.scipy.stats.dirichlet). `x` has the
components along its first axis; it may omit the last one, which is then 1 - sum."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.special import gammaln, xlogy
from jaxlite.scipy.stats._common import const, promote_dtypes_inexact, where

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    from jaxlite import numpy as jnp

    x, alpha = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(alpha))
    if alpha.ndim != 1:
        raise ValueError(
            f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}"
        )
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry "
            f"fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    one = const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
    log_norm = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = lax.sub(jnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), log_norm)
    simplex = jnp.all(x > 0, axis=0) & (abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return where(simplex, log_probs, -np.inf)


def pdf(x, alpha):
    return lax.exp(logpdf(x, alpha))
