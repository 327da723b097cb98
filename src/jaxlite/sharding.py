"""`jax.sharding`: how arrays are laid out over devices. jaxlite has one device, so
every sharding places the whole array on it; these classes exist so that code that
builds meshes and passes shardings (`device_put(x, NamedSharding(mesh, P('x')))`,
`jit(..., in_shardings=...)`) runs unchanged. They validate what they are given and
answer the questions JAX's do (`device_set`, `num_devices`, `is_fully_replicated`).

Meshes come concrete (`Mesh`, over devices) and abstract (`AbstractMesh`, axis names,
sizes and `AxisType`s only: what tracing sees). `jax.set_mesh` makes a mesh current
for the thread (`get_mesh`, `get_abstract_mesh`), so that PartitionSpecs alone name a
sharding (`reshard(x, P('x'))`). An aval's `sharding` is a `NamedSharding` over the
empty abstract mesh, replicated (`default_aval_sharding`), as JAX reports for an
unsharded value; on one device no sharding changes a value or its type.
"""

from __future__ import annotations

import collections
import enum
import functools
import threading

import numpy as np

from jaxlite import tree_util
from jaxlite.cpu_device import process_index
from jaxlite.errors import DuplicateSpecError


class Sharding:
    """The base class of all shardings."""

    memory_kind = "device"

    @property
    def device_set(self):
        from jaxlite.cpu_device import devices

        return set(devices())

    @property
    def num_devices(self):
        return len(self.device_set)

    is_fully_replicated = True
    is_fully_addressable = True

    def addressable_devices_indices_map(self, global_shape):
        """Each device and the index of the part of the array it holds (all of it)."""
        return {d: (slice(None),) * len(global_shape) for d in self.device_set}

    def devices_indices_map(self, global_shape):
        return self.addressable_devices_indices_map(global_shape)

    def shard_shape(self, global_shape):
        return tuple(global_shape)


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self.memory_kind = memory_kind or "device"

    @property
    def device(self):
        return self._device

    @property
    def device_set(self):
        return {self._device}

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash((SingleDeviceSharding, self._device))

    def __repr__(self):
        return (
            f"SingleDeviceSharding(device={self._device!r}, "
            f"memory_kind={self.memory_kind})"
        )


class _Unconstrained:
    """`P.UNCONSTRAINED`: an array axis whose sharding the compiler may choose."""

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_unconstrained, ())


def _unconstrained():
    return PartitionSpec.UNCONSTRAINED


class PartitionSpec(tuple):
    """How each array axis is split over mesh axes: a mesh axis name, a tuple of
    names, None (not split) or `P.UNCONSTRAINED`, one entry per array axis."""

    UNCONSTRAINED = _Unconstrained()

    def __new__(cls, *partitions):
        for p in partitions:
            names = p if isinstance(p, tuple) else (p,)
            for name in names:
                if (
                    name is not None
                    and not isinstance(name, str)
                    and name != ...
                    and name is not cls.UNCONSTRAINED
                ):
                    raise TypeError(
                        "PartitionSpec entries must be mesh axis names (str), tuples "
                        f"of names, None or P.UNCONSTRAINED; got {p!r}."
                    )
        return super().__new__(cls, partitions)

    def __repr__(self):  # as JAX: `P()`, `P('x',)`, `P('x', None)`
        body = ", ".join(repr(p) for p in self)
        return f"P({body},)" if len(self) == 1 else f"P({body})"

    __str__ = __repr__


P = PartitionSpec


class AxisType(enum.Enum):
    """How a mesh axis shards values: `Auto` (the compiler decides), `Explicit`
    (shardings are part of the types) or `Manual` (inside `shard_map`)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


def _axis_types(axis_names, axis_types, default, what):
    if axis_types is None:
        return (default,) * len(axis_names)
    if isinstance(axis_types, AxisType):
        axis_types = (axis_types,)
    axis_types = tuple(axis_types)
    if len(axis_types) != len(axis_names):
        raise ValueError(
            "Number of axis names should match the number of axis_types. Got "
            f"axis_names={axis_names} and axis_types={axis_types}"
        )
    for t in axis_types:
        if not isinstance(t, AxisType):
            raise TypeError(f"{what} axis_types must be AxisTypes, got {t!r}.")
    return axis_types


class _MeshAxes:
    """What concrete and abstract meshes share: axis names, sizes and types."""

    @property
    def shape(self):
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self):
        return int(np.prod(self.axis_sizes, dtype=np.int64))

    @property
    def empty(self):
        return not self.axis_names

    def _names_of(self, kind):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is kind)

    auto_axes = property(lambda self: self._names_of(AxisType.Auto))
    explicit_axes = property(lambda self: self._names_of(AxisType.Explicit))
    manual_axes = property(lambda self: self._names_of(AxisType.Manual))

    def are_all_axes_auto(self):
        return all(t is AxisType.Auto for t in self.axis_types)

    def are_all_axes_explicit(self):
        return all(t is AxisType.Explicit for t in self.axis_types)

    def are_all_axes_manual(self):
        return all(t is AxisType.Manual for t in self.axis_types)

    def _axes_str(self):
        sizes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple)
        return f"{sizes}, axis_types={tuple(self.axis_types)!r}"


class AbstractMesh(_MeshAxes):
    """A mesh's axis names, sizes and types without devices: what tracing sees
    (`jax.sharding.get_abstract_mesh()`, `mesh.abstract_mesh`)."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, _device_kind=None):
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(
                f"AbstractMesh got {len(self.axis_sizes)} axis sizes and "
                f"{len(self.axis_names)} axis names; give one size per name."
            )
        self.axis_types = _axis_types(
            self.axis_names, axis_types, AxisType.Auto, "AbstractMesh"
        )
        self._device_kind = _device_kind

    abstract_device = None

    @property
    def abstract_mesh(self):
        return self

    def update(self, axis_sizes=None, axis_names=None, axis_types=None):
        return AbstractMesh(
            self.axis_sizes if axis_sizes is None else axis_sizes,
            self.axis_names if axis_names is None else axis_names,
            self.axis_types if axis_types is None else axis_types,
            _device_kind=self._device_kind,
        )

    def update_axis_types(self, name_to_type):
        types = tuple(
            name_to_type.get(n, t) for n, t in zip(self.axis_names, self.axis_types)
        )
        return self.update(axis_types=types)

    def _unimplemented(name):  # noqa: N805  (builds properties below)
        def get(self):
            raise ValueError(f"AbstractMesh does not implement {name}")

        return property(get)

    devices = _unimplemented("devices")
    device_ids = _unimplemented("device_ids")
    local_devices = _unimplemented("local_devices")
    local_mesh = _unimplemented("local_mesh")
    del _unimplemented

    is_multi_process = False

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types, self._device_kind)

    def __eq__(self, other):
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        device = ""
        if self._device_kind is not None:
            device = f", device_kind={self._device_kind}, num_cores=None, platform=cpu"
        return f"AbstractMesh({self._axes_str()}{device})"


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


class Mesh(_MeshAxes):
    """A grid of devices with named axes. On jaxlite every axis has size 1."""

    def __init__(self, devices, axis_names, axis_types=None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal "
                "the length of its second argument (`axis_names`), but got "
                f"devices.ndim == {self.devices.ndim} and len(axis_names) == "
                f"{len(self.axis_names)}."
            )
        self.axis_types = _axis_types(
            self.axis_names, axis_types, AxisType.Auto, "Mesh"
        )

    @property
    def axis_sizes(self):
        return tuple(self.devices.shape)

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self):
        """The devices of this process (all of them in a single process)."""
        me = process_index()
        return [d for d in self.devices.flat if getattr(d, "process_index", me) == me]

    @property
    def local_mesh(self):
        """The mesh of this process's devices (its block of this mesh)."""
        if not self.is_multi_process:
            return self
        from jaxlite.distributed.topology import mesh_layout

        local = mesh_layout(self).local_devices()
        return Mesh(local, self.axis_names, self.axis_types)

    @property
    def is_multi_process(self):
        return len({getattr(d, "process_index", 0) for d in self.devices.flat}) > 1

    @property
    def abstract_mesh(self):
        return AbstractMesh(
            self.axis_sizes, self.axis_names, self.axis_types, _device_kind="cpu"
        )

    def update(self, devices=None, axis_names=None, axis_types=None):
        return Mesh(
            self.devices if devices is None else devices,
            self.axis_names if axis_names is None else axis_names,
            self.axis_types if axis_types is None else axis_types,
        )

    def _key(self):
        ids = tuple(d.id for d in self.devices.flat)
        return (self.devices.shape, ids, self.axis_names, self.axis_types)

    def __eq__(self, other):
        return isinstance(other, Mesh) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return (
            f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
            f"axis_types={tuple(self.axis_types)!r})"
        )

    def __str__(self):  # as JAX: `Mesh('x': 1, axis_types=(Explicit,))`
        return f"Mesh({self._axes_str()})" if self.axis_names else "Mesh()"


class NamedSharding(Sharding):
    """An array laid out over `mesh` as `spec` says."""

    def __init__(self, mesh, spec=None, *, memory_kind=None):
        spec = PartitionSpec() if spec is None else spec
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        _check_spec(spec, mesh)
        self.mesh = mesh
        self.spec = spec
        abstract = isinstance(mesh, AbstractMesh)
        self.memory_kind = memory_kind or (None if abstract else "device")

    def update(self, **kwargs):
        """A copy with `spec`, `mesh` or `memory_kind` replaced (a `spec` may be a
        sequence), as JAX's. JAX's `_logical_device_ids` is accepted and has no
        meaning here; other names are ignored, as JAX ignores them."""
        spec = kwargs.pop("spec", self.spec)
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        return NamedSharding(
            kwargs.pop("mesh", self.mesh),
            spec,
            memory_kind=kwargs.pop("memory_kind", self.memory_kind),
        )

    @property
    def device_set(self):
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError(
                "device_set is not implemented for `jax.sharding.AbstractMesh`."
            )
        return set(self.mesh.devices.flat)

    @property
    def num_devices(self):
        if isinstance(self.mesh, AbstractMesh):
            return self.mesh.size if self.mesh.axis_names else 0
        return len(self.device_set)

    @property
    def is_fully_addressable(self):
        return isinstance(self.mesh, AbstractMesh) or not self.mesh.is_multi_process

    @property
    def addressable_devices(self):
        return set(self.mesh.local_devices)

    def devices_indices_map(self, global_shape):
        """Each device and the index of its part of an array of `global_shape`."""
        from jaxlite.distributed.topology import device_indices

        if isinstance(self.mesh, AbstractMesh):
            return super().devices_indices_map(global_shape)  # raises, as JAX
        found = device_indices(self.mesh, self.spec, tuple(global_shape))
        return {device: index for device, index, _, _ in found}

    def addressable_devices_indices_map(self, global_shape):
        """The same for this process's devices."""
        from jaxlite.distributed.topology import device_indices

        if isinstance(self.mesh, AbstractMesh):
            return super().addressable_devices_indices_map(global_shape)
        found = device_indices(self.mesh, self.spec, tuple(global_shape))
        return {d: index for d, index, local, _ in found if local is not None}

    def shard_shape(self, global_shape):
        sizes = self.mesh.shape
        shape = list(global_shape)
        for i, p in enumerate(self.spec):
            for name in p if isinstance(p, tuple) else (p,):
                if isinstance(name, str):
                    shape[i] //= sizes[name]
        return tuple(shape)

    def __eq__(self, other):
        return (
            isinstance(other, NamedSharding)
            and other.mesh == self.mesh
            and other.spec == self.spec
            and other.memory_kind == self.memory_kind
        )

    def __hash__(self):
        return hash((NamedSharding, self.mesh, self.spec))

    def __repr__(self):
        memory = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}{memory})"


def _check_spec(spec, mesh):
    """JAX's checks of a spec against a mesh: names exist, none is used twice."""
    seen = set()
    for p in spec:
        for name in p if isinstance(p, tuple) else (p,):
            if not isinstance(name, str):
                continue
            if name not in mesh.axis_names:
                raise ValueError(
                    f"Resource axis: {name} of {spec!r} is not found in mesh: "
                    f"{mesh.axis_names}."
                )
            if name in seen:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh "
                    f"axis to at most one positional dimension, but {spec!r} has "
                    f"duplicate entries for `{name}`"
                )
            seen.add(name)


@functools.cache
def default_aval_sharding(ndim):
    """What an aval with no sharding of its own reports (`jax.typeof(x).sharding`):
    replicated over the empty abstract mesh, as in JAX."""
    return NamedSharding(EMPTY_ABSTRACT_MESH, PartitionSpec(*[None] * ndim))


# The current mesh, per thread: `set_mesh` (concrete) and `use_abstract_mesh`.


class _MeshContext(threading.local):
    def __init__(self):
        self.mesh = None  # a Mesh, or None: the empty mesh
        self.abstract_mesh = None  # set by use_abstract_mesh; else the mesh's


_context = _MeshContext()
_EMPTY_MESH = None


def get_mesh():
    """The concrete mesh `jax.set_mesh` made current (`Mesh()`, empty, if none)."""
    global _EMPTY_MESH
    if _context.mesh is not None:
        return _context.mesh
    if _EMPTY_MESH is None:
        _EMPTY_MESH = Mesh(np.empty((), dtype=object), ())
    return _EMPTY_MESH


def get_abstract_mesh():
    """The abstract mesh of the current context (the empty one by default)."""
    if _context.abstract_mesh is not None:
        return _context.abstract_mesh
    if _context.mesh is not None:
        return _context.mesh.abstract_mesh
    return EMPTY_ABSTRACT_MESH


class set_mesh:  # noqa: N801  (JAX's name; a setter and a context manager)
    """Make `mesh` the current mesh of this thread: `jax.set_mesh(mesh)` sets it,
    `with jax.set_mesh(mesh):` sets it for the block (and restores the previous
    one after). Under a mesh, a PartitionSpec alone names a sharding."""

    def __init__(self, mesh):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(
                f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}"
            )
        self._previous = (_context.mesh, _context.abstract_mesh)
        _context.mesh = None if mesh is None or mesh.empty else mesh
        _context.abstract_mesh = None

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _context.mesh, _context.abstract_mesh = self._previous
        return False


class use_abstract_mesh:  # noqa: N801  (JAX's name)
    """`with use_abstract_mesh(abstract_mesh):` makes it what tracing sees."""

    def __init__(self, mesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError(
                f"Expected mesh of type `jax.sharding.AbstractMesh`. Got {type(mesh)}"
            )
        self._mesh = mesh

    def __enter__(self):
        self._previous = _context.abstract_mesh
        _context.abstract_mesh = self._mesh
        return None

    def __exit__(self, *exc):
        _context.abstract_mesh = self._previous
        return False


def _canonical_sharding(s, api):
    """`s` (a NamedSharding, or a PartitionSpec under the current mesh) checked as
    `api` (reshard) checks it in JAX."""
    if isinstance(s, PartitionSpec):
        mesh = get_abstract_mesh()
        if mesh.empty:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not "
                "allowed. Please pass a NamedSharding instance or enter into a mesh "
                f"context via `jax.set_mesh`. Got {s!r}"
            )
        _check_spec(s, mesh)
        for p in s:
            for name in p if isinstance(p, tuple) else (p,):
                if not isinstance(name, str):
                    continue
                kind = mesh.axis_types[mesh.axis_names.index(name)]
                if kind is not AxisType.Explicit:
                    raise ValueError(
                        f"PartitionSpec passed to {api} cannot contain axis names "
                        f"that are of type Auto or Manual. Got PartitionSpec: {s!r} "
                        f"with axis name: {name} of type: {kind}."
                    )
        return NamedSharding(mesh, s)
    if isinstance(s, Sharding):
        return s
    raise TypeError(
        f"{api} expects a NamedSharding or a PartitionSpec for each value, got "
        f"{s!r} of type {type(s)}."
    )


def reshard(xs, out_shardings):
    """`xs` laid out as `out_shardings` says (one sharding or spec for all of
    `xs`, or a tree of them matching it). On one device the values are unchanged:
    the shardings are checked as JAX checks them and `xs` is returned."""

    def is_leaf(s):
        return s is None or isinstance(s, (PartitionSpec, Sharding))

    if is_leaf(out_shardings):
        shardings = [out_shardings] * len(tree_util.tree_leaves(xs))
    else:
        shardings = tree_util.tree_structure(xs).flatten_up_to(out_shardings)
        shardings = [
            s for sub in shardings for s in tree_util.tree_leaves(sub, is_leaf=is_leaf)
        ]
    for s in shardings:
        if s is not None:
            _canonical_sharding(s, "reshard")
    return xs


def _axes_decorator(f, keyword, sharding):
    if f is None:
        return functools.partial(_axes_decorator, keyword=keyword, sharding=sharding)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        if keyword in kwargs:
            kwargs.pop(keyword)
        return f(*args, **kwargs)

    return wrapped


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """Run `f` with `axes` of the current mesh treated as Auto; its results are
    laid out as `out_sharding` (also accepted as a call keyword). On one device
    the function runs unchanged."""
    return _axes_decorator(f, "out_sharding", out_sharding)


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """Run `f` with `axes` of the current mesh treated as Explicit, its arguments
    laid out as `in_sharding` (also accepted as a call keyword). On one device the
    function runs unchanged."""
    return _axes_decorator(f, "in_sharding", in_sharding)


def make_single_device_sharding(device=None):
    from jaxlite.cpu_device import default_device

    return SingleDeviceSharding(default_device() if device is None else device)


def device_grid(mesh_shape, devices=None):
    """The devices (jaxlite's one device by default) as an object array of
    `mesh_shape` (`jax.experimental.mesh_utils.create_device_mesh`)."""
    from jaxlite.cpu_device import devices as all_devices

    mesh_shape = tuple(mesh_shape)
    size = int(np.prod(mesh_shape, dtype=np.int64))
    pool = list(all_devices() if devices is None else devices)
    if size != len(pool):
        raise ValueError(
            f"Number of devices {len(pool)} must equal the product of mesh_shape "
            f"{mesh_shape}; jaxlite has one device per process (unless "
            "jax_num_cpu_devices is set in a program of several processes), "
            f"{len(all_devices())} in all here."
        )
    grid = np.empty(len(pool), dtype=object)
    grid[:] = pool
    return grid.reshape(mesh_shape)


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A mesh of the given shape over jaxlite's one device (every size must be 1);
    its axes are `Explicit` unless `axis_types` says otherwise, as in JAX."""
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(tuple(axis_shapes))
    grid = device_grid(axis_shapes, devices)
    return Mesh(grid, axis_names, axis_types=axis_types)


__all__ = [
    "AbstractMesh",
    "AxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
]
