"""The von Mises distribution on the circle (jax.scipy.stats.vonmises)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.scipy.stats._common import promote_args_inexact, weak_const, where

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    # log(e**(kappa cos x) / (2 pi I0(kappa))) with I0 scaled: kappa (cos x - 1) -
    # log(2 pi i0e(kappa)), which cannot overflow.
    kernel = lax.mul(kappa, lax.sub(lax.cos(x), weak_const(x, 1)))
    log_norm = lax.log(lax.mul(weak_const(x, 2 * np.pi), lax.bessel_i0e(kappa)))
    return where(lax.gt(kappa, weak_const(kappa, 0)), lax.sub(kernel, log_norm), np.nan)


def pdf(x, kappa):
    return lax.exp(logpdf(x, kappa))
