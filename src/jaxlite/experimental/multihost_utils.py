"""`jax.experimental.multihost_utils`: moving values between the processes of a
multi-process program (`jax.distributed.initialize`).

Each function is one MPI collective on the values' buffers (`distributed/mpi.py`),
so every process must call it, in the same order. In a single process each answers
as JAX does with one process: barriers return at once, a broadcast or an all-gather
sees only this process's values (as NumPy arrays, as JAX returns them).

A global array here is a `GlobalArray` (each process holds its block, see
`distributed/global_array.py`): `host_local_array_to_global_array` makes one from
each process's block, `global_array_to_host_local_array` gives the block back, and
`process_allgather` gathers the whole value into every process.
"""

from __future__ import annotations

import zlib

import numpy as np

from jaxlite import tree_util
from jaxlite.array import from_host
from jaxlite.core import as_value
from jaxlite.cpu_device import process_count, process_index
from jaxlite.distributed import mpi
from jaxlite.distributed.global_array import (
    GlobalArray,
    cut_block,
    gather_whole,
    global_array,
)
from jaxlite.sharding import PartitionSpec


def _world():
    return tuple(range(process_count()))


def sync_global_devices(name):
    """A barrier across all processes; every process must pass the same `name`."""
    if process_count() == 1:
        return
    h = np.uint32(zlib.crc32(name.encode()))
    assert_equal(h, f"sync_global_devices name mismatch ('{name}')")


def broadcast_one_to_all(in_tree, is_source=None):
    """The source process's values (process 0's unless one process passes
    `is_source=True`), in every process, as NumPy arrays. Every process passes
    arrays of the same shapes and dtypes."""
    if process_count() == 1:
        return tree_util.tree_map(np.asarray, in_tree)
    if is_source is None:
        is_source = process_index() == 0
    flags = mpi.allgather(np.array([bool(is_source)]), _world())
    sources = np.flatnonzero(flags[:, 0])
    if len(sources) != 1:
        raise ValueError(
            f"broadcast_one_to_all: {len(sources)} processes passed is_source=True; "
            "exactly one must be the source."
        )
    root = int(sources[0])
    return tree_util.tree_map(lambda x: mpi.broadcast(np.asarray(x), root), in_tree)


def _allgather_leaf(x, tiled):
    if isinstance(x, GlobalArray):
        if not tiled:
            raise ValueError(
                "Gathering global non-fully-addressable arrays only supports tiled=True"
            )
        return gather_whole(x)
    value = np.asarray(x)
    if process_count() == 1:
        return value if tiled else np.expand_dims(value, 0)
    if value.ndim == 0 or not tiled:
        value = np.expand_dims(value, 0)
    out = mpi.allgather(value, _world())
    return out.reshape(out.shape[0] * out.shape[1], *out.shape[2:])


def process_allgather(in_tree, tiled=False):
    """Every process's values: a GlobalArray whole; an array of this process
    stacked with the other processes' along a new leading axis, or concatenated
    along the first axis when `tiled`. NumPy arrays, in every process."""
    return tree_util.tree_map(lambda x: _allgather_leaf(x, tiled), in_tree)


def assert_equal(in_tree, fail_message=""):
    """Checks that every process holds the same values (AssertionError if not)."""
    if process_count() == 1:
        return

    def expected(x):
        x = np.asarray(x)
        if x.ndim == 0:
            x = np.expand_dims(x, 0)
        return np.concatenate([x] * process_count())

    out = process_allgather(in_tree, tiled=True)
    want = tree_util.tree_map(expected, in_tree)
    same = tree_util.tree_map(lambda a, b: bool(np.all(np.equal(a, b))), want, out)
    if not all(tree_util.tree_leaves(same)):
        raise AssertionError(f"{fail_message}. Expected: {out}; got: {in_tree}.")


def _specs_for(tree, pspecs, what):
    if pspecs is None:
        raise ValueError(
            "`None` is not a valid input to the pspecs argument. Please use "
            "jax.sharding.PartitionSpec() if you wanted to replicate your input."
        )

    def is_leaf(s):
        return s is None or isinstance(s, PartitionSpec)

    specs = []
    tree_util.tree_map(
        lambda s, sub: specs.extend([s] * len(tree_util.tree_leaves(sub))),
        pspecs,
        tree,
        is_leaf=is_leaf,
    )
    return specs


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """The global arrays whose blocks in this process are `local_inputs` (each laid
    out as its spec in `pspecs` says over `global_mesh`): GlobalArrays where that
    splits them across processes, Arrays where they are replicated."""
    leaves, tree = tree_util.tree_flatten(local_inputs)
    specs = _specs_for(local_inputs, pspecs, "host_local_array_to_global_array")
    out = []
    for x, spec in zip(leaves, specs):
        if isinstance(x, GlobalArray):
            out.append(x)
            continue
        value = as_value(x)
        out.append(global_array(value, global_mesh, spec))
    return tree_util.tree_unflatten(tree, out)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """This process's blocks of `global_inputs` (the inverse of
    `host_local_array_to_global_array`), as Arrays."""
    leaves, tree = tree_util.tree_flatten(global_inputs)
    specs = _specs_for(global_inputs, pspecs, "global_array_to_host_local_array")
    out = []
    for x, spec in zip(leaves, specs):
        if isinstance(x, GlobalArray):
            out.append(x.local_block())
        else:
            out.append(from_host(cut_block(np.asarray(x), global_mesh, spec)))
    return tree_util.tree_unflatten(tree, out)


def reached_preemption_sync_point(step_id):
    """Whether the processes agreed to stop for preemption at `step_id` (never:
    jaxlite has no preemption service)."""
    return False


__all__ = [
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "process_allgather",
    "reached_preemption_sync_point",
    "sync_global_devices",
]
