"""Elementwise jax.numpy functions, written in terms of jaxlite.lax.

Every function first checks that its inputs are arrays or scalars (lists are rejected, as
JAX does, because converting them silently hides performance problems), then promotes
dtypes with JAX's lattice (weak Python scalars never upcast arrays) and ranks (lower-rank
operands get leading size-1 axes), and finally binds one lax primitive.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import Array, Tracer
from jaxlite.lax import elementwise as ew
from jaxlite.lax.custom_derivatives import custom_jvp

_SCALARS = (int, float, complex, bool)

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
    "fix",
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


def check_arraylike(fun_name, *args):
    for i, a in enumerate(args):
        if not (
            isinstance(a, (Array, Tracer, np.ndarray, np.generic))
            or type(a) in _SCALARS
        ):
            raise TypeError(
                f"{fun_name} requires ndarray or scalar arguments, got {type(a)} at "
                f"position {i}."
            )


def promote_dtypes(*args):
    """Convert arguments to their common JAX dtype (weak if every input was weak)."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def promote_dtypes_inexact(*args):
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.default_float_dtype()
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def promote_dtypes_numeric(*args):
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if dtype == np.bool_:
        dtype = dtypes.default_int_dtype()
    return [lax.convert_element_type(a, dtype, weak) for a in args]


def promote_shapes(fun_name, *args):
    """Give lower-rank, non-scalar operands leading size-1 axes (NumPy broadcasting)."""
    shapes = [np.shape(a) for a in args]
    nonscalar = [s for s in shapes if s]
    if not nonscalar:
        return list(args)
    rank = max(len(s) for s in nonscalar)
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise TypeError(
            f"{fun_name} got incompatible shapes for broadcasting: "
            + ", ".join(map(str, shapes))
            + "."
        ) from None
    return [
        a if not s or len(s) == rank else lax.broadcast_to_rank(a, rank)
        for a, s in zip(args, shapes)
    ]


def promote_args(fun_name, *args):
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name, *args):
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name, *args):
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


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
    dtype, weak = dtypes.result_type(array, scalar, return_weak_type_flag=True)
    if dtype != array._value.dtype or weak != array.weak_type:
        return None
    return Array(np.asarray(scalar).astype(dtype)[()], True)  # wraps, as JAX does


def _binary(name, prim, promote=promote_args, bool_prim=None):
    scalar_fast_path = promote is promote_args

    def fun(x1, x2, /):
        if _fast(x1, x2):
            if bool_prim is not None and x1._value.dtype.kind == "b":
                return bool_prim.bind(x1, x2)
            return prim.bind(x1, x2)
        if scalar_fast_path:
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
        if bool_prim is not None and np.dtype(x1.dtype).kind == "b":
            return bool_prim.bind(x1, x2)
        return prim.bind(x1, x2)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = (
        f"Elementwise `{name}` with NumPy broadcasting and JAX type promotion."
    )
    return fun


def _unary(name, prim, promote=promote_args):
    def fun(x, /):
        (x,) = promote(name, x)
        return prim.bind(x)

    fun.__name__ = fun.__qualname__ = name
    fun.__doc__ = f"Elementwise `{name}` with JAX type promotion."
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
less = _binary("less", ew.lt_p)
less_equal = _binary("less_equal", ew.le_p)
greater = _binary("greater", ew.gt_p)
greater_equal = _binary("greater_equal", ew.ge_p)
bitwise_and = _binary("bitwise_and", ew.and_p)
bitwise_or = _binary("bitwise_or", ew.or_p)
bitwise_xor = _binary("bitwise_xor", ew.xor_p)
left_shift = _binary("left_shift", ew.shift_left_p)

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
arccosh = _unary("arccosh", ew.acosh_p, promote_args_inexact)
arctanh = _unary("arctanh", ew.atanh_p, promote_args_inexact)
sqrt = _unary("sqrt", ew.sqrt_p, promote_args_inexact)
cbrt = _unary("cbrt", ew.cbrt_p, promote_args_inexact)


def conjugate(x, /):
    """The complex conjugate of `x` (`x` itself when it is not complex)."""
    (x,) = promote_args("conjugate", x)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        return ew.conj_p.bind(x)
    return x


conj = conjugate


def real(val, /):
    """The real part of `val` (`val` itself when it is not complex)."""
    (val,) = promote_args("real", val)
    if dtypes.issubdtype(np.dtype(val.dtype), np.complexfloating):
        return ew.real_p.bind(val)
    return val


def imag(val, /):
    """The imaginary part of `val` (zeros when it is not complex)."""
    (val,) = promote_args("imag", val)
    if dtypes.issubdtype(np.dtype(val.dtype), np.complexfloating):
        return ew.imag_p.bind(val)
    return lax.full_like(val, 0)


def isfinite(x, /):
    """True where `x` is neither infinite nor NaN (both parts, for complex `x`)."""
    (x,) = promote_args("isfinite", x)
    dtype = np.dtype(x.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        return logical_and(isfinite(real(x)), isfinite(imag(x)))
    if dtypes.issubdtype(dtype, np.inexact):
        return ew.is_finite_p.bind(x)
    return lax.full_like(x, True, dtype=np.bool_)


def _bool_like(x, value):
    """A bool array of `x`'s shape (and weak type) filled with `value`."""
    v = lax.convert_element_type(value, np.bool_, getattr(x, "weak_type", False))
    return lax.broadcast_in_dim(v, np.shape(x), ())


def _is_exact(x):
    return not dtypes.issubdtype(dtypes.result_type(x), np.inexact)


def true_divide(x1, x2, /):
    x1, x2 = promote_args_inexact("true_divide", x1, x2)
    return ew.div_p.bind(x1, x2)


divide = true_divide


def floor_divide(x1, x2, /):
    x1, x2 = promote_args_numeric("floor_divide", x1, x2)
    dtype = np.dtype(x1.dtype)
    if dtype == np.bool_ or np.issubdtype(dtype, np.integer):
        q = ew.div_p.bind(x1, x2)
        if np.issubdtype(dtype, np.unsignedinteger):
            return q
        r = ew.rem_p.bind(x1, x2)
        fix = bitwise_and(not_equal(r, 0), not_equal(less(r, 0), less(x2, 0)))
        return lax.select(fix, subtract(q, 1), q)
    return floor(ew.div_p.bind(x1, x2))


def remainder(x1, x2, /):
    x1, x2 = promote_args_numeric("remainder", x1, x2)
    r = ew.rem_p.bind(x1, x2)
    if np.issubdtype(np.dtype(x1.dtype), np.unsignedinteger):
        return r
    zero = lax.convert_element_type(0, x1.dtype)
    fix = bitwise_and(not_equal(r, zero), not_equal(less(r, zero), less(x2, zero)))
    return lax.select(fix, add(r, x2), r)


mod = remainder


def fmod(x1, x2, /):
    x1, x2 = promote_args_numeric("fmod", x1, x2)
    return ew.rem_p.bind(x1, x2)


def divmod(x1, x2, /):  # noqa: A001
    return floor_divide(x1, x2), remainder(x1, x2)


def power(x1, x2, /):
    check_arraylike("power", x1, x2)
    if type(x2) is int and dtypes.issubdtype(dtypes.result_type(x1), np.number):
        (x1,) = promote_dtypes_numeric(x1)
        return ew.integer_pow_p.bind(x1, y=x2)
    x1, x2 = promote_args_numeric("power", x1, x2)
    dtype = np.dtype(x1.dtype)
    if np.issubdtype(dtype, np.integer):
        return _integer_power(x1, x2)
    return ew.pow_p.bind(x1, x2)


def _integer_power(x, y):
    # Exponentiation by squaring over the bits of y (negative exponents give 0 as XLA).
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    x = lax.broadcast_in_dim(
        x, shape, tuple(range(len(shape) - np.ndim(x), len(shape)))
    )
    y = lax.broadcast_in_dim(
        y, shape, tuple(range(len(shape) - np.ndim(y), len(shape)))
    )
    out = lax.full_like(x, 1)
    base = x
    y = lax.convert_element_type(y, x.dtype)
    for _ in range(np.dtype(x.dtype).itemsize * 8):
        bit = not_equal(bitwise_and(y, 1), 0)
        out = lax.select(bit, multiply(out, base), out)
        base = multiply(base, base)
        y = ew.shift_right_logical_p.bind(*promote_args("power", y, 1))
    return out


pow = power  # noqa: A001


def float_power(x1, x2, /):
    x1, x2 = promote_args_inexact("float_power", x1, x2)
    return ew.pow_p.bind(x1, x2)


def right_shift(x1, x2, /):
    x1, x2 = promote_args("right_shift", x1, x2)
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
    if np.dtype(x.dtype) == np.bool_:
        return x
    return ew.ne_p.bind(*promote_args("ne", x, 0))


def _logical(name, prim):
    def fun(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        return prim.bind(_to_bool(x1), _to_bool(x2))

    fun.__name__ = name
    return fun


logical_and = _logical("logical_and", ew.and_p)
logical_or = _logical("logical_or", ew.or_p)
logical_xor = _logical("logical_xor", ew.xor_p)


def absolute(x, /):
    (x,) = promote_args("absolute", x)
    if np.dtype(x.dtype) == np.bool_ or np.issubdtype(
        np.dtype(x.dtype), np.unsignedinteger
    ):
        return x
    return ew.abs_p.bind(x)


abs = absolute  # noqa: A001


def fabs(x, /):
    (x,) = promote_args_inexact("fabs", x)
    if dtypes.issubdtype(np.dtype(x.dtype), np.complexfloating):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return ew.abs_p.bind(x)


def sign(x, /):
    (x,) = promote_args("sign", x)
    if np.dtype(x.dtype) == np.bool_:
        return x
    return ew.sign_p.bind(x)


def positive(x, /):
    (x,) = promote_args("positive", x)
    return x


def square(x, /):
    (x,) = promote_args_numeric("square", x)
    return ew.integer_pow_p.bind(x, y=2)


def reciprocal(x, /):
    (x,) = promote_args_inexact("reciprocal", x)
    return ew.integer_pow_p.bind(x, y=-1)


def floor(x, /):
    (x,) = promote_args_numeric("floor", x)
    return x if _is_exact(x) else ew.floor_p.bind(x)


def ceil(x, /):
    (x,) = promote_args_numeric("ceil", x)
    return x if _is_exact(x) else ew.ceil_p.bind(x)


def trunc(x, /):
    (x,) = promote_args_numeric("trunc", x)
    if _is_exact(x):
        return x
    return lax.select(less(x, 0), ew.ceil_p.bind(x), ew.floor_p.bind(x))


fix = trunc


def rint(x, /):
    """`x` rounded to the nearest integer (ties to even), as a float."""
    check_arraylike("rint", x)
    (x,) = promote_dtypes(x)
    dtype = np.dtype(x.dtype)
    if not dtypes.issubdtype(dtype, np.inexact):
        return lax.convert_element_type(x, dtypes.default_float_dtype())
    if dtypes.issubdtype(dtype, np.complexfloating):
        return _complex_from_parts(rint(real(x)), rint(imag(x)))
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def _complex_from_parts(re, im):
    return add(re, multiply(im, 1j))


def round(a, decimals=0, out=None):  # noqa: A001
    """`a` rounded to `decimals` decimal places (ties to even)."""
    import operator

    decimals = operator.index(decimals)
    if out is not None:
        raise ValueError("The 'out' argument to jnp.round is not supported.")
    (a,) = promote_args_numeric("round", a)
    if dtypes.issubdtype(np.dtype(a.dtype), np.complexfloating):
        return _complex_from_parts(round(real(a), decimals), round(imag(a), decimals))
    if _is_exact(a):
        if decimals >= 0:
            return a
        factor = lax.convert_element_type(10 ** (-decimals), a.dtype)
        return multiply(floor_divide(add(a, floor_divide(factor, 2)), factor), factor)
    if decimals == 0:
        return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)
    factor = lax.convert_element_type(10.0**decimals, a.dtype)
    rounded = lax.round(multiply(a, factor), lax.RoundingMethod.TO_NEAREST_EVEN)
    return true_divide(rounded, factor)


around = round


def log2(x, /):
    (x,) = promote_args_inexact("log2", x)
    return true_divide(ew.log_p.bind(x), lax.convert_element_type(np.log(2), x.dtype))


def log10(x, /):
    (x,) = promote_args_inexact("log10", x)
    return true_divide(ew.log_p.bind(x), lax.convert_element_type(np.log(10), x.dtype))


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
        delta = subtract(add(x1, x2), multiply(amax, 2))
        out = add(amax, multiply(log1p(exp_fn(delta)), scale))
        im = imag(out)
        turns = floor(true_divide(add(im, period), 2 * period))
        wrapped = subtract(im, multiply(turns, 2 * period))
        return add(real(out), multiply(wrapped, 1j))
    delta = ew.sub_p.bind(x1, x2)
    delta_is_nan = ew.ne_p.bind(delta, delta)
    plain_sum = ew.add_p.bind(x1, x2)
    tail = log1p(exp_fn(ew.neg_p.bind(ew.abs_p.bind(delta))))
    if scale != 1:
        tail = multiply(tail, scale)
    return lax.select(delta_is_nan, plain_sum, ew.add_p.bind(amax, tail))


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
    return multiply(x, np.pi / 180)


def rad2deg(x, /):
    (x,) = promote_args_inexact("rad2deg", x)
    return multiply(x, 180 / np.pi)


radians, degrees = deg2rad, rad2deg


def hypot(x1, x2, /):
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    return sqrt(add(multiply(x1, x1), multiply(x2, x2)))


def isnan(x, /):
    (x,) = promote_args("isnan", x)
    if _is_exact(x):
        return _bool_like(x, False)
    return ew.ne_p.bind(x, x)


def isinf(x, /):
    (x,) = promote_args("isinf", x)
    if _is_exact(x):
        return lax.full_like(x, False, dtype=np.bool_)
    dtype = np.dtype(x.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        return logical_or(isinf(real(x)), isinf(imag(x)))
    return equal(absolute(x), lax.convert_element_type(np.inf, dtype))


def _isinf_signed(name, x, out, positive):
    if out is not None:
        raise NotImplementedError(
            "The 'out' argument to isneginf/isposinf is not supported."
        )
    (x,) = promote_args(name, x)
    dtype = np.dtype(x.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    if _is_exact(x):
        return lax.full_like(x, False, dtype=np.bool_)
    inf = np.inf if positive else -np.inf
    return equal(x, lax.convert_element_type(inf, dtype))


def isposinf(x, /, out=None):
    """True where `x` is +inf."""
    return _isinf_signed("isposinf", x, out, positive=True)


def isneginf(x, /, out=None):
    """True where `x` is -inf."""
    return _isinf_signed("isneginf", x, out, positive=False)


def signbit(x, /):
    """True where the sign bit of `x` is set (so also for -0.0 and -nan)."""
    (x,) = promote_args("signbit", x)
    dtype = np.dtype(x.dtype)
    if dtypes.issubdtype(dtype, np.complexfloating):
        raise ValueError(f"jax.numpy.signbit is not well defined for {dtype}")
    if dtype == np.bool_:
        return _bool_like(x, False)
    if _is_exact(x):
        return less(x, lax.convert_element_type(0, dtype))
    return _sign_bit_of(x)


def copysign(x1, x2, /):
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    mag = absolute(x1)
    return where(_sign_bit_of(x2), negative(mag), mag)


def _sign_bit_of(x):
    # Distinguishes -0.0 from 0.0: 1/x is -inf for -0.0.
    return logical_or(less(x, 0), logical_and(equal(x, 0), less(true_divide(1, x), 0)))


def heaviside(x1, x2, /):
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero, one = lax.full_like(x1, 0), lax.full_like(x1, 1)
    x2 = lax.broadcast_in_dim(x2, np.shape(x1), ()) if not np.shape(x2) else x2
    return lax.select(less(x1, zero), zero, lax.select(equal(x1, zero), x2, one))


def fmax(x1, x2, /):
    x1, x2 = promote_args("fmax", x1, x2)
    return lax.select(isnan(x1), x2, lax.select(isnan(x2), x1, maximum(x1, x2)))


def fmin(x1, x2, /):
    x1, x2 = promote_args("fmin", x1, x2)
    return lax.select(isnan(x1), x2, lax.select(isnan(x2), x1, minimum(x1, x2)))


def sinc(x, /):
    (x,) = promote_args_inexact("sinc", x)
    pix = multiply(x, np.pi)
    is_zero = equal(x, 0)
    safe = lax.select(is_zero, lax.full_like(x, 1), pix)
    return lax.select(is_zero, lax.full_like(x, 1), true_divide(sin(safe), safe))


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

        check_arraylike("where", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError(
            "size and fill_value arguments cannot be used in three-term where function."
        )
    from jaxlite.lax.structural import operand
    from jaxlite.numpy.shape import broadcast_arrays

    check_arraylike("where", condition, x, y)
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
