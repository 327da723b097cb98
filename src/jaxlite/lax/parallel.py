"""Collectives over named axes: psum, pmean, pmax, pmin, axis_index, axis_size,
all_gather, ppermute, pshuffle, psum_scatter and all_to_all.

In JAX these communicate between the devices of a `pmap` (or the members of a named
`vmap`). jaxlite runs on one device and its `pmap` is `jit(vmap)`, so a collective only
ever meets a vmap: its batching rule sees the whole named axis at once (the members are
the slices along the batch dimension) and computes the collective with ordinary lax
operations, e.g. `psum` over the vmap's own axis becomes a sum over the batch dimension
whose result is unbatched. Each BatchTrace handles only its own name and hands the
other names on to its parent (see `interpreters/batching.py`), so nested vmaps work in
any order. `psum` and `pmax`/`pmin` also accept positional (integer) axes, which reduce
like `reduce_sum`: that is what a batched `psum` prints as, as in JAX
(`psum[axes=(0,) axis_index_groups=None]`). A collective over a name that no enclosing
vmap binds raises JAX's NameError ("unbound axis name").

A named axis can also span processes (a `shard_map` over a mesh of several processes'
devices, see `distributed/topology.py`): the vmap then holds this process's members
of the axis, and each rule, after its work among them, finishes the collective
across the processes with a primitive of `lax/cross_process.py` (an MPI call).

The linear collectives transpose into each other (psum into psum, all_gather into
psum_scatter, ppermute into the inverse permutation, all_to_all into all_to_all with
the axes swapped), so they work under grad; pmax and pmin have no derivative, as in JAX.
"""

from __future__ import annotations

import math

import numpy as np

from jaxlite import dtypes, tree_util
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.distributed.topology import process_axis
from jaxlite.interpreters import ad, batching
from jaxlite.interpreters.batching import (
    axis_exists,
    axis_size_of,
    bdim_at_front,
    moveaxis,
    not_mapped,
    rule_axis_name,
)
from jaxlite.lax import cross_process as xp
from jaxlite.lax import elementwise as ew
from jaxlite.lax import structural as st
from jaxlite.lax.constructors import full
from jaxlite.lax.indexing import slice_in_dim
from jaxlite.lax.reductions import reduce_sum

__all__ = [
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "pargmax",
    "pargmin",
    "axis_index",
    "axis_size",
    "all_gather",
    "ppermute",
    "pshuffle",
    "pswapaxes",
    "psum_scatter",
    "all_to_all",
    "psum_p",
    "pmax_p",
    "pmin_p",
    "axis_index_p",
    "all_gather_p",
    "ppermute_p",
    "reduce_scatter_p",
    "all_to_all_p",
]


# --------------------------------------------------------------------------------------
# Shared helpers


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _named(axes):
    return tuple(a for a in axes if not isinstance(a, int))


def _check_bound(axes, api_name):
    for name in _named(axes):
        if not axis_exists(name):
            raise NameError(
                f"Found an unbound axis name: {name}. To fix this, please call "
                f"{api_name} inside jax.vmap(..., axis_name={name!r}) or "
                f"jax.pmap(..., axis_name={name!r}) (or make_jaxpr's axis_env)."
            )


def _impl_unbound(api_name):
    def impl(*args, axis_name=None, axes=None, **params):
        names = _named(_names(axis_name if axes is None else axes))
        raise NameError(
            f"unbound axis name: {names[0] if names else axis_name}. {api_name} over a "
            "named axis must run inside jax.vmap or jax.pmap with that axis_name."
        )

    return impl


def _axis_size(name):
    """The size of the named axis: its vmap's, times the processes it spans."""
    across = process_axis(name)
    size = axis_size_of(name)
    return size if across is None else size * across.count


def _group_size(axis_name):
    return math.prod(_axis_size(name) for name in _names(axis_name))


def _across_processes(x, name, op):
    """`x`, reduced over this process's members of axis `name`, reduced over the
    processes the axis spans too (if it spans any)."""
    across = process_axis(name)
    if across is None:
        return x
    return xp.process_allreduce_p.bind(x, axis_name=name, group=across.group, op=op)


def _no_groups(axis_index_groups):
    if axis_index_groups is not None:
        raise NotImplementedError(
            "axis_index_groups not supported in vmap collectives. Please open a "
            "feature request! (Compute the groups with a reshape of the mapped axis.)"
        )


def _single_name(prim, axis_name, name):
    if len(axis_name) > 1:
        raise NotImplementedError(
            f"{prim} over several axes {axis_name} inside vmap is not supported: apply "
            f"it to one axis name at a time (the vmap named {name!r} is one of them)."
        )


def _const_of(v, value):
    dtype, weak = dtypes.dtype_and_weak(v)
    return full((), value, dtype) if not weak else value


# --------------------------------------------------------------------------------------
# psum, pmax, pmin: all-reduce over named axes (and positional ones, like reduce_*)


def _allreduce_abstract(name, x, *, axes, axis_index_groups):
    _check_bound(axes, name)
    pos = tuple(a for a in axes if isinstance(a, int))
    if axis_index_groups is not None and pos:
        raise ValueError(
            "axis_index_groups can only be used with reductions over named axes, but "
            f"got: {axes}"
        )
    if any(not 0 <= a < len(x.shape) for a in pos):
        raise ValueError(f"{name} axes {axes} out of range for {x.str_short()}")
    shape = tuple(d for i, d in enumerate(x.shape) if i not in pos)
    return [ShapedArray(shape, x.dtype, x.weak_type)], no_effects


def _allreduce_impl(name, np_fn):
    unbound = _impl_unbound(name)

    def impl(x, *, axes, axis_index_groups):
        if _named(axes):
            return unbound(x, axes=axes)
        return [np.asarray(np_fn(np.asarray(x), axes))]

    return impl


def _allreduce_batch(prim, op, if_unmapped):
    """Batching of psum/pmax/pmin: the vmap's own name becomes its batch dimension
    (a positional axis of the same primitive), other axes pass on to the parent."""

    def rule(axis_size, vals, dims, *, axes, axis_index_groups):
        (x,), (d,) = vals, dims
        name = rule_axis_name()
        ours = name is not None and name in axes
        if ours or any(isinstance(a, int) for a in axes):
            _no_groups(axis_index_groups)
        if d is not_mapped:
            if not ours:
                return [prim.bind(x, axes=axes, axis_index_groups=axis_index_groups)], [
                    not_mapped
                ]
            rest = tuple(a for a in axes if a != name)
            if rest:
                x = prim.bind(x, axes=rest, axis_index_groups=None)
            return [_across_processes(if_unmapped(x, axis_size), name, op)], [
                not_mapped
            ]
        x = moveaxis(x, d, 0)
        shifted = tuple(a + 1 if isinstance(a, int) else a for a in axes)
        if not ours:
            if not any(isinstance(a, int) for a in axes):
                out = prim.bind(x, axes=axes, axis_index_groups=axis_index_groups)
                return [out], [0]
            return [prim.bind(x, axes=shifted, axis_index_groups=None)], [0]
        new_axes = tuple(0 if a == name else a for a in shifted)
        out = prim.bind(x, axes=new_axes, axis_index_groups=None)
        return [_across_processes(out, name, op)], [not_mapped]

    return rule


def _psum_transpose(ct, x, *, axes, axis_index_groups):
    if type(ct) is ad.Zero:
        return [None]
    pos = tuple(a for a in axes if isinstance(a, int))
    if pos:
        kept = tuple(i for i in range(len(x.aval.shape)) if i not in pos)
        ct = st.broadcast_in_dim(ct, x.aval.shape, kept)
    named = _named(axes)
    if not named:
        return [ct]
    return [psum_p.bind(ct, axes=named, axis_index_groups=axis_index_groups)]


def _no_derivative(name):
    def rule(primals, tangents, **params):
        raise NotImplementedError(
            f"Differentiation rule for '{name}' not implemented: {name} has no "
            "derivative in JAX either. Use a differentiable formulation, e.g. "
            "psum of a one-hot mask of where the extremum is."
        )

    return rule


def _allreduce_names(params):
    return _named(params["axes"])


psum_p = Primitive("psum")
impl_rules[psum_p] = _allreduce_impl(
    "psum", lambda x, axes: np.sum(x, axis=axes, dtype=x.dtype)
)
abstract_eval_rules[psum_p] = lambda x, **p: _allreduce_abstract("psum", x, **p)
ad.deflinear(psum_p, _psum_transpose)
batching.batch_rules[psum_p] = _allreduce_batch(
    psum_p, "sum", lambda v, n: ew.mul(_const_of(v, n), v)
)
batching.collective_axis_names[psum_p] = _allreduce_names
native_rules[psum_p] = "reduce_sum"  # compiled: positional axes only

pmax_p = Primitive("pmax")
impl_rules[pmax_p] = _allreduce_impl("pmax", lambda x, axes: np.max(x, axis=axes))
abstract_eval_rules[pmax_p] = lambda x, **p: _allreduce_abstract("pmax", x, **p)
ad.jvp_rules[pmax_p] = _no_derivative("pmax")
batching.batch_rules[pmax_p] = _allreduce_batch(pmax_p, "max", lambda v, n: v)
batching.collective_axis_names[pmax_p] = _allreduce_names
native_rules[pmax_p] = "reduce_max"  # compiled: positional axes only

pmin_p = Primitive("pmin")
impl_rules[pmin_p] = _allreduce_impl("pmin", lambda x, axes: np.min(x, axis=axes))
abstract_eval_rules[pmin_p] = lambda x, **p: _allreduce_abstract("pmin", x, **p)
ad.jvp_rules[pmin_p] = _no_derivative("pmin")
batching.batch_rules[pmin_p] = _allreduce_batch(pmin_p, "min", lambda v, n: v)
batching.collective_axis_names[pmin_p] = _allreduce_names
native_rules[pmin_p] = "reduce_min"  # compiled: positional axes only


def _as_reducible(leaf):
    if dtypes.dtype_and_weak(leaf)[0] == np.bool_:
        return ew.convert_element_type(leaf, np.int32)
    return leaf


def psum(x, axis_name, *, axis_index_groups=None):
    """All-reduce sum of `x` (a pytree) over the named axis or axes `axis_name`.

    Without a traced operand (`psum(1, "i")`) the result is the value times the axis
    size, computed right away, as in JAX."""
    axes = _names(axis_name)
    if not axes:
        return x
    if any(isinstance(a, int) for a in axes) and axis_index_groups is not None:
        raise ValueError(
            "axis_index_groups only supported for sums over just named axes"
        )
    leaves, tree = tree_util.tree_flatten(x)
    leaves = [_as_reducible(leaf) for leaf in leaves]
    if all(not isinstance(leaf, Tracer) for leaf in leaves):
        if axis_index_groups is not None:
            size = len(axis_index_groups[0])
        else:
            size = _group_size(_named(axes))
        pos = tuple(a for a in axes if isinstance(a, int))
        outs = []
        for leaf in leaves:
            if pos:
                leaf = reduce_sum(leaf, pos)
            if isinstance(leaf, (int, float, complex)):
                outs.append(size * leaf)
            else:
                outs.append(ew.mul(_const_of(leaf, size), st.operand(leaf)))
        return tree_util.tree_unflatten(tree, outs)
    groups = _canonical_groups(axis_index_groups)
    outs = [psum_p.bind(leaf, axes=axes, axis_index_groups=groups) for leaf in leaves]
    return tree_util.tree_unflatten(tree, outs)


def _canonical_groups(axis_index_groups):
    if axis_index_groups is None:
        return None
    groups = tuple(tuple(int(i) for i in g) for g in axis_index_groups)
    flat = sorted(i for g in groups for i in g)
    if flat != list(range(len(flat))):
        raise ValueError("axis_index_groups must cover all indices exactly once")
    return groups


def pmean(x, axis_name, *, axis_index_groups=None):
    """All-reduce mean of `x` (a pytree) over `axis_name`."""
    x = psum(x, axis_name, axis_index_groups=axis_index_groups)
    n = axis_size(axis_name) if axis_index_groups is None else len(axis_index_groups[0])
    return tree_util.tree_map(lambda v: v / n, x)


def _allreduce(prim, x, axis_name, axis_index_groups):
    axes = _names(axis_name)
    if any(isinstance(a, int) for a in axes) and axis_index_groups is not None:
        raise ValueError(
            "axis_index_groups only supported for sums over just named axes"
        )
    groups = _canonical_groups(axis_index_groups)
    return tree_util.tree_map(
        lambda leaf: prim.bind(leaf, axes=axes, axis_index_groups=groups), x
    )


def pmax(x, axis_name, *, axis_index_groups=None):
    """All-reduce maximum of `x` (a pytree) over `axis_name`."""
    return _allreduce(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """All-reduce minimum of `x` (a pytree) over `axis_name`."""
    return _allreduce(pmin_p, x, axis_name, axis_index_groups)


def _index_of_value(x, val, axis_name):
    idx = axis_index(axis_name)
    big = np.iinfo(np.int32).max
    return pmin(ew.select(ew.eq(x, val), idx, full(np.shape(x), big, np.int32)),
                axis_name)  # fmt: skip


def pargmax(x, axis_name):
    """The index along `axis_name` of the member holding the maximum (the first)."""
    if isinstance(axis_name, (tuple, list)):
        raise TypeError(f"pargmin only accepts a single axis, got {axis_name}")
    return _index_of_value(x, pmax(x, axis_name), axis_name)


def pargmin(x, axis_name):
    """The index along `axis_name` of the member holding the minimum (the first)."""
    if isinstance(axis_name, (tuple, list)):
        raise TypeError(f"pargmin only accepts a single axis, got {axis_name}")
    return _index_of_value(x, pmin(x, axis_name), axis_name)


# --------------------------------------------------------------------------------------
# axis_index and axis_size


def _axis_index_abstract(*, axis_name):
    _check_bound((axis_name,), "axis_index")
    return [ShapedArray((), np.dtype(np.int32))], no_effects


def _axis_index_batch(axis_size, vals, dims, *, axis_name):
    if axis_name != rule_axis_name():
        return [axis_index_p.bind(axis_name=axis_name)], [not_mapped]
    index = st.iota(np.int32, axis_size)
    across = process_axis(axis_name)
    if across is not None:  # this process's members come after the previous ones'
        index = ew.add(index, np.int32(across.coord * axis_size))
    return [index], [0]


axis_index_p = Primitive("axis_index")
impl_rules[axis_index_p] = _impl_unbound("axis_index")
abstract_eval_rules[axis_index_p] = _axis_index_abstract
batching.batch_rules[axis_index_p] = _axis_index_batch
batching.collective_axis_names[axis_index_p] = lambda p: (p["axis_name"],)


def axis_index(axis_name):
    """This member's int32 index along the named axis (row-major over a tuple)."""
    if not isinstance(axis_name, (tuple, list)):
        return axis_index_p.bind(axis_name=axis_name)
    index = None
    inner = 1
    for name in reversed(tuple(axis_name)):
        term = ew.mul(axis_index(name), np.int32(inner))
        index = term if index is None else ew.add(index, term)
        inner *= _axis_size(name)
    return index


def axis_size(axis_name):
    """The size of the named axis (the product of the sizes for a tuple of names)."""
    return psum(1, axis_name)


# --------------------------------------------------------------------------------------
# all_gather: every member gets the stack (or concatenation, `tiled`) of all members


def _all_gather_abstract(
    x, *, all_gather_dimension, axis_index_groups, axis_name, axis_size, tiled
):
    _check_bound(axis_name, "all_gather")
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type)], no_effects


def _all_gather_batch(
    size, vals, dims, *, all_gather_dimension, axis_index_groups, axis_name,
    axis_size, tiled,
):  # fmt: skip
    (x,), (d,) = vals, dims
    name = rule_axis_name()
    if name not in axis_name:
        x = moveaxis(x, d, 0)
        out = all_gather_p.bind(
            x,
            all_gather_dimension=all_gather_dimension + 1,
            axis_index_groups=axis_index_groups,
            axis_name=axis_name,
            axis_size=axis_size,
            tiled=tiled,
        )
        return [out], [0]
    _no_groups(axis_index_groups)
    _single_name("all_gather", axis_name, name)
    out = moveaxis(bdim_at_front(x, d, size), 0, all_gather_dimension)
    across = process_axis(name)
    if across is not None:  # this process's members, then every process's
        out = xp.process_all_gather_p.bind(
            out, axis_name=name, group=across.group, axis=all_gather_dimension
        )
    if tiled:
        shape = list(np.shape(out))
        shape[all_gather_dimension : all_gather_dimension + 2] = [
            shape[all_gather_dimension] * shape[all_gather_dimension + 1]
        ]
        out = st.reshape(out, tuple(shape))
    return [out], [not_mapped]


def _all_gather_transpose(ct, x, *, all_gather_dimension, axis_index_groups,
                          axis_name, axis_size, tiled):  # fmt: skip
    if type(ct) is ad.Zero:
        return [None]
    out = reduce_scatter_p.bind(
        ct,
        axis_index_groups=axis_index_groups,
        axis_name=axis_name,
        axis_size=axis_size,
        scatter_dimension=all_gather_dimension,
        tiled=tiled,
    )
    return [out]


all_gather_p = Primitive("all_gather")
impl_rules[all_gather_p] = _impl_unbound("all_gather")
abstract_eval_rules[all_gather_p] = _all_gather_abstract
ad.deflinear(all_gather_p, _all_gather_transpose)
batching.batch_rules[all_gather_p] = _all_gather_batch
batching.collective_axis_names[all_gather_p] = lambda p: p["axis_name"]


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """Gather `x` (a pytree) from every member of `axis_name`: stacked along a new
    axis `axis`, or concatenated along `axis` when `tiled`."""
    axis_name = _names(axis_name)
    if not axis_name:
        return x
    groups = _canonical_groups(axis_index_groups)
    size = len(groups[0]) if groups is not None else _group_size(axis_name)

    def bind(leaf):
        ndim = np.ndim(leaf)
        dim = _canonical_axis(axis, ndim if tiled else ndim + 1, "all_gather")
        return all_gather_p.bind(
            leaf,
            all_gather_dimension=dim,
            axis_index_groups=groups,
            axis_name=axis_name,
            axis_size=size,
            tiled=tiled,
        )

    return tree_util.tree_map(bind, x)


def _canonical_axis(axis, ndim, what):
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for rank {ndim}")
    return axis % ndim


# --------------------------------------------------------------------------------------
# psum_scatter (the reduce_scatter primitive): sum, then member j keeps block j


def _reduce_scatter_abstract(
    x, *, axis_index_groups, axis_name, axis_size, scatter_dimension, tiled
):
    _check_bound(axis_name, "reduce_scatter")
    shape = list(x.shape)
    n = shape[scatter_dimension]
    if tiled:
        if n % axis_size:
            raise ValueError(
                f"tiled reduce_scatter operand scatter dimension size {n} must be "
                f"divisible by shard_count {axis_size}"
            )
        shape[scatter_dimension] = n // axis_size
    else:
        if n != axis_size:
            raise ValueError(
                f"reduce_scatter operand scatter dimension size {n} must match shard "
                f"count {axis_size}"
            )
        del shape[scatter_dimension]
    return [ShapedArray(tuple(shape), x.dtype, x.weak_type)], no_effects


def _reduce_scatter_batch(
    size, vals, dims, *, axis_index_groups, axis_name, axis_size,
    scatter_dimension, tiled,
):  # fmt: skip
    (x,), (d,) = vals, dims
    name = rule_axis_name()
    if name not in axis_name:
        out = reduce_scatter_p.bind(
            moveaxis(x, d, 0),
            axis_index_groups=axis_index_groups,
            axis_name=axis_name,
            axis_size=axis_size,
            scatter_dimension=scatter_dimension + 1,
            tiled=tiled,
        )
        return [out], [0]
    _no_groups(axis_index_groups)
    _single_name("psum_scatter", axis_name, name)
    if d is not_mapped:
        total = ew.mul(_const_of(x, size), x)
    else:
        total = reduce_sum(x, (d,))
    n = np.shape(total)[scatter_dimension]
    count = _axis_size(name)
    if tiled and n % count:
        raise ValueError(
            f"tiled reduce_scatter operand scatter dimension size {n} must be "
            f"divisible by shard_count {count}"
        )
    if not tiled and n != count:
        raise ValueError(
            f"reduce_scatter operand scatter dimension size {n} must match shard "
            f"count {count}"
        )
    across = process_axis(name)
    if across is not None:  # the sum over the processes; this one's block of it
        total = xp.process_reduce_scatter_p.bind(
            total, axis_name=name, group=across.group, axis=scatter_dimension
        )
        n //= across.count
    if tiled:
        shape = list(np.shape(total))
        shape[scatter_dimension : scatter_dimension + 1] = [size, n // size]
        total = st.reshape(total, tuple(shape))
    return [total], [scatter_dimension]


def _reduce_scatter_transpose(ct, x, *, axis_index_groups, axis_name, axis_size,
                              scatter_dimension, tiled):  # fmt: skip
    if type(ct) is ad.Zero:
        return [None]
    out = all_gather_p.bind(
        ct,
        all_gather_dimension=scatter_dimension,
        axis_index_groups=axis_index_groups,
        axis_name=axis_name,
        axis_size=axis_size,
        tiled=tiled,
    )
    return [out]


reduce_scatter_p = Primitive("reduce_scatter")
impl_rules[reduce_scatter_p] = _impl_unbound("psum_scatter")
abstract_eval_rules[reduce_scatter_p] = _reduce_scatter_abstract
ad.deflinear(reduce_scatter_p, _reduce_scatter_transpose)
batching.batch_rules[reduce_scatter_p] = _reduce_scatter_batch
batching.collective_axis_names[reduce_scatter_p] = lambda p: p["axis_name"]


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None,
                 tiled=False):  # fmt: skip
    """Sum `x` (a pytree) over `axis_name`; member j keeps slice j of the sum along
    `scatter_dimension` (block j of size n/size when `tiled`)."""
    axis_name = _names(axis_name)
    if not axis_name:
        return x
    groups = _canonical_groups(axis_index_groups)
    size = len(groups[0]) if groups is not None else _group_size(axis_name)

    def bind(leaf):
        dim = _canonical_axis(scatter_dimension, np.ndim(leaf), "psum_scatter")
        return reduce_scatter_p.bind(
            leaf,
            axis_index_groups=groups,
            axis_name=axis_name,
            axis_size=size,
            scatter_dimension=dim,
            tiled=tiled,
        )

    return tree_util.tree_map(bind, x)


# --------------------------------------------------------------------------------------
# ppermute and pshuffle: member dst receives member src's value (zeros if no source)


def _ppermute_abstract(x, *, axis_name, perm):
    _check_bound(axis_name, "ppermute")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)], no_effects


def _check_perm(perm, size):
    srcs = [s for s, _ in perm]
    dsts = [t for _, t in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(
            f"ppermute sources and destinations must be unique, got {perm}."
        )
    if any(not 0 <= i < size for i in srcs + dsts):
        raise ValueError(
            f"ppermute perm {perm} has an index out of range for the axis of size {size}."
        )


def _permute_front(x, perm, size):
    """x[src] to position dst along axis 0 (zeros where no source), by slices: one per
    run of consecutive sources, so a cyclic shift costs two."""
    source = dict((t, s) for s, t in perm)
    pieces = []
    j = 0
    while j < size:
        s = source.get(j)
        k = j + 1
        if s is None:
            while k < size and source.get(k) is None:
                k += 1
            shape = (k - j, *np.shape(x)[1:])
            pieces.append(full(shape, 0, dtypes.dtype_and_weak(x)[0]))
        else:
            while k < size and source.get(k) == s + (k - j):
                k += 1
            pieces.append(slice_in_dim(x, s, s + k - j, axis=0))
        j = k
    return pieces[0] if len(pieces) == 1 else st.concatenate(pieces, 0)


def _ppermute_batch(size, vals, dims, *, axis_name, perm):
    (x,), (d,) = vals, dims
    name = rule_axis_name()
    if name not in axis_name:
        return [ppermute_p.bind(x, axis_name=axis_name, perm=perm)], [d]
    _single_name("ppermute", axis_name, name)
    count = _axis_size(name)
    _check_perm(perm, count)
    if d is not_mapped and len(perm) == count:
        return [x], [not_mapped]
    across = process_axis(name)
    if across is None:
        return [_permute_front(bdim_at_front(x, d, size), perm, size)], [0]
    out = xp.process_permute_p.bind(
        bdim_at_front(x, d, size), axis_name=name, group=across.group, perm=perm,
        axis=0,
    )  # fmt: skip
    return [out], [0]


def _ppermute_transpose(ct, x, *, axis_name, perm):
    if type(ct) is ad.Zero:
        return [None]
    inverse = tuple((t, s) for s, t in perm)
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


ppermute_p = Primitive("ppermute")
impl_rules[ppermute_p] = _impl_unbound("ppermute")
abstract_eval_rules[ppermute_p] = _ppermute_abstract
ad.deflinear(ppermute_p, _ppermute_transpose)
batching.batch_rules[ppermute_p] = _ppermute_batch
batching.collective_axis_names[ppermute_p] = lambda p: p["axis_name"]


def ppermute(x, axis_name, perm):
    """Send `x` (a pytree) from member `src` to member `dst` for each `(src, dst)` in
    `perm`; a member that receives nothing gets zeros."""
    axis_name = _names(axis_name)
    perm = tuple((int(s), int(t)) for s, t in perm)
    return tree_util.tree_map(
        lambda leaf: ppermute_p.bind(leaf, axis_name=axis_name, perm=perm), x
    )


def pshuffle(x, axis_name, perm):
    """Member i receives the value of member `perm[i]`."""
    if set(perm) != set(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


# --------------------------------------------------------------------------------------
# all_to_all: split `split_axis` into blocks, send block j to member j, concatenate the
# received blocks along `concat_axis`


def _all_to_all_abstract(
    x, *, axis_index_groups, axis_name, concat_axis, split_axis, tiled
):
    names = _names(axis_name)
    _check_bound(names, "all_to_all")
    size = len(axis_index_groups[0]) if axis_index_groups else _group_size(names)
    shape = list(x.shape)
    if shape[split_axis] % size:
        raise ValueError(
            f"The size of all_to_all split_axis ({shape[split_axis]}) has to be "
            f"divisible by the size of the named axis {axis_name} ({size})"
        )
    shape[split_axis] //= size
    shape[concat_axis] *= size
    return [ShapedArray(tuple(shape), x.dtype)], no_effects


def _all_to_all_batch(size, vals, dims, *, axis_index_groups, axis_name,
                      concat_axis, split_axis, tiled):  # fmt: skip
    (x,), (d,) = vals, dims
    name = rule_axis_name()
    names = _names(axis_name)
    if name not in names:
        out = all_to_all_p.bind(
            moveaxis(x, d, 0),
            axis_index_groups=axis_index_groups,
            axis_name=axis_name,
            concat_axis=concat_axis + 1,
            split_axis=split_axis + 1,
            tiled=tiled,
        )
        return [out], [0]
    _no_groups(axis_index_groups)
    _single_name("all_to_all", names, name)
    # x[k] is member k's value; block j of its split axis goes to member j.
    x = bdim_at_front(x, d, size)
    s, c = split_axis + 1, concat_axis + 1
    across = process_axis(name)
    if across is not None:
        # Each process gets the blocks for its members from every process, which
        # then stand along axis 0 as the sources k (all the axis's members, in
        # order); the split axis keeps the blocks of this process's members j.
        x = xp.process_all_to_all_p.bind(
            x, axis_name=name, group=across.group, split_axis=s, concat_axis=0
        )
    shape = list(np.shape(x))
    m = shape[s] // size
    # [k, ..., (j, m) at s, ...] with axis labels: k=0, j at s, m at s+1.
    x = st.reshape(x, tuple(shape[:s] + [size, m] + shape[s + 1 :]))
    rank = len(shape) + 1
    labels = list(range(rank))  # positions in the reshaped array
    k_pos, j_pos = 0, s
    # The output per member j: the input's other axes, with k placed before the
    # concat axis's data (blocks concatenated in member order), then merged.
    rest = [p for p in labels if p not in (k_pos, j_pos)]
    # `rest` lists the operand's axes (split axis now of size m) in order; the concat
    # axis is at index c - 1 of that list.
    perm = [j_pos] + rest[: c - 1] + [k_pos] + rest[c - 1 :]
    x = st.transpose(x, tuple(perm))
    out_shape = list(np.shape(x))
    merged = out_shape[:c] + [out_shape[c] * out_shape[c + 1]] + out_shape[c + 2 :]
    return [st.reshape(x, tuple(merged))], [0]


def _all_to_all_transpose(ct, x, *, axis_index_groups, axis_name, concat_axis,
                          split_axis, tiled):  # fmt: skip
    if type(ct) is ad.Zero:
        return [None]
    out = all_to_all_p.bind(
        ct,
        axis_index_groups=axis_index_groups,
        axis_name=axis_name,
        concat_axis=split_axis,
        split_axis=concat_axis,
        tiled=tiled,
    )
    return [out]


all_to_all_p = Primitive("all_to_all")
impl_rules[all_to_all_p] = _impl_unbound("all_to_all")
abstract_eval_rules[all_to_all_p] = _all_to_all_abstract
ad.deflinear(all_to_all_p, _all_to_all_transpose)
batching.batch_rules[all_to_all_p] = _all_to_all_batch
batching.collective_axis_names[all_to_all_p] = lambda p: _names(p["axis_name"])


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):  # fmt: skip
    """Split `split_axis` of `x` (a pytree) into one block per member of `axis_name`,
    send block j to member j, and concatenate what each member receives along
    `concat_axis` (stacked along a new axis there unless `tiled`)."""
    groups = _canonical_groups(axis_index_groups)

    def bind(leaf):
        split, concat = split_axis, concat_axis
        size = len(groups[0]) if groups is not None else _group_size(axis_name)
        n = np.shape(leaf)[split]
        if tiled:
            if n % size:
                raise ValueError(
                    f"The size of all_to_all split_axis ({n}) has to be divisible by "
                    f"the size of the named axis {axis_name} ({size})"
                )
        else:
            if size != n:
                raise ValueError(
                    "all_to_all requires the size of the mapped axis axis_name to "
                    f"equal x.shape[split_axis], but they are {size} and {n} "
                    "respectively."
                )
            if split < concat:
                concat += 1
                leaf = st.expand_dims(leaf, (concat,))
            elif split > concat:
                leaf = st.expand_dims(leaf, (concat,))
                split += 1
        out = all_to_all_p.bind(
            leaf,
            axis_index_groups=groups,
            axis_name=axis_name,
            concat_axis=concat,
            split_axis=split,
            tiled=tiled,
        )
        if not tiled and split != concat:
            out = st.squeeze(out, (split,))
        return out

    return tree_util.tree_map(bind, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the named axis with positional axis `axis` (all_to_all(x, n, axis, axis))."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# --------------------------------------------------------------------------------------
# vma_boundary: reverse mode inside a shard_map with check_vma=True
#
# With check_vma (JAX's "varying manual axes" types), a value unbatched over a manual
# axis is invariant: one value, the same on every device of the axis, whose cotangent
# is one value too (summed over the devices). jaxlite keeps the collectives' rules of
# check_vma=False (each device's own view, where psum transposes to psum) and converts
# at the boundary of each `vjp` (`ad.vjp_flat`), as shard_map's boundary does across
# processes (`lax/cross_process.py`): inside, the cotangent of an invariant value is
# held as partial sums, one per device, whose sum is the cotangent. So a `vjp` inside
# the body marks each input and output tangent of its linear map with
# `vma_boundary_p(t, p, kind, axes)`, `p` the primal (only its batching matters),
# identities forward:
# - kind "in" (an input's tangent) transposes to "sum": over each axis of `axes` that
#   `p` is invariant over, the sum of the partial cotangents (psum);
# - kind "out" (an output's tangent) transposes to "seed": over each axis that `p` is
#   invariant over, the cotangent goes to the first device only, zeros elsewhere
#   (partial sums that add up to it once).
# "sum" and "seed" are linear in `t` and symmetric (their own transposes), so a
# derivative of the backward pass (grad of grad) differentiates them as such. Under
# jit in the body the marks are staged with the rest and take effect when the jaxpr
# is batched, where `p`'s batching is known.


def _vma_boundary_abstract(x, p, *, kind, axes):
    return [ShapedArray(x.shape, x.dtype, x.weak_type)], no_effects


def _vma_boundary_jvp(primals, tangents, *, kind, axes):
    (x, p), (t, _) = primals, tangents
    out = vma_boundary_p.bind(x, p, kind=kind, axes=axes)
    if type(t) is ad.Zero:
        return [out], [t]
    return [out], [vma_boundary_p.bind(t, p, kind=kind, axes=axes)]


_VMA_TRANSPOSE = {"in": "sum", "out": "seed", "sum": "sum", "seed": "seed"}


def _vma_boundary_transpose(ct, x, p, *, kind, axes):
    if type(ct) is ad.Zero:
        return [None, None]
    return [vma_boundary_p.bind(ct, p, kind=_VMA_TRANSPOSE[kind], axes=axes), None]


def _first_member_only(size, x, d, name):
    """`x` (the same on every member of axis `name`) on its first member, zeros on
    the others (across the processes the axis spans too)."""
    x = bdim_at_front(x, d, size)
    index = st.iota(np.int32, size)
    across = process_axis(name)
    if across is not None:
        index = ew.add(index, np.int32(across.coord * size))
    first = st.broadcast_in_dim(ew.eq(index, np.int32(0)), np.shape(x), (0,))
    zeros = full(np.shape(x), 0, dtypes.dtype_and_weak(x)[0])
    return ew.select(first, x, zeros)


def _vma_boundary_batch(size, vals, dims, *, kind, axes):
    (x, p), (dx, dp) = vals, dims
    name = rule_axis_name()
    if name not in axes:
        return [vma_boundary_p.bind(x, p, kind=kind, axes=axes)], [dx]
    if dp is not_mapped and kind == "sum":
        psum_rule = batching.batch_rules[psum_p]
        (x,), (dx,) = psum_rule(size, [x], [dx], axes=(name,), axis_index_groups=None)
    elif dp is not_mapped and kind == "seed":
        x, dx = _first_member_only(size, x, dx, name), 0
    rest = tuple(a for a in axes if a != name)
    if rest:  # the enclosing manual axes' part
        x = vma_boundary_p.bind(x, p, kind=kind, axes=rest)
    return [x], [dx]


vma_boundary_p = Primitive("vma_boundary")
impl_rules[vma_boundary_p] = lambda x, p, *, kind, axes: [x]
abstract_eval_rules[vma_boundary_p] = _vma_boundary_abstract
ad.jvp_rules[vma_boundary_p] = _vma_boundary_jvp
ad.transpose_rules[vma_boundary_p] = _vma_boundary_transpose
batching.batch_rules[vma_boundary_p] = _vma_boundary_batch
batching.collective_axis_names[vma_boundary_p] = lambda p: p["axes"]
native_rules[vma_boundary_p] = "identity"


def vma_boundary(xs, primals, kind, axes):
    """Tangents `xs` of `primals` marked as entering ("in") or leaving ("out") a
    `vjp`'s linear map, over the check_vma manual axes `axes` (see above)."""
    return [
        vma_boundary_p.bind(x, p, kind=kind, axes=axes)
        if dtypes.issubdtype(dtypes.dtype_and_weak(x)[0], np.inexact)
        else x
        for x, p in zip(xs, primals)
    ]


ad.vjp_boundary_rules["vma"] = vma_boundary
