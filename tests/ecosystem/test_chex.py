"""chex's quickstart: `chex.dataclass` pytrees through `jit`/`vmap`/`grad`, the shape,
type and tree assertions (and their failures), `assert_max_traces`, and
`chex.fake_pmap`/`chex.fake_jit`."""

from .harness import assert_close, require

require("chex")

PROGRAM = """
import chex
import jax
import jax.numpy as jnp


@chex.dataclass
class Params:
    w: chex.Array
    b: chex.Array


params = Params(w=jnp.arange(6.0).reshape(2, 3) / 10, b=jnp.ones(3))


def model(params, x):
    chex.assert_shape(x, (None, 2))
    chex.assert_rank(params.w, 2)
    chex.assert_type(x, float)
    return jnp.tanh(x @ params.w + params.b)


x = jnp.linspace(-1.0, 1.0, 8).reshape(4, 2)
grads = jax.jit(jax.grad(lambda p: jnp.sum(model(p, x) ** 2)))(params)
chex.assert_trees_all_equal_shapes(grads, params)
chex.assert_tree_all_finite(grads)
results = {"w_grad": grads.w, "b_grad": grads.b,
           "vmapped": jax.vmap(model, in_axes=(None, 0))(params, x[:, None, :])}
doubled = jax.tree_util.tree_map(lambda v: 2 * v, params)
chex.assert_trees_all_close(doubled.w, 2 * params.w)
results["replace"] = params.replace(b=jnp.zeros(3)).b

failures = []
for check in (
    lambda: chex.assert_shape(x, (3, 2)),
    lambda: chex.assert_rank(x, 3),
    lambda: chex.assert_type(jnp.arange(3), float),
    lambda: chex.assert_trees_all_close(params, doubled),
    lambda: chex.assert_tree_all_finite({"a": jnp.array([1.0, jnp.nan])}),
    lambda: chex.assert_equal_shape([x, params.w]),
):
    try:
        check()
        failures.append("passed")
    except AssertionError:
        failures.append("AssertionError")
results["failures"] = failures


@jax.jit
@chex.assert_max_traces(n=1)
def traced_once(x):
    return x + 1


traced_once(x)
traced_once(x + 1)
try:
    traced_once(jnp.ones(3))
    results["max_traces"] = "not raised"
except AssertionError:
    results["max_traces"] = "AssertionError"

with chex.fake_pmap_and_jit():
    pmapped = jax.pmap(lambda v: v * 2)(jnp.arange(3.0))
results["fake_pmap"] = pmapped
chex.assert_devices_available(1, "cpu")
"""


def test_chex_quickstart(run_programs):
    jaxlite_results, jax_results = run_programs(PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-5, atol=1e-6)
