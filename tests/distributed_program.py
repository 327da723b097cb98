"""The SPMD programs tests/test_distributed.py runs in several processes, and their
single-process references.

`python distributed_program.py OUT` under `mpiexec -n N` joins the processes
(`jax.distributed.initialize()`), runs each program with `shard_map`/`pmap` over a
mesh of every process's devices, gathers the results whole, and writes them from
each process to `OUT/rank<i>.npz`. `reference(n)` computes the same values in one
process: each per-device function under a named `vmap` of the axis's size (what
jaxlite's collectives mean), the training steps as full-batch gradient descent.
"""

import os
import sys

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import PartitionSpec as P

ROWS = 4  # rows of each device's shard


def data(n):
    x = np.arange(n * ROWS * 3, dtype=np.float32).reshape(n * ROWS, 3) / 10
    return np.sin(x) + x


def collectives(x):
    """Every collective over the 1-D axis "x", on a (ROWS, 3) shard."""
    n = lax.axis_size("x")
    return {
        "psum": lax.psum(x, "x"),
        "pmean": lax.pmean(x, "x"),
        "pmax": lax.pmax(x, "x"),
        "pmin": lax.pmin(x, "x"),
        "all_gather": lax.all_gather(x, "x"),
        "all_gather_tiled": lax.all_gather(x, "x", axis=1, tiled=True),
        "ppermute": lax.ppermute(x, "x", [(i, (i + 1) % n) for i in range(n)]),
        "ppermute_partial": lax.ppermute(x, "x", [(0, n - 1)]),
        "axis_index": lax.axis_index("x")[None] * jnp.ones((1,), jnp.int32),
        "psum_scatter": lax.psum_scatter(x, "x", scatter_dimension=0, tiled=True),
        "all_to_all": lax.all_to_all(x, "x", 0, 0, tiled=True),
        "psum_const": lax.psum(2.0, "x") * jnp.ones(()),
    }


COLLECTIVE_SPECS = {
    "psum": P(), "pmean": P(), "pmax": P(), "pmin": P(), "all_gather": P(),
    "all_gather_tiled": P(), "ppermute": P("x"), "ppermute_partial": P("x"),
    "axis_index": P("x"), "psum_scatter": P("x"), "all_to_all": P("x"),
    "psum_const": P(),
}  # fmt: skip


def mixed_loss(w, x):
    """A per-device loss using psum, all_gather and ppermute (for grad)."""
    n = lax.axis_size("x")
    y = jnp.tanh(x @ w)
    shifted = lax.ppermute(y, "x", [(i, (i + 1) % n) for i in range(n)])
    column_sums = lax.all_gather(jnp.sum(y, 0), "x")
    centred = y - lax.pmean(jnp.mean(y, 0), "x")
    local = jnp.sum(y * shifted) + jnp.sum(centred**2)
    return lax.psum(local, "x") + jnp.sum(column_sums**2)


W = np.array([[0.5, -0.2], [0.1, 0.3], [-0.4, 0.2]], np.float32)


def init_params():
    rng = np.random.default_rng(0)
    return {
        "w1": rng.normal(size=(3, 8)).astype(np.float32) * 0.5,
        "b1": np.zeros(8, np.float32),
        "w2": rng.normal(size=(8, 1)).astype(np.float32) * 0.5,
    }


def mse(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    target = jnp.sum(x, axis=1, keepdims=True)
    return jnp.mean((h @ params["w2"] - target) ** 2)


def dp_step(params, x):
    """Data parallel: gradients averaged over the batch shards with pmean."""
    loss, grads = jax.value_and_grad(mse)(params, x)
    grads = lax.pmean(grads, "x")
    params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    return params, lax.pmean(loss, "x")


def grid_body(x):
    """On a 2-D mesh ("a", "b"): collectives over one axis, both, and a tuple."""
    return {
        "psum_a": lax.psum(x, "a"),
        "psum_ab": lax.psum(x, ("a", "b")),
        "gather_b": lax.all_gather(x, "b", tiled=True),
        "index": lax.axis_index(("a", "b")) * jnp.ones((1, 1), jnp.int32),
        "shift_a": lax.ppermute(x, "a", [(0, 1), (1, 0)]),
    }


def grid_loss(w, x):
    """A loss on the 2-D mesh, for grad: w replicated, x split over both axes."""
    y = jnp.tanh(x * w)
    return lax.psum(jnp.sum(y * lax.pmean(y, "b")), ("a", "b"))


GRID_W = np.array([0.3, -0.5, 0.8], np.float32)

GRID_SPECS = {
    "psum_a": P(None, "b"), "psum_ab": P(), "gather_b": P("a"),
    "index": P("a", "b"), "shift_a": P("a", "b"),
}  # fmt: skip


# --------------------------------------------------------------------------------------
# The single-process references


def _emulate(f, n, args, in_specs, out_specs):
    """`shard_map(f)` over a 1-D mesh "x" of `n` devices, as a named vmap."""
    axes = []
    split = []
    for a, spec in zip(args, in_specs):
        if spec == P("x"):
            axes.append(0)
            split.append(jnp.reshape(a, (n, -1, *jnp.shape(a)[1:])))
        else:
            axes.append(None)
            split.append(a)
    outs = jax.vmap(f, in_axes=tuple(axes), axis_name="x")(*split)

    def merge(o, spec):
        return jnp.reshape(o, (-1, *o.shape[2:])) if spec == P("x") else o[0]

    return jax.tree.map(merge, outs, out_specs)


def reference(n, steps=3):
    x = data(n)
    out = {}
    for k, v in _emulate(collectives, n, [x], [P("x")], COLLECTIVE_SPECS).items():
        out[f"collectives/{k}"] = v

    def loss(w, x):
        return _emulate(mixed_loss, n, [w, x], [P(), P("x")], P())

    value, (gw, gx) = jax.value_and_grad(loss, argnums=(0, 1))(W, x)
    out.update({"grad/value": value, "grad/w": gw, "grad/x": gx})
    params = init_params()
    for i in range(steps):  # full-batch gradient descent
        loss_value, grads = jax.value_and_grad(mse)(params, x)
        params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
        out[f"dp/loss{i}"] = loss_value
    for k, v in params.items():
        out[f"dp/{k}"] = v
        out[f"dp_grad/{k}"] = v
    out["pmap/psum"] = x.reshape(n, -1, 3).sum(0)
    if n == 4:
        g = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
        blocks = g.reshape(2, 4, 2, 3).transpose(0, 2, 1, 3)
        outs = jax.vmap(jax.vmap(grid_body, axis_name="b"), axis_name="a")(blocks)
        for k, spec in GRID_SPECS.items():
            out[f"grid/{k}"] = _merge_grid(np.asarray(outs[k]), spec)

        def loss(w, g):
            blocks = jnp.transpose(jnp.reshape(g, (2, 4, 2, 3)), (0, 2, 1, 3))
            per_member = jax.vmap(jax.vmap(grid_loss, in_axes=(None, 0), axis_name="b"),
                                  in_axes=(None, 0), axis_name="a")  # fmt: skip
            return per_member(w, blocks)[0, 0]

        gw, gg = jax.grad(loss, argnums=(0, 1))(GRID_W, g)
        out.update({"grid/grad_w": gw, "grid/grad_x": gg})
    return {k: np.asarray(v) for k, v in out.items()}


def _merge_grid(o, spec):
    """Members (a, b, ...) of a 2-D mesh's results as shard_map lays them out."""
    if spec == P():
        return o[0, 0]
    if spec == P("a"):
        o = o[:, 0]
        return o.reshape(-1, *o.shape[2:])
    if spec == P(None, "b"):
        o = o[0].transpose(1, 0, 2)
        return o.reshape(o.shape[0], -1)
    o = o.transpose(0, 2, 1, 3)  # P("a", "b")
    return o.reshape(o.shape[0] * o.shape[1], o.shape[2] * o.shape[3])


# --------------------------------------------------------------------------------------
# The multi-process programs


def run(steps=3):
    from jaxlite.experimental import multihost_utils as mu

    n = jax.device_count()
    mesh = jax.make_mesh((n,), ("x",))
    x = data(n)
    out = {}

    def whole(v):  # a GlobalArray gathered; a replicated result as it is
        if v.is_fully_addressable:
            return np.asarray(v)
        return np.asarray(mu.process_allgather(v, tiled=True))

    sm = jax.shard_map(collectives, mesh=mesh, in_specs=P("x"),
                       out_specs=COLLECTIVE_SPECS)  # fmt: skip
    for k, v in sm(x).items():  # eager: sharded results are GlobalArrays
        out[f"collectives/{k}"] = whole(v)
    jitted = jax.jit(
        jax.shard_map(
            lambda x: collectives(x)["psum"], mesh=mesh, in_specs=P("x"), out_specs=P()
        )  # fmt: skip
    )
    np.testing.assert_allclose(jitted(x), out["collectives/psum"], rtol=1e-6)

    loss = jax.shard_map(mixed_loss, mesh=mesh, in_specs=(P(), P("x")),
                         out_specs=P())  # fmt: skip
    value, (gw, gx) = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))(W, x)
    out.update({"grad/value": value, "grad/w": gw, "grad/x": gx})

    # Data-parallel training: the batch comes in as a global array built from each
    # process's rows; pmean of the gradients inside the step ...
    rows = len(x) // jax.process_count()
    mine = x[jax.process_index() * rows : (jax.process_index() + 1) * rows]
    sharding = jax.NamedSharding(mesh, P("x"))
    batch = jax.make_array_from_process_local_data(sharding, mine)
    assert batch.shape == x.shape
    # (check_vma=False: per-device gradients, averaged by the pmean; with JAX's
    # default check_vma=True they would already be summed over the devices.)
    step = jax.shard_map(jax.jit(dp_step), mesh=mesh, in_specs=(P(), P("x")),
                         out_specs=(P(), P()), check_vma=False)  # fmt: skip
    params = init_params()
    for i in range(steps):
        params, loss_value = step(params, batch)
        out[f"dp/loss{i}"] = loss_value
    out.update({f"dp/{k}": v for k, v in params.items()})
    # ... and grad of a shard_map whose loss is a pmean (replicated parameters get
    # their gradient summed over the processes by the transpose).
    loss_of = jax.shard_map(lambda p, x: lax.pmean(mse(p, x), "x"), mesh=mesh,
                            in_specs=(P(), P("x")), out_specs=P())  # fmt: skip
    grad_step = jax.jit(jax.grad(loss_of))
    params = init_params()
    for _ in range(steps):
        grads = grad_step(params, x)
        params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    out.update({f"dp_grad/{k}": v for k, v in params.items()})

    # pmap across processes: each maps its own devices' rows.
    local = x.reshape(n, -1, 3)[np.array([d.id for d in jax.local_devices()])]
    summed = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(local)
    out["pmap/psum"] = np.asarray(summed)[0]

    if n == 4:
        grid = jax.make_mesh((2, 2), ("a", "b"))
        g = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
        sm = jax.shard_map(grid_body, mesh=grid, in_specs=P("a", "b"),
                           out_specs=GRID_SPECS)  # fmt: skip
        for k, v in sm(g).items():
            out[f"grid/{k}"] = whole(v)
        loss = jax.shard_map(grid_loss, mesh=grid, in_specs=(P(), P("a", "b")),
                             out_specs=P())  # fmt: skip
        gw, gg = jax.jit(jax.grad(loss, argnums=(0, 1)))(GRID_W, g)
        out.update({"grid/grad_w": gw, "grid/grad_x": gg})

    # Global arrays and multihost_utils.
    local_block = mu.global_array_to_host_local_array(batch, mesh, P("x"))
    np.testing.assert_array_equal(local_block, mine)
    again = mu.host_local_array_to_global_array(local_block, mesh, P("x"))
    assert [s.index for s in again.addressable_shards] == [
        s.index for s in batch.addressable_shards
    ]
    np.testing.assert_array_equal(whole(again), x)
    by_callback = jax.make_array_from_callback(x.shape, sharding, lambda i: x[i])
    np.testing.assert_array_equal(whole(by_callback), x)
    shards = [x[s.index] for s in batch.addressable_shards]
    assert len(shards) == jax.local_device_count()
    by_shards = jax.make_array_from_single_device_arrays(x.shape, sharding, shards)
    np.testing.assert_array_equal(whole(by_shards), x)
    _check_errors(batch, mesh)
    out["mu/process_index"] = mu.process_allgather(np.int32(jax.process_index()))
    out["mu/broadcast"] = mu.broadcast_one_to_all(
        np.full(3, jax.process_index() + 1.0, np.float32)
    )
    mu.sync_global_devices("done")
    return {k: np.asarray(v) for k, v in out.items()}


def _check_errors(batch, mesh):
    """What cannot be done with an array split across processes says so."""
    try:
        np.asarray(batch)
    except RuntimeError as e:
        assert "spans non-addressable" in str(e), e
    else:
        raise AssertionError("np.asarray of a GlobalArray did not raise")
    try:
        jax.jit(jnp.sum)(batch)
    except NotImplementedError as e:
        assert "needs an automatic partitioner" in str(e), e
    else:
        raise AssertionError("jit of a sum of a GlobalArray did not raise")
    # jit over GlobalArrays (tests/test_distributed_jit.py): elementwise blockwise,
    # a shard_map's split results as GlobalArrays.
    assert jax.jit(lambda v: v * 2)(batch).sharding == batch.sharding
    split = jax.shard_map(lambda v: v, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    assert jax.jit(split)(np.ones(batch.shape, np.float32)).sharding == batch.sharding


if __name__ == "__main__":
    jax.distributed.initialize()
    results = run()
    np.savez(os.path.join(sys.argv[1], f"rank{jax.process_index()}.npz"), **results)
    jax.distributed.shutdown()
