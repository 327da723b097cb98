"""`jax.shard_map`: run a function once per device of a mesh, on its shard of the data.

jaxlite has one device, so every mesh axis has size 1 and each "shard" is the whole
array. `shard_map(f, mesh=..., in_specs=..., out_specs=...)` therefore runs `f` on the
whole arguments with the mesh's axis names bound, so that collectives over them
(`lax.psum(x, 'x')`, `axis_index`, `all_gather`, ...) work with their size-1 meaning.
It binds each name as a vmap of size 1 over that name: the collectives' batching
rules (lax/parallel.py) already give each collective its meaning for the members of a
named axis, so a size-1 vmap gives exactly the one-device result (psum is the
identity, axis_index is 0, all_gather adds an axis of size 1), under jit, grad and
vmap alike. The specs are validated against the mesh, as in JAX.
"""

from __future__ import annotations

import functools

from jaxlite import tree_util
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


def _check_specs(specs, mesh, what):
    if specs is Infer or specs is None:
        return
    leaves = tree_util.tree_leaves(
        specs, is_leaf=lambda s: isinstance(s, PartitionSpec) or s is None
    )
    for spec in leaves:
        if spec is None:
            continue
        if not isinstance(spec, PartitionSpec):
            raise TypeError(
                f"shard_map {what} must be PartitionSpecs (jax.P(...)) or pytrees of "
                f"them, got {spec!r}."
            )
        for name in _spec_names(spec):
            if name not in mesh.axis_names:
                raise ValueError(
                    f"shard_map {what} refers to mesh axis {name!r}, which is not in "
                    f"the mesh {mesh!r}: use one of {mesh.axis_names}."
                )


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None,
              axis_names=frozenset(), check_vma=True, check_rep=None):  # fmt: skip
    """Map `f` over the shards of its arguments on `mesh` (one device: the whole
    arrays), with the mesh axis names bound for collectives."""
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
    names = tuple(axis_names) if axis_names else mesh.axis_names
    sizes = mesh.shape

    @functools.wraps(f)
    def wrapped(*args):
        return _bind_axes(f, [(n, sizes[n]) for n in names], args)

    return wrapped


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
