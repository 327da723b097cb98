"""jaxlite.scipy.cluster.vq: assign each observation to its nearest code (Euclidean
distance), as jax.scipy.cluster.vq.vq; one broadcasted distance matrix and an argmin,
so it jits, vmaps and differentiates (through the returned distances)."""

from __future__ import annotations

from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
    """Return (code, dist): the index of the nearest code for each row of `obs` and
    its distance. `check_finite` is accepted and ignored, as in JAX."""
    from jaxlite import numpy as jnp

    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs, book = promote_dtypes_inexact(jnp.asarray(obs), jnp.asarray(code_book))
    if obs.ndim != book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, book = obs[:, None], book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    diff = obs[:, None, :] - book[None, :, :]
    dist = jnp.sqrt(jnp.sum(jnp.real(diff * jnp.conj(diff)), axis=-1))
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
