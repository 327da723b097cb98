"""Where a value split across processes meets the code that runs on this process's
block: the two primitives `jit` over global arrays needs.

Under `jit`, an argument that is a `GlobalArray` (split across processes along a mesh
axis, `distributed/global_array.py`) is traced with its global aval, whose sharding
says how it is split, so the user's function sees the shapes JAX shows. Only
`shard_map` may compute on it: it binds `process_block` (the global value -> this
process's block) on such an argument, runs its body on the block, and binds
`process_assemble` (this process's block -> the global value laid out as the out_spec
says) on a result split across processes. In the global view the two are linear maps
and each other's transpose, so `grad` through them needs nothing more.

A jaxpr holding them runs in each process on its blocks (`distributed/spmd.py`): a
split variable holds this process's block, `process_block` of it is that block and
`process_assemble` gives its operand as the block of the result. Each primitive's
rule there is registered below with its others. `process_block` of a replicated value
(the whole array is in every process, e.g. an instantiated zero cotangent) cuts the
block out, which is also its implementation.
"""

from __future__ import annotations

import math

from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
    physical_rules,
)
from jaxlite.distributed import spmd
from jaxlite.distributed.global_array import cut_block
from jaxlite.distributed.topology import boundary_primitives, mesh_layout, spec_entries
from jaxlite.interpreters import ad, batching
from jaxlite.lax.cross_process import process_broadcast_p, process_replicated_p
from jaxlite.sharding import NamedSharding

__all__ = ["process_assemble", "process_assemble_p", "process_block", "process_block_p"]


def _block_shape(shape, mesh, spec):
    layout = mesh_layout(mesh)
    out = []
    for n, entry in zip(shape, spec_entries(spec, len(shape))):
        count = math.prod(layout.counts[a] for a in entry)
        if n % count:
            raise ValueError(
                f"An array axis of size {n} cannot be split over mesh axes {entry} "
                f"({count} processes); the process counts must divide it."
            )
        out.append(n // count)
    return tuple(out)


def _no_batching(name):
    def rule(axis_size, vals, dims, *, mesh, spec):
        raise NotImplementedError(
            f"vmap of {name}: jaxlite does not vmap a shard_map over an array split "
            "across processes. Put the vmap inside the shard_map, or map over a "
            "replicated array."
        )

    return rule


# --------------------------------------------------------------------------------------
# process_block: a global value -> this process's block


def _block_impl(x, *, mesh, spec):
    return [cut_block(x, mesh, spec)]


def _block_abstract(x, *, mesh, spec):
    shape = _block_shape(x.shape, mesh, spec)
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


def _block_transpose(ct, x, *, mesh, spec):
    if type(ct) is ad.Zero:
        return [None]
    return [process_assemble_p.bind(ct, mesh=mesh, spec=spec)]


def _block_local(layouts, x, *, mesh, spec):
    (layout,) = layouts
    if layout is None:  # replicated: cut this process's block out
        return [process_block_p.bind(x, mesh=mesh, spec=spec)], [None]
    if layout.mesh != mesh or spec_entries(layout.spec, x.ndim) != spec_entries(
        spec, x.ndim
    ):
        raise NotImplementedError(
            f"shard_map under jit got an array laid out as {layout!r} for in_spec "
            f"{spec!r} on mesh {mesh!r}; jaxlite does not move data between "
            "processes to change a layout: give the shard_map that in_spec, or "
            "build the argument with that sharding."
        )
    return [x], [None]


def _block_physical(avals_in, avals_out, x, *, mesh, spec):
    """`process_block` of keys: of their data, whose trailing element axes stay whole.
    (Eager on a GlobalArray, it runs as its jit: `core.eager_rules_by_type`.)"""
    return [process_block_p.bind(x, mesh=mesh, spec=spec)]


process_block_p = Primitive("process_block")
impl_rules[process_block_p] = _block_impl
abstract_eval_rules[process_block_p] = _block_abstract
ad.deflinear(process_block_p, _block_transpose)
batching.batch_rules[process_block_p] = _no_batching("process_block")
spmd.local_rules[process_block_p] = _block_local
physical_rules[process_block_p] = _block_physical


# --------------------------------------------------------------------------------------
# process_assemble: this process's block -> the global value split across processes


def _assemble_impl(x, *, mesh, spec):
    raise spmd.eager_split_error()  # under jit, `spmd.localize` removes it


def _assemble_abstract(x, *, mesh, spec):
    layout = mesh_layout(mesh)
    shape = tuple(
        n * math.prod(layout.counts[a] for a in entry)
        for n, entry in zip(x.shape, spec_entries(spec, len(x.shape)))
    )
    sharding = NamedSharding(mesh, spec)
    return [ShapedArray(shape, x.dtype, x.weak_type, sharding)], no_effects


def _assemble_transpose(ct, x, *, mesh, spec):
    if type(ct) is ad.Zero:
        return [None]
    return [process_block_p.bind(ct, mesh=mesh, spec=spec)]


def _assemble_local(layouts, x, *, mesh, spec):
    return [x], [NamedSharding(mesh, spec)]


process_assemble_p = Primitive("process_assemble")
impl_rules[process_assemble_p] = _assemble_impl
abstract_eval_rules[process_assemble_p] = _assemble_abstract
ad.deflinear(process_assemble_p, _assemble_transpose)
batching.batch_rules[process_assemble_p] = _no_batching("process_assemble")
spmd.local_rules[process_assemble_p] = _assemble_local
spmd.layout_primitives.update(block=process_block_p, assemble=process_assemble_p)
# pmap across processes (`topology.spanning_processes`): its replicated arguments
# and results cross into and out of per-process code as a shard_map's do.
boundary_primitives.update(enter=process_broadcast_p, leave=process_replicated_p)


# --------------------------------------------------------------------------------------
# What shard_map calls


def process_block(x, mesh, spec):
    """This process's block of `x`, laid out as `spec` over `mesh`."""
    spmd.seen.split = True
    return process_block_p.bind(x, mesh=mesh, spec=spec)


def process_assemble(x, mesh, spec):
    """The global value whose block in this process is `x`, laid out as `spec`."""
    spmd.seen.split = True
    return process_assemble_p.bind(x, mesh=mesh, spec=spec)
