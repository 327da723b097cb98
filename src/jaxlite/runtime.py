"""The runtime JAX exposes around its devices: the host CPU, in one or more processes.

Devices (`devices()`, `Device`), processes (`process_index()`, `process_count()`, ...),
the arrays alive in the process, the compilation caches, an environment report, and
building arrays from per-device data. In one process they answer as JAX does on a
single-CPU machine; after `jax.distributed.initialize()` they count every process
and its devices, and arrays laid out over a mesh of several processes are
`GlobalArray`s holding this process's block (`distributed/global_array.py`).
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxlite import cpu_device
from jaxlite.array import from_host
from jaxlite.core import (
    Array,
    as_value,
)
from jaxlite.cpu_device import (  # noqa: F401  (re-exported)
    _DEVICE,
    CpuDevice,
    Device,
    check_backend,
    default_backend,
    device_count,
    devices,
    local_device_count,
    local_devices,
)
from jaxlite.distributed.global_array import (
    block_from_shards,
    global_array,
    spans_processes,
)
from jaxlite.distributed.global_array import global_shape as global_shape_of
from jaxlite.distributed.topology import mesh_layout
from jaxlite.sharding import Mesh, NamedSharding

# Processes: one, unless `jax.distributed.initialize()` joined several.


def process_index(backend=None):
    check_backend(backend)
    return cpu_device.process_index()


def process_count(backend=None):
    check_backend(backend)
    return cpu_device.process_count()


def process_indices(backend=None):
    check_backend(backend)
    return list(range(cpu_device.process_count()))


def _renamed(old, new):
    warnings.warn(
        f"jax.{old} has been renamed to jax.{new}. This alias will eventually be "
        "removed; please update your code.",
        UserWarning,
        stacklevel=3,
    )


def host_id(backend=None):
    _renamed("host_id", "process_index")
    return cpu_device.process_index()


def host_count(backend=None):
    _renamed("host_count", "process_count")
    return cpu_device.process_count()


def host_ids(backend=None):
    _renamed("host_ids", "process_indices")
    return list(range(cpu_device.process_count()))


# Arrays and caches.


def live_arrays(platform=None):
    """Every jaxlite Array alive in the process (found by the garbage collector, so
    this is slow: for debugging memory use, as in JAX)."""
    import gc

    return [obj for obj in gc.get_objects() if type(obj) is Array]


def clear_caches():
    """Drop every compiled function and cached trace: jit caches, compiled jaxprs and
    the eager dispatch cache. Later calls trace and compile again."""
    from jaxlite import core, dispatch

    for per_fun in list(dispatch._jit_caches.values()):
        for cache in per_fun.values():
            cache.entries.clear()
            cache.fast.clear()
    core._eager_weak_types.clear()


def print_environment_info(return_string=False):
    """The versions of jaxlite, NumPy and Python and the device, as JAX prints them."""
    import platform
    import sys

    from jaxlite.version import __version__

    info = "\n".join(
        [
            f"jaxlite:    {__version__}",
            f"numpy:      {np.__version__}",
            f"python:     {sys.version}",
            f"device info: cpu-{device_count()}, {local_device_count()} local devices",
            f"process_count: {process_count()}",
            f"platform: {platform.uname()}",
        ]
    )
    if return_string:
        return info
    print(info)
    return None


# Arrays from per-device data. In one process the one device gets the whole array;
# over a mesh of several processes, each builds its block of a GlobalArray.


def _across_processes(sharding, ndim):
    """Whether `sharding` splits an array of rank `ndim` across processes."""
    return (
        cpu_device.process_count() > 1
        and isinstance(sharding, NamedSharding)
        and isinstance(sharding.mesh, Mesh)
        and spans_processes(sharding.mesh, sharding.spec, ndim)
    )


def _from_block(block, sharding, dtype):
    block = _as_array(block, dtype)
    return global_array(block._value, sharding.mesh, sharding.spec, block.weak_type)


def _as_array(x, dtype=None):
    if dtype is None:
        return as_value(x)
    return from_host(x, dtype=dtype)


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An array of `shape` whose data `data_callback(index)` returns; on jaxlite's
    one device the index is the whole array (a slice(None) per axis)."""
    shape = tuple(shape)
    if _across_processes(sharding, len(shape)):
        block = block_from_shards(
            sharding.mesh, sharding.spec, shape, dtype,
            lambda device, index: data_callback(index),
        )  # fmt: skip
        return _from_block(block, sharding, dtype)
    index = (slice(None),) * len(shape)
    out = _as_array(data_callback(index), dtype)
    if out.shape != shape:
        raise ValueError(
            f"make_array_from_callback: the callback returned shape {out.shape}, "
            f"expected {shape}."
        )
    return out


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array made of one array per device: per addressable device of
    `sharding` across processes, else exactly one (jaxlite's one device)."""
    arrays = list(arrays)
    if _across_processes(sharding, len(tuple(shape))):
        mine = {d: a for d, a in zip(_addressable_devices(sharding), arrays)}
        if len(mine) != len(arrays):
            raise ValueError(
                f"make_array_from_single_device_arrays got {len(arrays)} arrays for "
                f"the {len(mine)} devices of this process in {sharding!r}."
            )
        block = block_from_shards(
            sharding.mesh, sharding.spec, tuple(shape), np.asarray(arrays[0]).dtype,
            lambda device, index: mine[device],
        )  # fmt: skip
        return _from_block(block, sharding, dtype)
    if len(arrays) != 1:
        raise ValueError(
            f"make_array_from_single_device_arrays got {len(arrays)} arrays; jaxlite "
            "has one device, so it takes exactly one."
        )
    out = _as_array(arrays[0], dtype)
    if out.shape != tuple(shape):
        raise ValueError(
            f"make_array_from_single_device_arrays: the array has shape {out.shape}, "
            f"expected {tuple(shape)}."
        )
    return out


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The global array whose data in this process is `local_data`: across
    processes, this process's block of it (a GlobalArray where `sharding` splits
    it across processes); in one process, all of it."""
    if _across_processes(sharding, np.ndim(local_data)):
        block = _as_array(local_data)
        found = global_shape_of(block.shape, sharding.mesh, sharding.spec)
        if global_shape is not None and tuple(global_shape) != found:
            raise ValueError(
                f"make_array_from_process_local_data: local data of shape "
                f"{block.shape} in each process, laid out as {sharding!r}, makes a "
                f"global array of shape {found}, not {tuple(global_shape)}."
            )
        return _from_block(block, sharding, None)
    out = _as_array(local_data)
    if global_shape is not None and tuple(global_shape) != out.shape:
        raise ValueError(
            f"make_array_from_process_local_data: local data of shape {out.shape} "
            f"cannot make a global array of shape {tuple(global_shape)} in one "
            "process."
        )
    return out


def _addressable_devices(sharding):
    """This process's devices of `sharding`'s mesh, in mesh order."""
    layout = mesh_layout(sharding.mesh)
    return list(layout.local_devices().flat)


__all__ = [
    "CpuDevice",
    "Device",
    "clear_caches",
    "default_backend",
    "device_count",
    "devices",
    "host_count",
    "host_id",
    "host_ids",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "print_environment_info",
    "process_count",
    "process_index",
    "process_indices",
]
