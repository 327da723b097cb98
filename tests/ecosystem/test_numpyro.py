"""numpyro's quickstart: a Bayesian linear regression sampled with NUTS (compared
statistically: the chains are chaotic in float32), fitted with SVI and an
`AutoNormal` guide (deterministic given the seed), and predictive sampling."""

from .harness import assert_close, assert_same_posterior, require

require("numpyro")

COMMON = """
import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist

x = jnp.linspace(-2.0, 2.0, 30)
y = 1.0 + 0.5 * x + 0.3 * jax.random.normal(jax.random.PRNGKey(0), (30,))


def model(x, y=None):
    a = numpyro.sample("a", dist.Normal(0.0, 5.0))
    b = numpyro.sample("b", dist.Normal(0.0, 5.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("y", dist.Normal(a + b * x, sigma), obs=y)


"""

NUTS_PROGRAM = (
    COMMON
    + """
from numpyro.diagnostics import summary
from numpyro.infer import MCMC, NUTS

mcmc = MCMC(NUTS(model), num_warmup=200, num_samples=400, num_chains=2,
            chain_method="vectorized", progress_bar=False)
mcmc.run(jax.random.PRNGKey(1), x, y)
stats = summary(mcmc.get_samples(group_by_chain=True))
results = {"posterior": {
    name: {"mean": s["mean"], "std": s["std"], "n_eff": s["n_eff"]}
    for name, s in stats.items()
}}
"""
)

SVI_PROGRAM = (
    COMMON
    + """
from numpyro.infer import SVI, Predictive, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal

results = {}
guide = AutoNormal(model)
svi = SVI(model, guide, numpyro.optim.Adam(0.05), Trace_ELBO())
svi_result = svi.run(jax.random.PRNGKey(2), 150, x, y, progress_bar=False)
results["svi_losses"] = svi_result.losses[::30]
results["svi_params"] = svi_result.params
predictive = Predictive(model, guide=guide, params=svi_result.params, num_samples=5)
results["predictive"] = predictive(jax.random.PRNGKey(3), x[:4])["y"]
results["log_density"] = numpyro.infer.util.log_density(
    model, (x, y), {}, {"a": 1.0, "b": 0.5, "sigma": 0.3}
)[0]
"""
)


def test_numpyro_nuts(run_programs):
    jaxlite_results, jax_results = run_programs(NUTS_PROGRAM)
    assert_same_posterior(jaxlite_results["posterior"], jax_results["posterior"])


def test_numpyro_svi_predictive(run_programs):
    jaxlite_results, jax_results = run_programs(SVI_PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)
