"""The runtime JAX exposes around its devices: one CPU device in one process here.

Devices (`devices()`, `Device`), processes (`process_index()`, `process_count()`, ...),
the arrays alive in the process, the compilation caches, an environment report, and
building arrays from per-device callbacks. jaxlite runs in one process on the host,
so these answer as JAX does on a single-CPU machine.
"""

from __future__ import annotations

import warnings

import numpy as np

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

# Processes: one.


def process_index(backend=None):
    check_backend(backend)
    return 0


def process_count(backend=None):
    check_backend(backend)
    return 1


def process_indices(backend=None):
    check_backend(backend)
    return [0]


def _renamed(old, new):
    warnings.warn(
        f"jax.{old} has been renamed to jax.{new}. This alias will eventually be "
        "removed; please update your code.",
        UserWarning,
        stacklevel=3,
    )


def host_id(backend=None):
    _renamed("host_id", "process_index")
    return 0


def host_count(backend=None):
    _renamed("host_count", "process_count")
    return 1


def host_ids(backend=None):
    _renamed("host_ids", "process_indices")
    return [0]


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


# Arrays from per-device data: the one device gets the whole array.


def _as_array(x, dtype=None):
    if dtype is None:
        return as_value(x)
    return from_host(x, dtype=dtype)


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An array of `shape` whose data `data_callback(index)` returns; on jaxlite's
    one device the index is the whole array (a slice(None) per axis)."""
    shape = tuple(shape)
    index = (slice(None),) * len(shape)
    out = _as_array(data_callback(index), dtype)
    if out.shape != shape:
        raise ValueError(
            f"make_array_from_callback: the callback returned shape {out.shape}, "
            f"expected {shape}."
        )
    return out


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array made of one array per device (jaxlite: exactly one)."""
    arrays = list(arrays)
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
    out = _as_array(local_data)
    if global_shape is not None and tuple(global_shape) != out.shape:
        raise ValueError(
            f"make_array_from_process_local_data: local data of shape {out.shape} "
            f"cannot make a global array of shape {tuple(global_shape)} in one "
            "process."
        )
    return out


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
