"""`jnp.float32` and friends: usable as dtypes (`np.dtype(jnp.float32)`) and as
constructors (`jnp.float32(1)` is a 0-d float32 Array), as in JAX."""

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
