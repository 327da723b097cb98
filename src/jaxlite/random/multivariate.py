"""Random vectors and matrices: multivariate normals and orthogonal matrices.

Both factor a matrix with `jaxlite.lax.linalg`: a multivariate normal is `mean + A z`
for standard normal `z` and a factor `A A^T = cov` (Cholesky by default, or from an
eigendecomposition or SVD, which also accept semidefinite covariances); a random
orthogonal (or unitary) matrix is the Q of the QR decomposition of a Gaussian matrix,
its columns' signs fixed by R's diagonal so that the distribution is Haar's (Mezzadri,
"How to generate random matrices from the classical compact groups", 2007). The
factorizations use LAPACK through NumPy rather than XLA's, so samples are within a few
ulps of JAX's rather than equal to them.
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

from jaxlite import dtypes, lax
from jaxlite import numpy as jnp
from jaxlite.core import concrete_or_error
from jaxlite.dispatch import jit
from jaxlite.lax import linalg as lax_linalg
from jaxlite.lax.structural import canonicalize_shape
from jaxlite.numpy.ufuncs import promote_dtypes_inexact
from jaxlite.random.arguments import check_out_sharding, check_shape
from jaxlite.random.continuous import _normal
from jaxlite.random.keys import check_prng_key

__all__ = ["multivariate_normal", "orthogonal"]


def multivariate_normal(
    key, mean, cov, shape=None, dtype=None, method="cholesky", *, out_sharding=None
):
    """Normal vectors with the given mean (`(..., n)`) and covariance (`(..., n, n)`).

    `method` is how `cov` is factored: "cholesky" (the default), "eigh" or "svd" (both
    of which allow singular covariances). Samples are differentiable in `mean` and `cov`.
    """
    check_out_sharding("multivariate_normal", out_sharding)
    typed, _ = check_prng_key("multivariate_normal", key)
    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    if dtype is None:
        dtype = mean.dtype
    else:
        dtype = dtypes.canonicalize_user_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(
            f"dtype argument to `multivariate_normal` must be a float dtype, got {dtype}"
        )
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _multivariate_normal(typed, mean, cov, shape, dtype, method)


@partial(jit, static_argnums=(3, 4, 5))
def _multivariate_normal(key, mean, cov, shape, dtype, method):
    if not np.ndim(mean) >= 1:
        raise ValueError(
            f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {np.ndim(mean)}"
        )
    if not np.ndim(cov) >= 2:
        raise ValueError(
            f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {np.ndim(cov)}"
        )
    n = mean.shape[-1]
    if np.shape(cov)[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
            f"cov.shape == {np.shape(cov)}."
        )
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = lax_linalg.svd(cov)
        factor = u * lax.sqrt(s)[..., None, :]
    elif method == "eigh":
        v, w = lax_linalg.eigh(cov)
        factor = v * lax.sqrt(w)[..., None, :]
    else:
        factor = lax_linalg.cholesky(cov)
    samples = _normal(key, (*shape, n), dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Random `(*shape, n, m)` matrices, Haar-distributed over the orthogonal group
    (unitary for complex dtypes); for `n != m`, with orthonormal rows or columns."""
    check_out_sharding("orthogonal", out_sharding)
    shape = canonicalize_shape(shape)
    typed, _ = check_prng_key("orthogonal", key)
    dtype = dtypes.canonicalize_user_dtype(float if dtype is None else dtype)
    check_shape("orthogonal", shape)
    context = "The error occurred in jax.random.orthogonal()"
    n = concrete_or_error(operator.index, n, context)
    m = n if m is None else concrete_or_error(operator.index, m, context)
    return _orthogonal(typed, n, m, shape, dtype)


@partial(jit, static_argnums=(1, 2, 3, 4))
def _orthogonal(key, n, m, shape, dtype):
    z = _normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = lax_linalg.qr(z, full_matrices=False)
    diagonal = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(diagonal), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x
