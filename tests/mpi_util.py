"""Running a test program in several processes under MPI (tests/test_distributed*.py,
tests/test_shard_map_vma.py)."""

import importlib.util
import os
import subprocess
import sys

import pytest

from jaxlite import launch


def mpiexec():
    """The mpiexec `python -m jaxlite.launch` would use, or None."""
    try:
        return launch.find_mpiexec()
    except FileNotFoundError:
        return None


needs_mpi = pytest.mark.skipif(
    importlib.util.find_spec("mpi4py") is None or mpiexec() is None,
    reason="needs mpi4py and an mpiexec (pip install mpi4py mpich)",
)


def clean_environ(env=()):
    """This environment without the settings that would change a run (a device
    count, a backend, a parent MPI job's), updated with `env`."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JAX_NUM_CPU", "JAXLITE_BACKEND", "PMI_", "OMPI_"))
    }
    environ.update(env)
    return environ


def run(n, program, *, env=(), timeout=120, how="mpiexec"):
    """Run `program` (a script and its arguments) in `n` processes: `how` is
    "mpiexec" (`launch.mpiexec_command`), "launcher" (`python -m jaxlite.launch`) or
    "plain" (`mpiexec -n n python program`, no jaxlite in between)."""
    if how == "launcher":
        command = [sys.executable, "-m", "jaxlite.launch", "-n", str(n), *program]
    else:
        command = launch.mpiexec_command(n, program)
        if how == "plain":
            command = command[: command.index("-m")] + program
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env=clean_environ(env)
    )
