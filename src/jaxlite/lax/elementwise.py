"""Elementwise primitives: arithmetic, comparisons, transcendental functions, casts.

Operands of an n-ary primitive share one dtype (jnp inserts `convert_element_type` to
promote them) and broadcast as lax does: equal ranks with size-1 dimensions, or rank 0.
Each primitive's rules are registered in one block right after its rule functions.
"""

from __future__ import annotations

import math

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.backend.numpy_backend import inline
from jaxlite.core import (
    Array,
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    impl_rules,
    no_effects,
    weak_type_rules,
)
from jaxlite.lax.rules import (
    ANY,
    COMPLEX,
    FLOAT,
    INEXACT,
    INT,
    INT_OR_BOOL,
    NUMBER,
    check_dtype,
    defbinary,
    defunary,
)

_PY_SCALARS = (int, float, complex, bool)


def lax_operands(*args):
    """Give Python scalars among lax operands the dtype of the array operands (weakly)."""
    if not any(type(a) in _PY_SCALARS for a in args):
        return args
    ref = next((a for a in args if type(a) not in _PY_SCALARS), None)
    if ref is None:
        dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    else:
        dtype, weak = np.dtype(ref.dtype), True
    return tuple(
        Array(np.asarray(a, dtype)[()], weak) if type(a) in _PY_SCALARS else a
        for a in args
    )


def _nary(prim):
    def fun(*args):
        return prim.bind(*lax_operands(*args))

    fun.__name__ = prim.name
    fun.__doc__ = f"Elementwise `{prim.name}` (operands share one dtype)."
    return fun


# ----------------------------------------------------------------------------------------
# Unary primitives: (name, NumPy function or expression, accepted dtypes)


def _logistic(x):
    return 1 / (1 + np.exp(-x))


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _round_half_away(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x).astype(x.dtype)


def _vectorize_math(fn):
    ufunc = np.frompyfunc(fn, 1, 1)

    def apply(x):
        x = np.asarray(x)
        return ufunc(x.astype(np.float64)).astype(x.dtype)[()]

    return apply


def _erf_inv(x):
    x = np.asarray(x)
    w = x.astype(np.float64)
    # Newton iterations on erf(y) = w from Giles' single-precision approximation.
    t = -np.log((1.0 - w) * (1.0 + w))
    y = _giles(w, t)
    erf = np.frompyfunc(math.erf, 1, 1)
    for _ in range(3):
        err = erf(y).astype(np.float64) - w
        y = y - err / (2 / np.sqrt(np.pi) * np.exp(-(y**2)))
    y = np.where(np.abs(w) == 1, np.sign(w) * np.inf, y)
    return np.where(np.abs(w) > 1, np.nan, y).astype(x.dtype)[()]


def _giles(w, t):
    small = t < 5
    ts = t - 2.5
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * ts
    tl = np.sqrt(np.maximum(t, 0)) - 3
    q = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
        q = c + q * tl
    return np.where(small, p, q) * w


_UNARY = [
    ("neg", np.negative, NUMBER, "np.negative({})"),
    ("sign", np.sign, NUMBER, "np.sign({})"),
    ("floor", np.floor, FLOAT, "np.floor({})"),
    ("ceil", np.ceil, FLOAT, "np.ceil({})"),
    ("is_finite", np.isfinite, FLOAT, "np.isfinite({})"),
    ("exp", np.exp, INEXACT, "np.exp({})"),
    ("exp2", np.exp2, INEXACT, "np.exp2({})"),
    ("log", np.log, INEXACT, "np.log({})"),
    ("log1p", np.log1p, INEXACT, "np.log1p({})"),
    ("expm1", np.expm1, INEXACT, "np.expm1({})"),
    ("tanh", np.tanh, INEXACT, "np.tanh({})"),
    ("logistic", _logistic, INEXACT, None),
    ("sin", np.sin, INEXACT, "np.sin({})"),
    ("cos", np.cos, INEXACT, "np.cos({})"),
    ("tan", np.tan, INEXACT, "np.tan({})"),
    ("asin", np.arcsin, INEXACT, "np.arcsin({})"),
    ("acos", np.arccos, INEXACT, "np.arccos({})"),
    ("atan", np.arctan, INEXACT, "np.arctan({})"),
    ("sinh", np.sinh, INEXACT, "np.sinh({})"),
    ("cosh", np.cosh, INEXACT, "np.cosh({})"),
    ("asinh", np.arcsinh, INEXACT, "np.arcsinh({})"),
    ("acosh", np.arccosh, INEXACT, "np.arccosh({})"),
    ("atanh", np.arctanh, INEXACT, "np.arctanh({})"),
    ("sqrt", np.sqrt, INEXACT, "np.sqrt({})"),
    ("rsqrt", _rsqrt, INEXACT, None),
    ("cbrt", np.cbrt, FLOAT, "np.cbrt({})"),
    ("not", np.invert, INT_OR_BOOL, "np.invert({})"),
    ("conj", np.conjugate, INEXACT, "np.conjugate({})"),
    ("erf", _vectorize_math(math.erf), FLOAT, None),
    ("erfc", _vectorize_math(math.erfc), FLOAT, None),
    ("erf_inv", _erf_inv, FLOAT, None),
    ("lgamma", _vectorize_math(math.lgamma), FLOAT, None),
]

_unary_prims = {}
for _name, _fn, _kinds, _expr in _UNARY:
    _unary_prims[_name] = Primitive(_name)
    defunary(_unary_prims[_name], _fn, _kinds, expr=_expr)

neg_p, sign_p, floor_p, ceil_p = (_unary_prims[n] for n in ("neg", "sign", "floor", "ceil"))
is_finite_p = _unary_prims["is_finite"]
exp_p, exp2_p, log_p, log1p_p, expm1_p = (
    _unary_prims[n] for n in ("exp", "exp2", "log", "log1p", "expm1")
)
tanh_p, logistic_p = _unary_prims["tanh"], _unary_prims["logistic"]
sin_p, cos_p, tan_p = _unary_prims["sin"], _unary_prims["cos"], _unary_prims["tan"]
asin_p, acos_p, atan_p = _unary_prims["asin"], _unary_prims["acos"], _unary_prims["atan"]
sinh_p, cosh_p = _unary_prims["sinh"], _unary_prims["cosh"]
asinh_p, acosh_p, atanh_p = (_unary_prims[n] for n in ("asinh", "acosh", "atanh"))
sqrt_p, rsqrt_p, cbrt_p = _unary_prims["sqrt"], _unary_prims["rsqrt"], _unary_prims["cbrt"]
not_p, conj_p = _unary_prims["not"], _unary_prims["conj"]
erf_p, erfc_p, erf_inv_p = _unary_prims["erf"], _unary_prims["erfc"], _unary_prims["erf_inv"]
lgamma_p = _unary_prims["lgamma"]

# is_finite returns bool; fix its abstract eval and weak type.
weak_type_rules[is_finite_p] = lambda in_weak: False


def _is_finite_abstract(x):
    check_dtype("is_finite", x.dtype, FLOAT)
    return [ShapedArray(x.shape, np.bool_)], no_effects


abstract_eval_rules[is_finite_p] = _is_finite_abstract


# ----------------------------------------------------------------------------------------
# abs, real, imag: complex inputs give real outputs


def _real_dtype(dtype):
    return np.finfo(dtype).dtype if np.issubdtype(dtype, np.complexfloating) else dtype


abs_p = Primitive("abs")
defunary(abs_p, np.abs, NUMBER, out_dtype=_real_dtype, expr="np.abs({})")

real_p = Primitive("real")
defunary(real_p, np.real, COMPLEX, out_dtype=_real_dtype, expr="np.real({})")

imag_p = Primitive("imag")
defunary(imag_p, np.imag, COMPLEX, out_dtype=_real_dtype, expr="np.imag({})")


# ----------------------------------------------------------------------------------------
# round


class RoundingMethod:
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def _round_impl(x, *, rounding_method):
    if rounding_method == RoundingMethod.TO_NEAREST_EVEN:
        return [np.round(x)]
    return [_round_half_away(np.asarray(x))[()]]


def _round_abstract(x, *, rounding_method):
    check_dtype("round", x.dtype, FLOAT)
    return [x], no_effects


round_p = Primitive("round")
impl_rules[round_p] = _round_impl
abstract_eval_rules[round_p] = _round_abstract


# ----------------------------------------------------------------------------------------
# integer_pow: x ** y for a static Python int y


def _integer_pow_impl(x, *, y):
    if y < 0 and np.issubdtype(np.asarray(x).dtype, np.integer):
        raise ValueError(f"integer_pow: negative exponent {y} of an integer array")
    return [np.power(x, y, dtype=np.asarray(x).dtype)]


def _integer_pow_abstract(x, *, y):
    check_dtype("integer_pow", x.dtype, NUMBER)
    return [x], no_effects


integer_pow_p = Primitive("integer_pow")
impl_rules[integer_pow_p] = _integer_pow_impl
abstract_eval_rules[integer_pow_p] = _integer_pow_abstract


# ----------------------------------------------------------------------------------------
# Binary arithmetic


def _div(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if np.issubdtype(x.dtype, np.integer):
        q = np.floor_divide(x, y)
        fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
        return (q + fix.astype(q.dtype))[()]
    return np.true_divide(x, y)[()]


def _pow(x, y):
    dtype = np.asarray(x).dtype
    return np.power(x, y, dtype=dtype)


def _shift_right_logical(x, y):
    x = np.asarray(x)
    udtype = np.dtype(f"uint{x.dtype.itemsize * 8}")
    bits = x.dtype.itemsize * 8
    shifted = np.right_shift(x.view(udtype), np.asarray(y).astype(udtype))
    return np.where(np.asarray(y) >= bits, 0, shifted).astype(udtype).view(x.dtype)[()]


def _shift_left(x, y):
    bits = np.asarray(x).dtype.itemsize * 8
    return np.where(np.asarray(y) >= bits, 0, np.left_shift(x, y)).astype(
        np.asarray(x).dtype
    )[()]


def _shift_right_arithmetic(x, y):
    bits = np.asarray(x).dtype.itemsize * 8
    y = np.minimum(np.asarray(y), bits - 1)
    return np.right_shift(x, y)


_BINARY = [
    ("add", np.add, NUMBER, "np.add({}, {})"),
    ("sub", np.subtract, NUMBER, "np.subtract({}, {})"),
    ("mul", np.multiply, NUMBER, "np.multiply({}, {})"),
    ("div", _div, NUMBER, None),
    ("rem", np.fmod, NUMBER, "np.fmod({}, {})"),
    ("pow", _pow, INEXACT, None),
    ("max", np.maximum, ANY, "np.maximum({}, {})"),
    ("min", np.minimum, ANY, "np.minimum({}, {})"),
    ("atan2", np.arctan2, FLOAT, "np.arctan2({}, {})"),
    ("nextafter", np.nextafter, FLOAT, "np.nextafter({}, {})"),
    ("and", np.bitwise_and, INT_OR_BOOL, "np.bitwise_and({}, {})"),
    ("or", np.bitwise_or, INT_OR_BOOL, "np.bitwise_or({}, {})"),
    ("xor", np.bitwise_xor, INT_OR_BOOL, "np.bitwise_xor({}, {})"),
    ("shift_left", _shift_left, INT, None),
    ("shift_right_arithmetic", _shift_right_arithmetic, INT, None),
    ("shift_right_logical", _shift_right_logical, INT, None),
]

_binary_prims = {}
for _name, _fn, _kinds, _expr in _BINARY:
    _binary_prims[_name] = Primitive(_name)
    defbinary(_binary_prims[_name], _fn, _kinds, expr=_expr)

add_p, sub_p, mul_p, div_p = (_binary_prims[n] for n in ("add", "sub", "mul", "div"))
rem_p, pow_p, max_p, min_p = (_binary_prims[n] for n in ("rem", "pow", "max", "min"))
atan2_p, nextafter_p = _binary_prims["atan2"], _binary_prims["nextafter"]
and_p, or_p, xor_p = _binary_prims["and"], _binary_prims["or"], _binary_prims["xor"]
shift_left_p = _binary_prims["shift_left"]
shift_right_arithmetic_p = _binary_prims["shift_right_arithmetic"]
shift_right_logical_p = _binary_prims["shift_right_logical"]


# ----------------------------------------------------------------------------------------
# Comparisons: bool outputs

_COMPARE = [
    ("eq", np.equal, "np.equal({}, {})"),
    ("ne", np.not_equal, "np.not_equal({}, {})"),
    ("lt", np.less, "np.less({}, {})"),
    ("le", np.less_equal, "np.less_equal({}, {})"),
    ("gt", np.greater, "np.greater({}, {})"),
    ("ge", np.greater_equal, "np.greater_equal({}, {})"),
]
_compare_prims = {}
for _name, _fn, _expr in _COMPARE:
    _compare_prims[_name] = Primitive(_name)
    defbinary(_compare_prims[_name], _fn, ANY, out_dtype=np.dtype(np.bool_), expr=_expr)

eq_p, ne_p, lt_p, le_p, gt_p, ge_p = (
    _compare_prims[n] for n in ("eq", "ne", "lt", "le", "gt", "ge")
)


# ----------------------------------------------------------------------------------------
# select_n(which, *cases): cases[which], elementwise


def _select_n_impl(which, *cases):
    which = np.asarray(which)
    if len(cases) == 1:
        return [cases[0]]
    if which.dtype == np.bool_:
        return [np.where(which, cases[1], cases[0])]
    return [np.choose(which, cases, mode="clip")]


def _select_n_abstract(which, *cases):
    if not cases:
        raise TypeError("select_n requires at least one case")
    if which.dtype != np.bool_ and not np.issubdtype(which.dtype, np.integer):
        raise TypeError(f"select_n `which` must be boolean or integer, got {which.dtype}")
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select_n with a boolean `which` takes at most two cases")
    first = cases[0]
    for c in cases[1:]:
        if (c.shape, c.dtype) != (first.shape, first.dtype):
            raise TypeError(
                "select_n cases must have the same shapes and dtypes, got "
                + ", ".join(c.str_short() for c in cases)
            )
    if which.shape and which.shape != first.shape:
        raise TypeError(
            f"select_n `which` must be scalar or have the shape of the cases; got "
            f"which shape {which.shape} and case shape {first.shape}"
        )
    weak = all(c.weak_type for c in cases)
    return [ShapedArray(first.shape, first.dtype, weak)], no_effects


def _select_n_lowering(ctx, which, *cases):
    if len(cases) == 2:
        return f"np.where({which}, {cases[1]}, {cases[0]})"
    return f"np.choose({which}, [{', '.join(cases)}], mode='clip')"


select_n_p = Primitive("select_n")
impl_rules[select_n_p] = _select_n_impl
abstract_eval_rules[select_n_p] = _select_n_abstract
weak_type_rules[select_n_p] = lambda in_weak: all(in_weak[1:])
lowering_rules[select_n_p] = _select_n_lowering


# ----------------------------------------------------------------------------------------
# clamp(min, x, max)


def _clamp_abstract(lo, x, hi):
    for bound in (lo, hi):
        if bound.dtype != x.dtype:
            raise TypeError(
                f"clamp requires min, operand and max to have the same dtype, got "
                f"{lo.dtype}, {x.dtype}, {hi.dtype}"
            )
        if bound.shape and bound.shape != x.shape:
            raise TypeError(
                f"clamp requires min and max to be scalars or have the operand's shape "
                f"{x.shape}, got {lo.shape} and {hi.shape}"
            )
    return [x], no_effects


clamp_p = Primitive("clamp")
impl_rules[clamp_p] = lambda lo, x, hi: [np.minimum(np.maximum(x, lo), hi)]
abstract_eval_rules[clamp_p] = _clamp_abstract
weak_type_rules[clamp_p] = lambda in_weak: in_weak[1]
lowering_rules[clamp_p] = inline("np.minimum(np.maximum({1}, {0}), {2})")


# ----------------------------------------------------------------------------------------
# convert_element_type: casts as XLA does on CPU (float -> int saturates, NaN -> 0)


def convert_value(x, dtype):
    """Cast a NumPy value to `dtype` with XLA's CPU semantics."""
    x = np.asarray(x)
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x[()] if x.ndim == 0 else x
    if dtype == np.bool_:
        return (x != 0)[()]
    if np.issubdtype(x.dtype, np.complexfloating) and not np.issubdtype(
        dtype, np.complexfloating
    ):
        x = x.real
    if np.issubdtype(dtype, np.integer) and dtypes.issubdtype(x.dtype, np.floating):
        info = np.iinfo(dtype)
        wide = x.astype(np.float64)
        wide = np.where(np.isnan(wide), 0, np.clip(wide, info.min, info.max))
        out = np.where(wide >= 2.0**63, info.max, wide).astype(dtype)
        return out[()] if out.ndim == 0 else out
    out = x.astype(dtype)
    return out[()] if out.ndim == 0 else out


def _convert_element_type_impl(x, *, new_dtype, weak_type):
    return [convert_value(x, new_dtype)]


def _convert_element_type_abstract(x, *, new_dtype, weak_type):
    return [ShapedArray(x.shape, new_dtype, weak_type)], no_effects


convert_element_type_p = Primitive("convert_element_type")
impl_rules[convert_element_type_p] = _convert_element_type_impl
abstract_eval_rules[convert_element_type_p] = _convert_element_type_abstract
weak_type_rules[convert_element_type_p] = lambda in_weak, *, weak_type, **_: weak_type


def convert_element_type(operand, new_dtype, weak_type=False):
    """Cast `operand` to `new_dtype`. Constants are converted right away (they appear in
    jaxprs as literals or constants, as in JAX); tracers get a `convert_element_type`."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if isinstance(operand, Tracer):
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
    return Array(convert_value(dtypes.coerce_to_array(operand), new_dtype), bool(weak_type))


# ----------------------------------------------------------------------------------------
# Public lax functions

add, sub, mul, div, rem, pow = (_nary(p) for p in (add_p, sub_p, mul_p, div_p, rem_p, pow_p))
max, min = _nary(max_p), _nary(min_p)  # noqa: A001
atan2, nextafter = _nary(atan2_p), _nary(nextafter_p)
bitwise_and, bitwise_or, bitwise_xor = _nary(and_p), _nary(or_p), _nary(xor_p)
shift_left = _nary(shift_left_p)
shift_right_arithmetic = _nary(shift_right_arithmetic_p)
shift_right_logical = _nary(shift_right_logical_p)
eq, ne, lt, le, gt, ge = (_nary(p) for p in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))
neg, sign, floor, ceil, is_finite = (
    _nary(p) for p in (neg_p, sign_p, floor_p, ceil_p, is_finite_p)
)
exp, exp2, log, log1p, expm1 = (_nary(p) for p in (exp_p, exp2_p, log_p, log1p_p, expm1_p))
tanh, logistic = _nary(tanh_p), _nary(logistic_p)
sin, cos, tan, asin, acos, atan = (
    _nary(p) for p in (sin_p, cos_p, tan_p, asin_p, acos_p, atan_p)
)
sinh, cosh, asinh, acosh, atanh = (
    _nary(p) for p in (sinh_p, cosh_p, asinh_p, acosh_p, atanh_p)
)
sqrt, rsqrt, cbrt = _nary(sqrt_p), _nary(rsqrt_p), _nary(cbrt_p)
bitwise_not, conj = _nary(not_p), _nary(conj_p)
abs, real, imag = _nary(abs_p), _nary(real_p), _nary(imag_p)  # noqa: A001
erf, erfc, erf_inv, lgamma = _nary(erf_p), _nary(erfc_p), _nary(erf_inv_p), _nary(lgamma_p)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001
    return round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y):
    return integer_pow_p.bind(x, y=int(y))


def square(x):
    return integer_pow(x, 2)


def reciprocal(x):
    return integer_pow(x, -1)


def select_n(which, *cases):
    return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    return select_n_p.bind(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    min, x, max = lax_operands(min, x, max)
    return clamp_p.bind(min, x, max)
