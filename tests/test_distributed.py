"""jax.distributed over MPI: one program in several processes.

The programs of tests/distributed_program.py (every collective in a shard_map, grad
of a shard_map with psum/all_gather/ppermute, a data-parallel training step two
ways, pmap, a 2-D mesh, global arrays and multihost_utils) run under `mpiexec -n 2`,
`-n 4` (oversubscribed) and `-n 2` with two devices per process, and every
process's results must equal the single-process program's (named vmaps, full-batch
gradient descent). A failing process must end them all, quickly. These need mpi4py
and an mpiexec (`pip install mpi4py mpich`) and are skipped without them.

The rest runs in this process, without MPI: what `initialize` says when it cannot
join processes, a single-process initialize with two devices (a local mesh axis of
size 2), multihost_utils in one process (against JAX's), the launcher's command.
"""

import functools
import os
import sys
import time

import numpy as np
import pytest

import jaxlite as jax
from jaxlite import launch, lax
from jaxlite.experimental import multihost_utils as mu
from jaxlite.sharding import PartitionSpec as P
from mpi_util import needs_mpi, run

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "distributed_program.py")


def _run(n, program, *, env=(), timeout=120, via_launcher=False):
    """Run `program` (a script and its arguments) in `n` processes."""
    how = "launcher" if via_launcher else "mpiexec"
    return run(n, program, env=env, timeout=timeout, how=how)


@functools.cache
def _reference(n):
    sys.path.insert(0, HERE)
    import distributed_program

    return distributed_program.reference(n)


# (processes, devices per process, backend, started by `python -m jaxlite.launch`)
SETUPS = [(2, 1, "native", False), (4, 1, "numpy", True), (2, 2, "auto", False)]


@needs_mpi
@pytest.mark.parametrize("processes,devices,backend,via_launcher", SETUPS)
def test_program_matches_single_process(
    tmp_path, processes, devices, backend, via_launcher
):
    env = {"JAXLITE_BACKEND": backend, "JAX_NUM_CPU_DEVICES": str(devices)}
    done = _run(processes, [PROGRAM, str(tmp_path)], env=env,
                via_launcher=via_launcher)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    want = _reference(processes * devices)
    for rank in range(processes):
        got = dict(np.load(tmp_path / f"rank{rank}.npz"))
        for name, value in want.items():
            assert got[name].shape == value.shape, name
            np.testing.assert_allclose(
                got[name], value, rtol=1e-4, atol=1e-5, err_msg=f"{name}, {rank}"
            )
        np.testing.assert_array_equal(got["mu/process_index"], np.arange(processes))
        np.testing.assert_array_equal(got["mu/broadcast"], np.ones(3, np.float32))


FAILING = """
import sys
import numpy as np
import jaxlite as jax
from jaxlite.experimental import multihost_utils

jax.distributed.initialize()
if jax.process_index() == 1:
    if sys.argv[1] == "raise":
        raise ValueError("boom from process 1")
    sys.exit(3)
multihost_utils.process_allgather(np.ones(3))  # process 0 waits for process 1
print("process 0 was not stopped")
"""


@needs_mpi
@pytest.mark.parametrize("how", ["raise", "exit"])
def test_a_failing_process_ends_every_process(tmp_path, how):
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    start = time.monotonic()
    done = _run(2, [str(script), how], timeout=60)
    assert time.monotonic() - start < 30
    assert done.returncode != 0
    assert "process 0 was not stopped" not in done.stdout
    if how == "raise":
        assert "ValueError: boom from process 1" in done.stderr
        assert "process 1 of 2 failed with the ValueError above" in done.stderr
    else:
        assert "process 1 exited with status 3; ending every process" in done.stderr


# --------------------------------------------------------------------------------------
# In this process, without MPI


def test_mpi4py_is_imported_by_initialize_only():
    mesh = jax.make_mesh((1,), ("x",))
    jax.shard_map(lambda x: lax.psum(x, "x"), mesh=mesh, in_specs=P("x"),
                  out_specs=P())(np.ones(2))  # fmt: skip
    assert "mpi4py" not in sys.modules
    assert not jax.distributed.is_initialized()
    assert jax.process_count() == 1 and jax.process_index() == 0


def test_initialize_without_mpi_says_how_to_launch():
    with pytest.raises(ValueError, match="coordinator_address should be defined"):
        jax.distributed.initialize()
    with pytest.raises(RuntimeError, match="joins processes over MPI only"):
        jax.distributed.initialize("localhost:1234", num_processes=2, process_id=0)
    with pytest.raises(ValueError, match="process_id < num_processes"):
        jax.distributed.initialize("localhost:1234", num_processes=1, process_id=1)
    with pytest.raises(ValueError, match="cluster_detection_method='bogus'"):
        jax.distributed.initialize(cluster_detection_method="bogus")
    assert not jax.distributed.is_initialized()


def test_single_process_initialize_with_two_devices():
    with pytest.warns(UserWarning, match="jaxlite has one CPU device"):
        jax.config.update("jax_num_cpu_devices", 2)
    jax.distributed.initialize("localhost:1234", num_processes=1, process_id=0)
    try:
        with pytest.raises(RuntimeError, match="should only be called once"):
            jax.distributed.initialize("localhost:1234", num_processes=1,
                                       process_id=0)  # fmt: skip
        assert jax.device_count() == 2 and jax.local_device_count() == 2
        assert [d.id for d in jax.local_devices()] == [0, 1]
        mesh = jax.make_mesh((2,), ("x",))
        x = np.arange(12.0, dtype=np.float32).reshape(4, 3)

        def f(v):
            return lax.psum(v, "x"), lax.axis_index("x")[None], lax.all_gather(v, "x")

        out = jax.jit(jax.shard_map(f, mesh=mesh, in_specs=P("x"),
                                    out_specs=(P(), P("x"), P())))(x)  # fmt: skip
        want = jax.vmap(f, axis_name="x")(x.reshape(2, 2, 3))
        np.testing.assert_array_equal(out[0], want[0][0])
        np.testing.assert_array_equal(out[1], [0, 1])
        np.testing.assert_array_equal(out[2], want[2][0])
        grad = jax.grad(lambda x: jax.shard_map(lambda v: lax.psum(jnp_sum(v), "x"),
                                                mesh=mesh, in_specs=P("x"),
                                                out_specs=P())(x))(x)  # fmt: skip
        np.testing.assert_array_equal(grad, np.ones_like(x))
    finally:
        jax.distributed.shutdown()
    assert jax.device_count() == 1 and not jax.distributed.is_initialized()


def jnp_sum(v):
    return jax.numpy.sum(v)


def test_multihost_utils_in_one_process_match_jax():
    real = pytest.importorskip("jax")
    from jax.experimental import multihost_utils as jmu

    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for tiled in (False, True):
        np.testing.assert_array_equal(
            mu.process_allgather(x, tiled=tiled), jmu.process_allgather(x, tiled=tiled)
        )
    np.testing.assert_array_equal(
        mu.broadcast_one_to_all(x), jmu.broadcast_one_to_all(x)
    )
    mu.sync_global_devices("here")
    mu.assert_equal(x)
    mesh = jax.make_mesh((1,), ("x",))
    g = mu.host_local_array_to_global_array(x, mesh, P("x"))
    real_mesh = real.make_mesh((1,), ("x",))
    jg = jmu.host_local_array_to_global_array(
        x, real_mesh, real.sharding.PartitionSpec("x")
    )
    assert g.shape == jg.shape and g.is_fully_addressable
    back = mu.global_array_to_host_local_array(g, mesh, P("x"))
    np.testing.assert_array_equal(back, x)
    with pytest.raises(ValueError, match="not a valid input to the pspecs"):
        mu.host_local_array_to_global_array(x, mesh, None)


def test_cross_process_primitives_compile_natively():
    """A cross-process collective is a host call of the native backend (the MPI call
    on the native buffers), so a loop with one in its body compiles natively; the
    multi-process runs are in tests/test_distributed_runtime.py."""
    from jaxlite.backend import native
    from jaxlite.lax.cross_process import process_allreduce_p

    def f(x):
        y = process_allreduce_p.bind(x, axis_name="x", group=(0, 1), op="sum")
        return jax.numpy.sin(y)

    closed = jax.make_jaxpr(f)(np.ones(3, np.float32))
    assert "process_allreduce[axis_name=x group=(0, 1) op=sum]" in str(closed)
    assert native.refusal(closed) is None
    pytest.importorskip("llvmlite")
    assert native.compile(closed) is not None


def test_launch_command_and_arguments(capsys):
    command = launch.mpiexec_command(3, ["prog.py", "a"], mpiexec="/nowhere/mpiexec")
    assert command == ["/nowhere/mpiexec", "-n", "3", sys.executable, "-m",
                       "jaxlite.launch", "--run", "prog.py", "a"]  # fmt: skip
    with pytest.raises(SystemExit):
        launch.main(["-n", "2"])
    assert "give the program to run" in capsys.readouterr().err
