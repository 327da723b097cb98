"""Eager operations on arrays split across processes (issue 18), run under MPI.

In JAX every eager operation is the jit of that operation, so on an array that is not
fully addressable it runs as `jit` does. jaxlite does the same: an eager primitive,
jax.numpy function, operator or method whose operand is a `GlobalArray` runs as the
jit of the operation on this process's block (`core.eager_rules_by_type`,
`dispatch._eager_on_split`; `eager_jit` functions run as their jit), so elementwise
work gives GlobalArrays and what needs an automatic partitioner raises jit's error.

tests/distributed_eager_program.py runs under `python -m jaxlite.launch -n 2` (and
`-n 2` with two devices per process, `-n 4`); every process's gathered results must
equal the program's on the whole arrays in one process (jaxlite's, and JAX's where
installed). The program itself checks the errors (partitioner, reading values,
hashing), the printed form, `disable_jit`, `debug_nans`, an eager result closed over
by a `jit`, and an eager `jvp`.
"""

import functools
import os
import sys

import numpy as np
import pytest

from jaxlite.core import Array, Tracer
from jaxlite.distributed.global_array import GlobalArray
from mpi_util import needs_mpi
from test_distributed import _run

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM = os.path.join(HERE, "distributed_eager_program.py")
sys.path.insert(0, HERE)
import distributed_eager_program as program  # noqa: E402


@functools.cache
def _reference(n):
    return program.reference(n)


# (processes, devices per process, backend)
SETUPS = [(2, 1, "native"), (2, 2, "numpy"), (4, 1, "auto")]


@needs_mpi
@pytest.mark.parametrize("processes,devices,backend", SETUPS)
def test_eager_ops_on_global_arrays_match_single_process(
    tmp_path, processes, devices, backend
):
    env = {"JAXLITE_BACKEND": backend, "JAX_NUM_CPU_DEVICES": str(devices)}
    done = _run(processes, [PROGRAM, str(tmp_path)], env=env, timeout=240,
                via_launcher=True)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    want = _reference(processes * devices)
    for rank in range(processes):
        got = dict(np.load(tmp_path / f"rank{rank}.npz"))
        assert set(got) == set(want)
        for name, value in want.items():
            assert got[name].dtype == value.dtype, name
            assert got[name].shape == value.shape, name
            np.testing.assert_allclose(
                got[name], value, rtol=1e-6, err_msg=f"{name}, {rank}"
            )


@pytest.mark.parametrize("n", [2, 4])
def test_single_process_reference_matches_jax(n):
    real = pytest.importorskip("jax")
    want = program.reference(n, modules=(real.numpy, real.lax))
    got = _reference(n)
    for name, value in want.items():
        assert got[name].dtype == value.dtype, name
        np.testing.assert_allclose(got[name], value, rtol=1e-6, err_msg=name)


# --------------------------------------------------------------------------------------
# In this process, without MPI


def test_global_array_has_the_array_operators_and_methods():
    # One table for the three classes (numpy/array_methods.py), not a second one.
    for name in ("__add__", "__rmul__", "__neg__", "__gt__", "astype", "sum",
                 "reshape", "view"):  # fmt: skip
        assert getattr(GlobalArray, name) is getattr(Array, name), name
        assert getattr(GlobalArray, name) is getattr(Tracer, name), name
    assert GlobalArray.__getitem__ is Array.__getitem__
    for name in ("T", "real", "at"):
        assert GlobalArray.__dict__[name] is Array.__dict__[name], name
