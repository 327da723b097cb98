"""The fast path of jaxlite.distributed's MPI collectives (bench/bench_distributed.py).

- `mpi.allreduce` and `mpi.reduce_scatter` keep their results for every dtype and op
  now that the MPI datatype and op of a (dtype, op) are looked up once: float32,
  float64, int32, int8, bool (or/and) and bfloat16 (reduced in float32), into a new
  array, into a caller's `out`, and in place (`out is x`), under `mpiexec -n 2`
  and `-n 4`; a psum in a jitted shard_map on each backend (on the native one, MPI
  writes into native code's result buffer).
- With more processes on the machine than cores, `start` asks MPICH (Open MPI) to
  yield the core while waiting, before MPI starts, and leaves a user's setting alone.

The mpiexec tests need mpi4py and an mpiexec and are skipped without them, as in
tests/test_distributed.py.
"""

import os
import subprocess

import ml_dtypes
import numpy as np
import pytest

from jaxlite import launch
from jaxlite.distributed import mpi
from mpi_util import needs_mpi

DTYPES = ("float32", "float64", "int32", "int8", "bool", "bfloat16")


def _dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def _data(name, rank):
    values = (np.arange(12) * (rank + 2) + rank) % 7 - 2
    return values.astype(_dtype(name)).reshape(4, 3)


PROGRAM = """
import os
import sys

import numpy as np

import jaxlite as jax
from jaxlite.distributed import mpi
from jaxlite.sharding import PartitionSpec as P

sys.path.insert(0, {here!r})
from test_distributed_bench_fixes import DTYPES, _data

jax.distributed.initialize()
rank, n = jax.process_index(), jax.process_count()
group = tuple(range(n))
out = {{}}
for name in DTYPES:
    x = _data(name, rank)
    for op in ("sum", "max", "min"):
        out[f"{{name}}/{{op}}"] = mpi.allreduce(x, op, group)
    into = np.empty_like(x)
    assert mpi.allreduce(x, "sum", group, out=into) is into
    out[f"{{name}}/out"] = into
    y = x.copy()
    assert mpi.allreduce(y, "sum", group, out=y) is y
    out[f"{{name}}/in_place"] = y
    blocks = np.concatenate([x] * n).reshape(n, 4, 3)
    out[f"{{name}}/reduce_scatter"] = mpi.reduce_scatter(blocks, "sum", group)
    if name == "float32":  # `out` strided, overlapping `x`, or `x`'s bytes again
        strided = np.zeros((4, 6), x.dtype)[:, ::2]
        out["strided"] = mpi.allreduce(x, "sum", group, out=strided).copy()
        buffer = np.concatenate([x.ravel(), x.ravel()[:1]])
        shifted = buffer[1:].reshape(4, 3)
        mpi.allreduce(buffer[:-1].reshape(4, 3), "sum", group, out=shifted)
        out["overlapping"] = shifted.copy()
        y = x.copy()
        mpi.allreduce(y, "sum", group, out=y.reshape(12).reshape(4, 3))
        out["same_bytes"] = y
# psum in a jitted shard_map: on the native backend, MPI writes into native code's
# result buffer (lax/cross_process.py's buffer function).
mesh = jax.make_mesh((n,), ("p",))
f = jax.jit(jax.shard_map(lambda v: jax.lax.psum(v * 2.0, "p"), mesh=mesh,
                          in_specs=P("p"), out_specs=P()))
whole = np.concatenate([_data("float32", r) for r in range(n)])
for _ in range(3):
    result = f(whole)
out["jit_psum"] = np.asarray(result)
if n > 1:  # a subgroup, numbered backwards: only its members take part
    sub = (n - 1, 0)
    if rank in sub:
        out["sub/sum"] = mpi.allreduce(_data("float32", rank), "sum", sub)
out["yield"] = np.array(os.environ.get("MPIR_CVAR_ENABLE_HEAVY_YIELD", "unset"))
saved = {{}}
for key, value in out.items():  # np.savez has no bfloat16: values and dtype names
    saved[key] = value if key == "yield" else value.astype(np.float64)
    saved[key + "/dtype"] = np.array(str(value.dtype))
np.savez(os.path.join(sys.argv[1], f"rank{{rank}}.npz"), **saved)
jax.distributed.shutdown()
"""


def _reduce(name, op, arrays):
    stacked = np.stack([a.astype(np.float64) for a in arrays])
    if name == "bool":
        stacked = stacked != 0
        reduced = {"sum": np.any, "max": np.any, "min": np.all}[op](stacked, axis=0)
    else:
        reduced = {"sum": np.sum, "max": np.max, "min": np.min}[op](stacked, axis=0)
    return reduced.astype(_dtype(name))


@needs_mpi
@pytest.mark.parametrize("n,backend", [(2, "native"), (4, "numpy")])
def test_collectives_keep_their_results(tmp_path, n, backend):
    script = tmp_path / "program.py"
    here = os.path.dirname(os.path.abspath(__file__))
    script.write_text(PROGRAM.format(here=here))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PMI_", "OMPI_", "MPIR_CVAR_", "JAX_NUM_CPU"))
    }
    env["JAXLITE_BACKEND"] = backend
    done = subprocess.run(
        launch.mpiexec_command(n, [str(script), str(tmp_path)]),
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    for rank in range(n):
        got = dict(np.load(tmp_path / f"rank{rank}.npz", allow_pickle=False))
        for name in DTYPES:
            arrays = [_data(name, r) for r in range(n)]
            for key in ("sum", "max", "min", "out", "in_place"):
                op = key if key in ("sum", "max", "min") else "sum"
                want = _reduce(name, op, arrays)
                assert str(got[f"{name}/{key}/dtype"]) == str(want.dtype), (name, key)
                np.testing.assert_array_equal(
                    got[f"{name}/{key}"], want.astype(np.float64), err_msg=name + key
                )
            want = _reduce(name, "sum", arrays)
            assert str(got[f"{name}/reduce_scatter/dtype"]) == str(want.dtype)
            np.testing.assert_array_equal(
                got[f"{name}/reduce_scatter"], want.astype(np.float64)
            )
        summed = _reduce("float32", "sum", [_data("float32", r) for r in range(n)])
        for key in ("strided", "overlapping", "same_bytes"):
            np.testing.assert_array_equal(got[key], summed, err_msg=key)
        np.testing.assert_array_equal(got["jit_psum"], 2 * summed)
        if rank in (n - 1, 0):
            want = _data("float32", n - 1) + _data("float32", 0)
            np.testing.assert_array_equal(got["sub/sum"], want)
        else:
            assert "sub/sum" not in got
        assert str(got["yield"]) == ("1" if n > cores else "unset")


def test_yield_only_when_more_processes_than_cores():
    environ = {"MPI_LOCALNRANKS": "4"}
    assert mpi._yield_when_oversubscribed(environ, 2)
    assert environ["MPIR_CVAR_ENABLE_HEAVY_YIELD"] == "1"
    assert environ["OMPI_MCA_mpi_yield_when_idle"] == "1"
    environ = {"OMPI_COMM_WORLD_LOCAL_SIZE": "3"}
    assert mpi._yield_when_oversubscribed(environ, 2)
    assert environ["MPIR_CVAR_ENABLE_HEAVY_YIELD"] == "1"
    for environ in ({"MPI_LOCALNRANKS": "2"}, {}, {"MPI_LOCALNRANKS": "many"}):
        before = dict(environ)
        assert not mpi._yield_when_oversubscribed(environ, 2)
        assert environ == before
    environ = {"MPI_LOCALNRANKS": "8", "MPIR_CVAR_ENABLE_HEAVY_YIELD": "0"}
    assert mpi._yield_when_oversubscribed(environ, 2)
    assert environ["MPIR_CVAR_ENABLE_HEAVY_YIELD"] == "0"  # the user's choice
