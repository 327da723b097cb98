"""`jit` over arrays split across processes (issue 18), run under MPI.

tests/distributed_jit_program.py runs under `mpiexec -n 2`, `-n 4` (oversubscribed)
and `-n 2` with two devices per process: the data-parallel pattern with the batch a
GlobalArray and the parameters replicated, the cross-process work in a shard_map
inside the jitted function (`jit(value_and_grad(f))`, `grad(jit(f))`, `grad(f)`, a
jitted training step), `jit(shard_map(...))` whose results stay split (GlobalArrays),
an elementwise operation on one, `jit` with NamedSharding in_shardings and
out_shardings, `grad` of a pmap with a replicated (`in_axes=None`) argument and of a
custom_vjp whose bwd uses a collective. Every process's results must equal the
program's in one process (named vmaps of the axis's size, full-batch gradients),
computed with jaxlite and, where it is installed, with JAX. The program also checks
that what needs an automatic partitioner raises NotImplementedError suggesting
shard_map. In this process: jit over one process's "global" arrays is unchanged.
"""

import functools
import os
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.sharding import PartitionSpec as P
from mpi_util import needs_mpi
from test_distributed import _run

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "distributed_jit_program.py")
sys.path.insert(0, HERE)
import distributed_jit_program as program  # noqa: E402


@functools.cache
def _reference(n):
    return program.reference(n)


# (processes, devices per process, backend)
SETUPS = [(2, 1, "native"), (4, 1, "numpy"), (2, 2, "auto")]


@needs_mpi
@pytest.mark.parametrize("processes,devices,backend", SETUPS)
def test_jit_over_global_arrays_matches_single_process(
    tmp_path, processes, devices, backend
):
    env = {"JAXLITE_BACKEND": backend, "JAX_NUM_CPU_DEVICES": str(devices)}
    done = _run(processes, [PROGRAM, str(tmp_path)], env=env, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    want = _reference(processes * devices)
    for rank in range(processes):
        got = dict(np.load(tmp_path / f"rank{rank}.npz"))
        assert set(got) == set(want)
        for name, value in want.items():
            assert got[name].shape == value.shape, name
            np.testing.assert_allclose(
                got[name], value, rtol=1e-4, atol=1e-5, err_msg=f"{name}, {rank}"
            )


@pytest.mark.parametrize("n", [2, 4])
def test_single_process_reference_matches_jax(n):
    real = pytest.importorskip("jax")
    import jax.numpy as real_jnp
    from jax import lax as real_lax

    want = program.reference(n, modules=(real, real_jnp, real_lax))
    got = _reference(n)
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-5,
                                   err_msg=name)  # fmt: skip


# --------------------------------------------------------------------------------------
# In this process, without MPI: nothing spans processes, so nothing changes


def test_jit_with_shardings_in_one_process_matches_jax():
    real = pytest.importorskip("jax")
    x = program.data(1)
    real_mesh = real.sharding.Mesh(np.array(real.devices()[:1]), ("x",))
    want = real.jit(
        real.shard_map(
            lambda v: real.numpy.tanh(v) * 2.0,
            mesh=real_mesh,
            in_specs=real.P("x"),
            out_specs=real.P("x"),
        ),
        in_shardings=real.NamedSharding(real_mesh, real.P("x")),
    )(x)
    mesh = jax.make_mesh((1,), ("x",))
    sharding = jax.NamedSharding(mesh, P("x"))
    f = jax.jit(
        jax.shard_map(lambda v: jnp.tanh(v) * 2.0, mesh=mesh, in_specs=P("x"),
                      out_specs=P("x")),
        in_shardings=sharding,
        out_shardings=sharding,
    )  # fmt: skip
    got = f(x)
    assert type(got) is jax.Array
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert f.lower(x).as_text()  # still a jit function


def test_grad_of_pmap_with_a_replicated_argument_in_one_process_matches_jax():
    real = pytest.importorskip("jax")
    x = program.data(1).reshape(1, program.ROWS, 3)

    def loss(jax, jnp, lax):
        body = program.programs(jax, jnp, lax).pmap_body
        return lambda w: jnp.sum(jax.pmap(body, axis_name="i", in_axes=(None, 0))(w, x))

    want = real.grad(loss(real, real.numpy, real.lax))(program.W)
    got = jax.grad(loss(jax, jnp, lax))(program.W)
    np.testing.assert_allclose(got, want, rtol=1e-5)
