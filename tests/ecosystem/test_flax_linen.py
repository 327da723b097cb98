"""flax.linen's quickstart: a CNN with batch norm and dropout trained with optax,
an LSTM unrolled with `nn.scan` and one run with `nn.RNN`, and `nn.remat`/`nn.vmap`
lifted transforms."""

from .harness import assert_close, require

require("flax", "optax")

PROGRAM = """
import jax
import optax
from flax import linen as nn


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        # No bias before batch norm: its gradient is rounding noise, which adam scales
        # up to full steps (the batch statistics would then differ by noise).
        x = nn.Conv(features=4, kernel_size=(3, 3), use_bias=False)(x)
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(features=16)(x)
        x = nn.Dropout(rate=0.25, deterministic=not train)(x)
        x = nn.gelu(x)
        x = nn.LayerNorm()(x)
        return nn.Dense(features=3)(x)


key = jax.random.PRNGKey(0)
k_init, k_x, k_y, k_drop = jax.random.split(key, 4)
images = jax.random.normal(k_x, (8, 8, 8, 1))
labels = jax.random.randint(k_y, (8,), 0, 3)
model = CNN()
variables = model.init(k_init, images, train=False)
params, batch_stats = variables["params"], variables["batch_stats"]
tx = optax.adam(1e-2)
opt_state = tx.init(params)


@jax.jit
def train_step(params, batch_stats, opt_state, dropout_key):
    def loss_fn(params):
        logits, updates = model.apply(
            {"params": params, "batch_stats": batch_stats}, images, train=True,
            rngs={"dropout": dropout_key}, mutable=["batch_stats"],
        )
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, updates["batch_stats"]

    (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), batch_stats, opt_state, loss


losses = []
for i in range(6):
    params, batch_stats, opt_state, loss = train_step(
        params, batch_stats, opt_state, jax.random.fold_in(k_drop, i)
    )
    losses.append(loss)
eval_logits = model.apply(
    {"params": params, "batch_stats": batch_stats}, images, train=False
)
results = {
    "param_count": sum(x.size for x in jax.tree_util.tree_leaves(params)),
    "param_shapes": [list(x.shape) for x in jax.tree_util.tree_leaves(params)],
    "losses": losses,
    "eval_logits": eval_logits,
    "batch_stats_mean": batch_stats["BatchNorm_0"]["mean"],
}

"""

SEQUENCE_PROGRAM = """
import jax
import jax.numpy as jnp
from flax import linen as nn

results = {}


class ScanLSTM(nn.Module):
    features: int

    @nn.compact
    def __call__(self, xs):
        cell = nn.scan(
            nn.OptimizedLSTMCell, variable_broadcast="params",
            split_rngs={"params": False}, in_axes=1, out_axes=1,
        )(self.features)
        carry = cell.initialize_carry(jax.random.PRNGKey(0), xs[:, 0].shape)
        carry, ys = cell(carry, xs)
        return ys


seq = jax.random.normal(jax.random.PRNGKey(3), (2, 7, 3))
scan_model = ScanLSTM(features=5)
scan_params = scan_model.init(jax.random.PRNGKey(4), seq)
results["scan_out"] = scan_model.apply(scan_params, seq)
results["scan_grad"] = jax.grad(
    lambda p: jnp.sum(scan_model.apply(p, seq) ** 2)
)(scan_params)

rnn = nn.RNN(nn.GRUCell(features=4))
rnn_params = rnn.init(jax.random.PRNGKey(5), seq)
seq_lengths = jnp.array([7, 4])
results["rnn_out"] = rnn.apply(rnn_params, seq, seq_lengths=seq_lengths)
bidir = nn.Bidirectional(nn.RNN(nn.LSTMCell(3)), nn.RNN(nn.LSTMCell(3)))
bidir_params = bidir.init(jax.random.PRNGKey(6), seq)
results["bidirectional"] = bidir.apply(bidir_params, seq)


class RematMLP(nn.Module):
    @nn.compact
    def __call__(self, x):
        dense = nn.remat(nn.Dense)
        for width in (6, 6, 2):
            x = jnp.tanh(dense(width)(x))
        return x


VmapDense = nn.vmap(
    nn.Dense, in_axes=0, out_axes=0, variable_axes={"params": 0},
    split_rngs={"params": True},
)
x = jax.random.normal(jax.random.PRNGKey(7), (3, 4))
remat_params = RematMLP().init(jax.random.PRNGKey(8), x)
results["remat_grad"] = jax.grad(
    lambda p: jnp.sum(RematMLP().apply(p, x))
)(remat_params)
vmap_model = VmapDense(features=2)
vmap_params = vmap_model.init(jax.random.PRNGKey(9), x)
results["vmap_out"] = vmap_model.apply(vmap_params, x)
"""


def test_flax_linen_training(run_programs):
    jaxlite_results, jax_results = run_programs(PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)


def test_flax_linen_scan_rnn_remat_vmap(run_programs):
    jaxlite_results, jax_results = run_programs(SEQUENCE_PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)
