"""The program tests/test_distributed_eager.py runs in several processes: eager
operations on arrays split across processes (GlobalArrays), outside `jit`.

`python distributed_eager_program.py OUT` under `mpiexec -n N` joins the processes,
builds arrays split over the processes (`jax.make_array_from_process_local_data`),
applies operators, methods, jax.numpy and lax functions to them eagerly (each runs
as the jit of the operation: elementwise ones blockwise, giving GlobalArrays),
gathers every result whole and writes it to `OUT/rank<i>.npz`. `reference(n)`
computes the same values in one process on the whole arrays. `expected_errors`
checks that what needs an automatic partitioner raises jit's error, and what reads
values raises JAX's.
"""

import os
import sys

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import PartitionSpec as P

ROWS = 4
W = np.array([0.5, -0.2, 0.3], np.float32)


def data(n):
    x = np.arange(n * ROWS * 3, dtype=np.float32).reshape(n * ROWS, 3) / 10
    return np.sin(x) + x - 1.0


def programs(x, y, jnp, lax):
    """The eager operations, on `x` and `y` (split across processes, or whole)."""
    k = (x * 10).astype(jnp.int32)
    return {
        "int_bits": ((k & 3) | (k << 1)) ^ (k >> 1),
        "invert": ~k,
        "floordiv_mod": k // 3 + k % 3,
        "logical": jnp.logical_and(x > 0.5, ~(y > 0.5)),
        "stop_gradient": lax.stop_gradient(x) * 2,
        "view": x.view(jnp.int32),
        "complex_abs": jnp.abs(lax.complex(x, y)),
        "add": x + 1,
        "radd": 1.5 + x,
        "sub": x - y,
        "mul": x * 2.0,
        "rmul_numpy": np.float32(3.0) * x,
        "truediv": x / (y + 10.0),
        "pow": x**2,
        "neg": -x,
        "abs": abs(x),
        "gt": x > 0.5,
        "eq": x == y,
        "where": jnp.where(x > 0.5, x, 0.0),
        "sin": jnp.sin(x),
        "tanh_exp": jnp.tanh(jnp.exp(x) - 1),
        "maximum": jnp.maximum(x, y),
        "astype": x.astype(jnp.int32),
        "astype_f16": (x * 4).astype(jnp.float16),
        "lax_add": lax.add(x, y),
        "lax_mul_replicated": lax.mul(x, jnp.asarray(data_whole(x))),
        "broadcast_vector": x * W,  # W broadcast to x's shape, cut to the block
        "round": jnp.round(x * 10),
        "chain": ((x - y) * 2 + 1) ** 2 / 4,
    }


def data_whole(x):
    """A whole (replicated) array of `x`'s shape."""
    return np.full(x.shape, 0.25, np.float32) + np.arange(x.shape[1], dtype=np.float32)


def reference(n, modules=(jnp, lax)):
    """The results in one process on the whole arrays, with `modules` (jaxlite's or
    JAX's jax.numpy and lax)."""
    jnp, lax = modules
    x = jnp.asarray(data(n))
    y = jnp.asarray(data(n)[::-1].copy())
    return {k: np.asarray(v) for k, v in programs(x, y, jnp, lax).items()}


# --------------------------------------------------------------------------------------
# The multi-process program


def run():
    from jaxlite.distributed.global_array import GlobalArray
    from jaxlite.experimental import multihost_utils as mu

    n = jax.device_count()
    mesh = jax.make_mesh((n,), ("x",))
    sharding = jax.NamedSharding(mesh, P("x"))
    rows = n * ROWS // jax.process_count()
    me = jax.process_index()

    def split(whole):
        return jax.make_array_from_process_local_data(
            sharding, whole[me * rows : (me + 1) * rows]
        )

    x, y = split(data(n)), split(data(n)[::-1].copy())
    results = programs(x, y, jnp, lax)
    for name, v in results.items():
        assert type(v) is GlobalArray, (name, type(v))
        assert v.sharding == sharding and v.shape == x.shape, name
    out = {
        k: np.asarray(mu.process_allgather(v, tiled=True)) for k, v in results.items()
    }
    # The same as under jit, and with jit disabled (each primitive still compiled).
    jitted = jax.jit(lambda a, b: ((a - b) * 2 + 1) ** 2 / 4)(x, y)
    np.testing.assert_array_equal(
        mu.process_allgather(jitted, tiled=True), out["chain"]
    )
    with jax.disable_jit():
        slow = jax.jit(lambda a: jnp.sin(a) * 2.0)(x)
    assert type(slow) is GlobalArray
    np.testing.assert_allclose(
        mu.process_allgather(slow, tiled=True), out["sin"] * 2.0, rtol=1e-6
    )
    # An eager result closed over by a jit; an eager jvp (each primitive a jit).
    doubled = x * 2
    closed = jax.jit(lambda a: a + doubled)(y)
    want = out["mul"] + data(n)[::-1]
    np.testing.assert_allclose(
        mu.process_allgather(closed, tiled=True), want, rtol=1e-6
    )
    tangent = jax.jvp(lambda a: jnp.sin(a) * 2, (x,), (y,))[1]
    assert type(tangent) is GlobalArray
    want = 2 * np.cos(data(n)) * data(n)[::-1]
    got = mu.process_allgather(tangent, tiled=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Printed as JAX prints an array that is not fully addressable: no values.
    assert repr(x) == str(x) == f"{x}" == f"Array(shape={x.shape}, dtype=float32)"
    half = jnp.asarray(x, jnp.float16) + 0.5
    assert repr(half) == f"Array(shape={x.shape}, dtype=float16)", repr(half)
    expected_errors(x)
    mu.sync_global_devices("done")
    return out


def _raises(f, cls, phrase):
    try:
        f()
    except cls as e:
        assert phrase in str(e), e
    else:
        raise AssertionError(f"{f} did not raise {cls.__name__}")


def expected_errors(x):
    """What needs an automatic partitioner raises jit's error suggesting shard_map;
    reading values raises JAX's error."""
    partitioner = [
        lambda: jnp.sum(x),  # an eager_jit function
        lambda: x.sum(),
        lambda: jnp.mean(x, axis=0),
        lambda: lax.reduce_sum(x, (0,)),  # a primitive
        lambda: x[0],
        lambda: x[1:3],
        lambda: x.T,
        lambda: x.reshape(-1),
        lambda: x @ W,
        lambda: jnp.cumsum(x, axis=0),
        lambda: x.at[0].set(1.0),
        lambda: jnp.array([x, x]),
        lambda: x.view(jnp.float16),  # the last axis doubles
    ]
    for f in partitioner:
        _raises(f, NotImplementedError, "needs an automatic partitioner")
        _raises(f, NotImplementedError, "jax.shard_map")
    for f in (lambda: np.asarray(x), lambda: float(x), x.item, x.tolist):
        _raises(f, RuntimeError, "spans non-addressable")
    _raises(lambda: {x: 1}, TypeError, "unhashable")
    with jax.debug_nans(True):  # each process checks its block
        assert type(jnp.sin(x) * 2) is type(x)
        _raises(lambda: jnp.log(x - 100.0), FloatingPointError, "invalid value (nan)")


if __name__ == "__main__":
    jax.distributed.initialize()
    results = run()
    np.savez(os.path.join(sys.argv[1], f"rank{jax.process_index()}.npz"), **results)
    jax.distributed.shutdown()
