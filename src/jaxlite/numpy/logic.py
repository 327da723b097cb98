"""Comparisons of whole arrays and questions about types: `isclose`, `allclose`,
`array_equal`, `array_equiv`, and the predicates `iscomplexobj`, `isrealobj`,
`isscalar`, `iterable`, `isdtype`, `can_cast`.

The comparisons are array operations (their results may be traced, so they return
Arrays, never Python bools). The type predicates look only at dtypes and shapes,
which are static, so they return Python bools and work on tracers too.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer
from jaxlite.numpy.ufuncs import (
    absolute,
    add,
    check_arraylike,
    equal,
    isfinite,
    isnan,
    less_equal,
    logical_and,
    logical_or,
    multiply,
    promote_args,
    promote_args_inexact,
    subtract,
)

__all__ = [
    "allclose",
    "array_equal",
    "array_equiv",
    "can_cast",
    "isclose",
    "iscomplexobj",
    "isdtype",
    "isrealobj",
    "isscalar",
    "iterable",
]


def _is_key(x):
    return dtypes.is_extended(getattr(x, "dtype", None))


def _keys_equal(a, b):
    """Key arrays are close when they are equal (as in JAX, which compares typed
    keys with `lax.eq`); a key and a number do not compare."""
    if not (_is_key(a) and _is_key(b)):
        kinds = ", ".join(
            str(x.dtype if _is_key(x) else dtypes.dtype(x)) for x in (a, b)
        )
        raise TypeError(f"isclose does not accept dtypes {kinds}.")
    return a == b


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise `|a - b| <= atol + rtol * |b|` (equal infinities are close; NaNs
    are close to each other only with `equal_nan`). Key arrays: equal keys."""
    if _is_key(a) or _is_key(b):
        return _keys_equal(a, b)
    a, b = promote_args("isclose", a, b)
    a, b = promote_args_inexact("isclose", a, b)
    dtype = np.dtype(a.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        dtype = np.dtype(dtypes.finfo(dtype).dtype)
    rtol = lax.convert_element_type(rtol, dtype)
    atol = lax.convert_element_type(atol, dtype)
    both_nan = logical_and(isnan(a), isnan(b))
    in_range = less_equal(
        absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b)))
    )
    out = logical_or(equal(a, b), logical_and(isfinite(b), in_range))
    return logical_or(out, both_nan) if equal_nan else out


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of `a` is close to `b` (see `isclose`); an Array."""
    from jaxlite.numpy.reductions import all as all_

    if not (_is_key(a) or _is_key(b)):
        check_arraylike("allclose", a, b)
    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    """Whether `a1` and `a2` have the same shape and elements; an Array."""
    from jaxlite.numpy.creation import asarray
    from jaxlite.numpy.reductions import all as all_

    a1, a2 = asarray(a1), asarray(a2)
    if np.shape(a1) != np.shape(a2):
        return asarray(False)
    eq = a1 == a2
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all_(eq)


def array_equiv(a1, a2):
    """Whether `a1` and `a2` broadcast together and are equal everywhere; an Array."""
    from jaxlite.numpy.creation import asarray
    from jaxlite.numpy.reductions import all as all_

    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(np.shape(a1), np.shape(a2))
    except ValueError:
        return asarray(False)
    return all_(a1 == a2)


def iscomplexobj(x):
    """Whether `x` has a complex dtype (a Python bool; the values are not read)."""
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        from jaxlite.numpy.creation import asarray

        dtype = asarray(x).dtype
    return dtypes.issubdtype(dtype, np.complexfloating)


def isrealobj(x):
    """Whether `x` does not have a complex dtype (a Python bool)."""
    return not iscomplexobj(x)


def isscalar(element):
    """True for scalars and for zero-dimensional arrays (unlike NumPy, which says
    False for 0-d arrays): both behave as scalars in JAX code."""
    if np.isscalar(element):
        return True
    if isinstance(element, (np.ndarray, Array, Tracer)):
        return np.ndim(element) == 0
    if getattr(element, "__jax_array__", None) is not None:
        return np.ndim(element.__jax_array__()) == 0
    return False


def iterable(y):
    """Whether `iter(y)` works (False for 0-d arrays)."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def isdtype(dtype, kind):
    """Array API `isdtype`: whether `dtype` is of `kind` ('bool', 'signed integer',
    'unsigned integer', 'integral', 'real floating', 'complex floating', 'numeric',
    a dtype, or a tuple of these)."""
    return dtypes.isdtype(dtype, kind)


def can_cast(from_, to, casting="safe"):
    """NumPy's `can_cast` on dtypes (arrays and Python scalars are not accepted,
    as in NumPy 2)."""
    if isinstance(from_, (Array, Tracer)):
        from_ = from_.dtype
    return np.can_cast(from_, to, casting=casting)
