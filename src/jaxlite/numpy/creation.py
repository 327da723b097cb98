"""Array creation: array/asarray, zeros/ones/full/empty and their `_like` forms, arange.

Concrete inputs become constants right away (they appear in jaxprs as literals or
constvars); inputs that hold tracers are assembled with lax operations, as in JAX.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer
from jaxlite.lax.structural import canonicalize_shape

__all__ = [
    "array",
    "asarray",
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "empty_like",
    "full_like",
    "arange",
]



def _contains_tracer(obj):
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_tracer(o) for o in obj)
    return False


def _leaves(obj):
    if isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _leaves(o)
    else:
        yield obj


def array(object, dtype=None, copy=True, order="K", ndmin=0):  # noqa: A002
    """Create an Array (JAX semantics: 32-bit defaults, Python scalars stay weak)."""
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "array")
    if hasattr(object, "__jax_array__"):
        object = object.__jax_array__()  # noqa: A001
    if isinstance(object, Tracer):
        out = object if dtype is None else lax.convert_element_type(object, dtype)
    elif type(object) is Array:
        out = object if dtype is None else lax.convert_element_type(object, dtype)
    elif isinstance(object, (list, tuple)) and _contains_tracer(object):
        out = _array_from_sequence(object, dtype)
    else:
        out = _constant_array(object, dtype)
    if ndmin > np.ndim(out):
        out = lax.broadcast_to_rank(out, ndmin)
    return out


def _constant_array(object, dtype):  # noqa: A002
    weak = type(object) in (int, float, complex) and dtype is None
    if isinstance(object, (list, tuple)):
        object = _to_numpy_nested(object)  # noqa: A001
    elif type(object) is Array:
        object = object._value  # noqa: A001
    return Array(dtypes.coerce_to_array(object, dtype), weak)


def _to_numpy_nested(obj):
    """Replace Arrays inside nested lists by NumPy values, for np.array to read."""
    if isinstance(obj, (list, tuple)):
        return [_to_numpy_nested(o) for o in obj]
    if type(obj) is Array:
        return obj._value
    return obj


def _array_from_sequence(obj, dtype):
    if dtype is None:
        dtype = dtypes.result_type(*_leaves(obj))
    converted = iter([lax.convert_element_type(x, dtype) for x in _leaves(obj)])

    def rebuild(o):
        if isinstance(o, (list, tuple)):
            return [rebuild(x) for x in o]
        return next(converted)

    def stack(o):
        if not isinstance(o, list):
            return o
        items = [stack(x) for x in o]
        if not items:
            return Array(np.zeros((0,), dtype))
        expanded = [lax.broadcast_in_dim(x, (1, *np.shape(x)), tuple(range(1, 1 + np.ndim(x))))
                    for x in items]
        return lax.concatenate(expanded, 0)

    return stack(rebuild(obj))


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    return array(a, dtype=dtype, copy=False)


def _fill(shape, value, dtype, fun_name):
    dtype = dtypes.check_user_dtype_supported(dtype, fun_name) if dtype is not None else (
        dtypes.default_float_dtype()
    )
    return lax.full(canonicalize_shape(shape), value, dtype)


def zeros(shape, dtype=None, *, device=None):
    return _fill(shape, 0, dtype, "zeros")


def ones(shape, dtype=None, *, device=None):
    return _fill(shape, 1, dtype, "ones")


def empty(shape, dtype=None, *, device=None):
    return _fill(shape, 0, dtype, "empty")


def full(shape, fill_value, dtype=None, *, device=None):
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, "full")
    if np.ndim(fill_value) == 0:
        return lax.full(canonicalize_shape(shape), fill_value, dtype)
    fill = array(fill_value, dtype=dtype)
    from jaxlite.numpy.shape import broadcast_to

    return broadcast_to(fill, shape)


def _like(a, fill_value, dtype, shape, fun_name):
    if dtype is not None:
        dtype = dtypes.check_user_dtype_supported(dtype, fun_name)
    return lax.full_like(a, fill_value, dtype, shape)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    return _like(a, 0, dtype, shape, "zeros_like")


def ones_like(a, dtype=None, shape=None, *, device=None):
    return _like(a, 1, dtype, shape, "ones_like")


def empty_like(a, dtype=None, shape=None, *, device=None):
    return _like(a, 0, dtype, shape, "empty_like")


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    return _like(a, fill_value, dtype, shape, "full_like")


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values; the bounds must be concrete (they fix the shape)."""
    from jaxlite.core import concrete_or_error

    def concrete(value, name):
        if value is None:
            return None
        context = f"It arose in the jnp.arange argument `{name}`"
        return concrete_or_error(np.asarray, value, context)[()]

    start, stop, step = concrete(start, "start"), concrete(stop, "stop"), concrete(step, "step")
    if dtype is None:
        dtype = dtypes.result_type(*(v for v in (start, stop, step) if v is not None))
    dtype = dtypes.check_user_dtype_supported(dtype, "arange")
    if stop is None and step is None and np.issubdtype(dtype, np.integer):
        return lax.iota(dtype, int(np.ceil(start)))
    values = np.arange(start, *(v for v in (stop, step) if v is not None))
    return Array(dtypes.coerce_to_array(values, dtype))
