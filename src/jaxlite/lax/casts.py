"""Casts: `convert_element_type`, and Python scalars as lax operands.

`convert_element_type` converts as XLA does on CPU (a float saturates to an integer
type, NaN gives 0, a complex value drops its imaginary part), and constants are
converted right away so that they stay literals in jaxprs. `lax_operands` gives the
Python scalars among a primitive's operands their dtype: an array operand's when the
scalar's kind fits it, their own default otherwise, so that a mismatch is reported
rather than a value truncated. `_nary` makes a lax function from an elementwise
primitive with it. Every elementwise module builds on these.
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxlite import dtypes
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    get_aval,
    has_data,
    impl_rules,
    no_effects,
)
from jaxlite.distributed.global_array import GlobalArray
from jaxlite.interpreters import ad, batching

_PY_SCALARS = (int, float, complex, bool)
# The dtype kinds a Python scalar may take from an array operand: an int fits any
# number, a float only inexact dtypes, a complex only complex ones, a bool only bool.
_FITS = {bool: "b", int: "biufc", float: "fc", complex: "c"}


def lax_operands(*args):
    """Python scalars among lax operands, as weakly typed arrays.

    Alone they take their own default dtype (`lax.add(1.5, 2)` is float32 + int32, a
    TypeError as in JAX); next to an array they take its dtype when their kind fits
    it (`lax.mul(x, 2.0)` for float16 `x`), and otherwise keep their own, so that the
    mismatch is reported rather than the value silently truncated."""
    if not any(type(a) in _PY_SCALARS for a in args):
        return args
    ref = next((a for a in args if type(a) not in _PY_SCALARS), None)
    ref_dtype = None if ref is None else dtypes.result_type(ref)
    out = []
    for a in args:
        if type(a) not in _PY_SCALARS:
            out.append(a)
            continue
        dtype, weak = dtypes.result_type(a, return_weak_type_flag=True)
        if ref_dtype is not None and _kind(ref_dtype) in _FITS[type(a)]:
            in_range = ref_dtype.kind not in "iu" or (
                np.iinfo(ref_dtype).min <= a <= np.iinfo(ref_dtype).max
            )
            dtype = ref_dtype if in_range else dtype
        out.append(Array(np.asarray(a, dtype)[()], weak))
    return tuple(out)


def _kind(dtype):
    """NumPy's kind letter, with bfloat16 a float ("f", where NumPy says "V")."""
    return "f" if dtypes.is_float(dtype) else dtype.kind


def _nary(prim):
    def fun(*args):
        return prim.bind(*lax_operands(*args))

    fun.__name__ = prim.name
    fun.__doc__ = f"Elementwise `{prim.name}` (operands share one dtype)."
    return fun


# ----------------------------------------------------------------------------------------
# convert_element_type: casts as XLA does on CPU (float -> int saturates, NaN -> 0)


def convert_value(x, dtype):
    """Cast a NumPy value to `dtype` with XLA's CPU semantics."""
    x = np.asarray(x)
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x[()] if x.ndim == 0 else x
    if x.dtype == dtypes.float0:  # its one value is zero
        x = np.zeros(x.shape, np.bool_)
    if np.issubdtype(x.dtype, np.complexfloating) and not np.issubdtype(
        dtype, np.complexfloating
    ):
        x = x.real  # XLA drops the imaginary part, also for bool (jnp's astype
        # tests `x != 0` itself)
    if dtype == np.bool_:
        return (x != 0)[()]
    if dtypes.issubdtype(dtype, np.integer) and dtypes.issubdtype(x.dtype, np.floating):
        info = dtypes.iinfo(dtype)
        wide = x.astype(np.float64)
        wide = np.where(np.isnan(wide), 0, np.clip(wide, info.min, info.max))
        out = np.where(wide >= 2.0**63, info.max, wide).astype(dtype)
        return out[()] if out.ndim == 0 else out
    with np.errstate(over="ignore"):  # out of range rounds to inf, silently as XLA
        out = x.astype(dtype)
    return out[()] if out.ndim == 0 else out


def _convert_element_type_impl(x, *, new_dtype, weak_type):
    return [convert_value(x, new_dtype)]


def _convert_element_type_abstract(x, *, new_dtype, weak_type):
    if (has_data(x.dtype) or has_data(new_dtype)) and x.dtype != new_dtype:
        raise _cannot_convert(x.dtype, new_dtype)
    return [ShapedArray(x.shape, new_dtype, weak_type)], no_effects


def _cannot_convert(old, new):
    """JAX's error for a conversion to or from keys (an extended dtype)."""
    return ValueError(
        f"Cannot convert_element_type from {old} to {getattr(new, 'name', new)}. Key "
        "arrays convert to nothing: use jax.random.key_data(keys) for their uint32 "
        "data, or jax.random.wrap_key_data(data) for keys over uint32 data."
    )


def _convert_element_type_jvp(primals, tangents, *, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)
    # Only inexact -> inexact conversions carry a tangent (an integer input's tangent
    # is a float0 zero).
    differentiable = dtypes.issubdtype(new_dtype, np.inexact) and dtypes.issubdtype(
        get_aval(x).dtype, np.inexact
    )
    if type(t) is ad.Zero or not differentiable:
        return [out], [ad.Zero(ad.tangent_aval(out.aval))]
    return [out], [
        convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type)
    ]


def _convert_element_type_transpose(ct, x, *, new_dtype, weak_type):
    if type(ct) is ad.Zero:
        return [None]
    aval = x.aval
    return [
        convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type)
    ]


convert_element_type_p = Primitive("convert_element_type")
ad.jvp_rules[convert_element_type_p] = _convert_element_type_jvp
ad.transpose_rules[convert_element_type_p] = _convert_element_type_transpose
batching.defvectorized(convert_element_type_p)
impl_rules[convert_element_type_p] = _convert_element_type_impl
abstract_eval_rules[convert_element_type_p] = _convert_element_type_abstract
native_rules[convert_element_type_p] = "convert_element_type"


_PYTHON_SCALARS = frozenset({bool, int, float, complex})
_INT64_RANGE = range(-(2**63), 2**63)
_UINT64_RANGE = range(2**64)


def _python_scalar_value(x, dtype):
    """The Python scalar `x` converted straight to `dtype`, as JAX does (never through
    the default integer or float type, which may not hold it): an int wraps around
    modulo 2**bits for integer types if it fits 64 bits (OverflowError otherwise) and
    rounds to the nearest float (inf beyond the type's range) for floating ones; a
    float saturates for integer types (NaN gives 0), as XLA's conversion."""
    if type(x) is int:
        if dtype == np.bool_:
            return np.bool_(x != 0)
        if x in _INT64_RANGE:
            x = np.int64(x)
        elif x in _UINT64_RANGE:
            x = np.uint64(x)
        elif dtypes.issubdtype(dtype, np.integer):
            raise OverflowError(f"Python int {x} too large to convert to {dtype}")
        else:
            x = np.float64(x)  # OverflowError beyond float64's range, as JAX
    return convert_value(np.asarray(x), dtype)


def convert_element_type(operand, new_dtype, weak_type=False):
    """Cast `operand` to `new_dtype`. Constants are converted right away (they appear in
    jaxprs as literals or constants, as in JAX); tracers and arrays split across
    processes (GlobalArrays) get a `convert_element_type`."""
    if (
        type(operand) is Array
        and operand.weak_type == weak_type
        and operand._value.dtype == new_dtype
    ):
        return operand  # already of a canonical dtype: nothing to do (the common case)
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    old_dtype = getattr(operand, "dtype", None)
    if has_data(old_dtype) or has_data(new_dtype):  # keys convert to nothing else
        if old_dtype == new_dtype:
            return operand
        raise _cannot_convert(dtypes.dtype(operand), new_dtype)
    if dtypes.issubdtype(
        dtypes.result_type(operand), np.complexfloating
    ) and not dtypes.issubdtype(new_dtype, np.complexfloating):
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            np.exceptions.ComplexWarning,
            stacklevel=2,
        )
    if isinstance(operand, (Tracer, GlobalArray)):  # no value here: bind it
        aval = operand.aval
        if aval.dtype == new_dtype and aval.weak_type == weak_type:
            return operand
        return convert_element_type_p.bind(
            operand, new_dtype=new_dtype, weak_type=bool(weak_type)
        )
    if type(operand) is Array:
        if operand.dtype == new_dtype and operand.weak_type == weak_type:
            return operand
        return Array(convert_value(operand._value, new_dtype), bool(weak_type))
    if type(operand) in _PYTHON_SCALARS:
        return Array(_python_scalar_value(operand, new_dtype), bool(weak_type))
    value = convert_value(dtypes.coerce_to_array(operand), new_dtype)
    if isinstance(operand, np.ndarray) and np.shares_memory(value, operand):
        value = value.copy()  # Arrays are immutable: never alias a user's buffer
    return Array(value, bool(weak_type))
