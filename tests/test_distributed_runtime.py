"""The multi-process runtime: failures, host callbacks and native collectives.

Programs run under a plain `mpiexec -n 2` / `-n 4` (not the jaxlite launcher), as in
tests/test_distributed.py:

- A process that fails (`sys.exit` with any status before a collective the others
  wait in, an uncaught exception, an exception inside the collective region, a
  collective whose sizes disagree) ends every process within seconds, with a
  message on the others naming it; an initialisation timeout names the missing
  processes.
- tests/distributed_runtime_program.py (loops with psum/pmax/ppermute across the
  processes in their bodies, callbacks, debug.print) gives the single-process
  results on the NumPy and on the native backend, and under
  `JAXLITE_BACKEND=native` its loops compile natively (the MPI calls are host calls
  on the native buffers). Callbacks with `sharding` run on the process owning the
  device and their results reach every process; callbacks inside a shard_map run on
  each process with its own shards; debug.print prints each device's line on its
  process, and an array split across processes whole on process 0 (or, with
  `partitioned=True`, each device's shard on its process).

Without MPI, in this process: the loop compiler keeps a collective across processes
in its loop (never hoisted), and native host calls get buffers without copies.
"""

import functools
import os
import sys
import time

import numpy as np
import pytest

import jaxlite as jax
from mpi_util import needs_mpi, run

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "distributed_runtime_program.py")


def _run(n, program, *, env=(), timeout=120):
    """Run `program` (a script and its arguments) in `n` processes, plain mpiexec;
    its result and how long it took."""
    start = time.monotonic()
    done = run(n, program, env=env, timeout=timeout, how="plain")
    return done, time.monotonic() - start


# --------------------------------------------------------------------------------------
# Failures


FAILING = """
import sys
import numpy as np
import jaxlite as jax
from jaxlite import lax
from jaxlite.experimental import multihost_utils
from jaxlite.sharding import PartitionSpec as P

how, failing = sys.argv[1], int(sys.argv[2])
jax.distributed.initialize()
me = jax.process_index()
if me == failing:
    if how == "raise":
        raise ValueError(f"boom from process {me}")
    if how in ("exit3", "exit0"):
        sys.exit(int(how[-1]))
if how == "in_collective":
    def cb(v):
        if me == failing:
            raise ValueError(f"callback failed on process {me}")
        return np.asarray(v)

    def body(v):
        v = jax.pure_callback(cb, jax.ShapeDtypeStruct(v.shape, v.dtype), v,
                              vmap_method="sequential")
        return lax.psum(v, "x")

    mesh = jax.make_mesh((jax.device_count(),), ("x",))
    jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P()))(
        np.ones((jax.device_count(), 3), np.float32))
if how == "mismatch":
    multihost_utils.process_allgather(np.ones(3 + me, np.float32))
multihost_utils.process_allgather(np.ones(3))  # the others wait for `failing`
print(f"process {me} was not stopped")
"""


@needs_mpi
@pytest.mark.parametrize(
    "n,how,failing",
    [
        (2, "exit3", 1),
        (2, "exit0", 1),
        (2, "raise", 1),
        (2, "in_collective", 1),
        (2, "mismatch", 0),
        (4, "exit3", 2),
        (4, "raise", 0),
    ],
)
def test_a_failing_process_ends_every_process(tmp_path, n, how, failing):
    script = tmp_path / "failing.py"
    script.write_text(FAILING)
    done, took = _run(n, [str(script), how, str(failing)], timeout=90)
    assert took < 45, (took, done.stderr)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "was not stopped" not in done.stdout, done.stdout
    others = [r for r in range(n) if r != failing]
    if how.startswith("exit"):  # the first to notice ends them all
        assert any(
            f"process {r} of {n} waits in a collective (allgather over processes "
            f"{list(range(n))}) with process(es) [{failing}], which exited"
            in done.stderr
            for r in others
        ), done.stderr
    elif how == "raise":
        assert f"ValueError: boom from process {failing}" in done.stderr
        assert f"process {failing} of {n} failed with the ValueError above" in (
            done.stderr
        )
        for r in others:
            assert (
                f"process {failing} of {n} failed (ValueError: boom from process "
                f"{failing}); ending process {r} too"
            ) in done.stderr, done.stderr
    elif how == "in_collective":
        assert f"callback failed on process {failing}" in done.stderr
        for r in others:
            assert f"ending process {r} too" in done.stderr, done.stderr


TIMEOUT = """
import os, sys, time
if sys.argv[1] == "after_mpi":
    from mpi4py import MPI  # MPI already up: only initialize is late
import jaxlite as jax
if os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK")) == "1":
    time.sleep(10)
jax.distributed.initialize(initialization_timeout=2)
print("initialized")
"""


@needs_mpi
@pytest.mark.parametrize("when", ["after_mpi", "in_mpi_startup"])
def test_initialization_timeout_names_the_missing_processes(tmp_path, when):
    script = tmp_path / "late.py"
    script.write_text(TIMEOUT)
    done, took = _run(2, [str(script), when], timeout=90)
    assert done.returncode != 0
    assert "initialized" not in done.stdout
    if when == "after_mpi":
        assert took < 9, took  # ended before process 1 woke
        assert (
            "jax.distributed.initialize timed out after 2 s: process(es) [1] of 2 "
            "never called it"
        ) in done.stderr, done.stderr
    else:  # MPI's own start-up waits for every process: no one to ask yet
        assert "timed out after 2 s in MPI's start-up (process 0 of 2)" in (
            done.stderr
        ), done.stderr


# --------------------------------------------------------------------------------------
# Collectives in loops, on both backends, and callbacks


@functools.cache
def _reference(n):
    sys.path.insert(0, HERE)
    import distributed_runtime_program

    return distributed_runtime_program.reference(n)


# (processes, devices per process, backend)
SETUPS = [(2, 1, "numpy"), (2, 1, "native"), (4, 1, "native"), (2, 2, "native")]


@needs_mpi
@pytest.mark.parametrize("processes,devices,backend", SETUPS)
def test_program_on_both_backends(tmp_path, processes, devices, backend):
    if backend == "native":
        pytest.importorskip("llvmlite")
    env = {"JAXLITE_BACKEND": backend, "JAX_NUM_CPU_DEVICES": str(devices)}
    done, _ = _run(processes, [PROGRAM, str(tmp_path)], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    n = processes * devices
    if backend == "native":
        for name in ("loop_body", "scan_body"):
            assert f"compiled natively: {name}" in done.stderr, done.stderr
        assert "no native rule for primitive process" not in done.stderr
    want = _reference(n)
    x = np.arange(n * 2 * 3, dtype=np.float32).reshape(n * 2, 3) / 7
    owner = processes - 1  # the process of the last device
    printed = set()
    for rank in range(processes):
        got = dict(np.load(tmp_path / f"rank{rank}.npz"))
        for name, value in want.items():
            np.testing.assert_allclose(
                got[name], value, rtol=1e-4, atol=1e-5, err_msg=f"{name}, {rank}"
            )
        v = np.arange(3, dtype=np.float32)
        np.testing.assert_array_equal(got["cb/eager"], v * 10 + owner)
        np.testing.assert_array_equal(got["cb/jit"], v * 10 + owner)
        np.testing.assert_allclose(got["cb/loop"], v + 0.3 * owner, rtol=1e-6)
        assert int(got["cb/calls"]) == (5 if rank == owner else 0)
        rows = np.repeat(np.arange(processes), 2 * devices)[:, None]
        np.testing.assert_allclose(got["cb/shard_map"], x + 100 * rows, rtol=1e-6)
        mine = x.reshape(n, 2, 3)[rank * devices : (rank + 1) * devices]
        np.testing.assert_array_equal(got["cb/seen"], mine)
        for d in range(devices):
            i = rank * devices + d
            printed.add(f"process {rank} device {i}: {x[2 * i : 2 * i + 2].sum()}")
    out_lines = done.stdout.splitlines()
    whole = [line for line in out_lines if line.startswith("whole: ")]
    assert whole == [f"whole: {np.repeat(np.arange(processes), devices) * 1.0}"]
    shards = sorted(line for line in out_lines if line.startswith("shard on "))
    assert shards == sorted(
        f"shard on {r}: [{r}.]" for r in range(processes) for _ in range(devices)
    )
    lines = {line for line in out_lines if line.startswith("process")}
    assert {line[: line.rindex(":")] for line in lines} == {
        p[: p.rindex(":")] for p in printed
    }
    for line in lines:
        want_line = next(p for p in printed if p.startswith(line[: line.rindex(":")]))
        assert float(line.split(": ")[1]) == pytest.approx(
            float(want_line.split(": ")[1]), rel=1e-6
        )


# --------------------------------------------------------------------------------------
# In this process, without MPI


def test_collectives_across_processes_stay_in_their_loop():
    """The loop compiler never hoists a collective across processes out of a scan
    body, even when it depends on the constants only: every process must make the
    same MPI calls, once per iteration, whichever tier runs the loop."""
    from jaxlite.backend.loops import _hoist_out_of_loop
    from jaxlite.lax.cross_process import process_allreduce_p

    def body(k, c):
        s = process_allreduce_p.bind(jax.numpy.sin(k), axis_name="x", group=(0, 1),
                                     op="sum")  # fmt: skip
        return c + s, c * 2

    one = np.ones(3, np.float32)
    closed = jax.make_jaxpr(body)(one, one)
    pre, new_body, _ = _hoist_out_of_loop(closed, 1, 1, 10)
    prims = [e.primitive.name for e in new_body.jaxpr.eqns]
    assert "process_allreduce" in prims
    # the sin is still hoisted: only the collective and what follows it stay
    assert pre is not None and "sin" not in prims


def test_native_host_calls_on_buffers_without_copies():
    """A `buffer_functions` host call gets views of the native buffers: it reads the
    operand where native code keeps it and writes its result in place."""
    pytest.importorskip("llvmlite")
    from jaxlite.backend.native import host
    from jaxlite.core import ShapedArray

    seen = {}

    def fn(x, s, out):
        seen["x"], seen["s"], seen["out"] = x, s, out
        np.add(x, s, out=out)

    a = ShapedArray((2, 3), np.dtype(np.float32))
    s0 = ShapedArray((), np.dtype(np.float32))
    site = host.site(fn, [a, s0], [a], in_place=True)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = np.zeros((2, 3), np.float32)
    assert site.function(x.ctypes.data, 1.5, out.ctypes.data) == 0
    np.testing.assert_array_equal(out, x + 1.5)
    assert np.shares_memory(seen["x"], x) or seen["x"].ctypes.data == x.ctypes.data
    assert seen["out"].ctypes.data == out.ctypes.data
    assert seen["s"].shape == () and seen["s"].dtype == np.float32


def test_sharding_of_a_callback_in_one_process_runs_it_here():
    """One process: `sharding` changes nothing (the callback runs eagerly, here)."""
    calls = []

    def cb(x):
        calls.append(1)
        return np.asarray(x) + 1

    s = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    spec = jax.ShapeDtypeStruct((2,), np.float32)
    out = jax.pure_callback(cb, spec, np.zeros(2, np.float32), sharding=s)
    np.testing.assert_array_equal(out, [1, 1])
    out = jax.jit(lambda x: jax.pure_callback(cb, spec, x, sharding=s))(
        np.zeros(2, np.float32)
    )
    np.testing.assert_array_equal(out, [1, 1])
    assert len(calls) == 2
