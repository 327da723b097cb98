"""`jaxlite.dlpack`: arrays in and out through DLPack, the standard for sharing
memory between array libraries (NumPy, PyTorch, CuPy, ...).

Out: a jaxlite `Array` has `__dlpack__` and `__dlpack_device__`, so
`np.from_dlpack(x)` (or `torch.from_dlpack(x)`) sees its buffer without a copy,
read-only where the consumer supports DLPack 1.0's flag, as JAX exports it.

In: `from_dlpack(obj)` takes any object with those two methods on the CPU. Arrays are
immutable, so by default the data are copied (the producer could write to them later);
`copy=False` shares the producer's memory, and the caller promises not to write to it
while the Array lives. Values are stored in the canonical dtype (float64 data become
float32 unless x64 is on), which copies too.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.core import Array, Tracer

__all__ = ["from_dlpack", "is_supported_dtype"]

_KDL_CPU = 1

_SUPPORTED = frozenset(
    np.dtype(d)
    for d in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
        dtypes.bfloat16,
    )
)


def is_supported_dtype(dtype) -> bool:
    """Whether arrays of `dtype` can be exchanged through DLPack."""
    if isinstance(dtype, str) and dtype == "bfloat16":
        dtype = dtypes.bfloat16
    return np.dtype(dtype) in _SUPPORTED


def from_dlpack(external_array, device=None, copy=None):
    """An Array with the data of `external_array`, any object implementing DLPack's
    `__dlpack__` and `__dlpack_device__` (a NumPy array, a CPU torch tensor, ...).

    `copy=None` or `True` copies the data; `copy=False` shares them (see the module
    docstring). `device` may be None or jaxlite's one device or a sharding on it.
    """
    if not (
        hasattr(external_array, "__dlpack__")
        and hasattr(external_array, "__dlpack_device__")
    ):
        raise TypeError(
            "The array passed to from_dlpack must have __dlpack__ and "
            "__dlpack_device__ methods."
        )
    if isinstance(external_array, Tracer) or (
        type(external_array) is Array and copy is not True
    ):
        return _placed(external_array, device)
    device_type, device_id = external_array.__dlpack_device__()
    if int(device_type) != _KDL_CPU:
        raise ValueError(
            f"from_dlpack got an array on DLPack device type {device_type!r} (id "
            f"{device_id}); jaxlite runs on the CPU only. Move the array to the CPU "
            "first (e.g. `tensor.cpu()`)."
        )
    value = np.from_dlpack(external_array)
    if not is_supported_dtype(value.dtype):
        raise TypeError(
            f"from_dlpack: dtype {value.dtype} is not supported; use one of "
            f"{sorted(str(d) for d in _SUPPORTED)}."
        )
    dtype = dtypes.canonicalize_dtype(value.dtype)
    if dtype != value.dtype or copy is not False:
        value = np.array(value, dtype=dtype, copy=True)
    else:
        value = value.view()
        value.flags.writeable = False  # never written through this Array
    return _placed(Array(value), device)


def _placed(x, device):
    if device is None:
        return x
    from jaxlite.api import device_put

    return device_put(x, device)
