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

The collectives are on the path of every step of a program, so they do nothing per
call that can be done once: the MPI datatype and operation of a (dtype, op) and the
communicator of a group are looked up in dicts, buffers are passed to mpi4py's
buffer (uppercase) methods with their datatype, and the result is written straight
into the array returned (or into `out`, a caller's buffer, for the native backend).
MPI implementations wait for a message by polling: with more processes on a machine
than it has cores, a polling process keeps the one it waits for off the core, and a
small allreduce takes milliseconds. `start` then asks MPICH (Open MPI) to yield the
core while it waits, before MPI starts, unless the environment already says.
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
    _yield_when_oversubscribed(os.environ, _cores())
    try:
        from mpi4py import MPI
    except ImportError as e:
        started.set()
        raise ImportError(
            "jax.distributed.initialize() under an MPI launcher needs mpi4py: "
            "`pip install mpi4py mpich` (or mpi4py built against the system's MPI)."
        ) from e
    started.set()  # MPI is up; the arrival has its own deadline
    world = MPI.COMM_WORLD
    try:
        _arrive(MPI, world, deadline, timeout)
    except TimeoutError as e:  # the others wait for ever: end them all
        sys.stderr.write(f"{e} Ending every process (MPI_Abort).\n")
        sys.stderr.flush()
        world.Abort(1)
    _state.update(MPI=MPI, world=world.Dup(), comms={})
    return world.Get_rank(), world.Get_size()


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# How many processes the launcher started on this machine: MPICH's hydra, Open MPI.
_LOCAL_SIZE_VARS = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")
# What makes a waiting process give up its core: MPICH, Open MPI.
_YIELD_VARS = {"MPIR_CVAR_ENABLE_HEAVY_YIELD": "1", "OMPI_MCA_mpi_yield_when_idle": "1"}


def _yield_when_oversubscribed(environ, cores):
    """If the launcher started more processes on this machine than `cores`, set
    the variables that make MPI yield the core while it waits (those not set
    already); return whether it did. Read by MPI when it starts."""
    for var in _LOCAL_SIZE_VARS:
        try:
            local = int(environ[var])
        except (KeyError, ValueError):
            continue
        if local <= cores:
            return False
        for name, value in _YIELD_VARS.items():
            environ.setdefault(name, value)
        return True
    return False


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
    _reductions.clear()


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
    try:
        return _state["comms"][group]
    except KeyError:
        return _new_comm(group)


def _new_comm(group):
    world = _state.get("world")
    if world is None:
        raise RuntimeError(
            "A collective across processes ran, but jax.distributed is not "
            "initialized (or was shut down): call jax.distributed.initialize() "
            "first."
        )
    if len(group) == world.Get_size() and group == tuple(range(len(group))):
        comm = world
    else:
        members = world.Get_group().Incl(list(group))
        comm = world.Create_group(members)
        members.Free()
    _state["comms"][group] = comm
    return comm


def _bytes(a):
    """The bytes of the C-contiguous array `a`, as a buffer MPI can send."""
    return [a.reshape(-1).view(np.uint8), _state["MPI"].BYTE]


_OP_NAMES = {"sum": "SUM", "max": "MAX", "min": "MIN"}
_BOOL_OPS = {"max": "LOR", "min": "LAND", "sum": "LOR"}
_reductions = {}  # (dtype, op): (MPI datatype, MPI op, dtype reduced in or None)


def _reduction(dtype, op):
    """(MPI datatype, MPI op, `work`) to reduce arrays of `dtype` with `op`: `work`
    is None where MPI reduces `dtype` itself, else the dtype to reduce in."""
    found = _reductions.get((dtype, op))
    if found is not None:
        return found
    MPI = _state["MPI"]  # noqa: N806  (the module's name)
    if dtype == np.bool_:
        found = MPI.C_BOOL, getattr(MPI, _BOOL_OPS[op]), None
    else:
        datatype = MPI._typedict.get(dtype.char)  # MPI's own type for the dtype
        if datatype is not None:
            found = datatype, getattr(MPI, _OP_NAMES[op]), None
        elif dtype.kind in "fV":  # bfloat16, float8: reduced in float32
            found = MPI.FLOAT, getattr(MPI, _OP_NAMES[op]), np.dtype(np.float32)
        else:
            raise TypeError(f"MPI cannot reduce arrays of dtype {dtype}.")
    _reductions[(dtype, op)] = found
    return found


def allreduce(x, op, group, out=None):
    """`op` ("sum", "max", "min") of `x` over the processes of `group`, on each;
    written into `out` (an array of `x`'s shape and dtype, which may be `x`
    itself) and returned, if given."""
    x = np.asarray(x, order="C")
    datatype, mpi_op, work = _reduction(x.dtype, op)
    comm = _comm(group)
    if work is not None:  # our own copy: reduced where it is
        buf = x.astype(work)
        comm.Allreduce(_state["MPI"].IN_PLACE, [buf, datatype], op=mpi_op)
        if out is None:
            return buf.astype(x.dtype)
        np.copyto(out, buf, casting="unsafe")
        return out
    if out is None:
        out = np.empty_like(x)
    elif not out.flags.c_contiguous or (
        np.may_share_memory(out, x) and not _same_memory(out, x)
    ):
        np.copyto(out, allreduce(x, op, group))
        return out
    elif out is x or np.may_share_memory(out, x):
        comm.Allreduce(_state["MPI"].IN_PLACE, [out, datatype], op=mpi_op)
        return out
    comm.Allreduce([x, datatype], [out, datatype], op=mpi_op)
    return out


def _same_memory(a, b):
    """Whether the C-contiguous arrays `a` and `b` are the same bytes."""
    return (
        a.nbytes == b.nbytes
        and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    )


def allgather(x, group):
    """Every process's `x`, stacked along a new leading axis in group order."""
    x = np.asarray(x, order="C")
    out = np.empty((len(group), *x.shape), x.dtype)
    _comm(group).Allgather(_bytes(x), _bytes(out))
    return out


def reduce_scatter(x, op, group):
    """`x` has one block per process along axis 0: the `op` over the processes of
    block i, on process i."""
    x = np.asarray(x, order="C")
    datatype, mpi_op, work = _reduction(x.dtype, op)
    buf = x if work is None else x.astype(work)
    out = np.empty(buf.shape[1:], buf.dtype)
    _comm(group).Reduce_scatter_block([buf, datatype], [out, datatype], op=mpi_op)
    return out if work is None else out.astype(x.dtype)


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
