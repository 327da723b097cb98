"""blackjax's quickstart: NUTS with Stan's window adaptation on a correlated Gaussian,
then sampling in a `lax.scan` loop over two chains (compared statistically: the
chains are chaotic in float32), and a random-walk Metropolis run."""

from .harness import assert_same_posterior, require

require("blackjax")

PROGRAM = """
import blackjax
import jax
import jax.numpy as jnp
from blackjax.diagnostics import effective_sample_size

mean = jnp.array([1.0, -2.0])
cov = jnp.array([[1.0, 0.8], [0.8, 2.0]])
precision = jnp.linalg.inv(cov)


def logdensity_fn(x):
    d = x["x"] - mean
    return -0.5 * d @ precision @ d


adapt = blackjax.window_adaptation(blackjax.nuts, logdensity_fn)
(state, parameters), _ = adapt.run(
    jax.random.PRNGKey(0), {"x": jnp.zeros(2)}, num_steps=200
)
nuts = blackjax.nuts(logdensity_fn, **parameters)


def inference_loop(kernel, state, key, num_samples):
    def one_step(state, key):
        state, _ = kernel(key, state)
        return state, state.position["x"]

    _, samples = jax.lax.scan(one_step, state, jax.random.split(key, num_samples))
    return samples


def summarize(chains):
    return {
        "mean": chains.mean(axis=(0, 1)),
        "std": chains.std(axis=(0, 1)),
        "n_eff": jax.jit(effective_sample_size)(chains),
    }


run = jax.jit(lambda key: inference_loop(nuts.step, state, key, 500))
nuts_chains = jnp.stack([run(jax.random.PRNGKey(1)), run(jax.random.PRNGKey(2))])
rmh = blackjax.additive_step_random_walk.normal_random_walk(
    logdensity_fn, sigma=jnp.array([1.2, 1.5])
)
rmh_state = rmh.init({"x": jnp.zeros(2)})
rmh_run = jax.jit(lambda key: inference_loop(rmh.step, rmh_state, key, 3000)[500:])
rmh_chains = jnp.stack([rmh_run(jax.random.PRNGKey(3)), rmh_run(jax.random.PRNGKey(4))])
results = {
    "nuts": {"x": summarize(nuts_chains)},
    "rmh": {"x": summarize(rmh_chains)},
}
"""


def test_blackjax_quickstart(run_programs):
    jaxlite_results, jax_results = run_programs(PROGRAM)
    assert_same_posterior(jaxlite_results["nuts"], jax_results["nuts"])
    assert_same_posterior(jaxlite_results["rmh"], jax_results["rmh"])
