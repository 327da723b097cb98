"""jaxlite.random: JAX's random number API, with JAX's numbers.

Randomness is explicit: a draw is a pure function of a key, and new keys come from
`split` and `fold_in` (see `jaxlite.prng` for keys and the Threefry hash). Each sampler
turns the key's bits into values with the arithmetic JAX uses, and the transcendental
functions and fused multiply-adds are those of XLA's CPU backend (`xla_math`), so float32
samples are the very values JAX returns, not merely close to them.

Everything is written with jaxlite.lax, so samplers run under jit, vmap and grad: keys
get float0 tangents, while parameters such as `minval`, `mean` or `a` are differentiated
through. The entry points check their arguments eagerly and run a `jit`-compiled body,
as JAX does, so eager calls cost one cached program each.

The modules, by concept: `keys` (making, splitting and folding keys; raw bits),
`generators` (the PRNG implementations besides Threefry-2x32),
`continuous` (uniform floats and their transforms), `discrete` (integers, choices,
shuffles, counts), `gamma_family` (gamma variates and what is built on them),
`multivariate` (normal vectors, orthogonal matrices), `xla_math` (XLA's float32
roundings) and `arguments` (the checks they share).

Exactness. Keys, bits and the integer samplers are exact everywhere; float32 samples
are exact too, except where XLA uses the processor's approximate `rsqrt` (gamma, and
what is built on it, can differ by a few ulps for some shape parameters), LAPACK
(multivariate_normal, orthogonal), YNNPACK's `exp` and `log` (dirichlet with more than
4096 values) or its own `lgamma` (poisson with lam >= 10 can flip a rare accept
decision). 16-bit samples are exact for the one-formula samplers and may differ by an
ulp for composite ones. float64 samples that need `log`, `erf_inv` and the like use
NumPy's functions and may differ from JAX's in the last bit.
"""

from jaxlite.prng import PRNGKeyArray
from jaxlite.random import generators as _generators  # registers rbg, philox, ...
from jaxlite.random.keys import (
    PRNGKey,
    bits,
    clone,
    fold_in,
    key,
    key_data,
    key_dtype,
    key_impl,
    split,
    wrap_key_data,
)
from jaxlite.random.continuous import (
    cauchy,
    double_sided_maxwell,
    exponential,
    gumbel,
    laplace,
    logistic,
    lognormal,
    maxwell,
    normal,
    pareto,
    rayleigh,
    triangular,
    truncated_normal,
    uniform,
    wald,
    weibull_min,
)
from jaxlite.random.discrete import (
    bernoulli,
    binomial,
    categorical,
    choice,
    geometric,
    multinomial,
    permutation,
    poisson,
    rademacher,
    randint,
)
from jaxlite.random.gamma_family import (
    ball,
    beta,
    chisquare,
    dirichlet,
    f,
    gamma,
    generalized_normal,
    loggamma,
    random_gamma_p,
    t,
)
from jaxlite.random.multivariate import multivariate_normal, orthogonal

__all__ = [
    "PRNGKey",
    "PRNGKeyArray",
    "ball",
    "bernoulli",
    "beta",
    "binomial",
    "bits",
    "categorical",
    "cauchy",
    "chisquare",
    "choice",
    "clone",
    "dirichlet",
    "double_sided_maxwell",
    "exponential",
    "f",
    "fold_in",
    "gamma",
    "generalized_normal",
    "geometric",
    "gumbel",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "laplace",
    "loggamma",
    "logistic",
    "lognormal",
    "maxwell",
    "multinomial",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
    "random_gamma_p",
    "rayleigh",
    "split",
    "t",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
    "wrap_key_data",
]
