"""Elementwise primitives: arithmetic, comparisons, transcendental functions, casts.

Operands of an n-ary primitive share one dtype (jnp inserts `convert_element_type` to
promote them) and broadcast as lax does: equal ranks with size-1 dimensions, or rank 0.
Each primitive's rules are registered in one block right after its rule functions.
Special functions (erf, lgamma, digamma, igamma, ...) live in `lax/special.py`.
"""

from __future__ import annotations

import warnings

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.backend.numpy_backend import inline
from jaxlite.core import (
    Array,
    Literal,
    Primitive,
    ShapedArray,
    Tracer,
    abstract_eval_rules,
    get_aval,
    has_data,
    impl_rules,
    no_effects,
    physical_aval,
    physical_rules,
)
from jaxlite.interpreters import ad, batching, physical
from jaxlite.lax import xla_float32
from jaxlite.lax.rules import (
    ANY,
    COMPLEX,
    FLOAT,
    INEXACT,
    INT,
    INT_OR_BOOL,
    NUMBER,
    SINT,
    broadcast_shapes,
    check_dtype,
    check_operand_dtypes,
    check_same_dtypes,
    defbinary,
    defunary,
)

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
# Unary primitives: (name, NumPy function or expression, accepted dtypes)


def _logistic(x):
    return 1 / (1 + np.exp(-x))


def _rsqrt(x):
    return 1 / np.sqrt(x)


def _exp2(x):
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return np.exp2(x)
    # XLA's complex exp2: exp(x * log 2), a complex product and then exp(a + bi) =
    # e^a (cos b + i sin b) as written (so -inf + yi gives NaN, where C gives 0).
    ln2 = np.asarray(np.log(2), x.real.dtype)
    with np.errstate(all="ignore"):
        a = x.real * ln2 - x.imag * 0
        b = x.real * 0 + x.imag * ln2
        out = np.empty_like(x)
        out.real, out.imag = np.exp(a) * np.cos(b), np.exp(a) * np.sin(b)
        return out[()]


def _exp2_lowering(ctx, x):
    if np.dtype(ctx.avals_in()[0].dtype).kind == "c":
        return f"{ctx.add_global(_exp2, 'exp2')}({x})"
    ctx.ufunc = True
    return f"np.exp2({x})"


def _logistic_lowering(ctx, x):
    ctx.fresh_output = True  # ufuncs of ufuncs: a new array
    return f"np.reciprocal(np.add(np.exp(np.negative({x})), 1))"


def _sign(x):
    """XLA's sign: -1, 0 or 1, NaN for NaN, and a zero is returned as it is (sign of
    -0.0 is -0.0; NumPy's is +0.0); complex x / |x|, a zero kept likewise."""
    out = np.sign(x)
    if x.dtype.kind in "iub":
        return out
    return np.where(x == 0, x, out)[()]


def _round_half_away(x):
    return np.copysign(np.floor(np.abs(x) + 0.5), x).astype(x.dtype)


# Derivatives of the unary primitives, as `d(t, y, x)`: the tangent of `y = f(x)` for
# an input tangent `t`. Written with lax functions, so they are differentiable again.


def _d_exp2(t, y, x):
    return mul(t, mul(y, float(np.log(2))))


def _d_asin(t, y, x):
    return mul(t, rsqrt(sub(1.0, square(x))))


def _d_acos(t, y, x):
    return mul(t, neg(rsqrt(sub(1.0, square(x)))))


def _d_acosh(t, y, x):
    return mul(t, rsqrt(sub(square(x), 1.0)))


def _d_atanh(t, y, x):
    return mul(reciprocal(add(1.0, x)), div(t, sub(1.0, x)))


def _d_cbrt(t, y, x):
    return mul(t, mul(1.0 / 3, integer_pow(y, -2)))


_UNARY = [
    # name, NumPy implementation, accepted dtypes, lowering (an `inline` template or a
    # rule of its own; None: the impl), derivative
    ("neg", np.negative, NUMBER, "np.negative({})", "linear"),
    ("sign", _sign, NUMBER, None, None),
    ("floor", np.floor, FLOAT, "np.floor({})", None),
    ("ceil", np.ceil, FLOAT, "np.ceil({})", None),
    ("is_finite", np.isfinite, FLOAT, "np.isfinite({})", None),
    ("exp", np.exp, INEXACT, "np.exp({})", lambda t, y, x: mul(t, y)),
    ("exp2", _exp2, INEXACT, _exp2_lowering, _d_exp2),
    ("log", np.log, INEXACT, "np.log({})", lambda t, y, x: div(t, x)),
    ("log1p", np.log1p, INEXACT, "np.log1p({})", lambda t, y, x: div(t, add(x, 1.0))),
    ("expm1", np.expm1, INEXACT, "np.expm1({})", lambda t, y, x: mul(t, add(y, 1.0))),
    (
        "tanh",
        np.tanh,
        INEXACT,
        "np.tanh({})",
        lambda t, y, x: mul(add(t, mul(t, y)), sub(1.0, y)),
    ),
    (
        "logistic",
        _logistic,
        INEXACT,
        _logistic_lowering,
        lambda t, y, x: mul(t, mul(y, sub(1.0, y))),
    ),
    ("sin", np.sin, INEXACT, "np.sin({})", lambda t, y, x: mul(t, cos(x))),
    ("cos", np.cos, INEXACT, "np.cos({})", lambda t, y, x: neg(mul(t, sin(x)))),
    ("tan", np.tan, INEXACT, "np.tan({})", lambda t, y, x: mul(t, add(1.0, square(y)))),
    ("asin", np.arcsin, INEXACT, "np.arcsin({})", _d_asin),
    ("acos", np.arccos, INEXACT, "np.arccos({})", _d_acos),
    (
        "atan",
        np.arctan,
        INEXACT,
        "np.arctan({})",
        lambda t, y, x: div(t, add(1.0, square(x))),
    ),
    ("sinh", np.sinh, INEXACT, "np.sinh({})", lambda t, y, x: mul(t, cosh(x))),
    ("cosh", np.cosh, INEXACT, "np.cosh({})", lambda t, y, x: mul(t, sinh(x))),
    (
        "asinh",
        np.arcsinh,
        INEXACT,
        "np.arcsinh({})",
        lambda t, y, x: mul(t, rsqrt(add(square(x), 1.0))),
    ),
    ("acosh", np.arccosh, INEXACT, "np.arccosh({})", _d_acosh),
    ("atanh", np.arctanh, INEXACT, "np.arctanh({})", _d_atanh),
    ("sqrt", np.sqrt, INEXACT, "np.sqrt({})", lambda t, y, x: mul(t, div(0.5, y))),
    ("rsqrt", _rsqrt, INEXACT, None, lambda t, y, x: mul(t, mul(-0.5, div(y, x)))),
    ("cbrt", np.cbrt, FLOAT, "np.cbrt({})", _d_cbrt),
    ("square", np.square, NUMBER, "np.square({})", lambda t, y, x: mul(t, mul(2.0, x))),
    ("not", np.invert, INT_OR_BOOL, "np.invert({})", None),
]


# Native op names that differ from the primitive's (Python keywords).
_NATIVE_NAMES = {"not": "not_", "and": "and_", "or": "or_"}


def _unary_derivative(d):
    return lambda t, y, x, **params: d(t, y, x)


def _self_transpose(prim):
    return lambda ct, x, **params: [prim.bind(ct, **params)]


_unary_prims = {}
for _name, _fn, _kinds, _expr, _d in _UNARY:
    _prim = _unary_prims[_name] = Primitive(_name)
    defunary(_prim, _fn, _kinds, expr=_expr if isinstance(_expr, str) else None)
    if callable(_expr):  # a lowering rule of its own
        lowering_rules[_prim] = _expr
    native_rules[_prim] = _NATIVE_NAMES.get(_name, _name)
    if _name in xla_float32.KERNEL_NAMES:
        # Small float32 arrays: XLA's roundings, bit for bit (lax/xla_float32.py).
        xla_float32.use_exact_kernel(_prim, _name)
    batching.defvectorized(_prim)
    if _d == "linear":
        ad.deflinear(_prim, _self_transpose(_prim))
    else:
        ad.defjvp_with_output(_prim, None if _d is None else _unary_derivative(_d))

neg_p, sign_p, floor_p, ceil_p = (
    _unary_prims[n] for n in ("neg", "sign", "floor", "ceil")
)
is_finite_p = _unary_prims["is_finite"]
exp_p, exp2_p, log_p, log1p_p, expm1_p = (
    _unary_prims[n] for n in ("exp", "exp2", "log", "log1p", "expm1")
)
tanh_p, logistic_p = _unary_prims["tanh"], _unary_prims["logistic"]
sin_p, cos_p, tan_p = _unary_prims["sin"], _unary_prims["cos"], _unary_prims["tan"]
asin_p, acos_p, atan_p = (
    _unary_prims["asin"],
    _unary_prims["acos"],
    _unary_prims["atan"],
)
sinh_p, cosh_p = _unary_prims["sinh"], _unary_prims["cosh"]
asinh_p, acosh_p, atanh_p = (_unary_prims[n] for n in ("asinh", "acosh", "atanh"))
sqrt_p, rsqrt_p, cbrt_p = (
    _unary_prims["sqrt"],
    _unary_prims["rsqrt"],
    _unary_prims["cbrt"],
)
not_p = _unary_prims["not"]
square_p = _unary_prims["square"]
# is_finite returns bool (weak for a weak input, as in JAX).


def _is_finite_abstract(x):
    check_dtype("is_finite", x.dtype, FLOAT)
    return [ShapedArray(x.shape, np.bool_, x.weak_type)], no_effects


abstract_eval_rules[is_finite_p] = _is_finite_abstract


# ----------------------------------------------------------------------------------------
# conj: complex conjugate; a real float32/float64 operand becomes complex (as JAX, which
# records the operand's dtype as `input_dtype`; jnp.conj keeps real arrays real).

_COMPLEX_OF = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}


def _conj_impl(x, *, input_dtype=None):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return [np.conjugate(x)[()]]
    return [x.astype(_COMPLEX_OF[x.dtype])[()]]


def _conj_abstract(x, *, input_dtype=None):
    if x.dtype.kind != "c" and x.dtype not in _COMPLEX_OF:
        raise TypeError(
            f"conj does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes "
            "of float32, complexfloating, float64. (Use jnp.conj, which returns real "
            "arrays unchanged, or cast to float32 first.)"
        )
    dtype = x.dtype if x.dtype.kind == "c" else np.dtype(_COMPLEX_OF[x.dtype])
    return [ShapedArray(x.shape, dtype, x.weak_type)], no_effects


def _conj_transpose(ct, x, *, input_dtype=None):
    if np.dtype(input_dtype or x.aval.dtype).kind == "c":
        return [conj_p.bind(ct, input_dtype=get_aval(ct).dtype)]
    return [real(ct)]


def _conj_lowering(ctx, x, *, input_dtype=None):
    if input_dtype is None or np.dtype(input_dtype).kind == "c":
        return f"np.conjugate({x})"
    return f"np.asarray({x}, np.{_COMPLEX_OF[np.dtype(input_dtype)].__name__})"


conj_p = Primitive("conj")
impl_rules[conj_p] = _conj_impl
abstract_eval_rules[conj_p] = _conj_abstract
ad.deflinear(conj_p, _conj_transpose)
batching.defvectorized(conj_p)
lowering_rules[conj_p] = _conj_lowering


# ----------------------------------------------------------------------------------------
# abs, real, imag: complex inputs give real outputs


def _real_dtype(dtype):
    return np.finfo(dtype).dtype if np.issubdtype(dtype, np.complexfloating) else dtype


def _abs_jvp(t, x):
    if not dtypes.issubdtype(x.dtype, np.complexfloating):
        # t where x >= 0, else -t: the slope at 0 is 1 (as JAX), not sign(0) = 0.
        return select(ge(x, 0.0), t, neg(t))
    # d|x| = Re(conj(x) dx) / |x|, and 0 at x = 0 (as JAX).
    magnitude = convert_element_type(abs(x), x.dtype)
    safe = select(eq(magnitude, 0), full_of(magnitude, 1), magnitude)
    return real(mul(t, div(conj(x), safe)))


abs_p = Primitive("abs")
# Unsigned integers are rejected, as in JAX (jnp.abs returns them unchanged).
defunary(
    abs_p, np.abs, FLOAT + COMPLEX + SINT, out_dtype=_real_dtype, expr="np.abs({})"
)
ad.defjvp(abs_p, _abs_jvp)
batching.defvectorized(abs_p)
native_rules[abs_p] = "abs"

real_p = Primitive("real")
defunary(real_p, np.real, COMPLEX, out_dtype=_real_dtype, expr="np.real({})")
ad.deflinear(real_p, lambda ct, x: [convert_element_type(ct, x.aval.dtype)])
batching.defvectorized(real_p)

imag_p = Primitive("imag")
defunary(imag_p, np.imag, COMPLEX, out_dtype=_real_dtype, expr="np.imag({})")
ad.deflinear(imag_p, lambda ct, x: [mul(convert_element_type(ct, x.aval.dtype), -1j)])
batching.defvectorized(imag_p)


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
ad.defjvp(round_p, None)
batching.defvectorized(round_p)
native_rules[round_p] = "round"


# ----------------------------------------------------------------------------------------
# integer_pow: x ** y for a static Python int y


def _integer_pow_impl(x, *, y):
    # Binary exponentiation in x's dtype, multiplying in XLA's order (and 1 / x**-y
    # for negative y), so that results round as JAX's do; np.power rounds differently.
    x = np.asarray(x)
    if y == 0:
        return [np.ones_like(x)]
    n, acc = -y if y < 0 else y, None  # (`abs` here is lax.abs)
    with np.errstate(all="ignore"):
        while n:
            if n & 1:
                acc = x if acc is None else np.multiply(acc, x)
            n >>= 1
            if n:
                x = np.multiply(x, x)
        if y < 0:
            acc = np.divide(np.ones_like(acc), acc)
    return [np.asarray(acc, x.dtype)[()] if acc.ndim == 0 else acc]


def _integer_pow_abstract(x, *, y):
    check_dtype("integer_pow", x.dtype, NUMBER)
    if y < 0 and np.issubdtype(x.dtype, np.integer):
        raise TypeError(
            f"Integers cannot be raised to negative powers, got integer_pow({x}, {y})"
        )
    return [x], no_effects


def _integer_pow_jvp(t, x, *, y):
    # As JAX: t * (y * x ** (y - 1)), with x ** 1 written as x.
    if y == 0:
        return mul(t, 0.0)
    if y == 1:
        return t
    return mul(t, mul(float(y), x if y == 2 else integer_pow(x, y - 1)))


integer_pow_p = Primitive("integer_pow")
impl_rules[integer_pow_p] = _integer_pow_impl
abstract_eval_rules[integer_pow_p] = _integer_pow_abstract
ad.defjvp(integer_pow_p, _integer_pow_jvp)
batching.defvectorized(integer_pow_p)
native_rules[integer_pow_p] = "integer_pow"


# ----------------------------------------------------------------------------------------
# Binary arithmetic


def _int_div(x, y):
    """Integer division rounding toward zero, with XLA's results where NumPy's are
    undefined: x / 0 is -1 (all bits set: the maximum for unsigned types), and
    INT_MIN / -1 wraps to INT_MIN."""
    x, y = np.asarray(x), np.asarray(y)
    zero = y == 0
    if zero.any():
        y = np.where(zero, np.ones((), y.dtype), y)
    q = np.floor_divide(x, y)
    fix = (np.remainder(x, y) != 0) & ((x < 0) != (y < 0))
    q = q + fix.astype(q.dtype)
    if zero.any():
        q = np.where(zero, np.array(-1).astype(q.dtype), q)
    return q[()]


def _int_rem(x, y):
    """Remainder with the sign of x, as C's `%`; x % 0 is x (XLA's result)."""
    x, y = np.asarray(x), np.asarray(y)
    zero = y == 0
    if not zero.any():
        return np.fmod(x, y)
    return np.where(zero, x, np.fmod(x, np.where(zero, np.ones((), y.dtype), y)))[()]


def _div(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if np.issubdtype(x.dtype, np.integer):
        return _int_div(x, y)
    return np.true_divide(x, y)[()]


def _rem(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if np.issubdtype(x.dtype, np.integer):
        return _int_rem(x, y)
    return np.fmod(x, y)


def _int_or_float_lowering(int_fn, float_expr):
    """A lowering that inlines `float_expr` for inexact operands and calls `int_fn`
    for integer ones (their NumPy results differ from XLA's at a zero divisor)."""

    def rule(ctx, x, y):
        if np.issubdtype(ctx.avals_in()[0].dtype, np.integer):
            return f"{ctx.add_global(int_fn, int_fn.__name__.lstrip('_'))}({x}, {y})"
        ctx.ufunc = True
        return float_expr.format(x, y)

    return rule


def _pow_lowering(ctx, x, y):
    """np.power for real operands of one dtype; `_pow` (integer exponents converted,
    XLA's complex pow) otherwise."""
    x_aval, y_aval = ctx.avals_in()
    if x_aval.dtype == y_aval.dtype and np.dtype(x_aval.dtype).kind == "f":
        ctx.ufunc = True
        return f"np.power({x}, {y})"
    return f"{ctx.add_global(_pow, 'pow')}({x}, {y})"


def _pow(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if y.dtype != x.dtype:  # an integer exponent: XLA converts it to x's dtype
        y = y.astype(x.dtype)
    if x.dtype.kind == "c":
        return _complex_pow(x, y)
    return np.power(x, y)[()]


def _complex_pow(x, y):
    """x ** y for complex x, y as XLA computes it: |x|^c e^(-d arg x) at the angle
    c arg x + d log|x| (y = c + di); 0 ** y is 1 for y == 0, 0 for real y > 0 and NaN
    otherwise, and x ** 0 is 1 even for NaN x."""
    with np.errstate(all="ignore"):
        c, d = y.real, y.imag
        magnitude, arg = np.abs(x), np.arctan2(x.imag, x.real)
        coeff = np.power(magnitude, c) * np.exp(-d * arg)
        angle = c * arg + d * np.log(magnitude)
        out = np.empty(np.broadcast_shapes(x.shape, y.shape), x.dtype)
        out.real, out.imag = coeff * np.cos(angle), coeff * np.sin(angle)
        zero_base = (x.real == 0) & (x.imag == 0)
        zero_exponent = (c == 0) & (d == 0)
        at_zero = np.where((d == 0) & (c > 0), 0, np.nan).astype(x.dtype)
        out = np.where(zero_base, at_zero, out)
        return np.where(zero_exponent, np.ones((), x.dtype), out)[()]


def _pow_abstract(x, y):
    check_operand_dtypes("pow", (x,), INEXACT)
    integer_y = dtypes.issubdtype(y.dtype, np.integer)
    if y.dtype != x.dtype and not integer_y:
        raise TypeError(
            "the first argument to pow must have an inexact dtype (float or complex), "
            "and the second argument must have an inexact or integer dtype, and two "
            f"inexact dtypes must match, but got {x.dtype} and {y.dtype} respectively."
        )
    shape = broadcast_shapes("pow", x.shape, y.shape)
    return [ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)], no_effects


def _atan2(y, x):
    y, x = np.asarray(y), np.asarray(x)
    if y.dtype.kind != "c":
        return np.arctan2(y, x)
    # XLA's complex atan2: -i log((x + iy) / sqrt(x^2 + y^2)).
    with np.errstate(all="ignore"):
        return (-1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))).astype(y.dtype)[()]


def _lex_greater(x, y):
    """Complex x > y, comparing real parts and then imaginary parts."""
    return (x.real > y.real) | ((x.real == y.real) & (x.imag > y.imag))


def _max(x, y):
    if np.asarray(x).dtype.kind != "c":
        return np.maximum(x, y)
    return np.where(_lex_greater(x, y), x, y)[()]  # ties and NaNs give y, as XLA


def _min(x, y):
    if np.asarray(x).dtype.kind != "c":
        return np.minimum(x, y)
    return np.where(_lex_greater(y, x), x, y)[()]


def _real_or_complex_lowering(real_expr, fn):
    """Inline `real_expr` for real operands; call `fn` for complex ones."""

    def rule(ctx, x, y):
        if np.dtype(ctx.avals_in()[0].dtype).kind == "c":
            return f"{ctx.add_global(fn, fn.__name__.lstrip('_'))}({x}, {y})"
        ctx.ufunc = True
        return real_expr.format(x, y)

    return rule


def _shift_right_logical(x, y):
    x, y = np.asarray(x), np.asarray(y)
    bits = x.dtype.itemsize * 8
    udtype = np.dtype(f"uint{bits}")
    if np.issubdtype(x.dtype, np.unsignedinteger) and y.ndim == 0 and 0 <= y < bits:
        return np.right_shift(x, y)  # the common case: a constant, in-range shift
    shifted = np.right_shift(x.view(udtype), y.astype(udtype))
    return np.where(y >= bits, 0, shifted).astype(udtype).view(x.dtype)[()]


def _shift_left(x, y):
    x, y = np.asarray(x), np.asarray(y)
    bits = x.dtype.itemsize * 8
    if y.ndim == 0 and 0 <= y < bits:
        return np.left_shift(x, y)
    return np.where(y >= bits, 0, np.left_shift(x, y)).astype(x.dtype)[()]


def _shift_lowering(np_name, fn):
    """A shift by a constant in range (and, for the logical right shift, of an
    unsigned operand) is NumPy's own shift, as in `fn`'s fast path; any other shift
    calls `fn`, which checks at run time."""

    def rule(ctx, x, y):
        x_var, y_var = ctx.eqn.invars
        dtype = np.dtype(x_var.aval.dtype)
        shift = np.asarray(y_var.val) if type(y_var) is Literal else None
        if (
            shift is not None
            and shift.ndim == 0
            and 0 <= shift.item() < dtype.itemsize * 8
            and (np_name == "left_shift" or dtype.kind == "u")
        ):
            ctx.ufunc = True
            return f"np.{np_name}({x}, {y})"
        return f"{ctx.add_global(fn, fn.__name__.lstrip('_'))}({x}, {y})"

    return rule


def _shift_right_arithmetic(x, y):
    bits = np.asarray(x).dtype.itemsize * 8
    y = np.minimum(np.asarray(y), bits - 1)
    return np.right_shift(x, y)


def unbroadcast(aval, ct):
    """Sum a cotangent of a broadcast result back to the operand's shape `aval.shape`."""
    from jaxlite.lax.reductions import reduce_sum
    from jaxlite.lax.structural import reshape

    shape = np.shape(ct)
    if shape == aval.shape:
        return ct
    if not aval.shape:
        return reduce_sum(ct, tuple(range(len(shape))))
    axes = tuple(
        i for i, (a, c) in enumerate(zip(aval.shape, shape)) if a == 1 and c != 1
    )
    return reshape(reduce_sum(ct, axes), aval.shape)


def _linear_add_transpose(sign):
    def transpose(ct, x, y):
        cts = [None, None]
        if type(ct) is ad.Zero:
            return cts
        if ad.is_undefined(x):
            cts[0] = unbroadcast(x.aval, ct)
        if ad.is_undefined(y):
            cts[1] = unbroadcast(y.aval, ct if sign > 0 else neg(ct))
        return cts

    return transpose


def _add_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = add(x, y)
    return [out], [_broadcast_tangent_sum(out, tx, ty, 1)]


def _sub_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = sub(x, y)
    return [out], [_broadcast_tangent_sum(out, tx, ty, -1)]


def _broadcast_like(t, out):
    """`t` broadcast to the shape of `out` (lax operands may be rank 0 or have 1s)."""
    from jaxlite.lax.structural import broadcast_in_dim

    shape = np.shape(out)
    if np.shape(t) == shape:
        return t
    if not np.shape(t):
        return broadcast_in_dim(t, shape, ())
    return add(t, ad.zeros_like_aval(ShapedArray(shape, t.dtype)))


def _broadcast_tangent_sum(out, tx, ty, sign):
    if type(ty) is not ad.Zero and sign < 0:
        ty = neg(ty)
    if type(tx) is ad.Zero:
        return ty if type(ty) is ad.Zero else _broadcast_like(ty, out)
    if type(ty) is ad.Zero:
        return _broadcast_like(tx, out)
    return add(tx, ty)


def _mul_transpose_lhs(ct, x, y):
    return unbroadcast(x.aval, mul(ct, y))


def _mul_transpose_rhs(ct, x, y):
    return unbroadcast(y.aval, mul(x, ct))


def _div_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = div(x, y)
    out_t = ad.Zero(ad.tangent_aval(out.aval))
    if type(tx) is not ad.Zero:
        out_t = ad.add_tangents(out_t, div(tx, y))
    if type(ty) is not ad.Zero:
        out_t = ad.add_tangents(out_t, mul(mul(neg(ty), x), integer_pow(y, -2)))
    return [out], [out_t]


def _div_transpose(ct, x, y):
    if ad.is_undefined(y):
        raise NotImplementedError("div is linear only in its numerator")
    if type(ct) is ad.Zero:
        return [None, None]
    return [unbroadcast(x.aval, div(ct, y)), None]


def _balanced_eq(x, out, y):
    """1 where x alone attains `out`, 0.5 where x and y tie, else 0 (as JAX's max/min)."""
    x_eq = select(eq(x, out), full_of(out, 1.0), full_of(out, 0.0))
    ties = select(eq(y, out), full_of(out, 2.0), full_of(out, 1.0))
    return div(x_eq, ties)


def full_of(ref, value):
    from jaxlite.lax.constructors import full_like

    return full_like(ref, value)


def _minmax_jvp(prim):
    def rule(primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = prim.bind(x, y)
        out_t = ad.Zero(ad.tangent_aval(out.aval))
        if type(tx) is not ad.Zero:
            out_t = ad.add_tangents(out_t, mul(tx, _balanced_eq(x, out, y)))
        if type(ty) is not ad.Zero:
            out_t = ad.add_tangents(out_t, mul(ty, _balanced_eq(y, out, x)))
        return [out], [out_t]

    return rule


def _pow_jvp_x(t, out, x, y):
    if dtypes.issubdtype(y.dtype, np.integer):
        # d/dx x**n = n x**(n-1), and exactly 0 for n == 0 (also at x == 0).
        from jaxlite.lax.structural import broadcast_in_dim

        y = convert_element_type(y, x.dtype)
        shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        x, y = (
            v if np.shape(v) == shape else broadcast_in_dim(v, shape, ())
            for v in (x, y)
        )
        is_zero = eq(y, 0.0)
        safe_y = select(is_zero, full_of(y, 1.0), y)
        jac = select(is_zero, full_of(y, 0.0), mul(safe_y, pow(x, sub(y, 1.0))))
        return mul(t, jac)
    return mul(t, mul(y, pow(x, sub(y, 1.0))))


def _pow_jvp_y(t, out, x, y):
    safe_log = log(select(eq(x, 0.0), full_of(x, 1.0), x))
    return mul(t, mul(out, safe_log))


def _rem_jvp_y(t, out, x, y):
    # -t * trunc(x / y), with trunc written as sign * floor(abs) (as JAX).
    return mul(neg(t), mul(sign(div(x, y)), floor(abs(div(x, y)))))


def _atan2_jvp_x(t, out, x, y):
    return mul(t, div(y, add(square(x), square(y))))


def _atan2_jvp_y(t, out, x, y):
    return mul(t, div(neg(x), add(square(x), square(y))))


_BINARY = [
    # name, NumPy implementation, accepted dtypes, lowering
    ("add", np.add, NUMBER, "np.add({}, {})"),
    ("sub", np.subtract, NUMBER, "np.subtract({}, {})"),
    ("mul", np.multiply, NUMBER, "np.multiply({}, {})"),
    ("div", _div, NUMBER, None),
    ("rem", _rem, INT + FLOAT, None),
    ("max", _max, ANY, None),
    ("min", _min, ANY, None),
    ("atan2", _atan2, INEXACT, None),
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
    batching.defbroadcasting(_binary_prims[_name])
    native_rules[_binary_prims[_name]] = _NATIVE_NAMES.get(_name, _name)

add_p, sub_p, mul_p, div_p = (_binary_prims[n] for n in ("add", "sub", "mul", "div"))
rem_p, max_p, min_p = (_binary_prims[n] for n in ("rem", "max", "min"))
lowering_rules[div_p] = _int_or_float_lowering(_int_div, "np.true_divide({}, {})")
lowering_rules[rem_p] = _int_or_float_lowering(_int_rem, "np.fmod({}, {})")
lowering_rules[max_p] = _real_or_complex_lowering("np.maximum({}, {})", _max)
lowering_rules[min_p] = _real_or_complex_lowering("np.minimum({}, {})", _min)
atan2_p, nextafter_p = _binary_prims["atan2"], _binary_prims["nextafter"]
lowering_rules[atan2_p] = _real_or_complex_lowering("np.arctan2({}, {})", _atan2)
xla_float32.use_exact_kernel(atan2_p, "atan2")
and_p, or_p, xor_p = _binary_prims["and"], _binary_prims["or"], _binary_prims["xor"]
shift_left_p = _binary_prims["shift_left"]
shift_right_arithmetic_p = _binary_prims["shift_right_arithmetic"]
shift_right_logical_p = _binary_prims["shift_right_logical"]
lowering_rules[shift_left_p] = _shift_lowering("left_shift", _shift_left)
lowering_rules[shift_right_logical_p] = _shift_lowering(
    "right_shift", _shift_right_logical
)


def _inexact_scalar_operator(rule, op):
    """`rule`, except that float and complex scalars combine with the Python operator
    `op` (the same NumPy scalar operation as the ufunc, without its call overhead;
    integer scalars keep the ufunc, whose overflow wraps silently)."""

    def scalar_rule(ctx, x, y):
        (out,) = ctx.eqn.outvars
        if not out.aval.shape and np.dtype(out.aval.dtype).kind in "fc":
            return f"({x} {op} {y})"
        return rule(ctx, x, y)

    scalar_rule.ufunc = rule.ufunc
    return scalar_rule


for _prim, _op in ((add_p, "+"), (sub_p, "-"), (mul_p, "*")):
    lowering_rules[_prim] = _inexact_scalar_operator(lowering_rules[_prim], _op)

# Derivatives of the binary primitives (the rest have none: integer and bitwise ops).
ad.jvp_rules[add_p] = _add_jvp
ad.transpose_rules[add_p] = _linear_add_transpose(1)
ad.jvp_rules[sub_p] = _sub_jvp
ad.transpose_rules[sub_p] = _linear_add_transpose(-1)
ad.defbilinear(mul_p, _mul_transpose_lhs, _mul_transpose_rhs)
ad.jvp_rules[div_p] = _div_jvp
ad.transpose_rules[div_p] = _div_transpose
ad.defjvp_with_output(rem_p, lambda t, out, x, y: _broadcast_like(t, out), _rem_jvp_y)

# pow: x float or complex; y of x's dtype, or any integer dtype (converted to x's).
pow_p = Primitive("pow")
impl_rules[pow_p] = lambda x, y: [_pow(x, y)]
lowering_rules[pow_p] = _pow_lowering
native_rules[pow_p] = "pow"
xla_float32.use_exact_kernel(pow_p, "pow")
abstract_eval_rules[pow_p] = _pow_abstract
ad.defjvp_with_output(pow_p, _pow_jvp_x, _pow_jvp_y)
batching.defbroadcasting(pow_p)
ad.jvp_rules[max_p] = _minmax_jvp(max_p)
ad.jvp_rules[min_p] = _minmax_jvp(min_p)
ad.defjvp_with_output(atan2_p, _atan2_jvp_x, _atan2_jvp_y)
for _prim in (
    nextafter_p,
    and_p,
    or_p,
    xor_p,
    shift_left_p,
    shift_right_arithmetic_p,
    shift_right_logical_p,
):
    ad.defjvp(_prim, None, None)


# ----------------------------------------------------------------------------------------
# Comparisons: bool outputs

# eq and ne take any dtype; the orderings (lt, le, gt, ge) only real numbers (jnp
# orders complex numbers lexicographically on top of them).
_ORDERED = INT_OR_BOOL + FLOAT
_COMPARE = [
    ("eq", np.equal, "np.equal({}, {})", ANY),
    ("ne", np.not_equal, "np.not_equal({}, {})", ANY),
    ("lt", np.less, "np.less({}, {})", _ORDERED),
    ("le", np.less_equal, "np.less_equal({}, {})", _ORDERED),
    ("gt", np.greater, "np.greater({}, {})", _ORDERED),
    ("ge", np.greater_equal, "np.greater_equal({}, {})", _ORDERED),
]
_compare_prims = {}
for _name, _fn, _expr, _kinds in _COMPARE:
    _compare_prims[_name] = Primitive(_name)
    defbinary(
        _compare_prims[_name], _fn, _kinds, out_dtype=np.dtype(np.bool_), expr=_expr
    )
    ad.defjvp(_compare_prims[_name], None, None)
    batching.defbroadcasting(_compare_prims[_name])
    native_rules[_compare_prims[_name]] = _name

eq_p, ne_p, lt_p, le_p, gt_p, ge_p = (
    _compare_prims[n] for n in ("eq", "ne", "lt", "le", "gt", "ge")
)


# eq and ne also compare keys (an extended dtype with data) of one dtype, as in JAX:
# two keys are equal when all their words are.


def _key_comparison(prim, reduce_name):
    numeric_abstract = abstract_eval_rules[prim]

    def abstract(*avals):
        if not any(has_data(a.dtype) for a in avals):
            return numeric_abstract(*avals)
        shape = broadcast_shapes(prim.name, *(a.shape for a in avals))
        check_same_dtypes(prim.name, avals)
        return [ShapedArray(shape, np.dtype(np.bool_))], no_effects

    def physical_rule(avals_in, avals_out, *words):
        from jaxlite.lax import reductions  # (reductions builds on this module)
        from jaxlite.lax.structural import broadcast_in_dim

        (out,) = avals_out
        shape = physical_aval(ShapedArray(out.shape, avals_in[0].dtype)).shape
        words = [
            broadcast_in_dim(w, shape, tuple(range(out.ndim, len(shape))))
            if a.ndim < out.ndim
            else w
            for w, a in zip(words, avals_in)
        ]
        same = prim.bind(*words)
        axes = tuple(range(out.ndim, len(shape)))
        return [getattr(reductions, reduce_name)(same, axes)]

    return abstract, physical_rule


abstract_eval_rules[eq_p], physical_rules[eq_p] = _key_comparison(eq_p, "reduce_and")
abstract_eval_rules[ne_p], physical_rules[ne_p] = _key_comparison(ne_p, "reduce_or")


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
    # Named `select` in messages, as JAX: shapes first, then dtypes.
    if not cases:
        raise TypeError("select must have at least one case")
    first = cases[0]
    if any(c.shape != first.shape for c in cases[1:]):
        raise TypeError(
            "select cases must have the same shapes, got ["
            + ", ".join(str(c.shape) for c in cases)
            + "]. (Broadcast them first, e.g. with jnp.where.)"
        )
    if which.shape and which.shape != first.shape:
        raise TypeError(
            "select `which` must be scalar or have the same shape as cases, got "
            f"`which` shape {which.shape} but case shape {first.shape}."
        )
    check_same_dtypes("select", cases)
    if which.dtype != np.bool_ and not np.issubdtype(which.dtype, np.integer):
        raise TypeError(
            f"select `which` must be boolean or integer type, got {which.dtype}."
        )
    if which.dtype == np.bool_ and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    weak = all(c.weak_type for c in cases)
    return [ShapedArray(first.shape, first.dtype, weak)], no_effects


def _select_n_lowering(ctx, which, *cases):
    if len(cases) == 2:
        return f"np.where({which}, {cases[1]}, {cases[0]})"
    return f"np.choose({which}, [{', '.join(cases)}], mode='clip')"


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    case_tangents = tangents[1:]
    out = select_n_p.bind(which, *cases)
    if all(type(t) is ad.Zero for t in case_tangents):
        return [out], [ad.Zero(ad.tangent_aval(out.aval))]
    case_tangents = [ad.instantiate(t) for t in case_tangents]
    return [out], [select_n_p.bind(which, *case_tangents)]


def _select_n_transpose(ct, which, *cases):
    if ad.is_undefined(which):
        raise NotImplementedError("select_n is not linear in its predicate")
    if type(ct) is ad.Zero:
        return [None] * (1 + len(cases))
    zeros = full_of(ct, 0)
    cts = [None]
    for i, case in enumerate(cases):
        if not ad.is_undefined(case):
            cts.append(None)
            continue
        branches = [zeros] * len(cases)
        branches[i] = ct
        cts.append(select_n_p.bind(which, *branches))
    return cts


def _select_n_batch(axis_size, vals, dims):
    from jaxlite.lax.structural import broadcast_in_dim

    if dims[0] is batching.not_mapped and np.ndim(vals[0]) == 0:
        cases = [
            batching.bdim_at_front(c, d, axis_size) for c, d in zip(vals[1:], dims[1:])
        ]
        return [select_n_p.bind(vals[0], *cases)], [0]
    which, *cases = (
        batching.bdim_at_front(v, d, axis_size) for v, d in zip(vals, dims)
    )
    shape = np.shape(cases[0])
    if np.shape(which) != shape:
        which = broadcast_in_dim(which, shape, tuple(range(np.ndim(which))))
    return [select_n_p.bind(which, *cases)], [0]


select_n_p = Primitive("select_n")
ad.jvp_rules[select_n_p] = _select_n_jvp
ad.transpose_rules[select_n_p] = _select_n_transpose
batching.batch_rules[select_n_p] = _select_n_batch
physical_rules[select_n_p] = physical.by_elements(select_n_p)
impl_rules[select_n_p] = _select_n_impl
abstract_eval_rules[select_n_p] = _select_n_abstract
lowering_rules[select_n_p] = _select_n_lowering
native_rules[select_n_p] = "select_n"


# ----------------------------------------------------------------------------------------
# clamp(min, x, max)


def _clamp_abstract(lo, x, hi):
    # JAX's order: shapes, then dtypes; weak only if all three operands are weak.
    for what, bound in (("min", lo), ("max", hi)):
        if bound.shape and bound.shape != x.shape:
            raise TypeError(
                f"clamp requires {what}.shape == operand.shape or {what}.shape == (), "
                f"got {what}.shape={bound.shape}, operand.shape={x.shape}."
            )
    check_operand_dtypes("clamp", (lo, x, hi), ANY)
    check_same_dtypes("clamp", (lo, x, hi))
    weak = lo.weak_type and x.weak_type and hi.weak_type
    return [ShapedArray(x.shape, x.dtype, weak)], no_effects


def _clamp_jvp_operand(t, lo, x, hi):
    inside = bitwise_and(ge(x, lo), le(x, hi))
    return select(inside, t, full_of(t, 0))


def _clamp_jvp_lo(t, lo, x, hi):
    return select(lt(x, lo), _broadcast_like(t, x), full_of(x, 0))


def _clamp_jvp_hi(t, lo, x, hi):
    return select(gt(x, hi), _broadcast_like(t, x), full_of(x, 0))


def _clamp_batch(axis_size, vals, dims):
    from jaxlite.lax.structural import broadcast_in_dim

    (lo, x, hi), (lo_dim, x_dim, hi_dim) = vals, dims
    x = batching.bdim_at_front(x, x_dim, axis_size)
    shape = np.shape(x)
    bounds = []
    for bound, dim in ((lo, lo_dim), (hi, hi_dim)):
        if dim is batching.not_mapped and np.ndim(bound) == 0:
            bounds.append(bound)  # a scalar bound stays a scalar
            continue
        bound = batching.bdim_at_front(bound, dim, axis_size)
        if np.shape(bound) != shape:  # a batched scalar: one bound per example
            bound = broadcast_in_dim(bound, shape, (0,))
        bounds.append(bound)
    return [clamp_p.bind(bounds[0], x, bounds[1])], [0]


clamp_p = Primitive("clamp")
ad.defjvp(clamp_p, _clamp_jvp_lo, _clamp_jvp_operand, _clamp_jvp_hi)
batching.batch_rules[clamp_p] = _clamp_batch
impl_rules[clamp_p] = lambda lo, x, hi: [np.minimum(np.maximum(x, lo), hi)]
abstract_eval_rules[clamp_p] = _clamp_abstract
lowering_rules[clamp_p] = inline("np.minimum(np.maximum({1}, {0}), {2})")
native_rules[clamp_p] = "clamp"


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
    jaxprs as literals or constants, as in JAX); tracers get a `convert_element_type`."""
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
    if type(operand) in _PYTHON_SCALARS:
        return Array(_python_scalar_value(operand, new_dtype), bool(weak_type))
    value = convert_value(dtypes.coerce_to_array(operand), new_dtype)
    if isinstance(operand, np.ndarray) and np.shares_memory(value, operand):
        value = value.copy()  # Arrays are immutable: never alias a user's buffer
    return Array(value, bool(weak_type))


# ----------------------------------------------------------------------------------------
# Public lax functions

add, sub, mul, div, rem, pow = (
    _nary(p) for p in (add_p, sub_p, mul_p, div_p, rem_p, pow_p)
)
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
exp, exp2, log, log1p, expm1 = (
    _nary(p) for p in (exp_p, exp2_p, log_p, log1p_p, expm1_p)
)
tanh, logistic = _nary(tanh_p), _nary(logistic_p)
sin, cos, tan, asin, acos, atan = (
    _nary(p) for p in (sin_p, cos_p, tan_p, asin_p, acos_p, atan_p)
)
sinh, cosh, asinh, acosh, atanh = (
    _nary(p) for p in (sinh_p, cosh_p, asinh_p, acosh_p, atanh_p)
)
sqrt, rsqrt, cbrt = _nary(sqrt_p), _nary(rsqrt_p), _nary(cbrt_p)
bitwise_not = _nary(not_p)
abs, real, imag = _nary(abs_p), _nary(real_p), _nary(imag_p)  # noqa: A001


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):  # noqa: A001
    return round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y):
    return integer_pow_p.bind(x, y=int(y))


def conj(x):
    """The complex conjugate; complex for a real float32/float64 `x`, as in JAX."""
    (x,) = lax_operands(x)
    return conj_p.bind(x, input_dtype=get_aval(x).dtype)


def square(x):
    """`x * x`, its own primitive as in JAX (`x ** 2` stages as `integer_pow`)."""
    (x,) = lax_operands(x)
    return square_p.bind(x)


def reciprocal(x):
    return integer_pow(x, -1)


def select_n(which, *cases):
    if not cases:
        raise ValueError(
            "select_n() must have at least one case: pass the arrays to choose from "
            "after `which`."
        )
    return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    return select_n_p.bind(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    min, x, max = lax_operands(min, x, max)
    return clamp_p.bind(min, x, max)


# ----------------------------------------------------------------------------------------
# stop_gradient: the identity, with a zero derivative


def _stop_gradient_jvp(primals, tangents):
    (x,) = primals
    out = stop_gradient_p.bind(x)
    return [out], [ad.Zero(ad.tangent_aval(get_aval(out)))]


stop_gradient_p = Primitive("stop_gradient")
impl_rules[stop_gradient_p] = lambda x: [x]
abstract_eval_rules[stop_gradient_p] = lambda x: ([x], no_effects)
ad.jvp_rules[stop_gradient_p] = _stop_gradient_jvp
batching.defvectorized(stop_gradient_p)
lowering_rules[stop_gradient_p] = inline("{}")
native_rules[stop_gradient_p] = "identity"
physical_rules[stop_gradient_p] = lambda avals_in, avals_out, x: [x]


def stop_gradient(x):
    """The identity on values; its derivative is zero (leaves of a pytree)."""
    from jaxlite import tree_util

    def stop(leaf):
        if not dtypes.issubdtype(dtypes.result_type(leaf), np.inexact):
            return leaf
        return stop_gradient_p.bind(leaf)

    return tree_util.tree_map(stop, x)
