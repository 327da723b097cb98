"""`jnp.float32` and friends: usable as dtypes (`np.dtype(jnp.float32)`) and as
constructors (`jnp.float32(1)` is a 0-d float32 Array), as in JAX.

The narrow floating and integer types of `ml_dtypes` (`float8_e4m3fn`, `int4`, ...)
are here too, as dtypes; jaxlite computes only on number and bool dtypes and
bfloat16, so making arrays of them raises a TypeError that says so. The abstract
NumPy classes JAX re-exports (`object_`, `character`, `flexible`) and NumPy's
`ComplexWarning` complete the set.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np


class _ScalarMeta(type):
    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return other is cls or other == cls.dtype.type

    def __ne__(cls, other):
        return not cls.__eq__(other)

    def __call__(cls, x):
        from jaxlite.numpy.creation import asarray

        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'jaxlite.numpy.{cls.__name__}'>"


def _make(name, np_type):
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type)})


bool_ = _make("bool_", np.bool_)
int8, int16, int32, int64 = (_make(f"int{b}", f"int{b}") for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (_make(f"uint{b}", f"uint{b}") for b in (8, 16, 32, 64))
float16, float32, float64 = (_make(f"float{b}", f"float{b}") for b in (16, 32, 64))
bfloat16 = _make("bfloat16", ml_dtypes.bfloat16)
complex64, complex128 = (
    _make("complex64", np.complex64),
    _make("complex128", np.complex128),
)
int_, uint, float_, complex_ = int64, uint64, float64, complex128
single, double = float32, float64
csingle, cdouble = complex64, complex128

bool = bool_  # noqa: A001  (JAX's array API name; same object as bool_)

_ML_DTYPES = (
    "float4_e2m1fn",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "int1",
    "int2",
    "int4",
    "uint1",
    "uint2",
    "uint4",
)
for _name in _ML_DTYPES:
    if hasattr(ml_dtypes, _name):
        globals()[_name] = _make(_name, getattr(ml_dtypes, _name))
del _name

object_, character, flexible = np.object_, np.character, np.flexible
ComplexWarning = np.exceptions.ComplexWarning

__all__ = [
    "ComplexWarning",
    "bfloat16",
    "bool",
    "bool_",
    "cdouble",
    "character",
    "complex128",
    "complex64",
    "complex_",
    "csingle",
    "double",
    "flexible",
    "float16",
    "float32",
    "float64",
    "float_",
    "int16",
    "int32",
    "int64",
    "int8",
    "int_",
    "object_",
    "single",
    "uint",
    "uint16",
    "uint32",
    "uint64",
    "uint8",
    *(n for n in _ML_DTYPES if hasattr(ml_dtypes, n)),
]
