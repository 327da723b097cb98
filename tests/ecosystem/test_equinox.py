"""equinox's quickstart: an `eqx.nn.MLP` trained with `filter_jit` and
`filter_value_and_grad` and optax; a CNN with `eqx.nn.Conv2d`, `BatchNorm` state
(`eqx.nn.make_with_state`) under `filter_vmap`; `eqx.filter_grad` through a
`eqx.internal.while_loop`-free `lax.scan`; `eqx.tree_at` and `eqx.partition`."""

from .harness import assert_close, require

require("equinox", "optax")

PROGRAM = """
import equinox as eqx
import jax
import jax.numpy as jnp
import optax

key = jax.random.PRNGKey(0)
k_model, k_x, k_conv = jax.random.split(key, 3)
model = eqx.nn.MLP(in_size=3, out_size=2, width_size=16, depth=2,
                   activation=jax.nn.softplus, key=k_model)
x = jax.random.normal(k_x, (32, 3))
y = jnp.stack([jnp.sin(x[:, 0]), jnp.cos(x[:, 1]) * x[:, 2]], axis=1)


@eqx.filter_value_and_grad
def loss_fn(model, x, y):
    return jnp.mean((jax.vmap(model)(x) - y) ** 2)


optim = optax.adamw(1e-2)
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))


@eqx.filter_jit
def make_step(model, opt_state, x, y):
    loss, grads = loss_fn(model, x, y)
    updates, opt_state = optim.update(
        grads, opt_state, eqx.filter(model, eqx.is_inexact_array)
    )
    return eqx.apply_updates(model, updates), opt_state, loss


losses = []
for _ in range(10):
    model, opt_state, loss = make_step(model, opt_state, x, y)
    losses.append(loss)
results = {"losses": losses, "out": jax.vmap(model)(x[:4])}

params, static = eqx.partition(model, eqx.is_array)
results["n_params"] = sum(p.size for p in jax.tree_util.tree_leaves(params))
zeroed = eqx.tree_at(lambda m: m.layers[-1].bias, model, jnp.zeros(2))
results["tree_at"] = zeroed(x[0])


class CNN(eqx.Module):
    conv: eqx.nn.Conv2d
    norm: eqx.nn.BatchNorm
    linear: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.conv = eqx.nn.Conv2d(1, 3, kernel_size=3, padding=1, use_bias=False,
                                  key=k1)
        self.norm = eqx.nn.BatchNorm(3, axis_name="batch")
        self.linear = eqx.nn.Linear(3 * 6 * 6, 2, key=k2)

    def __call__(self, x, state):
        x = self.conv(x)
        x, state = self.norm(x, state)
        x = jax.nn.relu(x).reshape(-1)
        return self.linear(x), state


cnn, state = eqx.nn.make_with_state(CNN)(k_conv)
images = jax.random.normal(jax.random.PRNGKey(5), (4, 1, 6, 6))


@eqx.filter_jit
def cnn_loss(cnn, state, images):
    out, state = eqx.filter_vmap(
        cnn, in_axes=(0, None), out_axes=(0, None), axis_name="batch"
    )(images, state)
    return jnp.sum(out**2), state


(value, state), grads = eqx.filter_value_and_grad(cnn_loss, has_aux=True)(
    cnn, state, images
)
results["cnn_value"] = value
results["cnn_grad_linear"] = grads.linear.weight
results["cnn_grad_conv"] = grads.conv.weight


class RNN(eqx.Module):
    cell: eqx.nn.GRUCell

    def __call__(self, xs):
        def step(h, x):
            h = self.cell(x, h)
            return h, h

        h, hs = jax.lax.scan(step, jnp.zeros(self.cell.hidden_size), xs)
        return hs


rnn = RNN(eqx.nn.GRUCell(2, 4, key=jax.random.PRNGKey(6)))
xs = jax.random.normal(jax.random.PRNGKey(7), (5, 2))
results["rnn"] = rnn(xs)
results["rnn_grad"] = eqx.filter_grad(lambda m: jnp.sum(m(xs) ** 2))(rnn).cell.weight_hh
"""


def test_equinox_quickstart(run_programs):
    jaxlite_results, jax_results = run_programs(PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)
