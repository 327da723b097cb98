"""Student's t distribution with `df` degrees of freedom (jax.scipy.stats.t)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.stats._common import const, promote_args_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    z = lax.div(lax.sub(x, loc), scale)
    half_df = lax.mul(df, const(x, 0.5))
    half_df1 = lax.add(half_df, const(x, 0.5))
    log_norm = lax.mul(
        const(x, 0.5),
        lax.log(lax.mul(lax.mul(lax.mul(scale, scale), const(x, np.pi)), df)),
    )
    normalizer = lax.sub(lax.add(lax.lgamma(half_df), log_norm), lax.lgamma(half_df1))
    return lax.neg(
        lax.add(normalizer, lax.mul(half_df1, lax.log1p(lax.div(lax.mul(z, z), df))))
    )


def pdf(x, df, loc=0, scale=1):
    return lax.exp(logpdf(x, df, loc, scale))
