"""Host callbacks in a distributed program: on the process that owns the device.

In one process a callback runs where jaxlite runs. In a program of several processes
(`jax.distributed.initialize()`) every process runs the same program, so a callback
outside `shard_map` runs on every process with that process's values, as in JAX
when each process computes on its own arrays; inside a `shard_map` over an axis
spanning processes, each process runs its own shards' calls, with those shards'
values (the per-device semantics of JAX's `shard_map`).

`pure_callback(..., sharding=SingleDeviceSharding(device))` and
`io_callback(..., sharding=...)` say which device the callback runs on (the seed's
API page: "the device from which the callback should be invoked"). Across processes
it runs on the process owning that device only (JAX's MAXIMAL sharding: once, on
that device), and its results are broadcast from there to every process (MPI, on
the result buffers), which go on with the same values. Should the callback raise,
the owner raises the error and every other process raises a `JaxRuntimeError`
naming it, so no process is left waiting for the results.
"""

from __future__ import annotations

import numpy as np

from jaxlite.cpu_device import process_count, process_index
from jaxlite.distributed import mpi
from jaxlite.errors import JaxRuntimeError

__all__ = ["debug_calls", "is_split_array", "on_owner", "owner_of"]


def owner_of(sharding):
    """The process that runs a callback with this `sharding`, or None where the
    callback runs on every process (no sharding, or a single process)."""
    if sharding is None or process_count() == 1:
        return None
    (device,) = sharding.device_set
    return device.process_index


def on_owner(fn, owner, result_avals, what):
    """`fn` (a callback's host function: NumPy values in, checked NumPy results out)
    run on process `owner` only, its results broadcast to every process."""
    specs = [(tuple(a.shape), np.dtype(a.dtype)) for a in result_avals]

    def run_on_owner(*vals):
        if process_index() == owner:
            try:
                outs = fn(*vals)
            except BaseException as e:
                _send_status(f"{type(e).__name__}: {e}", owner)
                raise
            _send_status("", owner)
            results = [mpi.broadcast(np.asarray(o), owner) for o in outs]
        else:
            error = _send_status(None, owner)
            if error:
                raise JaxRuntimeError(
                    f"{what} failed on process {owner}, which runs it (it owns the "
                    f"device of its `sharding`): {error}. That process raised the "
                    "error itself."
                )
            results = [mpi.broadcast(np.empty(s, d), owner) for s, d in specs]
        for r in results:
            r.flags.writeable = False
        return results

    return run_on_owner


def _send_status(error, owner):
    """Broadcast from `owner` whether its call failed (`error`: "" when it did not):
    its length, then its text. Returns the owner's error text."""
    if error is not None:
        data = np.frombuffer(error.encode("utf-8"), np.uint8)
        size = np.array([data.size], np.int64)
    else:
        size = np.zeros(1, np.int64)
    size = mpi.broadcast(size, owner)
    if not size[0]:
        return ""
    if error is None:
        data = np.empty(int(size[0]), np.uint8)
    return mpi.broadcast(data, owner).tobytes().decode("utf-8", "replace")


def debug_calls(leaves, partitioned):
    """The calls an eager `debug.callback`/`debug.print` makes in this process, each
    a list of its leaves' values, where some leaves may be arrays split across
    processes (GlobalArrays). As JAX does for a sharded array: unpartitioned, the
    whole value (gathered: every process takes part) on the process of the mesh's
    first device only; `partitioned=True`, once per device of this process, with
    that device's shard, on every process."""
    if process_count() == 1:
        return [leaves]
    from jaxlite.distributed.global_array import GlobalArray, gather_whole

    split = [x for x in leaves if isinstance(x, GlobalArray)]
    if not split:
        return [leaves]
    if partitioned:
        count = len(split[0].addressable_shards)
        return [
            [
                x.addressable_shards[i].data if isinstance(x, GlobalArray) else x
                for x in leaves
            ]
            for i in range(count)
        ]
    whole = [gather_whole(x) if isinstance(x, GlobalArray) else x for x in leaves]
    first = split[0].sharding.mesh.devices.flat[0].process_index
    return [whole] if process_index() == first else []


def is_split_array(x):
    """Whether `x` is an array split across processes (a GlobalArray)."""
    if process_count() == 1:
        return False
    from jaxlite.distributed.global_array import GlobalArray

    return isinstance(x, GlobalArray)
