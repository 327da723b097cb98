"""Arrays that span processes: JAX's `jax.Array`s that are not fully addressable.

A value laid out over a mesh of several processes' devices, split along a mesh
axis that spans processes, exists in no single process. Each process holds its
block: for an array axis split over mesh axes (a, b, ...), the blocks of the
devices of this process's part of the mesh, in their order, concatenated (so
when each process has one device, its shard). `GlobalArray` is that block with the
global shape and the `NamedSharding`: what `shard_map` returns for an output split
across processes, and what `jax.make_array_from_process_local_data` and
`multihost_utils.host_local_array_to_global_array` build. A value replicated over
the processes is an ordinary Array in each (`global_array` returns one).

It answers JAX's questions (`shape`, `dtype`, `sharding`, `addressable_shards`,
`addressable_data(i)`, `is_fully_addressable`), goes into `shard_map` as its
argument, into `jit` (traced with its global aval; `distributed/spmd.py` runs the
program on this process's block), and comes back whole through
`multihost_utils.process_allgather`. It has Array's operators and methods, and an
eager operation on it runs as the `jit` of that operation (as in JAX; `dispatch`
registers the rule in `core.eager_rules_by_type`): elementwise ones give
GlobalArrays computed blockwise, the others raise jit's error. Reading its values
here (`np.asarray`, `float`, `.item()`) raises JAX's error: they are not all in this
process, and it prints as JAX's such arrays do, without values.
"""

from __future__ import annotations

import math

import numpy as np

from jaxlite.array import register_virtual_array_type
from jaxlite.core import Array, ShapedArray
from jaxlite.distributed.topology import device_indices, mesh_layout, spec_entries
from jaxlite.sharding import NamedSharding, PartitionSpec

__all__ = ["GlobalArray", "Shard", "global_array"]


class _Seen:
    """Whether this process ever made a value split across processes (a GlobalArray,
    or a shard_map result under jit): until then no jaxpr needs the process-local
    lowering (`spmd.is_spmd` answers at once)."""

    split = False


seen = _Seen()


def global_shape(local_shape, mesh, spec):
    """The shape of the global array whose process-local block has `local_shape`."""
    layout = mesh_layout(mesh)
    return tuple(
        n * math.prod(layout.counts[a] for a in entry)
        for n, entry in zip(local_shape, spec_entries(spec, len(local_shape)))
    )


def spans_processes(mesh, spec, ndim):
    """Whether a value laid out as `spec` over `mesh` is split across processes."""
    layout = mesh_layout(mesh)
    return any(layout.spans(a) for entry in spec_entries(spec, ndim) for a in entry)


def global_array(local, mesh, spec, weak_type=False):
    """The array whose block in this process is `local` (a NumPy array), laid out
    as `spec` over `mesh`: a GlobalArray if that splits it across processes, else
    `local` itself as an Array (every process holds all of it)."""
    spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
    if not spans_processes(mesh, spec, np.ndim(local)):
        return local if isinstance(local, Array) else Array(local, weak_type)
    value = np.asarray(local)
    shape = global_shape(value.shape, mesh, spec)
    return GlobalArray(value, shape, NamedSharding(mesh, spec), weak_type)


class Shard:
    """One device's part of an array (`jax.Shard`): its device, its index in the
    global array, its replica id and its data (None where not addressable)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index, replica_id, data):
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self.data = data

    def __repr__(self):
        return (
            f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})"
        )


def _not_addressable():
    return RuntimeError(
        "Fetching value for `jax.Array` that spans non-addressable (non process "
        "local) devices is not possible. You can use "
        "`jax.experimental.multihost_utils.process_allgather` to print the global "
        "array or use `.addressable_shards` method of jax.Array to inspect the "
        "addressable (process local) shards. (In jaxlite, compute on it inside "
        "jax.shard_map, which each process runs on its own shards.)"
    )


@register_virtual_array_type  # isinstance(x, jax.Array) holds, as in JAX
class GlobalArray:
    """An array split across processes; this process holds its block (`_local`)."""

    __slots__ = ("_local", "shape", "dtype", "weak_type", "sharding", "__weakref__")

    def __init__(self, local, shape, sharding, weak_type=False):
        seen.split = True
        self._local = local
        self.shape = tuple(shape)
        self.dtype = local.dtype
        self.weak_type = weak_type
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    is_fully_addressable = False
    is_fully_replicated = False
    committed = True

    @property
    def aval(self):
        return ShapedArray(self.shape, self.dtype, self.weak_type, self.sharding)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __array__(self, dtype=None, copy=None):
        raise _not_addressable()

    __array_priority__ = 100  # NumPy operands defer to its operators, as to Array's
    __hash__ = None  # unhashable, as JAX's arrays

    def __repr__(self):  # as JAX's for an array not fully addressable: no values
        weak = ", weak_type=True" if self.weak_type else ""
        return f"Array(shape={self.shape}, dtype={self.dtype.name}{weak})"

    __str__ = __repr__

    def __format__(self, format_spec):
        return repr(self)

    def __bool__(self):
        raise _not_addressable()

    def item(self, *args):
        raise _not_addressable()

    def __int__(self):
        raise _not_addressable()

    __float__ = __complex__ = __index__ = __int__

    def tolist(self):
        raise _not_addressable()

    def block_until_ready(self):
        return self

    def copy_to_host_async(self):
        raise _not_addressable()

    def devices(self):
        return set(self.sharding.mesh.devices.flat)

    @property
    def addressable_shards(self):
        """This process's shards: one per device of its part of the mesh."""
        return [s for s in self._shards() if s.data is not None]

    @property
    def global_shards(self):
        """Every device's shard; the data of other processes' is None."""
        return self._shards()

    def addressable_data(self, index):
        return self.addressable_shards[index].data

    def local_block(self):
        """This process's block, as an Array (`global_array_to_host_local_array`)."""
        return Array(self._local, self.weak_type)

    def _shards(self):
        shards = []
        for device, index, local_index, replica in device_indices(
            self.sharding.mesh, self.sharding.spec, self.shape
        ):
            data = None
            if local_index is not None:
                data = Array(np.asarray(self._local[local_index], order="C"))
            shards.append(Shard(device, index, replica, data))
        return shards


def block_from_shards(mesh, spec, shape, dtype, shard_of):
    """This process's block of an array of `shape` laid out as `spec` over `mesh`,
    from `shard_of(device, index)`, the shard of each of its devices (of `dtype`,
    or the shards' own if None)."""
    layout = mesh_layout(mesh)
    block_shape = [
        n // math.prod(layout.counts[a] for a in entry)
        for n, entry in zip(shape, spec_entries(spec, len(shape)))
    ]
    block = None
    for device, index, local_index, _ in device_indices(mesh, spec, shape):
        if local_index is None:
            continue
        data = np.asarray(shard_of(device, index))
        if block is None:
            block = np.empty(block_shape, data.dtype if dtype is None else dtype)
        want = block[local_index].shape
        if data.shape != want:
            raise ValueError(
                f"The shard for device {device} (index {index}) has shape "
                f"{data.shape}; an array of shape {tuple(shape)} laid out as "
                f"{spec!r} needs {want}."
            )
        block[local_index] = data
    return block


def _split_shapes(mesh, spec, shape):
    """(global, block) shapes with each array axis split into its mesh axes'
    positions and the rest, and the slices of this process's block in the first."""
    layout = mesh_layout(mesh)
    whole, block, where = [], [], []
    for n, entry in zip(shape, spec_entries(spec, len(shape))):
        rest = n // math.prod(mesh.shape[a] for a in entry)
        for a in entry:
            size, local = mesh.shape[a], layout.local_sizes[a]
            whole.append(size)
            block.append(local)
            where.append((a, local))
        whole.append(rest)
        block.append(rest)
        where.append(None)
    return whole, block, where


def _block_index(where, coords):
    return tuple(
        slice(None)
        if w is None
        else slice(coords[w[0]] * w[1], (coords[w[0]] + 1) * w[1])
        for w in where
    )


def cut_block(value, mesh, spec):
    """This process's block of `value` (a NumPy array: the whole array) laid out as
    `spec` over `mesh`."""
    value = np.asarray(value)
    whole, block, where = _split_shapes(mesh, spec, value.shape)
    layout = mesh_layout(mesh)
    out = value.reshape(whole)[_block_index(where, layout.coords)]
    shape = [
        n // math.prod(layout.counts[a] for a in entry)
        for n, entry in zip(value.shape, spec_entries(spec, value.ndim))
    ]
    return np.asarray(out, order="C").reshape(shape)


def gather_whole(x):
    """The whole value of GlobalArray `x` as a NumPy array, in every process of its
    mesh (each must call this)."""
    from jaxlite.distributed import mpi

    mesh = x.sharding.mesh
    layout = mesh_layout(mesh)
    owners = layout._owners
    group = tuple(sorted(set(owners.flat)))
    blocks = mpi.allgather(np.asarray(x._local, order="C"), group)
    whole, block, where = _split_shapes(mesh, x.sharding.spec, x.shape)
    out = np.empty(whole, x.dtype)
    names = mesh.axis_names
    for position in np.ndindex(*owners.shape):
        coords = dict(zip(names, position))
        data = blocks[group.index(int(owners[position]))]
        out[_block_index(where, coords)] = data.reshape(block)
    return out.reshape(x.shape)
