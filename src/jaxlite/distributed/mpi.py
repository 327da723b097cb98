"""MPI on NumPy buffers: the transport of `jaxlite.distributed`.

Each collective takes and returns NumPy arrays and moves their bytes with one MPI
call on the buffers (no pickling): `allreduce`, `allgather`, `reduce_scatter`,
`alltoall`, and `permute` (point to point). A collective runs among a *group*: the
tuple of the world ranks taking part, in the order that numbers them (a mesh axis's
processes, by position along it). The communicator of a group is made on its first
use (`MPI_Comm_create_group`, collective over that group only: every member reaches
the same first collective) and kept; the whole world is a duplicate of
`COMM_WORLD`, so jaxlite's messages never meet a program's own.

Data moves as bytes, so every dtype travels; reductions use MPI's type for the
dtype, and dtypes MPI cannot add (bfloat16, float8) are reduced in float32.
mpi4py is imported by `start` only, when `jax.distributed.initialize` asks for MPI.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import numpy as np

_state = {}  # "MPI": the mpi4py module, "world": our communicator, "comms": by group

_ARRIVAL_TAG = 0x6A6C  # initialize's arrival messages


def start(timeout):
    """Initialise MPI and wait (at most `timeout` seconds) until every process has
    called this; return (rank, size).

    MPI's own start-up (`MPI_Init`, run by importing mpi4py) already waits for
    every process the launcher started; a watchdog ends this process if that takes
    longer than `timeout`, which ends them all."""
    deadline = time.monotonic() + timeout
    started = threading.Event()
    threading.Thread(target=_watch_start, args=(started, timeout), daemon=True).start()
    try:
        from mpi4py import MPI
    except ImportError as e:
        started.set()
        raise ImportError(
            "jax.distributed.initialize() under an MPI launcher needs mpi4py: "
            "`pip install mpi4py mpich` (or mpi4py built against the system's MPI)."
        ) from e
    try:
        world = MPI.COMM_WORLD
        _arrive(MPI, world, deadline, timeout)
    finally:
        started.set()
    _state.update(MPI=MPI, world=world.Dup(), comms={})
    return world.Get_rank(), world.Get_size()


def _watch_start(started, timeout):
    if started.wait(timeout):
        return
    rank = os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "?"))
    size = os.environ.get("PMI_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "?"))
    sys.stderr.write(
        f"jax.distributed.initialize timed out after {timeout} s in MPI's start-up "
        f"(process {rank} of {size}): not every process has called it. Each "
        "process must call jax.distributed.initialize() once, at its start.\n"
    )
    sys.stderr.flush()
    os._exit(1)


def _arrive(MPI, world, deadline, timeout):  # noqa: N803  (the module's name)
    """A barrier with a deadline: every process tells process 0 it has arrived, so
    that on a timeout process 0 can name the processes that never did."""
    rank, size = world.Get_rank(), world.Get_size()
    if size == 1:
        return
    flag = np.ones(1, np.uint8)
    if rank == 0:
        flags = [np.zeros(1, np.uint8) for _ in range(size)]
        reqs = [
            world.Irecv([flags[r], MPI.BYTE], source=r, tag=_ARRIVAL_TAG)
            for r in range(1, size)
        ]
    else:
        reqs = [world.Isend([flag, MPI.BYTE], dest=0, tag=_ARRIVAL_TAG)]
    barrier = world.Ibarrier()
    while not barrier.Test():
        if time.monotonic() > deadline:
            if rank == 0:
                missing = [r for r in range(1, size) if not flags[r][0]]
                raise TimeoutError(
                    f"jax.distributed.initialize timed out after {timeout} s: "
                    f"process(es) {missing} of {size} never called it. Each process "
                    "must call jax.distributed.initialize() once, at its start."
                )
            raise TimeoutError(
                f"jax.distributed.initialize timed out after {timeout} s waiting for "
                f"the other processes of {size} (process 0 names the missing ones)."
            )
        time.sleep(0.001)
    MPI.Request.Waitall(reqs)


def stop():
    """Forget the communicators (MPI itself ends with the process)."""
    _state.clear()


def abort(code=1):
    """End every process now (`MPI_Abort`)."""
    world = _state.get("world")
    if world is None:
        raise SystemExit(code)
    world.Abort(code)


def barrier(deadline):
    """Wait until every process gets here; TimeoutError after `deadline`
    (`time.monotonic()`)."""
    request = _state["world"].Ibarrier()
    while not request.Test():
        if time.monotonic() > deadline:
            raise TimeoutError(
                "jax.distributed.shutdown timed out waiting for the other processes."
            )
        time.sleep(0.0005)


def rank():
    return _state["world"].Get_rank()


def world_size():
    return _state["world"].Get_size()


def _comm(group):
    """The communicator of `group` (world ranks, in the order that numbers them)."""
    world = _state.get("world")
    if world is None:
        raise RuntimeError(
            "A collective across processes ran, but jax.distributed is not "
            "initialized (or was shut down): call jax.distributed.initialize() "
            "first."
        )
    if len(group) == world.Get_size() and group == tuple(range(len(group))):
        return world
    comms = _state["comms"]
    comm = comms.get(group)
    if comm is None:
        members = world.Get_group().Incl(list(group))
        comm = comms[group] = world.Create_group(members)
        members.Free()
    return comm


def _bytes(a):
    """The bytes of the C-contiguous array `a`, as a buffer MPI can send."""
    return [a.reshape(-1).view(np.uint8), _state["MPI"].BYTE]


_OP_NAMES = {"sum": "SUM", "max": "MAX", "min": "MIN"}
_BOOL_OPS = {"max": "LOR", "min": "LAND", "sum": "LOR"}


def _reduction(x, op):
    """(buffer, MPI datatype, MPI op, back) to reduce `x` with `op`: the buffer in a
    dtype MPI can reduce, and `back` turning a result into `x`'s dtype."""
    MPI = _state["MPI"]  # noqa: N806  (the module's name)
    x = np.asarray(x, order="C")
    if x.dtype == np.bool_:
        return x, MPI.C_BOOL, getattr(MPI, _BOOL_OPS[op]), lambda y: y
    datatype = MPI._typedict.get(x.dtype.char)  # MPI's own type for the dtype
    if datatype is None:
        if x.dtype.kind not in "fV":
            raise TypeError(f"MPI cannot reduce arrays of dtype {x.dtype}.")
        dtype = x.dtype  # bfloat16, float8: reduced in float32
        return (
            x.astype(np.float32),
            MPI.FLOAT,
            getattr(MPI, _OP_NAMES[op]),
            lambda y: y.astype(dtype),
        )
    return x, datatype, getattr(MPI, _OP_NAMES[op]), lambda y: y


def allreduce(x, op, group):
    """`op` ("sum", "max", "min") of `x` over the processes of `group`, on each."""
    buf, datatype, mpi_op, back = _reduction(x, op)
    out = np.empty_like(buf)
    _comm(group).Allreduce([buf, datatype], [out, datatype], op=mpi_op)
    return back(out)


def allgather(x, group):
    """Every process's `x`, stacked along a new leading axis in group order."""
    x = np.asarray(x, order="C")
    out = np.empty((len(group), *x.shape), x.dtype)
    _comm(group).Allgather(_bytes(x), _bytes(out))
    return out


def reduce_scatter(x, op, group):
    """`x` has one block per process along axis 0: the `op` over the processes of
    block i, on process i."""
    buf, datatype, mpi_op, back = _reduction(x, op)
    out = np.empty(buf.shape[1:], buf.dtype)
    _comm(group).Reduce_scatter_block([buf, datatype], [out, datatype], op=mpi_op)
    return back(out)


def alltoall(x, group):
    """`x` has one block per process along axis 0: block j goes to process j, and
    process i's result holds, at j, the block i of process j."""
    x = np.asarray(x, order="C")
    out = np.empty_like(x)
    _comm(group).Alltoall(_bytes(x), _bytes(out))
    return out


def permute(x, perm, group):
    """`x` holds this process's members along axis 0 (the same count on each
    process); `perm` pairs (source, destination) number every process's members in
    group order. Returns the members this process receives (zeros where none)."""
    x = np.asarray(x, order="C")
    comm = _comm(group)
    me = comm.Get_rank()
    count = x.shape[0]
    out = np.zeros_like(x)
    requests = []
    for source, dest in perm:
        sp, sj = divmod(source, count)
        dp, dj = divmod(dest, count)
        if sp == me and dp == me:
            out[dj] = x[sj]
        elif sp == me:
            requests.append(comm.Isend(_bytes(x[sj : sj + 1]), dest=dp, tag=dest))
        elif dp == me:
            requests.append(comm.Irecv(_bytes(out[dj : dj + 1]), source=sp, tag=dest))
    if requests:
        _state["MPI"].Request.Waitall(requests)
    return out


def broadcast(x, root, group=None):
    """Process `root`'s `x` (each process passes an array of the same shape and
    dtype) in every process of `group` (every process by default)."""
    comm = _state["world"] if group is None else _comm(group)
    out = np.array(x, order="C", copy=True)
    comm.Bcast(_bytes(out), root=root)
    return out
