"""Elementwise jax.numpy functions, written in terms of jaxlite.lax.

Every function first checks that its inputs are arrays or scalars (lists are rejected, as
JAX does, because converting them silently hides performance problems), then promotes
dtypes with JAX's lattice (weak Python scalars never upcast arrays) and ranks (lower-rank
operands get leading size-1 axes; both in `numpy/promotion.py`), and finally binds
one lax primitive.

Where JAX composes several primitives (floor division, remainders, integer powers,
hypot, heaviside, ...) the same composition is used, so results agree with JAX also
where NumPy differs: `7 // 0 == -2` and `7 % 0 == 0` for integers, and an integer
exponent that is concrete gives `lax.integer_pow` (the base's dtype is kept). The
constants in these compositions are weak exactly when JAX's are: for a weakly typed
scalar operand only, so `deg2rad(1.0)` stays weak and `hypot(x, 1.0)` of an array x
does not.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer
from jaxlite.eager_jit import eager_jit
from jaxlite.lax import elementwise as ew
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.numpy.promotion import (  # noqa: F401  (re-exported: jaxlite.numpy.ufuncs.*)
    _check_operands,
    check_arraylike,
    check_for_prngkeys,
    ensure_arraylike,
    jax_array_value,
    promote_args,
    promote_args_inexact,
    promote_args_numeric,
    promote_dtypes,
    promote_dtypes_inexact,
    promote_dtypes_numeric,
    promote_shapes,
)

__all__ = [
    "add",
    "subtract",
    "multiply",
    "maximum",
    "minimum",
    "arctan2",
    "nextafter",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "negative",
    "exp",
    "exp2",
    "log",
    "log1p",
    "expm1",
    "tanh",
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "sqrt",
    "cbrt",
    "conjugate",
    "conj",
    "real",
    "imag",
    "isfinite",
    "true_divide",
    "divide",
    "floor_divide",
    "remainder",
    "mod",
    "fmod",
    "divmod",
    "power",
    "pow",
    "float_power",
    "right_shift",
    "bitwise_not",
    "invert",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "logical_not",
    "logical_and",
    "logical_or",
    "logical_xor",
    "absolute",
    "abs",
    "fabs",
    "sign",
    "positive",
    "square",
    "reciprocal",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "round",
    "around",
    "log2",
    "log10",
    "logaddexp",
    "deg2rad",
    "rad2deg",
    "radians",
    "degrees",
    "hypot",
    "isnan",
    "isinf",
    "isposinf",
    "isneginf",
    "signbit",
    "copysign",
    "heaviside",
    "fmax",
    "fmin",
    "sinc",
    "where",
    "select",
    "clip",
    "nan_to_num",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "angle",
    "iscomplex",
    "isreal",
    "logaddexp2",
]


def _fast(x, y):
    """True when two Arrays already share dtype, weak type and rank (no promotion)."""
    return (
        type(x) is Array
        and type(y) is Array
        and x.weak_type == y.weak_type
        and x._value.dtype == y._value.dtype
        and x._value.ndim == y._value.ndim
    )


def _scalar_operand(array, scalar):
    """`scalar` as a weak 0-d Array of `array`'s dtype, when promotion leaves `array`
    unchanged (the common `x + 1.0`); else None."""
    if type(scalar) is int:
        dtypes.check_python_int(scalar)  # see `_check_operands`
    dtype, weak = dtypes.result_type(array, scalar, return_weak_type_flag=True)
    if dtype != array._value.dtype or weak != array.weak_type:
        return None
    limit = _NARROW_FLOAT_MAX.get(dtype, np.inf)
    if not -limit <= scalar <= limit:
        with np.errstate(over="ignore"):  # beyond the dtype's range: inf, silently
            return Array(np.asarray(scalar).astype(dtype)[()], True)
    return Array(np.asarray(scalar).astype(dtype)[()], True)  # wraps, as JAX does


# The largest finite values of the float dtypes a Python scalar may overflow.
_NARROW_FLOAT_MAX = {
    np.dtype(t): float(dtypes.finfo(t).max)
    for t in (np.float16, dtypes.bfloat16, np.float32)
}


def _binary(name, prim, promote=promote_args, bool_prim=None):
    # The fast paths skip promotion, which only plain `promote_args` allows (the
    # inexact/numeric promotions may still change an unpromoted dtype).
    fast_paths = promote is promote_args

    def fun(x1, x2, /):
        if fast_paths:
            if _fast(x1, x2):
                if bool_prim is not None and x1._value.dtype.kind == "b":
                    return bool_prim.bind(x1, x2)
                return prim.bind(x1, x2)
            t1, t2 = type(x1), type(x2)
            if t1 is Array and (t2 is float or t2 is int):
                s = _scalar_operand(x1, x2)
                if s is not None:
                    return prim.bind(x1, s)
            elif t2 is Array and (t1 is float or t1 is int):
                s = _scalar_operand(x2, x1)
                if s is not None:
                    return prim.bind(s, x2)
        x1, x2 = promote(name, x1, x2)
        if bool_prim is not None and x1.dtype == np.bool_:
            return bool_prim.bind(x1, x2)
        return prim.bind(x1, x2)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = (
        f"Elementwise `{name}` with NumPy broadcasting and JAX type promotion."
    )
    return fun


# The dtype kinds an Array keeps under each one-argument promotion (no conversion).
_UNCHANGED_KINDS = {promote_args: "biufc", promote_args_inexact: "fc"}


def _unary(name, prim, promote=promote_args):
    kinds = _UNCHANGED_KINDS.get(promote, "")

    def fun(x, /):
        if type(x) is Array and x._value.dtype.kind in kinds:
            return prim.bind(x)  # promotion would leave x as it is
        (x,) = promote(name, x)
        return prim.bind(x)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"Elementwise `{name}` with JAX type promotion."
    return fun


def _const(x, value):
    """`value` as a 0-d Array of `x`'s dtype, weak when `x` is a weak scalar (as a
    Python scalar would be: `deg2rad(1.0)` stays weak) and strong otherwise."""
    weak = np.ndim(x) == 0 and getattr(x, "weak_type", False)
    return Array(np.asarray(value).astype(np.dtype(x.dtype))[()], weak)


def _strong_const(x, value):
    """`value` as a strong 0-d Array of `x`'s dtype."""
    return Array(np.asarray(value).astype(np.dtype(x.dtype))[()], False)


def _asarray(fun_name, x):
    """`x` as an Array (Python scalars weak), after checking it is array-like."""
    check_arraylike(fun_name, x)
    from jaxlite.lax.structural import operand

    return operand(x)


def _is_int_or_bool(x):
    dtype = np.dtype(x.dtype)
    return dtype == np.bool_ or np.issubdtype(dtype, np.integer)


def _compare(name, prim):
    # Complex numbers compare lexicographically (real parts, then imaginary parts);
    # the lax comparison itself only orders real numbers.
    def fun(x1, x2, /):
        if _fast(x1, x2) and x1._value.dtype.kind != "c":
            return prim.bind(x1, x2)
        t1, t2 = type(x1), type(x2)
        if t1 is Array and (t2 is float or t2 is int) and x1._value.dtype.kind != "c":
            s = _scalar_operand(x1, x2)  # the common `x < 0.5`
            if s is not None:
                return prim.bind(x1, s)
        x1, x2 = promote_args(name, x1, x2)
        if dtypes.issubdtype(x1.dtype, np.complexfloating):
            re1, re2 = ew.real_p.bind(x1), ew.real_p.bind(x2)
            on_imag = prim.bind(ew.imag_p.bind(x1), ew.imag_p.bind(x2))
            return lax.select(ew.eq_p.bind(re1, re2), on_imag, prim.bind(re1, re2))
        return prim.bind(x1, x2)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"Elementwise `{name}` with JAX type promotion (bool result)."
    return fun


add = _binary("add", ew.add_p, bool_prim=ew.or_p)  # on booleans: or, as in JAX
multiply = _binary("multiply", ew.mul_p, bool_prim=ew.and_p)  # on booleans: and

subtract = _binary("subtract", ew.sub_p)
maximum = _binary("maximum", ew.max_p)
minimum = _binary("minimum", ew.min_p)
arctan2 = _binary("arctan2", ew.atan2_p, promote_args_inexact)
nextafter = _binary("nextafter", ew.nextafter_p, promote_args_inexact)
equal = _binary("equal", ew.eq_p)
not_equal = _binary("not_equal", ew.ne_p)
less = _compare("less", ew.lt_p)
less_equal = _compare("less_equal", ew.le_p)
greater = _compare("greater", ew.gt_p)
greater_equal = _compare("greater_equal", ew.ge_p)
bitwise_and = _binary("bitwise_and", ew.and_p)
bitwise_or = _binary("bitwise_or", ew.or_p)
bitwise_xor = _binary("bitwise_xor", ew.xor_p)

negative = _unary("negative", ew.neg_p)
exp = _unary("exp", ew.exp_p, promote_args_inexact)
exp2 = _unary("exp2", ew.exp2_p, promote_args_inexact)
log = _unary("log", ew.log_p, promote_args_inexact)
log1p = _unary("log1p", ew.log1p_p, promote_args_inexact)
expm1 = _unary("expm1", ew.expm1_p, promote_args_inexact)
tanh = _unary("tanh", ew.tanh_p, promote_args_inexact)
sin = _unary("sin", ew.sin_p, promote_args_inexact)
cos = _unary("cos", ew.cos_p, promote_args_inexact)
tan = _unary("tan", ew.tan_p, promote_args_inexact)
arcsin = _unary("arcsin", ew.asin_p, promote_args_inexact)
arccos = _unary("arccos", ew.acos_p, promote_args_inexact)
arctan = _unary("arctan", ew.atan_p, promote_args_inexact)
sinh = _unary("sinh", ew.sinh_p, promote_args_inexact)
cosh = _unary("cosh", ew.cosh_p, promote_args_inexact)
arcsinh = _unary("arcsinh", ew.asinh_p, promote_args_inexact)
arctanh = _unary("arctanh", ew.atanh_p, promote_args_inexact)
sqrt = _unary("sqrt", ew.sqrt_p, promote_args_inexact)
cbrt = _unary("cbrt", ew.cbrt_p, promote_args_inexact)


def arccosh(x, /):
    (x,) = promote_args_inexact("arccosh", x)
    out = ew.acosh_p.bind(x)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        # lax.acosh's branch differs from NumPy's: take the root with real part >= 0.
        negative_half = ew.lt_p.bind(
            ew.real_p.bind(out), _const(ew.real_p.bind(out), 0)
        )
        out = where(negative_half, ew.neg_p.bind(out), out)
    return out


def conjugate(x, /):
    """The complex conjugate of `x` (`x` itself when it is not complex)."""
    x = _asarray("conjugate", x)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        return ew.conj_p.bind(x, input_dtype=np.dtype(x.dtype))
    return x


conj = conjugate


def real(val, /):
    """The real part of `val` (`val` itself when it is not complex)."""
    val = _asarray("real", val)
    if dtypes.issubdtype(np.dtype(val.dtype), np.complexfloating):
        return ew.real_p.bind(val)
    return val


def imag(val, /):
    """The imaginary part of `val` (zeros when it is not complex)."""
    val = _asarray("imag", val)
    if dtypes.issubdtype(np.dtype(val.dtype), np.complexfloating):
        return ew.imag_p.bind(val)
    return lax.full_like(val, 0)


def isfinite(x, /):
    """True where `x` is neither infinite nor NaN (both parts, for complex `x`)."""
    x = _asarray("isfinite", x)
    dtype = np.dtype(x.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        return ew.and_p.bind(
            ew.is_finite_p.bind(ew.real_p.bind(x)),
            ew.is_finite_p.bind(ew.imag_p.bind(x)),
        )
    if dtypes.issubdtype(dtype, np.inexact):
        return ew.is_finite_p.bind(x)
    return lax.full_like(x, True, dtype=np.bool_)


def _signs_differ(a, b):
    return ew.ne_p.bind(ew.sign_p.bind(a), ew.sign_p.bind(b))


def true_divide(x1, x2, /):
    x1, x2 = promote_args_inexact("true_divide", x1, x2)
    return ew.div_p.bind(x1, x2)


divide = true_divide


def floor_divide(x1, x2, /):
    """`x1 // x2`, rounding toward -inf. Integer division by zero gives what XLA's
    division gives (-1), moved down by one where the signs differ: `7 // 0 == -2`."""
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dtype = np.dtype(x1.dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        return ew.div_p.bind(x1, x2)
    if np.issubdtype(dtype, np.integer):
        quotient = ew.div_p.bind(x1, x2)
        inexact = ew.ne_p.bind(ew.rem_p.bind(x1, x2), _const(x1, 0))
        step_down = ew.and_p.bind(_signs_differ(x1, x2), inexact)
        return where(step_down, subtract(quotient, 1), quotient)
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


def _float_divmod(x1, x2):
    # As Python's float divmod: the remainder takes the divisor's sign, and the
    # quotient is computed from x1 - mod (an exact multiple of x2), then rounded.
    mod = ew.rem_p.bind(x1, x2)
    multiple = where(equal(x2, 0), x1, ew.sub_p.bind(x1, mod))
    quotient = ew.div_p.bind(multiple, x2)
    wrong_sign = ew.and_p.bind(
        ew.ne_p.bind(mod, _const(mod, 0)), _signs_differ(x2, mod)
    )
    mod = lax.select(wrong_sign, add(mod, x2), mod)
    quotient = lax.select(wrong_sign, subtract(quotient, 1.0), quotient)
    return lax.round(quotient), mod


def remainder(x1, x2, /):
    """`x1 % x2` with the sign of `x2`; an integer remainder by zero is 0."""
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    if dtypes.issubdtype(np.dtype(x2.dtype), np.integer):
        x2 = where(ew.eq_p.bind(x2, _const(x2, 0)), lax.full_like(x2, 1), x2)
    r = ew.rem_p.bind(x1, x2)
    zero = _const(x1, 0)
    wrong_sign = ew.and_p.bind(
        ew.ne_p.bind(ew.lt_p.bind(r, zero), ew.lt_p.bind(x2, zero)),
        ew.ne_p.bind(r, zero),
    )
    return lax.select(wrong_sign, ew.add_p.bind(r, x2), r)


mod = remainder


def fmod(x1, x2, /):
    """`x1 % x2` with the sign of `x1` (C's `fmod`); an integer remainder by zero is 0."""
    check_arraylike("fmod", x1, x2)
    if dtypes.issubdtype(dtypes.result_type(x1, x2), np.integer):
        x2 = _asarray("fmod", x2)
        x2 = where(equal(x2, 0), lax.full_like(x2, 1), x2)
    return ew.rem_p.bind(*promote_args_numeric("fmod", x1, x2))


def divmod(x1, x2, /):  # noqa: A001
    x1, x2 = promote_args_numeric("divmod", x1, x2)
    if dtypes.issubdtype(np.dtype(x1.dtype), np.integer):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def _concrete_int(x):
    """`x` as a Python int when it is a concrete integer scalar, else None."""
    if type(x) is int or type(x) is bool:
        return int(x)
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    value = x._value if type(x) is Array else np.asarray(x)
    if value.ndim == 0 and np.issubdtype(value.dtype, np.integer):
        return int(value)
    return None


def power(x1, x2, /):
    """`x1 ** x2`. A concrete integer exponent (a Python int, or a concrete integer
    scalar) gives `lax.integer_pow`, which keeps `x1`'s dtype; otherwise integer
    powers are computed by repeated squaring and the rest with `lax.pow`."""
    check_arraylike("power", x1, x2)
    y = _concrete_int(x2)
    if y is not None:
        (x1,) = promote_dtypes_numeric(x1)
        return ew.integer_pow_p.bind(x1, y=y)
    from jaxlite.lax.structural import operand

    x1, x2 = promote_shapes("power", operand(x1), operand(x2))
    base, exponent = promote_dtypes_numeric(x1, x2)
    if _is_int_or_bool(base):
        return _integer_power(base, exponent)
    if dtypes.issubdtype(np.dtype(x1.dtype), np.inexact) and dtypes.issubdtype(
        np.dtype(x2.dtype), np.integer
    ):
        return ew.pow_p.bind(x1, x2)  # an integer exponent keeps x1 differentiable at 0
    return ew.pow_p.bind(base, exponent)


def _integer_power(base, exponent):
    # Square-and-multiply over the exponent's low six bits (any larger exponent
    # overflows for |base| > 1): JAX's choice, so values agree even for exponents
    # that are negative or >= 64. 0 ** y is 0 for y != 0 and 1 for y == 0.
    zero, one = _strong_const(exponent, 0), _strong_const(exponent, 1)
    zero_base = ew.and_p.bind(ew.eq_p.bind(base, zero), ew.ne_p.bind(exponent, zero))
    out = where(zero_base, zero, one)
    for _ in range(6):
        bit = ew.ne_p.bind(ew.and_p.bind(exponent, one), zero)
        out = where(bit, ew.mul_p.bind(out, base), out)
        base = ew.mul_p.bind(base, base)
        exponent = ew.shift_right_logical_p.bind(exponent, one)
    return out


pow = power  # noqa: A001


def float_power(x1, x2, /):
    x1, x2 = promote_args_inexact("float_power", x1, x2)
    return ew.pow_p.bind(x1, x2)


def left_shift(x1, x2, /):
    x1, x2 = promote_args_numeric("left_shift", x1, x2)
    return ew.shift_left_p.bind(x1, x2)


def right_shift(x1, x2, /):
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    if np.issubdtype(np.dtype(x1.dtype), np.unsignedinteger):
        return ew.shift_right_logical_p.bind(x1, x2)
    return ew.shift_right_arithmetic_p.bind(x1, x2)


def bitwise_not(x, /):
    (x,) = promote_args("bitwise_not", x)
    return ew.not_p.bind(x)


invert = bitwise_not
bitwise_invert = bitwise_not
bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def logical_not(x, /):
    (x,) = promote_args("logical_not", x)
    return ew.not_p.bind(_to_bool(x))


def _to_bool(x):
    """`x != 0` against a strong zero (so the result is weak only for weak bools)."""
    if np.dtype(x.dtype) == np.bool_:
        return x
    return ew.ne_p.bind(x, _const(x, 0))


def _logical(name, prim):
    def fun(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        return prim.bind(_to_bool(x1), _to_bool(x2))

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"Elementwise `{name}` of the truth values of the inputs."
    return fun


logical_and = _logical("logical_and", ew.and_p)
logical_or = _logical("logical_or", ew.or_p)
logical_xor = _logical("logical_xor", ew.xor_p)


def absolute(x, /):
    x = _asarray("absolute", x)
    dtype = np.dtype(x.dtype)
    if dtype == np.bool_ or np.issubdtype(dtype, np.unsignedinteger):
        return x
    return ew.abs_p.bind(x)


abs = absolute  # noqa: A001


def fabs(x, /):
    x = _asarray("fabs", x)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    (x,) = promote_dtypes_inexact(x)
    return ew.abs_p.bind(x)


def sign(x, /):
    (x,) = promote_args("sign", x)
    return ew.sign_p.bind(x)


def positive(x, /):
    (x,) = promote_args("positive", x)
    return x


def square(x, /):
    (x,) = promote_args_numeric("square", x)
    return ew.square_p.bind(x)


def reciprocal(x, /):
    (x,) = promote_args_inexact("reciprocal", x)
    return ew.integer_pow_p.bind(x, y=-1)


def floor(x, /):
    x = _asarray("floor", x)
    if _is_int_or_bool(x):
        return x
    (x,) = promote_dtypes_inexact(x)
    return ew.floor_p.bind(x)


def ceil(x, /):
    x = _asarray("ceil", x)
    if _is_int_or_bool(x):
        return x
    (x,) = promote_dtypes_inexact(x)
    return ew.ceil_p.bind(x)


def trunc(x, /):
    x = _asarray("trunc", x)
    if _is_int_or_bool(x):
        return x
    return where(ew.lt_p.bind(x, _const(x, 0)), ceil(x), floor(x))


def rint(x, /):
    """`x` rounded to the nearest integer (ties to even), as a float."""
    x = _asarray("rint", x)
    dtype = np.dtype(x.dtype)
    if _is_int_or_bool(x):
        return lax.convert_element_type(x, dtypes.default_float_dtype())
    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.complex(rint(ew.real_p.bind(x)), rint(ew.imag_p.bind(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals=0, out=None):  # noqa: A001
    """`a` rounded to `decimals` decimal places (ties to even)."""
    import operator

    from jaxlite.core import concrete_or_error

    a = _asarray("round", a)
    decimals = concrete_or_error(
        operator.index, decimals, "'decimals' argument of jnp.round"
    )
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    dtype = np.dtype(a.dtype)
    if np.issubdtype(dtype, np.integer):
        if decimals < 0:
            raise NotImplementedError(
                "integer np.round not implemented for decimals < 0"
            )
        return a
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"data type {dtype.type} not inexact")
    if decimals > np.log10(float(dtypes.finfo(dtype).max)):
        return a  # rounding beyond the dtype's precision changes nothing

    def round_real(x):
        if decimals == 0:
            return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
        wide = np.dtype(x.dtype) == np.float16  # float16 scales in float32
        if wide:
            x = lax.convert_element_type(x, np.float32)
        factor = _const(x, 10**decimals)
        scaled = lax.round(ew.mul_p.bind(x, factor), lax.RoundingMethod.TO_NEAREST_EVEN)
        out = ew.div_p.bind(scaled, factor)
        return lax.convert_element_type(out, np.float16) if wide else out

    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.complex(round_real(ew.real_p.bind(a)), round_real(ew.imag_p.bind(a)))
    return round_real(a)


around = round


def log2(x, /):
    (x,) = promote_args_inexact("log2", x)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        r = ew.log_p.bind(x)
        re, im = ew.real_p.bind(r), ew.imag_p.bind(r)
        ln2 = ew.log_p.bind(_strong_const(re, 2))
        return lax.complex(ew.div_p.bind(re, ln2), ew.div_p.bind(im, ln2))
    return ew.div_p.bind(ew.log_p.bind(x), ew.log_p.bind(_strong_const(x, 2)))


def log10(x, /):
    (x,) = promote_args_inexact("log10", x)
    inv_ln10 = 0.4342944819032518  # 1 / log(10)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        r = ew.log_p.bind(x)
        re, im = ew.real_p.bind(r), ew.imag_p.bind(r)
        k = _strong_const(re, inv_ln10)
        return lax.complex(ew.mul_p.bind(re, k), ew.mul_p.bind(im, k))
    return ew.mul_p.bind(ew.log_p.bind(x), _strong_const(x, inv_ln10))


def logaddexp(x1, x2, /):
    """`log(exp(x1) + exp(x2))` without overflow."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(x1, x2)


def logaddexp2(x1, x2, /):
    """`log2(2**x1 + 2**x2)` without overflow."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp2(x1, x2)


def _log_add(x1, x2, exp_fn, scale, period):
    # amax + scale * log1p(exp_fn(-|x1 - x2|)); where the difference is NaN (a NaN,
    # or infinities of the same sign) the plain sum gives the right answer.
    amax = ew.max_p.bind(x1, x2)
    dtype = np.dtype(x1.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        delta = ew.sub_p.bind(add(x1, x2), ew.mul_p.bind(amax, _const(amax, 2)))
        tail = log1p(exp_fn(delta))
        if scale != 1:
            tail = ew.mul_p.bind(_const(amax, scale), tail)
        out = ew.add_p.bind(amax, tail)
        return lax.complex(
            ew.real_p.bind(out), _wrap_between(ew.imag_p.bind(out), period)
        )
    delta = ew.sub_p.bind(x1, x2)
    delta_is_nan = ew.ne_p.bind(delta, delta)
    plain_sum = ew.add_p.bind(x1, x2)
    tail = log1p(exp_fn(ew.neg_p.bind(ew.abs_p.bind(delta))))
    if scale != 1:
        tail = ew.mul_p.bind(_const(amax, scale), tail)
    return lax.select(delta_is_nan, plain_sum, ew.add_p.bind(amax, tail))


def _wrap_between(x, a):
    """`x` wrapped into [-a, a)."""
    two_a, zero = _const(x, 2 * a), _const(x, 0)
    r = ew.rem_p.bind(ew.add_p.bind(x, _const(x, a)), two_a)
    r = lax.select(ew.lt_p.bind(r, zero), ew.add_p.bind(r, two_a), r)
    return ew.sub_p.bind(r, _const(x, a))


def _finite_or_zero(x):
    """`x` with +inf replaced by 0 (so that `inf - inf` never appears in a JVP)."""
    return lax.select(isposinf(real(x)), lax.full_like(x, 0), x)


def _log_add_jvp(fn, exp_fn, primals, tangents):
    x1, x2 = primals
    t1, t2 = tangents
    out = fn(x1, x2)
    w1 = exp_fn(subtract(_finite_or_zero(x1), _finite_or_zero(out)))
    w2 = exp_fn(subtract(_finite_or_zero(x2), _finite_or_zero(out)))
    return out, add(multiply(t1, w1), multiply(t2, w2))


def _logaddexp_fun(x1, x2):
    return _log_add(x1, x2, exp, 1.0, float(np.pi))


def _logaddexp2_fun(x1, x2):
    return _log_add(x1, x2, exp2, float(1 / np.log(2)), float(np.pi / np.log(2)))


_logaddexp_fun.__name__ = "logaddexp"
_logaddexp2_fun.__name__ = "logaddexp2"
_logaddexp = custom_jvp(_logaddexp_fun)
_logaddexp2 = custom_jvp(_logaddexp2_fun)


def _logaddexp_jvp(primals, tangents):
    return _log_add_jvp(_logaddexp, exp, primals, tangents)


def _logaddexp2_jvp(primals, tangents):
    return _log_add_jvp(_logaddexp2, exp2, primals, tangents)


_logaddexp.defjvp(_logaddexp_jvp)
_logaddexp2.defjvp(_logaddexp2_jvp)


def deg2rad(x, /):
    (x,) = promote_args_inexact("deg2rad", x)
    return ew.mul_p.bind(x, _const(x, np.pi / 180))


def rad2deg(x, /):
    (x,) = promote_args_inexact("rad2deg", x)
    return ew.mul_p.bind(x, _const(x, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


def hypot(x1, x2, /):
    """`sqrt(x1**2 + x2**2)` without overflow or underflow in the squares."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if dtypes.issubdtype(np.dtype(x1.dtype), np.complexfloating):
        raise ValueError(
            "jnp.hypot is not well defined for complex-valued inputs. Please convert "
            "to real values first, such as by using abs(x)"
        )
    a, b = ew.abs_p.bind(x1), ew.abs_p.bind(x2)
    inf = _const(a, np.inf)
    any_inf = ew.or_p.bind(ew.eq_p.bind(a, inf), ew.eq_p.bind(b, inf))
    big, small = maximum(a, b), minimum(a, b)
    big_is_zero = ew.eq_p.bind(big, _const(big, 0))
    safe_big = where(big_is_zero, lax.full_like(big, 1), big)
    ratio = ew.div_p.bind(small, safe_big)
    scaled = ew.mul_p.bind(
        big, ew.sqrt_p.bind(add(1, ew.integer_pow_p.bind(ratio, y=2)))
    )
    out = where(big_is_zero, big, scaled)
    return where(any_inf, _const(out, np.inf), out)


def isnan(x, /):
    x = _asarray("isnan", x)
    return ew.ne_p.bind(x, x)


def isinf(x, /):
    x = _asarray("isinf", x)
    dtype = np.dtype(x.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        re, im = ew.real_p.bind(x), ew.imag_p.bind(x)
        inf = _strong_const(re, np.inf)
        return ew.or_p.bind(
            ew.eq_p.bind(ew.abs_p.bind(re), inf), ew.eq_p.bind(ew.abs_p.bind(im), inf)
        )
    if dtypes.issubdtype(dtype, np.inexact):
        return ew.eq_p.bind(ew.abs_p.bind(x), _strong_const(x, np.inf))
    return lax.full_like(x, False, dtype=np.bool_)


def _isinf_signed(name, x, out, infinity):
    x = _asarray(name, x)
    if out is not None:
        raise NotImplementedError(
            "The 'out' argument to isneginf/isposinf is not supported."
        )
    dtype = np.dtype(x.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if dtypes.issubdtype(dtype, np.inexact):
        return ew.eq_p.bind(x, _strong_const(x, infinity))
    return lax.full_like(x, False, dtype=np.bool_)


def isposinf(x, /, out=None):
    """True where `x` is +inf."""
    return _isinf_signed("isposinf", x, out, np.inf)


def isneginf(x, /, out=None):
    """True where `x` is -inf."""
    return _isinf_signed("isneginf", x, out, -np.inf)


def signbit(x, /):
    """True where the sign bit of `x` is set (so also for -0.0 and -nan)."""
    (x,) = promote_args("signbit", x)
    dtype = np.dtype(x.dtype)
    if np.issubdtype(dtype, np.integer):
        return ew.lt_p.bind(x, _strong_const(x, 0))
    if dtype == np.bool_:
        return lax.full_like(x, False, dtype=np.bool_)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"jax.numpy.signbit is not well defined for {dtype}")
    return _sign_bit_of(x)


def copysign(x1, x2, /):
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if dtypes.issubdtype(np.dtype(x1.dtype), np.complexfloating):
        raise TypeError("copysign does not support complex-valued inputs")
    magnitude = ew.abs_p.bind(x1)
    return where(_sign_bit_of(x2), ew.neg_p.bind(magnitude), magnitude)


def _sign_bit_of(x):
    """The sign bit of floating-point `x`, read from its bits (so -0.0 and -nan are
    negative, and no division runs)."""
    if np.ndim(x) == 0:  # lax.bitcast_convert_type's impl returns shape (1,) for 0-d
        return lax.reshape(_sign_bit_of(lax.broadcast_in_dim(x, (1,), ())), ())
    bits = np.dtype(x.dtype).itemsize * 8
    as_int = lax.bitcast_convert_type(x, np.dtype(f"int{bits}"))
    return ew.lt_p.bind(as_int, _strong_const(as_int, 0))


def heaviside(x1, x2, /):
    """0 where `x1 < 0`, 1 where `x1 > 0`, `x2` where `x1 == 0` (NaN stays NaN)."""
    check_arraylike("heaviside", x1, x2)
    x1, x2 = promote_dtypes_inexact(x1, x2)
    zero = _const(x1, 0)
    at_zero = where(ew.ne_p.bind(x1, x1), x1, x2)
    return where(
        ew.lt_p.bind(x1, zero),
        zero,
        where(ew.gt_p.bind(x1, zero), _const(x1, 1), at_zero),
    )


def fmax(x1, x2, /):
    """The maximum of `x1` and `x2`, ignoring a NaN in either one."""
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2, /):
    """The minimum of `x1` and `x2`, ignoring a NaN in either one."""
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def sinc(x, /):
    """`sin(pi x) / (pi x)`, with the limit 1 at 0 (and exact derivatives there)."""
    check_arraylike("sinc", x)
    (x,) = promote_dtypes_inexact(x)
    is_zero = ew.eq_p.bind(x, _const(x, 0))
    pix = ew.mul_p.bind(_const(x, np.pi), x)
    safe = where(is_zero, _const(x, 1), pix)
    return where(
        is_zero, _sinc_maclaurin(0, pix), ew.div_p.bind(ew.sin_p.bind(safe), safe)
    )


_maclaurin_fns = {}


def _sinc_maclaurin(k, x):
    """The k-th derivative of sin(x)/x at 0, shaped like `x`; its JVP is the next
    derivative, so every derivative of `sinc` at 0 is exact."""
    fn = _maclaurin_fns.get(k)
    if fn is None:

        def term(x):
            zero = multiply(x, 0)
            return zero if k % 2 else add(zero, _const(x, (-1) ** (k // 2) / (k + 1)))

        def term_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return fn(x), multiply(t, _sinc_maclaurin(k + 1, x))

        term.__name__ = f"sinc_maclaurin_{k}"
        fn = _maclaurin_fns[k] = custom_jvp(term)
        fn.defjvp(term_jvp)
    return fn(x)


# ----------------------------------------------------------------------------------
# Selection: where, select, clip, nan_to_num


def _as_bool(c):
    """A condition as bool: nonzero is True."""
    if np.dtype(c.dtype) == np.bool_:
        return c
    return ew.ne_p.bind(*promote_args("ne", c, 0))


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """`x` where `condition` holds, else `y` (broadcast together, dtypes promoted).

    With only `condition`, the indices of its nonzero elements (`jnp.nonzero`): the
    result's shape depends on the data, so under a transformation pass a static `size`.
    """
    if x is None and y is None:
        from jaxlite.numpy.indexing import nonzero

        condition = ensure_arraylike("where", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError(
            "size and fill_value arguments cannot be used in three-term where function."
        )
    return _where(condition, x, y)


@eager_jit(n_arrays=3)
def _where(condition, x, y):
    from jaxlite.lax.structural import operand
    from jaxlite.numpy.shape import broadcast_arrays

    _check_operands("where", (condition, x, y), float0_ok=True)
    x, y = promote_dtypes(x, y)
    condition, x, y = broadcast_arrays(_as_bool(operand(condition)), x, y)
    return ew.select_n_p.bind(condition, y, x)


def select(condlist, choicelist, default=0):
    """For each element, the entry of the first `choicelist` array whose condition in
    `condlist` holds, else `default`."""
    from jaxlite.lax.structural import operand
    from jaxlite.numpy.shape import broadcast_shapes, broadcast_to

    if len(condlist) != len(choicelist):
        raise ValueError(
            "condlist must have length equal to choicelist "
            f"({len(condlist)} vs {len(choicelist)})"
        )
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    default, *choices = promote_dtypes(default, *choicelist)
    conds = [_as_bool(operand(c)) for c in condlist]
    cond_shape = broadcast_shapes(*(np.shape(c) for c in conds))
    shape = broadcast_shapes(
        cond_shape, np.shape(default), *(np.shape(c) for c in choices)
    )
    out = broadcast_to(default, shape)
    for c, v in zip(reversed(conds), reversed(choices)):
        out = ew.select_n_p.bind(broadcast_to(c, shape), out, broadcast_to(v, shape))
    return out


def clip(arr=None, /, min=None, max=None):  # noqa: A002
    """`arr` limited to `[min, max]` (either bound may be None)."""
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    bounds = [b for b in (min, max) if b is not None]
    check_arraylike("clip", *bounds)
    if any(
        dtypes.issubdtype(dtypes.result_type(v), np.complexfloating)
        for v in (arr, *bounds)
    ):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max "
            "keywords. Complex values have no ordering and cannot be clipped. Please "
            "convert to a real value or array by taking the real or imaginary "
            "components via jax.numpy.real/imag respectively."
        )
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return arr if min is not None or max is not None else promote_args("clip", arr)[0]


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """`x` with NaN replaced by `nan` and infinities by `posinf`/`neginf` (by default
    the largest finite values of the dtype)."""
    check_arraylike("nan_to_num", x)
    (x,) = promote_dtypes(x)
    dtype = np.dtype(x.dtype)
    if not dtypes.issubdtype(dtype, np.inexact):
        return x
    if dtypes.issubdtype(dtype, np.complexfloating):
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        im = multiply(lax.convert_element_type(im, dtype), 1j)
        return add(lax.convert_element_type(re, dtype), im)
    info = dtypes.finfo(dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), lax.convert_element_type(nan, dtype), x)
    out = where(isposinf(out), lax.convert_element_type(posinf, dtype), out)
    return where(isneginf(out), lax.convert_element_type(neginf, dtype), out)


# ----------------------------------------------------------------------------------
# Array API names, and functions on the parts of floating-point numbers

acos, acosh, asin, asinh = arccos, arccosh, arcsin, arcsinh
atan, atan2, atanh = arctan, arctan2, arctanh


def angle(z, deg=False):
    """The argument of complex `z` (0 or pi for real `z`), in radians or degrees."""
    check_arraylike("angle", z)
    (z,) = promote_dtypes(z)
    re, im = real(z), imag(z)
    dtype = np.dtype(re.dtype)
    if not dtypes.issubdtype(dtype, np.inexact) or (
        dtypes.issubdtype(np.dtype(z.dtype), np.floating) and np.ndim(z) == 0
    ):
        dtype = dtypes.default_float_dtype()
        re = lax.convert_element_type(re, dtype)
        im = lax.convert_element_type(im, dtype)
    out = ew.atan2_p.bind(im, re)
    return rad2deg(out) if deg else out


def iscomplex(x):
    """True where `x` has a nonzero imaginary part."""
    check_arraylike("iscomplex", x)
    i = imag(promote_dtypes(x)[0])
    return ew.ne_p.bind(i, lax.full_like(i, 0))


def isreal(x):
    """True where `x` has a zero imaginary part."""
    check_arraylike("isreal", x)
    i = imag(promote_dtypes(x)[0])
    return ew.eq_p.bind(i, lax.full_like(i, 0))
