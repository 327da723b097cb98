"""`jax.experimental.mesh_utils`: device arrays shaped for `jax.sharding.Mesh`.

JAX orders the devices of a mesh to follow the hardware's interconnect. jaxlite has
one device, so every mesh shape has size 1 and the array holds that device.
"""

from __future__ import annotations

from jaxlite.cpu_device import devices as devices_of_backend
from jaxlite.sharding import device_grid


def create_device_mesh(
    mesh_shape,
    devices=None,
    *,
    contiguous_submeshes=False,
    allow_split_physical_axes=False,
):
    """An object array of `mesh_shape` holding the devices (jaxlite's one device)."""
    return device_grid(mesh_shape, devices)


def create_hybrid_device_mesh(
    mesh_shape,
    dcn_mesh_shape,
    devices=None,
    *,
    process_is_granule=False,
    should_sort_granules_by_key=True,
    allow_split_physical_axes=False,
):
    """The devices for a mesh spanning processes (`dcn_mesh_shape`, one process
    here) times devices within each (`mesh_shape`): shape is their product. As
    in JAX on CPU, processes are the granules only with `process_is_granule`."""
    pool = list(devices_of_backend() if devices is None else devices)
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(pool[0], attr):
        raise ValueError(
            f"Device {pool[0]} does not have attribute {attr}. See "
            "`process_is_granule` option."
        )
    shape = tuple(a * b for a, b in zip(mesh_shape, dcn_mesh_shape, strict=True))
    return device_grid(shape, pool)


__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]
