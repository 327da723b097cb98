"""Which mesh axes span processes, and how: what `shard_map`, `pmap` and the
collectives need to know to run a mesh axis partly here and partly elsewhere.

`MeshLayout(mesh)` reads a mesh's devices: each process holds a block of the mesh,
`local_sizes[a]` devices long along axis `a`; the blocks tile the mesh, so axis `a`
spans `counts[a]` processes and this process sits at `coords[a]` among them. Every
process must hold a block of the same shape (as the meshes `jax.make_mesh` builds
from `jax.devices()` do); `group(a)` is the world ranks of the processes along `a`
that share this process's position on the other axes, by position along `a`.

While `shard_map` (or a multi-process `pmap`) traces its function, `process_axes`
binds each mesh axis name that spans processes to a `ProcessAxis` (count, coord,
group). A collective's batching rule (`lax/parallel.py`) asks `process_axis(name)`:
None means the named vmap is the whole axis, as in one process; otherwise the vmap
holds this process's `local` members, member `coord * local + j` of the axis, and
the rule finishes the collective across `group` (`lax/cross_process.py`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from typing import NamedTuple

import numpy as np

from jaxlite import cpu_device, tree_util


class ProcessAxis(NamedTuple):
    """A named axis spanning `count` processes, this one at `coord`; `group` their
    world ranks by position."""

    count: int
    coord: int
    group: tuple


class _Context(threading.local):
    axes: dict = {}


_context = _Context()


@contextlib.contextmanager
def process_axes(bindings):
    """Bind axis names to `ProcessAxis`es (or to None: an axis within this process)
    while tracing."""
    previous = _context.axes
    axes = dict(previous)
    for name, axis in bindings.items():
        if axis is None:
            axes.pop(name, None)
        else:
            axes[name] = axis
    _context.axes = axes
    try:
        yield
    finally:
        _context.axes = previous


def bound_process_axes():
    """The axis names bound to processes now, for `process_axes` to bind again
    where a rule traced later (a custom_vjp's bwd under a vmap) runs."""
    return dict(_context.axes)


def process_axis(name):
    """The `ProcessAxis` bound to `name`, or None if the axis is within a process."""
    axes = _context.axes
    return axes.get(name) if axes else None


# `process_broadcast` ("enter") and `process_replicated` ("leave") of
# lax/cross_process.py, registered by lax/process_blocks.py: where a value replicated
# over the processes enters per-process code and leaves it.
boundary_primitives: dict = {}


def spanning_processes(fun, axis_name, replicated=(), out_replicated=False):
    """`fun` with `axis_name` bound to every process, this one's members first: a
    `pmap` across processes (each maps its own leading axis). The positional
    arguments numbered in `replicated` (pmap's `in_axes=None`) are the same in every
    process, and so are the results if `out_replicated` (`out_axes=None`): they cross
    into and out of per-process code as a shard_map's replicated values do, so that
    reverse mode sums their cotangents over the processes (`lax/cross_process.py`)."""
    count = cpu_device.process_count()
    if axis_name is None or count == 1:
        return fun
    group = tuple(range(count))
    axis = ProcessAxis(count, cpu_device.process_index(), group)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        def enter(x):
            return boundary_primitives["enter"].bind(x, axis_name=axis_name,
                                                     group=group)  # fmt: skip

        def leave(x):
            return boundary_primitives["leave"].bind(x, axis_name=axis_name,
                                                     group=group)  # fmt: skip

        args = [
            tree_util.tree_map(enter, a) if i in replicated else a
            for i, a in enumerate(args)
        ]
        with process_axes({axis_name: axis}):
            out = fun(*args, **kwargs)
        return tree_util.tree_map(leave, out) if out_replicated else out

    return wrapped


class MeshLayout:
    """How `mesh`'s devices split into per-process blocks (see the module doc)."""

    def __init__(self, mesh):
        names = mesh.axis_names
        owners = np.vectorize(lambda d: d.process_index, otypes=[np.int64])(
            mesh.devices
        ).reshape(mesh.devices.shape)
        blocks = {}
        for p in np.unique(owners).tolist():
            where = np.argwhere(owners == p)
            lo, hi = where.min(0), where.max(0) + 1
            if math.prod((hi - lo).tolist()) != len(where):
                raise ValueError(
                    f"The devices of process {p} in mesh {mesh!r} do not form a "
                    "block of the mesh; jaxlite needs every process's devices to be "
                    "one block (build the mesh with jax.make_mesh, or order the "
                    "devices by process)."
                )
            blocks[p] = (tuple(lo.tolist()), tuple((hi - lo).tolist()))
        shapes = {shape for _, shape in blocks.values()}
        if len(shapes) != 1:
            raise ValueError(
                f"The processes hold blocks of different shapes in mesh {mesh!r}: "
                f"{sorted(shapes)}; jaxlite needs the same number of devices of each "
                "process along each mesh axis."
            )
        (local,) = shapes
        me = cpu_device.process_index()
        if me not in blocks:
            raise ValueError(
                f"Mesh {mesh!r} has no device of this process ({me}); jaxlite runs "
                "shard_map on meshes that include every process taking part."
            )
        origin = blocks[me][0]
        for name, size, n, o in zip(names, mesh.axis_sizes, local, origin):
            if size % n or o % n:
                raise ValueError(
                    f"Mesh axis {name!r} of size {size} is split into blocks of {n} "
                    "devices that do not tile it."
                )
        self.mesh = mesh
        self.local_sizes = dict(zip(names, local))
        self.counts = {a: s // n for a, s, n in zip(names, mesh.axis_sizes, local)}
        self.coords = {a: o // n for a, o, n in zip(names, origin, local)}
        # The process owning each block, indexed by block position.
        self._owners = owners[tuple(slice(None, None, n) for n in local)]

    def spans(self, name):
        """Whether mesh axis `name` spans more than one process."""
        return self.counts[name] > 1

    def group(self, name):
        """The world ranks of the processes along axis `name` that share this
        process's position on the other axes, by position along `name`."""
        axis = self.mesh.axis_names.index(name)
        index = [self.coords[a] for a in self.mesh.axis_names]
        index[axis] = slice(None)
        return tuple(self._owners[tuple(index)].tolist())

    def process_axis(self, name):
        """The `ProcessAxis` of mesh axis `name`, or None if it is within this
        process."""
        if not self.spans(name):
            return None
        return ProcessAxis(self.counts[name], self.coords[name], self.group(name))

    def local_devices(self):
        """This process's devices in the mesh, as an array of its block's shape."""
        index = tuple(
            slice(self.coords[a] * n, (self.coords[a] + 1) * n)
            for a, n in self.local_sizes.items()
        )
        return self.mesh.devices[index]


_layouts: dict = {}


def mesh_layout(mesh):
    """The (cached) `MeshLayout` of `mesh` under the current process topology."""
    key = (mesh, cpu_device.process_index(), cpu_device.process_count())
    layout = _layouts.get(key)
    if layout is None:
        layout = _layouts[key] = MeshLayout(mesh)
    return layout


def spec_entries(spec, ndim):
    """`spec` as one tuple of mesh axis names per array axis (`ndim` of them)."""
    entries = []
    for p in tuple(spec)[:ndim]:
        names = p if isinstance(p, tuple) else (p,)
        entries.append(tuple(n for n in names if isinstance(n, str)))
    return entries + [()] * (ndim - len(entries))


def device_indices(mesh, spec, shape):
    """For each device of `mesh`: (device, the index of its shard of an array of
    `shape` laid out as `spec`, the index of that shard in this process's block or
    None if the device is another process's, its replica id)."""
    layout = mesh_layout(mesh)
    names = mesh.axis_names
    entries = spec_entries(spec, len(shape))
    mentioned = {a for entry in entries for a in entry}
    others = [a for a in names if a not in mentioned]
    sizes = mesh.shape
    local = layout.local_sizes
    for position in np.ndindex(*mesh.devices.shape):
        at = dict(zip(names, position))
        mine = all(at[a] // local[a] == layout.coords[a] for a in names)
        index, local_index = [], []
        for n, entry in zip(shape, entries):
            step = n // math.prod(sizes[a] for a in entry)
            b = _row_major([at[a] for a in entry], [sizes[a] for a in entry])
            index.append(slice(b * step, (b + 1) * step))
            lb = _row_major(
                [at[a] % local[a] for a in entry], [local[a] for a in entry]
            )
            local_index.append(slice(lb * step, (lb + 1) * step))
        replica = _row_major([at[a] for a in others], [sizes[a] for a in others])
        yield (
            mesh.devices[position],
            tuple(index),
            tuple(local_index) if mine else None,
            replica,
        )


def _row_major(index, sizes):
    flat = 0
    for i, n in zip(index, sizes):
        flat = flat * n + i
    return flat
