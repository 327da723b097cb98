"""The program tests/test_distributed_runtime.py runs in several processes, and its
single-process reference.

`python distributed_runtime_program.py OUT` under `mpiexec -n N` joins the processes
and runs: loops (`fori_loop`, `scan`) whose bodies hold collectives across processes
(psum, pmax, ppermute), jitted in a `shard_map` (natively under
`JAXLITE_BACKEND=native`); host callbacks placed by `sharding` and inside the
`shard_map`; and `debug.print` with the process index. Each process writes its
results to `OUT/rank<i>.npz`.
"""

import sys

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import PartitionSpec as P
from jaxlite.sharding import SingleDeviceSharding

ROWS = 2  # rows of each device's shard


def data(n):
    return np.arange(n * ROWS * 3, dtype=np.float32).reshape(n * ROWS, 3) / 7


def loop_body(x):
    """A fori_loop with collectives across the axis in its body."""

    def step(i, c):
        return jnp.sin(c) + 0.01 * lax.psum(c, "x") + 0.001 * lax.pmax(c, "x")

    y = lax.fori_loop(0, 20, step, x)
    return lax.all_gather(y, "x", tiled=True), lax.psum(jnp.sum(y), "x")


def scan_body(x):
    """A scan passing its carry around the ring, with a psum of each step."""
    n = lax.axis_size("x")

    def step(c, _):
        c = 0.5 * lax.ppermute(c, "x", [(i, (i + 1) % n) for i in range(n)]) + c
        return jnp.cos(c), lax.psum(jnp.sum(c), "x")

    c, ys = lax.scan(step, x, None, length=5)
    return lax.all_gather(c, "x", tiled=True), ys


BODIES = {"loop": loop_body, "scan": scan_body}


def reference(n):
    """The loops' results in one process: each body under a named vmap."""
    x = data(n).reshape(n, ROWS, 3)
    out = {}
    for name, body in BODIES.items():
        a, b = jax.vmap(body, axis_name="x")(x)
        out[f"{name}/gathered"] = np.asarray(a[0])
        out[f"{name}/summed"] = np.asarray(b[0])
    return out


def run():
    n = jax.device_count()
    me = jax.process_index()
    mesh = jax.make_mesh((n,), ("x",))
    x = data(n)
    out = {}
    for name, body in BODIES.items():
        f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"),
                                  out_specs=(P(), P())))  # fmt: skip
        a, b = f(x)
        out[f"{name}/gathered"] = np.asarray(a)
        out[f"{name}/summed"] = np.asarray(b)

    # pure_callback(sharding=...): on the process owning the device, broadcast.
    calls = []

    def cb(v):
        calls.append(me)
        return np.asarray(v) * 10 + me

    last = jax.devices()[-1]
    spec = jax.ShapeDtypeStruct((3,), np.float32)

    def placed(v):
        return jax.pure_callback(cb, spec, v, sharding=SingleDeviceSharding(last))

    v = jnp.arange(3.0, dtype=jnp.float32)
    out["cb/eager"] = np.asarray(placed(v))
    out["cb/jit"] = np.asarray(jax.jit(placed)(v))
    out["cb/loop"] = np.asarray(
        jax.jit(lambda v: lax.fori_loop(0, 3, lambda i, c: placed(c) / 10, v))(v)
    )
    out["cb/calls"] = np.array(len(calls))

    # A callback inside the shard_map: on each process, with its own shards.
    seen = []

    def record(s):
        seen.append(np.array(s))
        return np.asarray(s) + 100 * me

    def per_shard(s):
        shape = jax.ShapeDtypeStruct(s.shape, s.dtype)
        r = jax.pure_callback(record, shape, s, vmap_method="sequential")
        return lax.all_gather(r, "x", tiled=True)

    sm = jax.jit(jax.shard_map(per_shard, mesh=mesh, in_specs=P("x"),
                               out_specs=P()))  # fmt: skip
    out["cb/shard_map"] = np.asarray(sm(x))
    out["cb/seen"] = np.stack(seen)

    # debug.print inside the shard_map, with the process index passed in.
    def printed(s):
        jax.debug.print("process {p} device {i}: {t}", p=jax.process_index(),
                        i=lax.axis_index("x"), t=jnp.sum(s))  # fmt: skip
        return lax.psum(s, "x")

    jax.jit(jax.shard_map(printed, mesh=mesh, in_specs=P("x"), out_specs=P()))(x)
    jax.effects_barrier()
    # ... and eagerly, of an array split across processes: whole on the process of
    # the first device, or each device's shard on its process (partitioned).
    local = np.full((jax.local_device_count(),), me, np.float32)
    split = jax.make_array_from_process_local_data(jax.NamedSharding(mesh, P("x")),
                                                   local)  # fmt: skip
    jax.debug.print("whole: {g}", g=split)
    jax.debug.print("shard on {p}: {g}", p=me, g=split, partitioned=True)
    sys.stdout.flush()
    return out


if __name__ == "__main__":
    import logging

    logging.basicConfig()
    jax.config.update("jaxlite_native_log", True)
    jax.distributed.initialize()
    results = run()
    np.savez(f"{sys.argv[1]}/rank{jax.process_index()}.npz", **results)
