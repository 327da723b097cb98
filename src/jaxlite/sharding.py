"""`jax.sharding`: how arrays are laid out over devices. jaxlite has one device, so
every sharding places the whole array on it; these classes exist so that code that
builds meshes and passes shardings (`device_put(x, NamedSharding(mesh, P('x')))`,
`jit(..., in_shardings=...)`) runs unchanged. They validate what they are given and
answer the questions JAX's do (`device_set`, `num_devices`, `is_fully_replicated`).
"""

from __future__ import annotations

import numpy as np


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


class PartitionSpec(tuple):
    """How each array axis is split over mesh axes: a mesh axis name, a tuple of
    names, or None (not split), one entry per array axis."""

    def __new__(cls, *partitions):
        for p in partitions:
            names = p if isinstance(p, tuple) else (p,)
            for name in names:
                if name is not None and not isinstance(name, str) and name != ...:
                    raise TypeError(
                        "PartitionSpec entries must be mesh axis names (str), tuples "
                        f"of names, or None; got {p!r}."
                    )
        return super().__new__(cls, partitions)

    def __repr__(self):
        return f"P({', '.join(repr(p) for p in self)})"

    __str__ = __repr__


P = PartitionSpec


class Mesh:
    """A grid of devices with named axes. On jaxlite every axis has size 1."""

    def __init__(self, devices, axis_names, *, axis_types=None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        self.devices = np.asarray(devices, dtype=object)
        self.axis_names = tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise ValueError(
                f"Mesh requires the number of axis names ({len(self.axis_names)}) to "
                f"equal the rank of the device array ({self.devices.ndim})."
            )
        self.axis_types = axis_types

    @property
    def shape(self):
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self):
        return tuple(self.devices.shape)

    @property
    def size(self):
        return int(self.devices.size)

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names})"


class NamedSharding(Sharding):
    """An array laid out over `mesh` as `spec` says."""

    def __init__(self, mesh, spec=None, *, memory_kind=None):
        spec = PartitionSpec() if spec is None else spec
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        for p in spec:
            for name in p if isinstance(p, tuple) else (p,):
                if isinstance(name, str) and name not in mesh.axis_names:
                    raise ValueError(
                        f"Resource axis: {name} of {spec} is not found in mesh: "
                        f"{mesh.axis_names}."
                    )
        self.mesh = mesh
        self.spec = spec
        self.memory_kind = memory_kind or "device"

    @property
    def device_set(self):
        return set(self.mesh.devices.flat)

    def __eq__(self, other):
        return (
            isinstance(other, NamedSharding)
            and other.mesh is self.mesh
            and other.spec == self.spec
        )

    def __hash__(self):
        return hash((NamedSharding, id(self.mesh), self.spec))

    def __repr__(self):
        return (
            f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}, "
            f"memory_kind={self.memory_kind})"
        )


def make_single_device_sharding(device=None):
    from jaxlite.cpu_device import devices

    return SingleDeviceSharding(devices()[0] if device is None else device)


def make_mesh(axis_shapes, axis_names, *, devices=None, axis_types=None):
    """A mesh of the given shape over jaxlite's one device (every size must be 1)."""
    from jaxlite.cpu_device import devices as all_devices

    axis_shapes = tuple(axis_shapes)
    size = int(np.prod(axis_shapes, dtype=np.int64))
    pool = list(all_devices() if devices is None else devices)
    if size != len(pool):
        raise ValueError(
            f"Number of devices {len(pool)} must equal the product of mesh_shape "
            f"{axis_shapes}; jaxlite has one device, so every mesh axis has size 1."
        )
    grid = np.empty(len(pool), dtype=object)
    grid[:] = pool
    return Mesh(grid.reshape(axis_shapes), axis_names, axis_types=axis_types)


__all__ = [
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "make_single_device_sharding",
]
