"""jaxlite.scipy.stats: probability distributions as in jax.scipy.stats, one module per
distribution (`stats.norm.logpdf`, `stats.gamma.cdf`, ...), written with jnp, lax and
jaxlite.scipy.special so that they trace, batch and differentiate."""

from jaxlite.scipy.stats import (  # noqa: F401
    bernoulli,
    beta,
    betabinom,
    binom,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    gennorm,
    geom,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    multinomial,
    multivariate_normal,
    nbinom,
    norm,
    pareto,
    poisson,
    t,
    truncnorm,
    uniform,
    vonmises,
    wrapcauchy,
)
from jaxlite.scipy.stats.descriptive import ModeResult, mode, rankdata, sem
from jaxlite.scipy.stats.kde import gaussian_kde
