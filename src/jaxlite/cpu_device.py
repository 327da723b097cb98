"""The devices jaxlite runs on: host CPUs (`jax.devices()`, `jax.Device`).

In one process there is one device, the host CPU. A program started in several
processes (`jax.distributed.initialize()` under `mpiexec`) has
`jax_num_cpu_devices` devices per process (one unless set), numbered as in JAX:
process p's local device i has id `p * local_count + i` and `process_index` p.
`devices()` lists them all, `local_devices()` this process's; arrays live on the
first local device (`default_device()`).

A base module, so that the Array type (core) can name its device; `runtime` re-exports
these names with the rest of the device and process API, and `jaxlite.distributed`
sets the topology (`set_topology`).
"""

from __future__ import annotations


class Device:
    """A device arrays live on (`isinstance(d, jax.Device)`)."""

    platform = "cpu"
    device_kind = "cpu"
    client = None

    def __init__(self, id=0, process_index=0, local_id=None):  # noqa: A002  (JAX's name)
        self.id = id
        self.process_index = process_index
        self.local_hardware_id = id if local_id is None else local_id

    @property
    def host_id(self):
        return self.process_index

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


class _Topology:
    """The processes and their devices: (this process, the process count, devices
    per process) and the device objects, global and local."""

    def __init__(self, process_index=0, process_count=1, local_count=1):
        self.process_index = process_index
        self.process_count = process_count
        self.local_count = local_count
        if process_count == 1 and local_count == 1:
            self.devices = [_DEVICE]  # the one device of a single process
        else:
            self.devices = [
                CpuDevice(p * local_count + i, p, i)
                for p in range(process_count)
                for i in range(local_count)
            ]
        first = process_index * local_count
        self.local = self.devices[first : first + local_count]


_topology = _Topology()


def set_topology(process_index, process_count, local_count):
    """Make this process `process_index` of `process_count`, each with `local_count`
    devices (called by `jaxlite.distributed.initialize` and `shutdown`)."""
    global _topology
    _topology = _Topology(process_index, process_count, local_count)


def process_index():
    return _topology.process_index


def process_count():
    return _topology.process_count


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
    """Every device of every process, by id."""
    check_backend(backend)
    return list(_topology.devices)


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices of process `process_index` (this one by default)."""
    check_backend(backend)
    p = process_index if process_index is not None else host_id
    if p is None or p == _topology.process_index:
        return list(_topology.local)
    if not 0 <= p < _topology.process_count:
        raise ValueError(
            f"local_devices: process_index {p} is out of range for "
            f"{_topology.process_count} processes."
        )
    return [d for d in _topology.devices if d.process_index == p]


def default_device():
    """The device arrays of this process live on: its first local device."""
    return _topology.local[0]


def device_count(backend=None):
    check_backend(backend)
    return len(_topology.devices)


def local_device_count(backend=None):
    check_backend(backend)
    return _topology.local_count


def default_backend():
    return "cpu"
