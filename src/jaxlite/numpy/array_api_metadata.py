"""Array API metadata: `jnp.__array_api_version__` and
`jnp.__array_namespace_info__()`, through which array-API-generic code asks the
namespace for its capabilities, devices and dtypes."""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes

__all__ = ["__array_api_version__", "__array_namespace_info__"]

__array_api_version__ = "2024.12"

_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = (
    _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]
)


class ArrayNamespaceInfo:
    """What the jaxlite.numpy namespace supports, in the array API's terms."""

    _capabilities = {
        "boolean indexing": False,  # not under transformations
        "data-dependent shapes": False,  # not under transformations
        "max dimensions": 64,
    }

    def capabilities(self):
        return dict(self._capabilities)

    def default_device(self):
        return None  # arrays are not committed to a device

    def devices(self):
        from jaxlite.api import devices

        return [None, *devices()]

    def default_dtypes(self, *, device=None):
        return {
            "real floating": dtypes.default_float_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.default_int_dtype(),
            "indexing": dtypes.default_int_dtype(),
        }

    def dtypes(self, *, device=None, kind=None):
        if kind is None:
            names = _KINDS["numeric"] + _KINDS["bool"]
        else:
            kinds = kind if isinstance(kind, tuple) else (kind,)
            names = tuple(n for k in kinds for n in _KINDS[k])
        out = {}
        for name in names:
            dt = np.dtype(name)
            if dtypes.canonicalize_dtype(dt) == dt:
                out[name] = dt
        return out


def __array_namespace_info__():  # noqa: N807  (the array API's name)
    return ArrayNamespaceInfo()
