"""optax's quickstart: a linear model fitted with several optimisers (adam, sgd with
momentum, a chain with clipping and adamw, a schedule, lbfgs with its line search)."""

from .harness import assert_close, require

require("optax")

PROGRAM = """
import jax
import jax.numpy as jnp
import optax

kx, kw, kn = jax.random.split(jax.random.PRNGKey(0), 3)
x = jax.random.normal(kx, (64, 5))
w_true = jax.random.normal(kw, (5,))
y = x @ w_true + 0.1 * jax.random.normal(kn, (64,))


def loss_fn(params, x, y):
    return jnp.mean((x @ params["w"] + params["b"] - y) ** 2)


def fit(optimizer, steps=25):
    params = {"w": jnp.zeros(5), "b": jnp.zeros(())}
    state = optimizer.init(params)

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = optimizer.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state)
        losses.append(loss)
    return {"losses": losses, "w": params["w"], "b": params["b"]}


schedule = optax.warmup_cosine_decay_schedule(0.0, 0.1, 5, 25)
results = {
    "adam": fit(optax.adam(0.05)),
    "sgd_momentum": fit(optax.sgd(0.05, momentum=0.9, nesterov=True)),
    "chain": fit(
        optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, 1e-3))
    ),
    "schedule": [schedule(i) for i in range(0, 25, 4)],
}

# L-BFGS with its zoom line search (optax.value_and_grad_from_state).
opt = optax.lbfgs()
params = {"w": jnp.zeros(5), "b": jnp.zeros(())}
state = opt.init(params)
value_and_grad = optax.value_and_grad_from_state(lambda p: loss_fn(p, x, y))


@jax.jit
def lbfgs_step(params, state):
    value, grad = value_and_grad(params, state=state)
    updates, state = opt.update(
        grad, state, params, value=value, grad=grad,
        value_fn=lambda p: loss_fn(p, x, y),
    )
    return optax.apply_updates(params, updates), state, value


lbfgs_losses = []
for _ in range(8):
    params, state, value = lbfgs_step(params, state)
    lbfgs_losses.append(value)
results["lbfgs"] = {"losses": lbfgs_losses, "w": params["w"]}
results["softmax_xent"] = optax.softmax_cross_entropy_with_integer_labels(
    x[:4], jnp.array([0, 1, 2, 3])
)
"""


def test_optax_quickstart(run_programs):
    jaxlite_results, jax_results = run_programs(PROGRAM)
    assert_close(jaxlite_results, jax_results, rtol=1e-4, atol=1e-5)
