"""distrax's quickstart: distributions (Normal, MultivariateNormalDiag, Categorical,
a mixture), bijectors (a chain of ScalarAffine and Tanh, a masked coupling layer),
`Transformed` sampling and log-probabilities, and gradients of a log-likelihood."""

from .harness import assert_close, require

require("distrax")

PROGRAM = """
import distrax
import jax
import jax.numpy as jnp

key = jax.random.PRNGKey(0)
k1, k2, k3, k4 = jax.random.split(key, 4)
normal = distrax.Normal(loc=jnp.array([0.0, 1.0]), scale=jnp.array([1.0, 2.0]))
samples, log_prob = normal.sample_and_log_prob(seed=k1, sample_shape=(3,))
results = {
    "normal_samples": samples,
    "normal_log_prob": log_prob,
    "normal_entropy": normal.entropy(),
    "normal_cdf": normal.cdf(jnp.array([0.5, 0.5])),
}
mvn = distrax.MultivariateNormalDiag(jnp.zeros(3), jnp.array([1.0, 0.5, 2.0]))
results["mvn_log_prob"] = mvn.log_prob(jnp.array([[0.1, -0.2, 0.3], [1.0, 1.0, 1.0]]))
results["mvn_kl"] = mvn.kl_divergence(distrax.MultivariateNormalDiag(
    jnp.ones(3), jnp.ones(3)
))
cat = distrax.Categorical(logits=jnp.array([0.1, 0.5, -1.0]))
results["cat_samples"] = cat.sample(seed=k2, sample_shape=(6,))
results["cat_probs"] = cat.probs

bijector = distrax.Chain([distrax.ScalarAffine(shift=0.5, scale=2.0), distrax.Tanh()])
flow = distrax.Transformed(distrax.Normal(0.0, 1.0), bijector)
flow_samples, flow_log_prob = flow.sample_and_log_prob(seed=k3, sample_shape=(4,))
results["flow_samples"] = flow_samples
results["flow_log_prob"] = flow_log_prob


def conditioner(x):
    return jnp.stack([jnp.tanh(x), 0.5 * x], axis=-1)


def bijector_fn(params):
    return distrax.ScalarAffine(shift=params[..., 0], log_scale=params[..., 1])


coupling = distrax.MaskedCoupling(
    mask=jnp.array([True, False, True, False]),
    conditioner=conditioner, bijector=bijector_fn,
)
x = jax.random.normal(k4, (2, 4))
y, logdet = coupling.forward_and_log_det(x)
results["coupling_y"] = y
results["coupling_logdet"] = logdet
results["coupling_inverse"] = coupling.inverse(y)

data = jnp.array([0.3, -1.2, 2.0, 0.7])


def nll(params):
    dist = distrax.Normal(params[0], jnp.exp(params[1]))
    return -jnp.sum(dist.log_prob(data))


results["nll_grad"] = jax.jit(jax.grad(nll))(jnp.array([0.1, -0.3]))
mixture = distrax.MixtureSameFamily(
    distrax.Categorical(probs=jnp.array([0.3, 0.7])),
    distrax.Normal(jnp.array([-1.0, 2.0]), jnp.array([0.5, 1.0])),
)
results["mixture_log_prob"] = jax.vmap(mixture.log_prob)(data)
"""


def test_distrax_quickstart(run_programs):
    jaxlite_results, jax_results = run_programs(PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)
