"""The multivariate normal distribution (jax.scipy.stats.multivariate_normal): log
density from the Cholesky factor of the covariance (a scalar covariance means
cov * identity)."""

from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite.numpy.ufuncs import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular=None):
    from jaxlite import numpy as jnp

    if allow_singular is not None:
        raise NotImplementedError(
            "allow_singular argument of multivariate_normal.logpdf"
        )
    x, mean, cov = promote_dtypes_inexact(
        jnp.asarray(x), jnp.asarray(mean), jnp.asarray(cov)
    )
    log_2pi = np.log(2 * np.pi)
    if not mean.shape:
        return -0.5 * jnp.square(x - mean) / cov - 0.5 * (log_2pi + jnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not np.shape(cov):
        quad = jnp.sum(y * y, axis=-1)
        return -0.5 * quad / cov - n / 2 * (log_2pi + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = _cholesky(cov)
    z = _solve_lower(chol, y)
    log_det_half = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(z * z, axis=-1) - n / 2 * log_2pi - log_det_half


def pdf(x, mean, cov):
    return lax.exp(logpdf(x, mean, cov))


def _cholesky(cov):
    from jaxlite import numpy as jnp

    return jnp.linalg.cholesky(cov)


def _solve_lower(chol, y):
    """z with chol @ z = y, for y of shape (..., n), by the triangular solver of
    jaxlite.scipy.linalg."""
    from jaxlite import numpy as jnp
    from jaxlite.scipy import linalg

    shape = np.broadcast_shapes(chol.shape[:-2], y.shape[:-1])
    chol = jnp.broadcast_to(chol, shape + chol.shape[-2:])
    y = jnp.broadcast_to(y, shape + y.shape[-1:])
    z = linalg.solve_triangular(chol, y[..., None], lower=True)
    return z[..., 0]
