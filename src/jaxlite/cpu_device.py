"""The one device jaxlite runs on: the host CPU (`jax.devices()`, `jax.Device`).

A base module, so that the Array type (core) can name its device; `runtime` re-exports
these names with the rest of the device and process API.
"""

from __future__ import annotations


class Device:
    """A device arrays live on (`isinstance(d, jax.Device)`)."""

    platform = "cpu"
    device_kind = "cpu"
    process_index = 0
    host_id = 0
    client = None

    def __init__(self, id=0):  # noqa: A002  (JAX's name)
        self.id = id
        self.local_hardware_id = id

    def __str__(self):
        return f"{self.platform}:{self.id}"

    def memory_stats(self):
        return None

    def addressable_memories(self):
        return []


class CpuDevice(Device):
    def __repr__(self):
        return f"CpuDevice(id={self.id})"


_DEVICE = CpuDevice()


def check_backend(backend):
    """JAX's error for a backend other than the one jaxlite has ("cpu")."""
    if backend is None or not isinstance(backend, str) or backend == "cpu":
        return  # None: the default; a non-string: a client object, used as is
    if backend == "gpu":  # JAX's alias for cuda, rocm and oneapi
        raise RuntimeError(
            "Unknown backend: 'gpu' requested, but no platforms that are instances of "
            "gpu are present. Platforms present are: cpu"
        )
    raise RuntimeError(f"Unknown backend {backend}. Available backends are ['cpu']")


def devices(backend=None):
    check_backend(backend)
    return [_DEVICE]


def local_devices(process_index=None, backend=None, host_id=None):
    check_backend(backend)
    return [_DEVICE]


def device_count(backend=None):
    check_backend(backend)
    return 1


local_device_count = device_count


def default_backend():
    return "cpu"
