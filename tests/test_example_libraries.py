"""`jaxlite.example_libraries.optimizers` and `stax` against JAX's modules: the same
optimizer steps from the same parameters and gradients, the same layer shapes,
initial parameters (jaxlite.random is bit-exact with jax.random) and outputs."""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers, stax
from testing import check_close

_rng = np.random.default_rng(0)
PARAMS = {
    "w": _rng.standard_normal((3, 4)).astype(np.float32),
    "b": _rng.standard_normal(4).astype(np.float32),
    "s": np.float32(0.5),
}
GRADS = [
    {k: _rng.standard_normal(np.shape(v)).astype(np.float32) for k, v in PARAMS.items()}
    for _ in range(4)
]
GRADS[1]["b"][:2] = 0  # zero gradients take adagrad's and sm3's `where` branch

OPTIMIZERS = {
    "sgd": lambda M: M.sgd(0.1),
    "momentum": lambda M: M.momentum(0.1, 0.9),
    "nesterov": lambda M: M.nesterov(M.exponential_decay(0.1, 2, 0.5), 0.9),
    "adagrad": lambda M: M.adagrad(0.1),
    "rmsprop": lambda M: M.rmsprop(M.inverse_time_decay(0.1, 2, 0.5)),
    "rmsprop_momentum": lambda M: M.rmsprop_momentum(0.1),
    "adam": lambda M: M.adam(M.polynomial_decay(0.1, 3, 0.01)),
    "adamax": lambda M: M.adamax(M.piecewise_constant([1, 2], [0.1, 0.05, 0.01])),
    "sm3": lambda M: M.sm3(0.1),
    "sgd_staircase": lambda M: M.sgd(M.inverse_time_decay(0.1, 2, 0.5, True)),
}


def _run(lib, module, name):
    init, update, get_params = OPTIMIZERS[name](module)
    state = init(PARAMS)
    jitted = lib.jit(update)
    for i, g in enumerate(GRADS):
        # jaxlite alternates eager and jitted steps; JAX runs jitted (eager JAX
        # compiles every operation: slow).
        eager = lib is jaxlite and i % 2 == 0
        state = update(i, g, state) if eager else jitted(i, g, state)
    return get_params(state), state


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_steps_match_jax(name):
    jax = pytest.importorskip("jax")
    jopt = pytest.importorskip("jax.example_libraries.optimizers")
    params, state = _run(jaxlite, optimizers, name)
    jparams, jstate = _run(jax, jopt, name)
    for k in PARAMS:
        got, want = np.asarray(params[k]), np.asarray(jparams[k])
        assert got.dtype == want.dtype and got.shape == want.shape
        # XLA fuses and reorders float32 arithmetic: a few ulps after four steps.
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
    leaves = jaxlite.tree_util.tree_leaves(state)
    jleaves = jax.tree_util.tree_leaves(jstate)
    assert len(leaves) == len(jleaves)
    for a, b in zip(leaves, jleaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
    assert str(jaxlite.tree_util.tree_structure(state)) == str(
        jax.tree_util.tree_structure(jstate)
    )


def test_sgd_and_momentum_by_hand():
    x0, g = np.array([1.0, -2.0], np.float32), np.array([0.5, 0.25], np.float32)
    init, update, get_params = optimizers.sgd(0.1)
    np.testing.assert_allclose(get_params(update(0, g, init(x0))), x0 - 0.1 * g)
    init, update, get_params = optimizers.momentum(0.1, mass=0.9)
    state = update(1, g, update(0, g, init(x0)))
    # v1 = g, x1 = x0 - 0.1 g; v2 = 0.9 g + g, x2 = x1 - 0.1 * 1.9 g
    np.testing.assert_allclose(get_params(state), x0 - 0.29 * g, rtol=1e-6)


def test_schedules():
    np.testing.assert_allclose(optimizers.constant(0.3)(7), 0.3)
    np.testing.assert_allclose(optimizers.exponential_decay(1.0, 2, 0.5)(4), 0.25)
    np.testing.assert_allclose(optimizers.inverse_time_decay(1.0, 2, 1.0)(3), 0.4)
    stair = optimizers.inverse_time_decay(1.0, 2, 1.0, staircase=True)
    np.testing.assert_allclose(stair(3), 0.5)
    poly = optimizers.polynomial_decay(1.0, 4, 0.2, power=2.0)
    np.testing.assert_allclose(poly(2), 0.25 * 0.8 + 0.2, rtol=1e-6)
    np.testing.assert_allclose(poly(10), 0.2, rtol=1e-6)
    pw = optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1])
    got = [float(pw(i)) for i in (0, 2, 3, 5, 6)]
    np.testing.assert_allclose(got, [1.0, 1.0, 0.5, 0.5, 0.1], rtol=1e-7)
    f = optimizers.make_schedule(0.1)
    assert f(3) == 0.1 and optimizers.make_schedule(pw) is pw
    # Schedules trace under jit with a traced step number.
    np.testing.assert_allclose(jaxlite.jit(pw)(3), 0.5)


@pytest.mark.filterwarnings("ignore:ndim requires ndarray:DeprecationWarning")
def test_schedule_and_structure_errors():
    with pytest.raises(TypeError, match="list"):
        optimizers.make_schedule([1.0, 2.0])
    with pytest.raises(ValueError, match="one shorter than values"):
        optimizers.piecewise_constant([1, 2], [1.0, 2.0])
    with pytest.raises(ValueError, match="must be sequences"):
        optimizers.piecewise_constant(1, [1.0, 2.0])
    init, update, _ = optimizers.sgd(0.1)
    with pytest.raises(TypeError, match="did not match the parameter tree structure"):
        update(0, {"w": 1.0}, init({"v": 1.0}))


def test_l2_norm_and_clip_grads():
    tree = {"a": np.array([3.0, 0.0], np.float32), "b": np.float32(4.0)}
    np.testing.assert_allclose(optimizers.l2_norm(tree), 5.0)
    clipped = optimizers.clip_grads(tree, 1.0)
    np.testing.assert_allclose(optimizers.l2_norm(clipped), 1.0, rtol=1e-6)
    np.testing.assert_allclose(clipped["a"], [0.6, 0.0], rtol=1e-6)
    check_close(optimizers.clip_grads(tree, 10.0), tree)


def test_pack_unpack_round_trip_and_pickle():
    import pickle

    init, update, get_params = optimizers.adam(0.01)
    state = update(0, GRADS[0], init(PARAMS))
    marked = optimizers.unpack_optimizer_state(state)
    assert sorted(marked) == ["b", "s", "w"]
    assert isinstance(marked["w"], optimizers.JoinPoint)
    restored = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(marked)))
    assert isinstance(restored, optimizers.OptimizerState)
    check_close(get_params(restored), get_params(state))
    check_close(
        get_params(update(1, GRADS[1], restored)),
        get_params(update(1, GRADS[1], state)),
    )


def test_optimizer_decorator_and_state_pytree():
    @optimizers.optimizer
    def halve(step_size):
        def init(x0):
            return (x0, jnp.zeros_like(x0))

        def update(i, g, state):
            x, count = state
            return (x - step_size * g / 2, count + 1)

        return init, update, lambda state: state[0]

    opt = halve(1.0)
    assert isinstance(opt, optimizers.Optimizer) and opt.init_fn is opt[0]
    state = opt.init_fn({"a": jnp.ones(2)})
    state = jaxlite.jit(opt.update_fn)(0, {"a": jnp.ones(2)}, state)
    check_close(opt.params_fn(state), {"a": jnp.full(2, 0.5)})
    # The state is a pytree: vmap over a batch of states and gradients.
    states = jaxlite.tree_util.tree_map(lambda x: jnp.stack([x, x]), state)
    grads = {"a": jnp.array([[1.0, 1.0], [2.0, 2.0]])}
    out = jaxlite.vmap(opt.update_fn, in_axes=(None, 0, 0))(1, grads, states)
    check_close(opt.params_fn(out)["a"], np.array([[0.0, 0.0], [-0.5, -0.5]]))


def test_training_loop_reduces_the_loss():
    x = np.linspace(-1, 1, 16, dtype=np.float32)[:, None]
    y = 3 * x - 1

    def loss(p):
        return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    init, update, get_params = optimizers.adam(0.1)
    state = init({"w": jnp.zeros((1, 1)), "b": jnp.zeros(1)})

    @jaxlite.jit
    def step(i, state):
        return update(i, jaxlite.grad(loss)(get_params(state)), state)

    first = loss(get_params(state))
    for i in range(100):
        state = step(i, state)
    assert loss(get_params(state)) < 0.01 * first


# stax

NETS = {
    "mlp": (
        lambda S: S.serial(S.Dense(5), S.Relu, S.Dense(3), S.LogSoftmax),
        (4, 6),
    ),
    "conv": (
        lambda S: S.serial(
            S.Conv(4, (3, 3), padding="SAME"),
            S.BatchNorm(),
            S.Relu,
            S.MaxPool((2, 2), strides=(2, 2)),
            S.AvgPool((2, 2), padding="SAME"),
            S.SumPool((1, 2)),
            S.Flatten,
            S.Dense(2),
            S.Softmax,
        ),
        (2, 8, 8, 3),
    ),
    "residual": (
        lambda S: S.serial(
            S.FanOut(2),
            S.parallel(S.Dense(6), S.Identity),
            S.FanInSum,
            S.Tanh,
            S.FanOut(3),
            S.parallel(S.Sigmoid, S.Elu, S.Gelu),
            S.FanInConcat(),
            S.Selu,
            S.LeakyRelu,
            S.Softplus,
            S.Exp,
        ),
        (3, 6),
    ),
    "conv_transpose": (
        lambda S: S.serial(
            S.ConvTranspose(3, (3, 3), strides=(2, 2), padding="SAME"),
            S.Conv(2, (2, 2)),
            S.Flatten,
        ),
        (2, 4, 4, 2),
    ),
    "conv1d_transpose": (
        lambda S: S.Conv1DTranspose(3, (3,), strides=(2,)),
        (2, 5, 2),
    ),
    "general_conv_nchw": (
        lambda S: S.serial(
            S.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 2), strides=(1, 2)),
            S.AvgPool((2, 2), spec="NCHW"),
            S.BatchNorm(axis=(0, 2, 3), center=False),
        ),
        (2, 3, 6, 6),
    ),
    "batchnorm_variants": (
        lambda S: S.serial(
            S.BatchNorm(axis=0, scale=False),
            S.BatchNorm(axis=(0,), center=False, scale=False),
        ),
        (5, 3),
    ),
    "shape_dependent": (
        lambda S: S.shape_dependent(lambda shape: S.Dense(shape[-1] * 2)),
        (2, 3),
    ),
}


def _init(lib, module, name):
    make, shape = NETS[name]
    return make(module)[0](lib.random.key(0), shape)


def _jax_init_shapes(jax, jstax, name):
    """JAX's output shape and parameter shapes/dtypes, traced without compiling
    (compiling JAX's threefry for every network would take seconds)."""
    make, shape = NETS[name]
    init_fun = make(jstax)[0]
    out_shapes = []

    def params_of(key):
        out_shape, params = init_fun(key, shape)
        out_shapes.append(out_shape)
        return params

    params = jax.eval_shape(params_of, jax.random.key(0))
    return tuple(int(d) for d in out_shapes[0]), params


@pytest.mark.parametrize("name", sorted(NETS))
def test_stax_networks_match_jax(name):
    jax = pytest.importorskip("jax")
    jstax = pytest.importorskip("jax.example_libraries.stax")
    x = np.random.default_rng(1).standard_normal(NETS[name][1]).astype(np.float32)
    out_shape, params = _init(jaxlite, stax, name)
    out = NETS[name][0](stax)[1](params, x)
    jshape, jparams = _jax_init_shapes(jax, jstax, name)
    assert tuple(int(d) for d in out_shape) == jshape == tuple(out.shape)
    leaves, jleaves = jaxlite.tree_util.tree_leaves(params), jax.tree.leaves(jparams)
    assert [(a.shape, a.dtype) for a in leaves] == [(b.shape, b.dtype) for b in jleaves]
    # JAX's layers applied to jaxlite's parameters give the same outputs.
    jparams = jax.tree.unflatten(jax.tree.structure(jparams), map(np.asarray, leaves))
    jout = jax.jit(NETS[name][0](jstax)[1])(jparams, x)
    np.testing.assert_allclose(np.asarray(out), np.asarray(jout), rtol=2e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["mlp", "general_conv_nchw"])
def test_stax_initial_parameters_match_jax(name):
    jax = pytest.importorskip("jax")
    jstax = pytest.importorskip("jax.example_libraries.stax")
    _, params = _init(jaxlite, stax, name)
    make, shape = NETS[name]
    _, jparams = jax.jit(make(jstax)[0], static_argnums=1)(jax.random.key(0), shape)
    leaves, jleaves = jaxlite.tree_util.tree_leaves(params), jax.tree.leaves(jparams)
    assert len(leaves) == len(jleaves)
    for a, b in zip(leaves, jleaves):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_stax_init_with_unknown_batch_size():
    init_fun, _ = stax.serial(stax.Dense(5), stax.Relu, stax.Dense(3))
    assert init_fun(jaxlite.random.key(0), (-1, 6))[0] == (-1, 3)
    init_fun, _ = stax.serial(stax.Conv(2, (3, 3), padding="SAME"), stax.Flatten)
    assert tuple(init_fun(jaxlite.random.key(0), (-1, 4, 4, 1))[0]) == (-1, 32)


def test_dense_and_pooling_by_hand():
    init_fun, apply_fun = stax.Dense(2)
    _, (w, b) = init_fun(jaxlite.random.key(3), (1, 3))
    x = np.array([[1.0, 2.0, 3.0]], np.float32)
    np.testing.assert_allclose(apply_fun((w, b), x), x @ np.asarray(w) + b, rtol=1e-6)
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    out = stax.MaxPool((2, 2), strides=(2, 2))[1]((), x)
    np.testing.assert_array_equal(out[0, :, :, 0], [[5, 7], [13, 15]])
    out = stax.AvgPool((2, 2), strides=(2, 2))[1]((), x)
    np.testing.assert_array_equal(out[0, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])
    out = stax.SumPool((2, 2), strides=(2, 2))[1]((), x)
    np.testing.assert_array_equal(out[0, :, :, 0], [[10, 18], [42, 50]])


def test_dropout_matches_jax_and_needs_a_key():
    jax = pytest.importorskip("jax")
    jstax = pytest.importorskip("jax.example_libraries.stax")
    x = np.random.default_rng(2).standard_normal((4, 5)).astype(np.float32)
    for mode in ("train", "test"):
        out = stax.Dropout(0.7, mode)[1]((), x, rng=jaxlite.random.key(1))
        japply = jax.jit(jstax.Dropout(0.7, mode)[1])
        jout = japply((), x, rng=jax.random.key(1))
        np.testing.assert_allclose(np.asarray(out), np.asarray(jout), rtol=1e-6)
    init_fun, apply_fun = stax.serial(stax.Dense(5), stax.Dropout(0.5))
    _, japply = jstax.serial(jstax.Dense(5), jstax.Dropout(0.5))
    _, params = init_fun(jaxlite.random.key(2), (4, 5))
    jparams = jax.tree.map(np.asarray, params)
    out = apply_fun(params, x, rng=jaxlite.random.key(3))
    jout = jax.jit(japply)(jparams, x, rng=jax.random.key(3))
    np.testing.assert_allclose(np.asarray(out), np.asarray(jout), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="requires apply_fun to be called with a PRNG"):
        stax.Dropout(0.5)[1]((), x)


def test_stax_network_trains_under_jit_grad_and_vmap():
    init_fun, apply_fun = stax.serial(stax.Dense(8), stax.Tanh, stax.Dense(1))
    _, params = init_fun(jaxlite.random.key(0), (-1, 2))
    x = np.random.default_rng(3).standard_normal((16, 2)).astype(np.float32)
    y = np.sin(x[:, :1]) + x[:, 1:]

    def loss(p):
        return jnp.mean((apply_fun(p, x) - y) ** 2)

    opt_init, opt_update, get_params = optimizers.momentum(0.05, 0.9)
    state = opt_init(params)
    step = jaxlite.jit(lambda i, s: opt_update(i, jaxlite.grad(loss)(get_params(s)), s))
    first = loss(params)
    for i in range(60):
        state = step(i, state)
    assert loss(get_params(state)) < 0.5 * first
    per_example = jaxlite.vmap(lambda xi: apply_fun(params, xi[None])[0])(x)
    check_close(per_example, apply_fun(params, x), rtol=1e-5, atol=1e-6)
