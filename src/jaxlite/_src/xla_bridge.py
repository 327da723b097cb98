"""`jax._src.xla_bridge` for `jaxlite.install_as_jax()` only: `_backends`, the
initialized backends by platform (chex's `set_n_cpu_devices` reads it to refuse a
device count once devices exist). jaxlite's one backend, the CPU with its one
device, exists from import on, so it is always there."""

from jaxlite.runtime import devices, local_devices, process_index

__all__ = ["_backends"]


class CpuBackend:
    """jaxlite's CPU backend: its platform and its devices."""

    platform = "cpu"

    def devices(self):
        return devices()

    def local_devices(self):
        return local_devices()

    def device_count(self):
        return len(devices())

    def local_device_count(self):
        return len(local_devices())

    def process_index(self):
        return process_index()

    def __repr__(self):
        return "<jaxlite CPU backend>"


_backends = {"cpu": CpuBackend()}
