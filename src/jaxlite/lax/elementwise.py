"""Elementwise primitives: arithmetic, bitwise operations, transcendental functions,
rounding, clamp and stop_gradient.

Operands of an n-ary primitive share one dtype (jnp inserts `convert_element_type` to
promote them) and broadcast as lax does: equal ranks with size-1 dimensions, or rank 0.
Each primitive's rules are registered in one block right after its rule functions.
Casts and the conversion of Python scalar operands live in `lax/casts.py`, comparisons
and `select_n` in `lax/comparisons.py` (both re-exported here); special functions
(erf, lgamma, digamma, igamma, ...) in `lax/special.py`.
"""

from __future__ import annotations

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.backend.numpy_backend import inline
from jaxlite.core import (
    Literal,
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    get_aval,
    impl_rules,
    no_effects,
    physical_rules,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import xla_float32
from jaxlite.lax.casts import (  # noqa: F401  (re-exported: jaxlite.lax.elementwise.*)
    _nary,
    convert_element_type,
    convert_element_type_p,
    convert_value,
    lax_operands,
)
from jaxlite.lax.comparisons import (  # noqa: F401  (re-exported likewise)
    eq,
    eq_p,
    full_of,
    ge,
    ge_p,
    gt,
    gt_p,
    le,
    le_p,
    lt,
    lt_p,
    ne,
    ne_p,
    select,
    select_n,
    select_n_p,
)
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
