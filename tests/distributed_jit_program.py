"""The programs tests/test_distributed_jit.py runs in several processes: `jit` over
arrays split across processes, and its single-process references.

`python distributed_jit_program.py OUT` under `mpiexec -n N` joins the processes,
builds the batch as a GlobalArray from each process's rows
(`jax.make_array_from_process_local_data`), runs the data-parallel pattern under
`jit` (the cross-process work in a `shard_map` inside the jitted function, the
parameters replicated), `jax.jit(shard_map(...))` with results split across
processes, `grad` of `pmap` with a replicated argument and of a `custom_vjp` whose
bwd uses a collective, gathers every result whole and writes it to
`OUT/rank<i>.npz`. `reference(n)` computes the same values in one process (named
vmaps of the axis's size; full-batch gradients). `expected_errors(...)` checks what
must raise.
"""

import os
import sys
import types

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import PartitionSpec as P

ROWS = 4
W = np.array([0.5, -0.2, 0.3], np.float32)


def data(n):
    x = np.arange(n * ROWS * 3, dtype=np.float32).reshape(n * ROWS, 3) / 10
    return np.sin(x) + x


def init_params():
    rng = np.random.default_rng(0)
    return {
        "w1": rng.normal(size=(3, 8)).astype(np.float32) * 0.5,
        "b1": np.zeros(8, np.float32),
        "w2": rng.normal(size=(8, 1)).astype(np.float32) * 0.5,
    }


def programs(jax, jnp, lax):
    """The per-shard functions, written against `jax` (jaxlite, or JAX for the
    reference), as a namespace."""

    def mse(params, x):
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        target = jnp.sum(x, axis=1, keepdims=True)
        return jnp.mean((h @ params["w2"] - target) ** 2)

    def split_body(x):
        """Results that stay split: each shard scaled by its index; and a psum."""
        i = lax.axis_index("x").astype(jnp.float32)
        return jnp.tanh(x) * (i + 1.0), lax.psum(jnp.sum(x, 0), "x")

    @jax.custom_vjp
    def scaled_tanh(v):
        return jnp.tanh(v)

    def scaled_tanh_fwd(v):
        return jnp.tanh(v), v

    def scaled_tanh_bwd(v, ct):  # a collective in the bwd rule
        return (lax.psum(ct * (1 - jnp.tanh(v) ** 2), "x"),)

    scaled_tanh.defvjp(scaled_tanh_fwd, scaled_tanh_bwd)

    def custom_body(w, x):
        return lax.psum(jnp.sum(scaled_tanh(x * w)), "x")

    def pmap_body(w, x):
        return jnp.sum(jnp.tanh(x * w)) - lax.pmean(jnp.sum(x * w), "i")

    def grid_body(w, g):
        """On a 2-D mesh ("a", "b"), `g` split over both axes."""
        y = jnp.tanh(g * w)
        return lax.psum(jnp.sum(y * lax.pmean(y, "b")), ("a", "b"))

    def grid_split(g):
        return g * (lax.axis_index("b") + 1.0) + lax.psum(g, "a")

    return types.SimpleNamespace(
        mse=mse, split_body=split_body, custom_body=custom_body, pmap_body=pmap_body,
        grid_body=grid_body, grid_split=grid_split,
    )  # fmt: skip


GRID = np.arange(8 * 6, dtype=np.float32).reshape(8, 6) / 10
GRID_W = np.array([0.3, -0.5, 0.8], np.float32)


def grid_blocks(jnp, g):
    """The (a, b) members' (4, 3) blocks of an (8, 6) array split as P("a", "b")."""
    return jnp.transpose(jnp.reshape(g, (2, 4, 2, 3)), (0, 2, 1, 3))


def grid_whole(jnp, blocks):
    return jnp.reshape(jnp.transpose(blocks, (0, 2, 1, 3)), (8, 6))


PROG = programs(jax, jnp, lax)


def make_loss(mesh):
    """The README's data-parallel loss: the batch split over "x", params replicated."""

    def loss(params, x):
        per_shard = jax.shard_map(
            lambda p, x: lax.pmean(PROG.mse(p, x), "x"),
            mesh=mesh,
            in_specs=(P(), P("x")),
            out_specs=P(),
        )
        return per_shard(params, x)

    return loss


# --------------------------------------------------------------------------------------
# The single-process references


def reference(n, steps=3, modules=(jax, jnp, lax)):
    """The results in one process, computed with `modules` (jaxlite's or JAX's
    jax, jax.numpy, lax): named vmaps of the axis's size, full-batch gradients."""
    jax, jnp, lax = modules
    prog = programs(jax, jnp, lax)

    def per_member(f, in_axes, axis_name="x"):
        return jax.vmap(f, in_axes=in_axes, axis_name=axis_name, axis_size=n)

    x = data(n)
    out = {}
    value, grads = jax.value_and_grad(prog.mse)(init_params(), x)
    out["vg/value"] = value
    for k, v in grads.items():
        out[f"vg/{k}"] = v
        out[f"grad_jit/{k}"] = v
        out[f"grad_eager/{k}"] = v
    params = init_params()
    for i in range(steps):
        loss_value, grads = jax.value_and_grad(prog.mse)(params, x)
        params = jax.tree.map(lambda p, g: p - 0.1 * g, params, grads)
        out[f"train/loss{i}"] = loss_value
    out.update({f"train/{k}": v for k, v in params.items()})
    xs = x.reshape(n, ROWS, 3)
    scaled, total = per_member(prog.split_body, 0)(xs)
    out["split/scaled"] = np.asarray(scaled).reshape(n * ROWS, 3)
    out["split/total"] = total[0]
    out["split/scaled_whole_in"] = out["split/scaled"]
    out["elementwise"] = out["split/scaled"] * 2.0 + 1.0
    out["shardings/scaled"] = out["split/scaled"]

    def custom_loss(w):
        return per_member(prog.custom_body, (None, 0))(w, xs)[0]

    out["custom_vjp/grad"] = jax.grad(custom_loss)(W)

    def pmap_loss(w):
        return jnp.sum(per_member(prog.pmap_body, (None, 0), "i")(w, xs))

    out["pmap/grad"] = jax.grad(pmap_loss)(W)
    out["pmap/grad_out_none"] = jax.grad(lambda w: jnp.sum(jnp.tanh(xs * w)))(W)
    out["vg/x"] = jax.grad(prog.mse, argnums=1)(init_params(), x)
    ones = jax.tree.map(jnp.ones_like, init_params())
    value, tangent = jax.jvp(lambda p: prog.mse(p, x), (init_params(),), (ones,))
    out.update({"jvp/value": value, "jvp/tangent": tangent, "linearize": tangent})
    if n == 4:

        def members(f, in_axes):
            inner = jax.vmap(f, in_axes=in_axes, axis_name="b")
            return jax.vmap(inner, in_axes=in_axes, axis_name="a")

        def grid_loss(w, g):
            return members(prog.grid_body, (None, 0))(w, grid_blocks(jnp, g))[0, 0]

        value, (gw, gg) = jax.value_and_grad(grid_loss, argnums=(0, 1))(GRID_W, GRID)
        out.update({"grid/value": value, "grid/w": gw, "grid/g": gg})
        split = members(prog.grid_split, 0)(grid_blocks(jnp, GRID))
        out["grid/split"] = grid_whole(jnp, split)
    return {k: np.asarray(v) for k, v in out.items()}


# --------------------------------------------------------------------------------------
# The multi-process program


def run(steps=3):
    from jaxlite.experimental import multihost_utils as mu

    n = jax.device_count()
    mesh = jax.make_mesh((n,), ("x",))
    sharding = jax.NamedSharding(mesh, P("x"))
    x = data(n)
    rows = len(x) // jax.process_count()
    me = jax.process_index()
    batch = jax.make_array_from_process_local_data(sharding, x[me * rows:(me + 1) * rows])  # fmt: skip
    out = {}

    def whole(v):
        if v.is_fully_addressable:
            return np.asarray(v)
        return np.asarray(mu.process_allgather(v, tiled=True))

    loss = make_loss(mesh)
    value, grads = jax.jit(jax.value_and_grad(loss))(init_params(), batch)
    out["vg/value"] = value
    out.update({f"vg/{k}": v for k, v in grads.items()})
    grads = jax.grad(jax.jit(loss))(init_params(), batch)  # grad outside jit
    out.update({f"grad_jit/{k}": v for k, v in grads.items()})
    grads = jax.grad(loss)(init_params(), batch)  # no jit at all
    out.update({f"grad_eager/{k}": v for k, v in grads.items()})

    @jax.jit
    def train_step(params, x):
        value, grads = jax.value_and_grad(loss)(params, x)
        return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value

    params = init_params()
    for i in range(steps):
        params, out[f"train/loss{i}"] = train_step(params, batch)
    out.update({f"train/{k}": v for k, v in params.items()})

    split = jax.jit(jax.shard_map(PROG.split_body, mesh=mesh, in_specs=P("x"),
                                  out_specs=(P("x"), P())))  # fmt: skip
    scaled, total = split(batch)
    assert not scaled.is_fully_addressable and scaled.shape == x.shape
    assert scaled.sharding == sharding
    out["split/scaled"] = whole(scaled)
    out["split/total"] = total
    out["split/scaled_whole_in"] = whole(split(x)[0])  # a whole (replicated) input
    out["elementwise"] = whole(jax.jit(lambda v: v * 2.0 + 1.0)(scaled))

    laid_out = jax.jit(
        lambda v: jax.shard_map(lambda s: PROG.split_body(s)[0], mesh=mesh,
                                in_specs=P("x"), out_specs=P("x"))(v),
        in_shardings=sharding,
        out_shardings=sharding,
    )  # fmt: skip
    result = laid_out(x)  # the whole batch: each process keeps its block
    assert result.sharding == sharding
    out["shardings/scaled"] = whole(result)

    custom = jax.shard_map(PROG.custom_body, mesh=mesh, in_specs=(P(), P("x")),
                           out_specs=P())  # fmt: skip
    out["custom_vjp/grad"] = jax.grad(custom)(W, x)
    np.testing.assert_allclose(jax.jit(jax.grad(custom))(W, x),
                               out["custom_vjp/grad"], rtol=1e-5)  # fmt: skip

    local = x.reshape(n, ROWS, 3)[np.array([d.id for d in jax.local_devices()])]

    def pmap_loss(w):
        per = jax.pmap(PROG.pmap_body, axis_name="i", in_axes=(None, 0))(w, local)
        return jnp.sum(per)

    out["pmap/grad"] = jax.grad(pmap_loss)(W)

    def pmap_replicated_loss(w):  # out_axes=None: the same in every process
        per = lambda w, x: lax.psum(jnp.sum(jnp.tanh(x * w)), "i")  # noqa: E731
        return jax.pmap(per, axis_name="i", in_axes=(None, 0), out_axes=None)(w, local)

    out["pmap/grad_out_none"] = jax.grad(pmap_replicated_loss)(W)
    # Forward mode of the jitted loss, the batch closed over.
    ones = jax.tree.map(jnp.ones_like, init_params())
    jitted = jax.jit(loss)
    value, tangent = jax.jvp(lambda p: jitted(p, batch), (init_params(),), (ones,))
    out.update({"jvp/value": value, "jvp/tangent": tangent})
    out["linearize"] = jax.linearize(lambda p: jitted(p, batch), init_params())[1](ones)
    # The gradient with respect to the split batch: split the same way.
    gx = jax.jit(jax.grad(loss, argnums=1))(init_params(), batch)
    assert gx.sharding == sharding
    out["vg/x"] = whole(gx)
    if n == 4:  # a 2-D mesh: one axis within processes when each has two devices
        grid = jax.make_mesh((2, 2), ("a", "b"))
        grid_sharding = jax.NamedSharding(grid, P("a", "b"))
        g = jax.make_array_from_callback(GRID.shape, grid_sharding,
                                         lambda i: GRID[i])  # fmt: skip
        grid_loss = jax.shard_map(PROG.grid_body, mesh=grid,
                                  in_specs=(P(), P("a", "b")), out_specs=P())  # fmt: skip
        value, (gw, gg) = jax.jit(jax.value_and_grad(grid_loss, argnums=(0, 1)))(
            GRID_W, g
        )
        out.update({"grid/value": value, "grid/w": gw, "grid/g": whole(gg)})
        split = jax.jit(jax.shard_map(PROG.grid_split, mesh=grid, in_specs=P("a", "b"),
                                      out_specs=P("a", "b")))  # fmt: skip
        out["grid/split"] = whole(split(g))
    expected_errors(batch, mesh)
    mu.sync_global_devices("done")
    return {k: np.asarray(v) for k, v in out.items()}


def _raises(f, cls, phrase):
    try:
        f()
    except cls as e:
        assert phrase in str(e), e
    else:
        raise AssertionError(f"{f} did not raise {cls.__name__}")


def expected_errors(batch, mesh):
    """What needs an automatic partitioner says so, and suggests shard_map."""
    _raises(lambda: jax.jit(jnp.sum)(batch), NotImplementedError,
            "needs an automatic partitioner")  # fmt: skip
    _raises(lambda: jax.jit(lambda v: jnp.reshape(v, (-1,)))(batch),
            NotImplementedError, "jax.shard_map")  # fmt: skip
    body = jax.shard_map(lambda v: lax.psum(v, "x"), mesh=mesh, in_specs=P("x"),
                         out_specs=P())  # fmt: skip
    _raises(lambda: jax.jit(lambda v: body(v * 2.0))(batch), NotImplementedError,
            "Move that computation into the shard_map")  # fmt: skip
    split = jax.shard_map(jnp.sin, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    x = np.ones(batch.shape, np.float32)
    for f in (split, jax.jit(split)):  # eager jvp: split results only under jit
        _raises(lambda f=f: jax.jvp(f, (x,), (x,)), NotImplementedError,
                "Put the transformation inside jit")  # fmt: skip
    tangent = jax.jit(lambda x: jax.jvp(split, (x,), (x,))[1])(x)
    assert tangent.sharding == batch.sharding
    other = jax.NamedSharding(mesh, P(None, "x"))
    _raises(lambda: jax.jit(lambda v: v, in_shardings=other)(batch),
            NotImplementedError, "does not move data between processes")  # fmt: skip


if __name__ == "__main__":
    jax.distributed.initialize()
    results = run()
    np.savez(os.path.join(sys.argv[1], f"rank{jax.process_index()}.npz"), **results)
    jax.distributed.shutdown()
