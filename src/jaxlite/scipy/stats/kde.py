"""jaxlite.scipy.stats.gaussian_kde: kernel density estimation with Gaussian kernels,
as jax.scipy.stats.gaussian_kde (a frozen dataclass registered as a pytree, so a KDE
can be built inside, or passed through, jit/vmap/grad).

The bandwidth is Scott's or Silverman's factor of the effective sample size (or a
scalar, or a callable of the KDE) times the weighted data covariance. Densities are
evaluated in whitened coordinates: with L the Cholesky factor of the inverse
kernel covariance, a kernel is exp(log|L| - d/2 log 2pi - |L^T (x - x_i)|^2 / 2), summed
(pdf) or log-sum-exp'ed (logpdf) with the weights. Integrals against Gaussians and
other KDEs are Gaussian convolutions through a Cholesky solve; `resample` draws a
data point by weight and adds kernel noise, using jaxlite.random.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from jaxlite import dtypes
from jaxlite.numpy.ufuncs import check_arraylike, promote_dtypes_inexact
from jaxlite.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


def _jnp():
    from jaxlite import numpy as jnp

    return jnp


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:  # noqa: N801 - SciPy's name
    """Representation of a kernel-density estimate using Gaussian kernels."""

    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        jnp = _jnp()
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if dtypes.issubdtype(dataset.dtype, np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, jnp.asarray(weights))
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights**2))
        if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError(
                "`bw_method` should be 'scott', 'silverman', a scalar, or a callable."
            )
        data_cov = jnp.atleast_2d(
            jnp.cov(dataset, rowvar=1, bias=False, aweights=weights)
        )
        self._set("covariance", data_cov * factor**2)
        self._set("inv_cov", jnp.linalg.inv(data_cov) / factor**2)

    def _set(self, name, value):
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self):
        return (
            self.neff,
            self.dataset,
            self.weights,
            self.covariance,
            self.inv_cov,
        ), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(
            ("neff", "dataset", "weights", "covariance", "inv_cov"), children
        ):
            kde._set(name, value)
        return kde

    @property
    def d(self):
        return self.dataset.shape[0]

    @property
    def n(self):
        return self.dataset.shape[1]

    def _points(self, points):
        jnp = _jnp()
        points = jnp.asarray(points)
        if dtypes.issubdtype(points.dtype, np.complexfloating):
            raise NotImplementedError(
                "gaussian_kde does not support complex coordinates"
            )
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(
                    f"points have dimension {d}, dataset has dimension {self.d}"
                )
        return points

    def _kernel_sum(self, points, in_log):
        from jaxlite.scipy import linalg, special

        jnp = _jnp()
        data, w, xi, prec = promote_dtypes_inexact(
            self.dataset.T, self.weights, points.T, self.inv_cov
        )
        d = data.shape[1]
        chol = linalg.cholesky(prec, lower=True)
        data, xi = data @ chol, xi @ chol
        log_norm = jnp.sum(jnp.log(jnp.diag(chol))) - 0.5 * d * np.log(2 * np.pi)
        sq = jnp.sum(jnp.square(xi[:, None, :] - data[None, :, :]), axis=-1)
        arg = log_norm - 0.5 * sq  # (m, n)
        if in_log:
            return special.logsumexp(jnp.log(w)[None, :] + arg, axis=1)
        return jnp.sum(w[None, :] * jnp.exp(arg), axis=1)

    def evaluate(self, points):
        """Evaluate the estimated pdf at `points` (shape (d, m) or (m,) for d == 1)."""
        check_arraylike("evaluate", points)
        return self._kernel_sum(self._points(points), False)

    def __call__(self, points):
        return self.evaluate(points)

    def pdf(self, x):
        """Probability density function (same as `evaluate`)."""
        check_arraylike("pdf", x)
        return self.evaluate(x)

    def logpdf(self, x):
        """Log probability density function, by log-sum-exp over the kernels."""
        check_arraylike("logpdf", x)
        return self._kernel_sum(self._points(x), True)

    def _convolve(self, chol, norm, mean, target, weights):
        from jaxlite.scipy import linalg

        jnp = _jnp()
        diff = target - mean[:, None]
        alpha = linalg.cho_solve(chol, diff)
        arg = 0.5 * jnp.sum(diff * alpha, axis=0)
        return norm * jnp.sum(jnp.exp(-arg) * weights)

    def _gauss_factor(self, cov):
        from jaxlite.scipy import linalg

        jnp = _jnp()
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return chol, norm

    def integrate_gaussian(self, mean, cov):
        """Integral of the estimated pdf times a Gaussian density N(mean, cov)."""
        jnp = _jnp()
        mean = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean)))
        cov = jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol, norm = self._gauss_factor(cov)
        return self._convolve(chol, norm, mean, self.dataset, self.weights)

    def integrate_box_1d(self, low, high):
        """Integral of a 1-d estimated pdf between the scalars `low` and `high`."""
        from jaxlite.scipy import special

        jnp = _jnp()
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError(
                "the limits of integration in integrate_box_1d must be scalars"
            )
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        lo = jnp.squeeze((low - self.dataset) / sigma)
        hi = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(hi) - special.ndtr(lo)))

    def integrate_kde(self, other):
        """Integral of the product of this estimated pdf and another KDE's."""
        from jaxlite.api_vmap import vmap

        jnp = _jnp()
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol, norm = self._gauss_factor(other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        res = vmap(
            lambda m: self._convolve(chol, norm, m, large.dataset, large.weights),
            in_axes=1,
        )(small.dataset)
        return jnp.sum(res * small.weights)

    def resample(self, key, shape=()):
        """Draw `shape` samples (returned as (d, *shape)) from the estimated pdf."""
        from jaxlite import random

        jnp = _jnp()
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(
            eps_key,
            jnp.zeros(self.d, self.covariance.dtype),
            self.covariance,
            shape=shape,
            dtype=self.dataset.dtype,
        ).T
        return self.dataset[:, ind] + eps

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not implemented in JAX either: use `integrate_box_1d`."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError(
            "only 1D box integrations are supported; use `integrate_box_1d`"
        )

    def set_bandwidth(self, bw_method=None):
        """Not implemented in JAX either (the KDE is immutable)."""
        del bw_method
        raise NotImplementedError(
            "dynamically changing the bandwidth method is not supported"
        )
