"""`jax.shard_map`: run a function once per device of a mesh, on its shard of the data.

Each mesh axis named in `axis_names` (all of them by default) is bound as a vmap
over that name, of the axis's size: the collectives' batching rules (lax/parallel.py)
already give each collective its meaning for the members of a named axis, so the
members of the vmap are the devices of the axis (psum sums over them, axis_index
numbers them, all_gather stacks them), under jit, grad and vmap alike. An argument
is split along the array axes its in_spec names (the vmaps map over the pieces), a
result concatenated along those its out_spec names; a result not split over a mesh
axis is the same on every device of it, and the first one's is returned. In one
process the mesh is jaxlite's one device, every axis has size 1, and each shard is
the whole array.

`check_vma` (True by default, as in JAX): a value unbatched over a manual axis is
invariant over it, one value on all its devices. Reverse mode inside the body (grad,
vjp, under jit too) then gives an invariant input one cotangent, summed over the
axis's devices (`vma_boundary` in `lax/parallel.py`), and a result whose out_spec
leaves a manual axis out must be invariant over it (JAX's ValueError otherwise).
With check_vma=False each device differentiates its own view, and such a result is
the first device's. jaxlite infers invariance from batching where JAX has types:
an all_gather, or a pcast to varying, of an invariant value stays invariant here, so
a replicated out_spec accepts it where JAX refuses.

Across processes (`jax.distributed.initialize`), each process holds a block of the
mesh (`distributed/topology.py`) and runs only that block's devices: the vmap of a
mesh axis is as long as this process's part of it, and a collective over an axis
that spans processes finishes across them over MPI (`lax/cross_process.py`). An
argument is taken whole from every process (the same value in each, as JAX takes
NumPy arguments) and this process's block cut out of it, or it is a `GlobalArray`
laid out as its in_spec says, whose block is already here. A result split across
processes comes back as a `GlobalArray`; one replicated over them as an Array. Under
`jit` a GlobalArray argument is traced with its global aval: the shard_map takes its
block with `process_block` and gives split results as global values with
`process_assemble` (`lax/process_blocks.py`), and each process runs the jitted
program on its blocks (`distributed/spmd.py`). At
the boundary, arguments and results replicated over process-spanning axes pass
through `process_broadcast`/`process_replicated` so that reverse mode sums their
cotangents over the processes (see `lax/cross_process.py`). The specs are validated
against the mesh, as in JAX.
"""

from __future__ import annotations

import functools
import math

from jaxlite import tree_util
from jaxlite.core import Tracer, find_cur_trace_is_eval, get_aval
from jaxlite.distributed.global_array import GlobalArray, global_array
from jaxlite.distributed.spmd import split_layout
from jaxlite.distributed.topology import mesh_layout, process_axes, spec_entries
from jaxlite.lax.process_blocks import process_assemble, process_block
from jaxlite.sharding import Mesh, PartitionSpec, get_mesh

__all__ = ["shard_map", "smap"]


class _Infer:
    def __repr__(self):
        return "jax.sharding.Infer"


Infer = _Infer()


def _spec_names(spec):
    for p in spec:
        for name in p if isinstance(p, tuple) else (p,):
            if isinstance(name, str):
                yield name


def _is_spec(s):
    return s is None or isinstance(s, PartitionSpec)


def _check_specs(specs, mesh, what):
    if specs is Infer or specs is None:
        return
    for spec in tree_util.tree_leaves(specs, is_leaf=_is_spec):
        if spec is None:
            continue
        if not isinstance(spec, PartitionSpec):
            raise TypeError(
                f"shard_map {what} must be PartitionSpecs (jax.P(...)) or pytrees of "
                f"them, got {spec!r}."
            )
        seen = set()
        for name in _spec_names(spec):
            if name not in mesh.axis_names:
                raise ValueError(
                    f"shard_map {what} refers to mesh axis {name!r}, which is not in "
                    f"the mesh {mesh!r}: use one of {mesh.axis_names}."
                )
            if name in seen:
                raise ValueError(
                    f"shard_map {what} {spec!r} names mesh axis {name!r} twice: a "
                    "mesh axis splits at most one array axis."
                )
            seen.add(name)


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None,
              axis_names=frozenset(), check_vma=True, check_rep=None):  # fmt: skip
    """Map `f` over the shards of its arguments on `mesh`, with the mesh axis names
    bound for collectives (see the module docstring)."""
    if f is None:
        return functools.partial(
            shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
            axis_names=axis_names, check_vma=check_vma, check_rep=check_rep,
        )  # fmt: skip
    if mesh is None:  # the mesh of `jax.set_mesh`
        mesh = get_mesh()
        if mesh.empty:
            raise ValueError(
                "The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter "
                "into a mesh context"
            )
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map requires mesh to be a Mesh, got {type(mesh)}.")
    _check_specs(in_specs, mesh, "in_specs")
    _check_specs(out_specs, mesh, "out_specs")
    names = tuple(n for n in mesh.axis_names if not axis_names or n in axis_names)
    program = _ShardMap(f, mesh, names, in_specs, out_specs, check_vma)

    @functools.wraps(f)
    def wrapped(*args):
        return program(args)

    return wrapped


class _ShardMap:
    """One shard_map: `f` on `mesh`'s manual axes `names` with its specs."""

    def __init__(self, f, mesh, names, in_specs, out_specs, check_vma=True):
        self.f = f
        self.check_vma = bool(check_vma)
        self.mesh = mesh
        self.names = names
        self.in_specs = in_specs
        self.out_specs = out_specs

    def __call__(self, args):
        layout = mesh_layout(self.mesh)
        for name in self.mesh.axis_names:
            if name not in self.names and layout.spans(name):
                raise NotImplementedError(
                    f"shard_map with mesh axis {name!r} left to the compiler "
                    "(not in axis_names) spans processes; jaxlite has no automatic "
                    "partitioner: make it a manual axis of the shard_map."
                )
        leaves, tree = tree_util.tree_flatten(args)
        splits = [_split_sharding(x) for x in leaves]
        specs = self._flat_in_specs(args, splits)
        local = [s is not None for s in splits]
        if not find_cur_trace_is_eval():  # under jit, grad, vmap: traced whole
            return self._run(tree, specs, local, layout, leaves, eager=False)
        blocks = [x._local if g else x for x, g in zip(leaves, local)]
        outs = self._run(tree, specs, local, layout, blocks, eager=True)
        out_leaves, out_tree = tree_util.tree_flatten(outs)
        out_specs = self._flat_out_specs(outs)
        results = [global_array(o, self.mesh, s) for o, s in zip(out_leaves, out_specs)]
        return tree_util.tree_unflatten(out_tree, results)

    def _flat_in_specs(self, args, splits):
        """The in_spec of each argument leaf, given the `NamedSharding` of each
        (None unless it is split across processes)."""
        if self.in_specs is Infer:  # from the GlobalArrays; replicated otherwise
            return [PartitionSpec() if s is None else s.spec for s in splits]
        specs = _broadcast_prefix(self.in_specs, args, "in_specs", "arguments")
        for sharding, spec in zip(splits, specs):
            if sharding is None:
                continue
            ndim = max(len(tuple(sharding.spec)), len(tuple(spec or ())))
            if sharding.mesh != self.mesh or spec_entries(
                sharding.spec, ndim
            ) != spec_entries(spec or PartitionSpec(), ndim):
                raise NotImplementedError(
                    f"shard_map got an array split across processes, laid out as "
                    f"{sharding!r}, for "
                    f"in_spec {spec!r} on mesh {self.mesh!r}; jaxlite does not move "
                    "data between processes to change a layout: build the argument "
                    "with that spec on that mesh."
                )
        return [PartitionSpec() if s is None else s for s in specs]

    def _run(self, tree, specs, local, layout, leaves, eager):
        """This process's part of the shard_map, on the arguments (this process's
        blocks where `local` says so): the results, as this process's blocks."""
        from jaxlite.interpreters import batching
        from jaxlite.lax.cross_process import broadcast_to_processes

        names = self.names
        blocks = []
        for x, spec, is_local in zip(leaves, specs, local):
            if is_local and not eager:  # a traced global value: take this block
                x = process_block(x, self.mesh, spec)
            # A whole value, the same in every process, enters per-process code
            # before this process's block is cut out of it; a process's block of a
            # GlobalArray is per-process already, but for the axes it is not split
            # over.
            split = set(_spec_names(spec)) if is_local else set()
            for name in names:
                if layout.spans(name) and name not in split:
                    x = broadcast_to_processes(x, name, layout.group(name))
            blocks.append(_shard_block(x, spec, layout, names, is_local))
        mapped = [set(_spec_names(spec)) for spec in specs]
        box = {}

        def per_device(*flat):
            outs = self.f(*tree_util.tree_unflatten(tree, flat))
            out_leaves, box["tree"] = tree_util.tree_flatten(outs)
            return out_leaves

        varying = {}  # name -> whether each result varies over that mesh axis

        def over(level, vals):
            """The function mapped over the mesh axes `names[level:]`; each result
            with a leading axis per name."""
            if level == len(names):
                return per_device(*vals)
            name = names[level]
            size = layout.local_sizes[name]
            in_dims = [0 if name in m else batching.not_mapped for m in mapped]
            outs, dims = batching.vmap_flat(
                lambda *xs: over(level + 1, xs), size, list(vals), in_dims,
                axis_name=name, vma=self.check_vma,
            )  # fmt: skip
            varying[name] = [d is not batching.not_mapped for d in dims]
            return [batching.move_to(o, d, 0, size) for o, d in zip(outs, dims)]

        with process_axes({name: layout.process_axis(name) for name in names}):
            out_leaves = over(0, blocks)
        outs = tree_util.tree_unflatten(box["tree"], out_leaves)
        out_specs = self._flat_out_specs(outs)
        if self.check_vma:
            self._check_replicated(box["tree"], out_specs, varying)
        results = [
            self._result(o, spec, layout, eager)
            for o, spec in zip(out_leaves, out_specs)
        ]
        return tree_util.tree_unflatten(box["tree"], results)

    def _check_replicated(self, out_tree, out_specs, varying):
        """With check_vma, a result whose out_spec leaves a manual axis out (so it
        is replicated over it) must not vary over that axis, as JAX infers it."""
        msgs = []
        dummy = tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        paths = [
            "" if _is_spec(self.out_specs) else tree_util.keystr(path)
            for path, _ in tree_util.tree_flatten_with_path(dummy)[0]
        ]
        for i, (spec, path) in enumerate(zip(out_specs, paths)):
            left_out = [n for n in self.names if n not in set(_spec_names(spec))]
            bad = [n for n in left_out if varying[n][i]]
            if not bad:
                continue
            if len(left_out) == 1:
                msgs.append(
                    f"* out_specs{path} is {spec} which implies that the "
                    "corresponding output value is replicated across mesh axis "
                    f"'{left_out[0]}', but could not infer replication over any axes"
                )
            else:
                need = ",".join(map(str, _spec_names(spec)))
                got = ",".join(n for n in self.names if varying[n][i])
                msgs.append(
                    f"* out_specs{path} is {spec} which implies that the "
                    f"corresponding output value is only varying across mesh axes "
                    f"{{{need}}} and not {{{','.join(bad)}}}, but it was inferred to "
                    f"be possibly varying over {{{got}}}"
                )
        if not msgs:
            return
        if len(msgs) == 1:
            msgs = [msgs[0][2:]]
        name = getattr(self.f, "__name__", str(self.f))
        raise ValueError(
            f"shard_map applied to the function '{name}' was given out_specs which "
            "require replication which can't be statically inferred given the "
            f"mesh:\n\nThe mesh given has shape {tuple(self.mesh.shape.values())} "
            f"with corresponding axis names {self.mesh.axis_names}.\n\n"
            + "\n\n".join(msgs)
            + "\n\nCheck if these output values are meant to be replicated over "
            "those mesh axes. If not, consider revising the corresponding out_specs "
            "entries. If so, consider disabling the check by passing the "
            "check_vma=False argument to `jax.shard_map`."
        )

    def _flat_out_specs(self, outs):
        specs = _broadcast_prefix(self.out_specs, outs, "out_specs", "results")
        return [PartitionSpec() if s is None else s for s in specs]

    def _result(self, out, spec, layout, eager):
        from jaxlite.lax.cross_process import replicated_over_processes

        names = self.names
        out = _merge_block(out, spec, layout, names)
        split = set(_spec_names(spec))
        for name in names:
            if layout.spans(name) and name not in split:
                out = replicated_over_processes(out, name, layout.group(name))
        if not eager and any(layout.spans(a) for a in split):
            # The global value, split across processes (a GlobalArray out of jit).
            return process_assemble(out, self.mesh, spec)
        return out


def _split_sharding(x):
    """The `NamedSharding` of argument `x` if it is split across processes (a
    GlobalArray, or a traced one under jit), else None."""
    if isinstance(x, GlobalArray):
        return x.sharding
    if isinstance(x, Tracer):
        return split_layout(x.aval)
    return None


def _broadcast_prefix(prefix, tree, what, of):
    """The spec for each leaf of `tree`, from `prefix`, a pytree prefix of it."""
    result = []

    def add(spec, subtree):
        result.extend([spec] * len(tree_util.tree_leaves(subtree)))

    try:
        tree_util.tree_map(add, prefix, tree, is_leaf=_is_spec)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"shard_map {what} must be a pytree prefix of the {of} (a PartitionSpec "
            f"for each, or one for all): {e}"
        ) from None
    return result


def _shard_block(x, spec, layout, names, is_local):
    """The argument `x` (the whole value, or this process's block if `is_local`)
    as this process's shards: the mesh axes its spec names become leading axes, in
    the order of `names`, each as long as this process's part of that mesh axis."""
    from jaxlite.lax.indexing import slice as lax_slice
    from jaxlite.lax.structural import reshape, transpose

    shape = get_aval(x).shape
    entries = spec_entries(spec, len(shape))
    if len(tuple(spec)) > len(shape):
        raise ValueError(
            f"shard_map in_spec {spec!r} has {len(tuple(spec))} entries for an "
            f"argument of rank {len(shape)} (shape {shape})."
        )
    split_shape, starts, limits, where = [], [], [], {}
    cut = False
    for n, entry in zip(shape, entries):
        pieces = math.prod(layout.mesh.shape[a] for a in entry)
        if is_local:
            pieces = math.prod(layout.local_sizes[a] for a in entry)
        if n % pieces:
            raise ValueError(
                f"shard_map: an argument of shape {shape} cannot be split over mesh "
                f"axes {entry} ({pieces} pieces) along an axis of size {n}; the "
                "mesh axis sizes must divide the array axis."
            )
        for a in entry:
            where[a] = len(split_shape)
            size, local = layout.mesh.shape[a], layout.local_sizes[a]
            if is_local or size == local:
                split_shape.append(local)
                starts.append(0)
                limits.append(local)
            else:  # cut this process's part out of the whole value
                cut = True
                split_shape.append(size)
                starts.append(layout.coords[a] * local)
                limits.append((layout.coords[a] + 1) * local)
        split_shape.append(n // pieces)
        starts.append(0)
        limits.append(n // pieces)
    if not where:
        return x
    x = reshape(x, tuple(split_shape))
    if cut:
        x = lax_slice(x, starts, limits)
    leading = [where[a] for a in names if a in where]
    order = leading + [i for i in range(len(split_shape)) if i not in leading]
    if order != sorted(order):
        x = transpose(x, order)
    return x


def _merge_block(out, spec, layout, names):
    """A result of the vmapped function (a leading axis per name of `names`) as
    this process's block: the first member along axes its out_spec does not split,
    the members concatenated into the array axes it does."""
    from jaxlite.lax.indexing import index_in_dim
    from jaxlite.lax.structural import reshape, transpose

    split = set(_spec_names(spec))
    for name in reversed(names):
        if name not in split:
            i = names.index(name)
            out = index_in_dim(out, 0, i, keepdims=False)
    kept = [a for a in names if a in split]
    body = get_aval(out).shape[len(kept) :]
    if len(tuple(spec)) > len(body):
        raise ValueError(
            f"shard_map out_spec {spec!r} has {len(tuple(spec))} entries for a "
            f"result of rank {len(body)} (shape {body})."
        )
    if not kept:
        return out
    order, shape = [], []
    for d, entry in enumerate(spec_entries(spec, len(body))):
        order += [kept.index(a) for a in entry]
        order.append(len(kept) + d)
        shape.append(math.prod(layout.local_sizes[a] for a in entry) * body[d])
    if order != sorted(order):
        out = transpose(out, order)
    return reshape(out, tuple(shape))


def _bind_axes(f, axes, args):
    from jaxlite.api_vmap import vmap
    from jaxlite.lax.indexing import index_in_dim

    g = f
    for name, size in reversed(axes):
        assert size == 1, (name, size)
        g = vmap(g, in_axes=None, out_axes=0, axis_name=name, axis_size=1)
    out = g(*args)
    for _ in axes:
        out = tree_util.tree_map(
            lambda leaf: index_in_dim(leaf, 0, 0, keepdims=False), out
        )
    return out


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """Map `f` over one mesh axis `axis_name` (size 1 on jaxlite's one device)."""
    if f is None:
        return functools.partial(smap, in_axes=in_axes, out_axes=out_axes,
                                 axis_name=axis_name)  # fmt: skip

    @functools.wraps(f)
    def wrapped(*args):
        return _bind_axes(f, [(axis_name, 1)], args)

    return wrapped
