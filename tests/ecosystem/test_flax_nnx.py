"""flax.nnx's quickstart: a model with Linear, BatchNorm and Dropout layers trained with
`nnx.Optimizer` under `nnx.jit`, then evaluated; `nnx.value_and_grad`, `nnx.vmap` and
`nnx.scan` over layers."""

from .harness import assert_close, require

require("flax", "optax")

PROGRAM = """
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, din, dmid, dout, *, rngs):
        # No bias before batch norm: its gradient is rounding noise, which adam
        # scales up to full steps.
        self.linear1 = nnx.Linear(din, dmid, use_bias=False, rngs=rngs)
        self.bn = nnx.BatchNorm(dmid, momentum=0.9, rngs=rngs)
        self.dropout = nnx.Dropout(0.2, rngs=rngs)
        self.linear2 = nnx.Linear(dmid, dout, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.dropout(self.bn(self.linear1(x))))
        return self.linear2(x)


model = MLP(4, 16, 2, rngs=nnx.Rngs(0))
optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
x = jax.random.normal(jax.random.PRNGKey(1), (16, 4))
y = jnp.stack([jnp.sin(x[:, 0]), x[:, 1] * x[:, 2]], axis=1)


@nnx.jit
def train_step(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    loss, grads = nnx.value_and_grad(loss_fn)(model)
    optimizer.update(model, grads)
    return loss


losses = [train_step(model, optimizer, x, y) for _ in range(8)]
model.eval()
graphdef, params, rest = nnx.split(model, nnx.Param, ...)
results = {
    "losses": losses,
    "eval": model(x),
    "bn_mean": model.bn.mean.value,
    "param_count": sum(p.size for p in jax.tree_util.tree_leaves(params)),
}


class Block(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(3, 3, rngs=rngs)

    def __call__(self, x):
        return jnp.tanh(self.linear(x))


@nnx.vmap(in_axes=0, out_axes=0)
def make_blocks(key):
    return Block(nnx.Rngs(key))


blocks = make_blocks(jax.random.split(jax.random.PRNGKey(2), 4))


@nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
def forward(h, block):
    return block(h)


h0 = jnp.ones((2, 3))
results["scan_blocks"] = forward(h0, blocks)
results["scan_grad"] = nnx.grad(lambda b: jnp.sum(forward(h0, b) ** 2))(
    blocks
).linear.kernel.value
"""


def test_flax_nnx_quickstart(run_programs):
    jaxlite_results, jax_results = run_programs(PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)
