"""`jax._src.dtypes` for `jaxlite.install_as_jax()` only: jaxlite's dtype objects
under the names libraries take from JAX's private dtypes module (equinox's
`TypePromotionError`; flax's fp8 support: `DType`, `extended`, `ExtendedDType`,
`finfo`, `supports_inf`)."""

import warnings

import numpy as np

from jaxlite.dtypes import (
    ExtendedDType,
    TypePromotionError,
    extended,
    finfo,
    is_extended,
)

__all__ = [
    "DType",
    "ExtendedDType",
    "TypePromotionError",
    "extended",
    "finfo",
    "supports_inf",
]

DType = np.dtype


def supports_inf(dtype):
    """Whether `dtype` represents infinity: `inf` converts to it as `inf` (not in
    integer and boolean dtypes, nor in the float8 formats without one, which give
    NaN)."""
    if is_extended(dtype):
        return False
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bool(np.isinf(np.array(np.inf).astype(dtype)))
