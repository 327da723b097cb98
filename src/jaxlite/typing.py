"""Type annotations for code written against jaxlite, as `jax.typing` has them.

`ArrayLike` is anything a jaxlite function accepts as an array argument (a jaxlite
Array or tracer, a NumPy array or scalar, a Python scalar); `DTypeLike` is anything
accepted where a dtype is expected. Use them for inputs; annotate outputs with
`jaxlite.Array`.
"""

from __future__ import annotations

from typing import Any, Protocol, Union

import numpy as np

from jaxlite.array import Array

__all__ = ["ArrayLike", "DTypeLike"]


class SupportsDType(Protocol):
    """Any object with a `.dtype` attribute (e.g. `ShapeDtypeStruct`)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[  # noqa: UP007 (a runtime alias, printed as JAX prints it)
    Array,
    np.ndarray,
    np.bool_,
    np.number,
    bool,
    int,
    float,
    complex,
]

DTypeLike = Union[  # noqa: UP007
    str,
    type[Any],
    np.dtype,
    SupportsDType,
]
