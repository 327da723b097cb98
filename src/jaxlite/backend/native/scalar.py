"""The elemental emitter: one element of each elementwise operation, as LLVM IR.

XLA:CPU computes an elementwise operation by emitting, for one element, the IR of its
operation on the operands' elements (its "elemental IR emitter"); a loop nest around
that computes the array, and a chain of such operations fuses by emitting them one
inside the other. `Elemental` is that emitter for jaxlite's native backend: the method
`op(*xs)` returns the IR value of elementwise operation `op` on scalar IR values `xs`,
with XLA's semantics where C's differ (integer division by zero, shifts past the width,
saturating float-to-integer conversion, NaN-propagating max and min).

An instance is made for one equation: `dtype` is its first operand's dtype, `out` its
result's, `params` its parameters. The method names are the op names that `lax/`
registers for its primitives (`native_rules[sin_p] = "sin"`).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
F32 = ir.FloatType()
F64 = ir.DoubleType()

SUPPORTED_DTYPES = frozenset(
    np.dtype(d)
    for d in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
    )
)


def value_type(dtype):
    """The IR type of one element in registers (bool is i1)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return I1
    if dtype.kind in "iu":
        return ir.IntType(8 * dtype.itemsize)
    return F32 if dtype.itemsize == 4 else F64


def memory_type(dtype):
    """The IR type of one element in memory (bool is a byte, as NumPy stores it)."""
    dtype = np.dtype(dtype)
    return I8 if dtype.kind == "b" else value_type(dtype)


def constant(dtype, value):
    dtype = np.dtype(dtype)
    t = value_type(dtype)
    if dtype.kind == "b":
        return ir.Constant(t, int(bool(value)))
    if dtype.kind in "iu":
        return ir.Constant(
            t, int(np.asarray(value).astype(dtype)) & ((1 << t.width) - 1)
        )
    return ir.Constant(t, float(np.asarray(value, dtype)))


# The C library's functions for the transcendental ops LLVM has no intrinsic for.
_LIBM = {
    "tan": "tan",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "asinh": "asinh",
    "acosh": "acosh",
    "atanh": "atanh",
    "log1p": "log1p",
    "expm1": "expm1",
    "cbrt": "cbrt",
    "erf": "erf",
    "erfc": "erfc",
    "lgamma": "lgamma",
    "atan2": "atan2",
    "pow": "pow",
    "nextafter": "nextafter",
}
# LLVM intrinsics (lowered to instructions or to the C library by LLVM itself).
_INTRINSICS = {
    "exp": "llvm.exp",
    "exp2": "llvm.exp2",
    "log": "llvm.log",
    "sin": "llvm.sin",
    "cos": "llvm.cos",
    "sqrt": "llvm.sqrt",
    "floor": "llvm.floor",
    "ceil": "llvm.ceil",
    "abs_float": "llvm.fabs",
    "copysign": "llvm.copysign",
}


class Elemental:
    """Emits one element of an elementwise operation (see the module docstring)."""

    def __init__(self, builder, dtype, out=None, params=None):
        self.b = builder
        self.dtype = np.dtype(dtype)
        self.out = np.dtype(out) if out is not None else self.dtype
        self.params = params or {}

    # -- helpers ---------------------------------------------------------------------
    @property
    def _float(self):
        return self.dtype.kind == "f"

    @property
    def _signed(self):
        return self.dtype.kind == "i"

    def _const(self, value, dtype=None):
        return constant(self.dtype if dtype is None else dtype, value)

    def _intrinsic(self, name, *xs):
        t = xs[0].type
        fn = intrinsic(self.b.module, name, t, [t] * len(xs), [t])
        return self.b.call(fn, list(xs))

    def _libm(self, name, *xs):
        t = xs[0].type
        symbol = _LIBM[name] + ("f" if t == F32 else "")
        module = self.b.module
        fn = module.globals.get(symbol)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(t, [t] * len(xs)), symbol)
        return self.b.call(fn, list(xs))

    def _is_nan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def _xla_f32(self, name, x):
        """XLA's own float32 kernel `name` inline (`xla_math`), bit-exact with JAX."""
        from jaxlite.backend.native import xla_math  # it imports this module

        return xla_math.KERNELS[name](self, x)

    # -- arithmetic ----------------------------------------------------------------------
    def add(self, x, y):
        return self.b.fadd(x, y) if self._float else self.b.add(x, y)

    def sub(self, x, y):
        return self.b.fsub(x, y) if self._float else self.b.sub(x, y)

    def mul(self, x, y):
        if self.dtype.kind == "b":
            return self.b.and_(x, y)
        return self.b.fmul(x, y) if self._float else self.b.mul(x, y)

    def add_any(self, x, y):
        return self.add(x, y)

    def div(self, x, y):
        b = self.b
        if self._float:
            return b.fdiv(x, y)
        zero = self._const(0)
        is_zero = b.icmp_unsigned("==", y, zero)
        safe = b.select(is_zero, self._const(1), y)
        if self._signed:
            # INT_MIN / -1 wraps to INT_MIN, as XLA: divide by 1 instead.
            overflow = b.and_(
                b.icmp_signed("==", x, self._const(np.iinfo(self.dtype).min)),
                b.icmp_signed("==", y, self._const(-1)),
            )
            safe = b.select(overflow, self._const(1), safe)
            q = b.sdiv(x, safe)
        else:
            q = b.udiv(x, safe)
        return b.select(is_zero, self._const(-1), q)

    def rem(self, x, y):
        b = self.b
        if self._float:
            return b.frem(x, y)
        zero = self._const(0)
        is_zero = b.icmp_unsigned("==", y, zero)
        safe = b.select(is_zero, self._const(1), y)
        if self._signed:
            minus_one = b.icmp_signed("==", y, self._const(-1))
            safe = b.select(minus_one, self._const(1), safe)  # x % -1 == 0
            r = b.srem(x, safe)
        else:
            r = b.urem(x, safe)
        return b.select(is_zero, x, r)

    def max(self, x, y):
        if self._float:
            return self._intrinsic("llvm.maximum", x, y)
        cmp = self.b.icmp_signed if self._signed else self.b.icmp_unsigned
        return self.b.select(cmp(">", x, y), x, y)

    def min(self, x, y):
        if self._float:
            return self._intrinsic("llvm.minimum", x, y)
        cmp = self.b.icmp_signed if self._signed else self.b.icmp_unsigned
        return self.b.select(cmp("<", x, y), x, y)

    def neg(self, x):
        return self.b.fneg(x) if self._float else self.b.neg(x)

    def abs(self, x):
        if self._float:
            return self._intrinsic("llvm.fabs", x)
        if not self._signed:
            return x
        return self.b.select(
            self.b.icmp_signed("<", x, self._const(0)), self.b.neg(x), x
        )

    def sign(self, x):
        b = self.b
        if self._float:
            one = self._intrinsic("llvm.copysign", self._const(1.0), x)
            is_zero = b.fcmp_ordered("==", x, self._const(0.0))
            return b.select(b.or_(is_zero, self._is_nan(x)), x, one)
        if self.dtype.kind == "b":
            return x
        zero = self._const(0)
        if not self._signed:
            return b.zext(b.icmp_unsigned("!=", x, zero), x.type)
        pos = b.zext(b.icmp_signed(">", x, zero), x.type)
        neg = b.zext(b.icmp_signed("<", x, zero), x.type)
        return b.sub(pos, neg)

    def square(self, x):
        return self.mul(x, x)

    def integer_pow(self, x):
        y = self.params["y"]
        n, acc, base = abs(y), None, x
        while n:
            if n & 1:
                acc = base if acc is None else self.mul(acc, base)
            n >>= 1
            if n:
                base = self.mul(base, base)
        if acc is None:
            acc = self._const(1)
        if y < 0:
            acc = self.b.fdiv(self._const(1.0), acc)
        return acc

    def pow(self, x, y):
        if y.type != x.type:  # an integer exponent: XLA converts it to x's dtype
            y = self.b.sitofp(y, x.type)
        return self._libm("pow", x, y)

    def atan2(self, x, y):
        return self._libm("atan2", x, y)

    def nextafter(self, x, y):
        return self._libm("nextafter", x, y)

    def fma(self, x, y, z):
        return self._intrinsic("llvm.fma", x, y, z)

    def clamp(self, lo, x, hi):
        return self.min(self.max(lo, x), hi)

    # -- transcendental ------------------------------------------------------------------
    def exp(self, x):
        if x.type == F32:
            return self._xla_f32("exp", x)
        return self._intrinsic("llvm.exp", x)

    def exp2(self, x):
        if x.type == F32:
            return self._xla_f32("exp2", x)
        return self._intrinsic("llvm.exp2", x)

    def log(self, x):
        if x.type == F32:
            return self._xla_f32("log", x)
        return self._intrinsic("llvm.log", x)

    def log1p(self, x):
        if x.type == F32:
            return self._xla_f32("log1p", x)
        return self._libm("log1p", x)

    def expm1(self, x):
        if x.type == F32:
            return self._xla_f32("expm1", x)
        return self._libm("expm1", x)

    def tanh(self, x):
        if x.type == F32:
            return self._xla_f32("tanh", x)
        return self._libm("tanh", x)

    def erf(self, x):
        if x.type == F32:
            return self._xla_f32("erf", x)
        return self._libm("erf", x)

    # XLA expands these into its exp, log and log1p (xla_math) for float32.
    def sinh(self, x):
        return self._xla_f32("sinh", x) if x.type == F32 else self._libm("sinh", x)

    def cosh(self, x):
        return self._xla_f32("cosh", x) if x.type == F32 else self._libm("cosh", x)

    def asinh(self, x):
        return self._xla_f32("asinh", x) if x.type == F32 else self._libm("asinh", x)

    def acosh(self, x):
        return self._xla_f32("acosh", x) if x.type == F32 else self._libm("acosh", x)

    def atanh(self, x):
        return self._xla_f32("atanh", x) if x.type == F32 else self._libm("atanh", x)

    def sin(self, x):
        if x.type == F32:
            return self._xla_f32("sin", x)
        return self._intrinsic("llvm.sin", x)

    def cos(self, x):
        if x.type == F32:
            return self._xla_f32("cos", x)
        return self._intrinsic("llvm.cos", x)

    def sqrt(self, x):
        return self._intrinsic("llvm.sqrt", x)

    def rsqrt(self, x):
        return self.b.fdiv(self._const(1.0), self.sqrt(x))

    def floor(self, x):
        return self._intrinsic("llvm.floor", x)

    def ceil(self, x):
        return self._intrinsic("llvm.ceil", x)

    def round(self, x):
        method = int(self.params.get("rounding_method", 0))
        return self._intrinsic("llvm.roundeven" if method else "llvm.round", x)

    def logistic(self, x):
        if x.type == F32:
            return self._xla_f32("logistic", x)
        one = self._const(1.0)
        return self.b.fdiv(one, self.b.fadd(one, self.exp(self.b.fneg(x))))

    def is_finite(self, x):
        fabs = self._intrinsic("llvm.fabs", x)
        return self.b.fcmp_ordered("<", fabs, self._const(np.inf))

    def erf_inv(self, x):  # float32 only (`compiler._FLOAT32_ONLY`)
        return self._xla_f32("erf_inv", x)

    def xla_exact(self, x):
        return getattr(self, self.params["name"])(x)

    def __getattr__(self, name):
        if name in _LIBM:
            return lambda *xs: self._libm(name, *xs)
        raise AttributeError(name)

    # -- comparisons ---------------------------------------------------------------------
    def _compare(self, op, x, y):
        if self._float:
            if op == "!=":
                return self.b.fcmp_unordered("!=", x, y)
            return self.b.fcmp_ordered(op, x, y)
        cmp = self.b.icmp_signed if self._signed else self.b.icmp_unsigned
        return cmp(op, x, y)

    def eq(self, x, y):
        return self._compare("==", x, y)

    def ne(self, x, y):
        return self._compare("!=", x, y)

    def lt(self, x, y):
        return self._compare("<", x, y)

    def le(self, x, y):
        return self._compare("<=", x, y)

    def gt(self, x, y):
        return self._compare(">", x, y)

    def ge(self, x, y):
        return self._compare(">=", x, y)

    # -- bitwise ---------------------------------------------------------------------------
    def and_(self, x, y):
        return self.b.and_(x, y)

    def or_(self, x, y):
        return self.b.or_(x, y)

    def xor(self, x, y):
        return self.b.xor(x, y)

    def not_(self, x):
        return self.b.not_(x)

    def _past_width(self, y):
        bits = self._const(8 * self.dtype.itemsize)
        return self.b.icmp_unsigned(">=", y, bits)  # negative amounts count as huge

    def shift_left(self, x, y):
        b = self.b
        safe = b.select(self._past_width(y), self._const(0), y)
        return b.select(self._past_width(y), self._const(0), b.shl(x, safe))

    def shift_right_logical(self, x, y):
        b = self.b
        safe = b.select(self._past_width(y), self._const(0), y)
        return b.select(self._past_width(y), self._const(0), b.lshr(x, safe))

    def shift_right_arithmetic(self, x, y):
        b = self.b
        top = self._const(8 * self.dtype.itemsize - 1)
        safe = b.select(self._past_width(y), top, y)
        return b.ashr(x, safe)

    def population_count(self, x):
        return self._intrinsic("llvm.ctpop", x)

    def clz(self, x):
        fn = intrinsic(self.b.module, "llvm.ctlz", x.type, [x.type, I1], [x.type])
        return self.b.call(fn, [x, ir.Constant(I1, 0)])

    # -- selection and conversion ------------------------------------------------------
    def select_n(self, which, *cases):
        b = self.b
        if len(cases) == 1:
            return cases[0]
        if which.type == I1:
            return b.select(which, cases[1], cases[0])
        out = cases[-1]
        for i in range(len(cases) - 2, -1, -1):
            is_i = b.icmp_unsigned("==", which, ir.Constant(which.type, i))
            out = b.select(is_i, cases[i], out)
        return out

    def convert_element_type(self, x):
        return convert(self.b, x, self.dtype, self.out)

    def copy(self, x):
        return x

    def bitcast_convert_type(self, x):  # same width only (`compiler._elementwise`)
        return self.b.bitcast(x, value_type(self.out))


def _type_suffix(t):
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    return "f32" if t == F32 else "f64"


def intrinsic(module, name, ret, args, overloads):
    """The declaration of LLVM intrinsic `name` overloaded on the types `overloads`
    (`llvm.fptosi.sat.i32.f32`)."""
    full = ".".join([name, *map(_type_suffix, overloads)])
    fn = module.globals.get(full)
    if fn is None:
        fn = ir.Function(module, ir.FunctionType(ret, args), full)
    return fn


def convert(b, x, src, dst):
    """`x` of dtype `src` converted to `dst` with XLA's CPU semantics."""
    src, dst = np.dtype(src), np.dtype(dst)
    if src == dst:
        return x
    t = value_type(dst)
    if dst.kind == "b":
        if src.kind == "f":
            return b.fcmp_unordered("!=", x, ir.Constant(x.type, 0.0))
        return b.icmp_unsigned("!=", x, ir.Constant(x.type, 0))
    if src.kind == "f":
        if dst.kind == "f":
            return b.fpext(x, t) if dst.itemsize > src.itemsize else b.fptrunc(x, t)
        # Saturating, NaN to 0, as XLA (`convert_value`).
        name = "llvm.fptosi.sat" if dst.kind == "i" else "llvm.fptoui.sat"
        return b.call(intrinsic(b.module, name, t, [x.type], [t, x.type]), [x])
    if dst.kind == "f":
        return b.sitofp(x, t) if src.kind == "i" else b.uitofp(x, t)
    if t.width == x.type.width:
        return x
    if t.width < x.type.width:
        return b.trunc(x, t)
    return b.sext(x, t) if src.kind == "i" else b.zext(x, t)
