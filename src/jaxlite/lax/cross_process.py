"""Collectives across processes: the MPI half of a collective over a mesh axis that
spans processes.

A named axis spanning processes is a vmap over this process's members of the axis
(see `distributed/topology.py`). A collective's batching rule (`lax/parallel.py`)
first does its work among those members with ordinary lax operations, as in one
process, then binds one of these primitives to finish it across the processes of
the axis (`group`, world ranks by position along the axis). Each one's NumPy
implementation is one MPI call on the buffers (`distributed/mpi.py`). The native
backend compiles them as host calls (`backend/native/host.py`) given views of the
native buffers: the same MPI call reads the operand where native code keeps it and
its result is written into native code's result buffer, so a loop with a psum across
processes in its body runs natively. They are pinned in their loops (never hoisted),
so every process makes the same MPI calls in the same order whichever tier runs a
loop, and tiering weighs them as host calls: a jitted function that is mostly
collectives gains nothing natively (its time is MPI's) and stays on NumPy.

- `process_allreduce` (sum, max, min): the same value on every process.
- `process_all_gather`: the processes' blocks concatenated along `axis`.
- `process_reduce_scatter`: the sum of the processes' arrays, of which process i
  keeps block i along `axis`.
- `process_all_to_all`: block j of `split_axis` goes to process j; the received
  blocks are concatenated along `concat_axis`, in process order.
- `process_permute`: members along `axis` (numbered across the processes in group
  order) move from source to destination as `perm` says; zeros where none arrives.

Derivatives. These are linear (max and min excepted, which have none, as `pmax`)
and transpose into each other as their one-process counterparts do. One convention
makes reverse mode right across processes: a value that is the same on every
process of an axis (replicated) has its cotangent held as *partial sums*, whose sum
over the processes is the cotangent (each process only sees the uses of its own
members). So the transpose of `process_allreduce` sum is `process_allreduce` sum,
as psum's is psum. Two identities mark where a value crosses between the two views at
a `shard_map` boundary: `process_broadcast` (an argument replicated over the axis
enters; its cotangent is summed over the processes) and `process_replicated` (a
replicated result leaves; its cotangent, the same on every process, is kept on the
first one only, so that the partial sums add up to it once). JAX's shard_map does
the same with a psum and a division by the axis size.
"""

from __future__ import annotations

import numpy as np

from jaxlite.backend.lowering import host_call_primitives, pinned_primitives
from jaxlite.backend.native import native_rules
from jaxlite.backend.native.host import buffer_functions
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.cpu_device import process_index
from jaxlite.distributed import mpi
from jaxlite.interpreters import ad, batching
from jaxlite.lax.constructors import full

__all__ = [
    "process_all_gather_p",
    "process_all_to_all_p",
    "process_allreduce_p",
    "process_broadcast_p",
    "process_permute_p",
    "process_reduce_scatter_p",
    "process_replicated_p",
]


def _same_aval(x, **params):
    return [ShapedArray(x.shape, x.dtype, x.weak_type)], no_effects


def _shift(axis, bdim):
    """Where array axis `axis` of an unbatched value sits once batch axis `bdim` is
    in it."""
    return axis + 1 if bdim <= axis else axis


def _elementwise_batch(prim):
    def rule(axis_size, vals, dims, **params):
        return [prim.bind(vals[0], **params)], [dims[0]]

    return rule


def _axis_batch(prim, *axis_params):
    """Batching of a primitive whose `axis_params` name array axes: shift them past
    the batch axis, which stays where it is."""

    def rule(axis_size, vals, dims, **params):
        (x,), (d,) = vals, dims
        for p in axis_params:
            params[p] = _shift(params[p], d)
        return [prim.bind(x, **params)], [d]

    return rule


def _no_derivative(primals, tangents, *, axis_name, group, op):
    raise NotImplementedError(
        f"Differentiation rule for 'p{op}' not implemented: p{op} has no derivative "
        "in JAX either. Use a differentiable formulation, e.g. psum of a one-hot "
        "mask of where the extremum is."
    )


def _on_buffers(impl):
    """The native backend's host function of a primitive whose NumPy implementation
    is `impl` (`host.buffer_functions`): MPI reads the operand from the native buffer
    (a view, no copy) and its result is copied into the native result buffer."""

    def function(params):
        def run(x, out):
            np.copyto(out, impl(x, **params)[0], casting="no")

        return run

    return function


def _as_mpi_call(prim, on_buffers):
    """The backends' side of a collective across processes: natively a host call
    given the native buffers (`on_buffers`), pinned in its loops and weighed by
    tiering as a call into Python (see the module docstring)."""
    native_rules[prim] = "host_call"
    pinned_primitives.add(prim)
    host_call_primitives.add(prim)
    buffer_functions[prim] = on_buffers


# --------------------------------------------------------------------------------------
# process_allreduce


def _allreduce_impl(x, *, axis_name, group, op):
    return [mpi.allreduce(np.asarray(x), op, group)]


def _allreduce_on_buffers(params):
    """As `_on_buffers(_allreduce_impl)`, but MPI writes the result straight into
    native code's result buffer (no temporary array, no copy)."""
    op, group = params["op"], params["group"]

    def run(x, out):
        mpi.allreduce(x, op, group, out=out)

    return run


def _allreduce_jvp(primals, tangents, *, axis_name, group, op):
    if op != "sum":
        return _no_derivative(primals, tangents, axis_name=axis_name, group=group,
                              op=op)  # fmt: skip
    (x,), (t,) = primals, tangents
    out = process_allreduce_p.bind(x, axis_name=axis_name, group=group, op=op)
    if type(t) is ad.Zero:
        return [out], [t]
    return [out], [process_allreduce_p.bind(t, axis_name=axis_name, group=group,
                                             op=op)]  # fmt: skip


def _allreduce_transpose(ct, x, *, axis_name, group, op):
    if type(ct) is ad.Zero:
        return [None]
    return [process_allreduce_p.bind(ct, axis_name=axis_name, group=group, op=op)]


process_allreduce_p = Primitive("process_allreduce")
impl_rules[process_allreduce_p] = _allreduce_impl
abstract_eval_rules[process_allreduce_p] = _same_aval
ad.jvp_rules[process_allreduce_p] = _allreduce_jvp
ad.transpose_rules[process_allreduce_p] = _allreduce_transpose
batching.batch_rules[process_allreduce_p] = _elementwise_batch(process_allreduce_p)
_as_mpi_call(process_allreduce_p, _allreduce_on_buffers)


# --------------------------------------------------------------------------------------
# process_all_gather and process_reduce_scatter


def _all_gather_impl(x, *, axis_name, group, axis):
    x = np.moveaxis(np.asarray(x), axis, 0)
    out = mpi.allgather(x, group)
    out = out.reshape(out.shape[0] * out.shape[1], *out.shape[2:])
    return [np.moveaxis(out, 0, axis)]


def _all_gather_abstract(x, *, axis_name, group, axis):
    shape = list(x.shape)
    shape[axis] *= len(group)
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type)], no_effects


def _all_gather_transpose(ct, x, *, axis_name, group, axis):
    if type(ct) is ad.Zero:
        return [None]
    return [process_reduce_scatter_p.bind(ct, axis_name=axis_name, group=group,
                                          axis=axis)]  # fmt: skip


process_all_gather_p = Primitive("process_all_gather")
impl_rules[process_all_gather_p] = _all_gather_impl
abstract_eval_rules[process_all_gather_p] = _all_gather_abstract
ad.deflinear(process_all_gather_p, _all_gather_transpose)
batching.batch_rules[process_all_gather_p] = _axis_batch(process_all_gather_p, "axis")
_as_mpi_call(process_all_gather_p, _on_buffers(_all_gather_impl))


def _reduce_scatter_impl(x, *, axis_name, group, axis):
    x = np.moveaxis(np.asarray(x), axis, 0)
    x = x.reshape(len(group), x.shape[0] // len(group), *x.shape[1:])
    return [np.moveaxis(mpi.reduce_scatter(x, "sum", group), 0, axis)]


def _reduce_scatter_abstract(x, *, axis_name, group, axis):
    shape = list(x.shape)
    if shape[axis] % len(group):
        raise ValueError(
            f"process_reduce_scatter: axis {axis} of {x.str_short()} does not split "
            f"into {len(group)} equal blocks, one per process of axis {axis_name!r}."
        )
    shape[axis] //= len(group)
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type)], no_effects


def _reduce_scatter_transpose(ct, x, *, axis_name, group, axis):
    if type(ct) is ad.Zero:
        return [None]
    return [process_all_gather_p.bind(ct, axis_name=axis_name, group=group,
                                      axis=axis)]  # fmt: skip


process_reduce_scatter_p = Primitive("process_reduce_scatter")
impl_rules[process_reduce_scatter_p] = _reduce_scatter_impl
abstract_eval_rules[process_reduce_scatter_p] = _reduce_scatter_abstract
ad.deflinear(process_reduce_scatter_p, _reduce_scatter_transpose)
batching.batch_rules[process_reduce_scatter_p] = _axis_batch(
    process_reduce_scatter_p, "axis"
)
_as_mpi_call(process_reduce_scatter_p, _on_buffers(_reduce_scatter_impl))


# --------------------------------------------------------------------------------------
# process_all_to_all


def _all_to_all_impl(x, *, axis_name, group, split_axis, concat_axis):
    x = np.moveaxis(np.asarray(x), split_axis, 0)
    n = len(group)
    received = mpi.alltoall(x.reshape(n, x.shape[0] // n, *x.shape[1:]), group)
    blocks = [np.moveaxis(block, 0, split_axis) for block in received]
    return [np.concatenate(blocks, axis=concat_axis)]


def _all_to_all_abstract(x, *, axis_name, group, split_axis, concat_axis):
    shape = list(x.shape)
    if shape[split_axis] % len(group):
        raise ValueError(
            f"process_all_to_all: axis {split_axis} of {x.str_short()} does not split "
            f"into {len(group)} equal blocks, one per process of axis {axis_name!r}."
        )
    shape[split_axis] //= len(group)
    shape[concat_axis] *= len(group)
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type)], no_effects


def _all_to_all_transpose(ct, x, *, axis_name, group, split_axis, concat_axis):
    if type(ct) is ad.Zero:
        return [None]
    out = process_all_to_all_p.bind(
        ct, axis_name=axis_name, group=group, split_axis=concat_axis,
        concat_axis=split_axis,
    )  # fmt: skip
    return [out]


process_all_to_all_p = Primitive("process_all_to_all")
impl_rules[process_all_to_all_p] = _all_to_all_impl
abstract_eval_rules[process_all_to_all_p] = _all_to_all_abstract
ad.deflinear(process_all_to_all_p, _all_to_all_transpose)
batching.batch_rules[process_all_to_all_p] = _axis_batch(
    process_all_to_all_p, "split_axis", "concat_axis"
)
_as_mpi_call(process_all_to_all_p, _on_buffers(_all_to_all_impl))


# --------------------------------------------------------------------------------------
# process_permute


def _permute_impl(x, *, axis_name, group, perm, axis):
    x = np.moveaxis(np.asarray(x), axis, 0)
    return [np.moveaxis(mpi.permute(x, perm, group), 0, axis)]


def _permute_transpose(ct, x, *, axis_name, group, perm, axis):
    if type(ct) is ad.Zero:
        return [None]
    inverse = tuple((t, s) for s, t in perm)
    return [process_permute_p.bind(ct, axis_name=axis_name, group=group,
                                   perm=inverse, axis=axis)]  # fmt: skip


process_permute_p = Primitive("process_permute")
impl_rules[process_permute_p] = _permute_impl
abstract_eval_rules[process_permute_p] = _same_aval
ad.deflinear(process_permute_p, _permute_transpose)
batching.batch_rules[process_permute_p] = _axis_batch(process_permute_p, "axis")
_as_mpi_call(process_permute_p, _on_buffers(_permute_impl))


# --------------------------------------------------------------------------------------
# process_broadcast and process_replicated: identities marking the shard_map boundary


def _identity_impl(x, **params):
    return [x]


def _broadcast_transpose(ct, x, *, axis_name, group):
    if type(ct) is ad.Zero:
        return [None]
    return [process_allreduce_p.bind(ct, axis_name=axis_name, group=group, op="sum")]


process_broadcast_p = Primitive("process_broadcast")
impl_rules[process_broadcast_p] = _identity_impl
abstract_eval_rules[process_broadcast_p] = _same_aval
ad.deflinear(process_broadcast_p, _broadcast_transpose)
batching.batch_rules[process_broadcast_p] = _elementwise_batch(process_broadcast_p)
native_rules[process_broadcast_p] = "identity"


def _replicated_transpose(ct, x, *, axis_name, group):
    if type(ct) is ad.Zero:
        return [None]
    if group.index(process_index()) == 0:
        return [ct]
    # Zeros as an array, not a symbolic zero: every process must go on to run the
    # same collectives in the rest of the backward pass.
    aval = x.aval
    return [full(aval.shape, 0, aval.dtype)]


process_replicated_p = Primitive("process_replicated")
impl_rules[process_replicated_p] = _identity_impl
abstract_eval_rules[process_replicated_p] = _same_aval
ad.deflinear(process_replicated_p, _replicated_transpose)
batching.batch_rules[process_replicated_p] = _elementwise_batch(process_replicated_p)
native_rules[process_replicated_p] = "identity"


# --------------------------------------------------------------------------------------
# What shard_map calls


def broadcast_to_processes(x, axis_name, group):
    """`x`, replicated over the processes of `axis_name`, entering per-process code."""
    return process_broadcast_p.bind(x, axis_name=axis_name, group=group)


def replicated_over_processes(x, axis_name, group):
    """`x`, the same on every process of `axis_name`, leaving per-process code."""
    return process_replicated_p.bind(x, axis_name=axis_name, group=group)
