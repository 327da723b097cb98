"""XLA:CPU's float32 transcendental functions, emitted inline as LLVM IR.

XLA's CPU compiler does not call the C library for float32 `exp`, `log`, `log1p`,
`expm1`, `tanh`, `logistic`, `erf` and `erf_inv`: it emits its own polynomial and
rational approximations into the loop, where LLVM vectorises them, and expands `exp2`,
`sinh`, `cosh`, `asinh`, `acosh` and `atanh` into those. Those algorithms are written
once, in `jaxlite.backend.xla_kernels`, against a small float32 arithmetic `m`;
`jaxlite.lax.xla_float32` runs them on NumPy values, and `IRMath` here is the same
arithmetic on IR values of one float32 element: each operation emits its instruction
with the IR builder, so `KERNELS[name](em, x)` runs the shared kernel and compiled
code gives the eager kernels' bits, which are JAX's.

Each step is one IEEE float32 operation (LLVM does not reassociate or contract them
without fast-math flags), an `llvm.fma.f32` wherever the kernel has an `m.fma`, and a
`select` wherever it picks between values (`m.where`): no branches, and no calls but
the C library's `sinf` and `cosf` for `sin` and `cos`, as in XLA, so a loop over them
vectorises.

Subnormals. XLA runs with denormals-are-zero and flush-to-zero set; compiled jaxlite
code does not touch the processor's flags. The kernels make the flushing explicit
where it changes a result (`m.daz`, `m.mul_ftz`, ...), and `IRMath` computes each of
those as a compare and a select, so the emitted code needs no flags either.
"""

from __future__ import annotations

from llvmlite import ir

from jaxlite.backend import xla_kernels
from jaxlite.backend.native.scalar import F32, F64, I32, intrinsic

__all__ = ["KERNELS", "IRMath"]


_TINY = 2.0**-126  # the smallest normal float32
_FTZ_BELOW = _TINY * (1 - 2.0**-25)  # products below flush to zero (`mul_ftz`)


class IRMath:
    """The float32 arithmetic of `xla_kernels` on IR values, emitted with one builder:
    each operation one IEEE operation (Python floats are float32 constants);
    comparisons are ordered (false for NaN) and return i1 values."""

    __slots__ = ("b",)

    def __init__(self, builder):
        self.b = builder

    @staticmethod
    def _v(x):
        return x if isinstance(x, ir.Value) else ir.Constant(F32, float(x))

    def _intrinsic(self, name, *xs):
        fn = intrinsic(self.b.module, name, F32, [F32] * len(xs), [F32])
        return self.b.call(fn, [self._v(x) for x in xs])

    # arithmetic, one rounding each
    def add(self, x, y):
        return self.b.fadd(self._v(x), self._v(y))

    def sub(self, x, y):
        return self.b.fsub(self._v(x), self._v(y))

    def mul(self, x, y):
        return self.b.fmul(self._v(x), self._v(y))

    def div(self, x, y):
        return self.b.fdiv(self._v(x), self._v(y))

    def fma(self, x, y, z):
        return self._intrinsic("llvm.fma", x, y, z)

    def sqrt(self, x):
        return self._intrinsic("llvm.sqrt", x)

    def floor(self, x):
        return self._intrinsic("llvm.floor", x)

    def abs(self, x):
        return self._intrinsic("llvm.fabs", x)

    def neg(self, x):
        return self.b.fneg(self._v(x))

    def copysign_one(self, x):
        return self._intrinsic("llvm.copysign", 1.0, x)

    def _signed_zero(self, x):
        return self._intrinsic("llvm.copysign", 0.0, x)

    # comparisons (ordered: false for NaN), masks and selection
    def lt(self, x, y):
        return self.b.fcmp_ordered("<", self._v(x), self._v(y))

    def le(self, x, y):
        return self.b.fcmp_ordered("<=", self._v(x), self._v(y))

    def gt(self, x, y):
        return self.b.fcmp_ordered(">", self._v(x), self._v(y))

    def ge(self, x, y):
        return self.b.fcmp_ordered(">=", self._v(x), self._v(y))

    def eq(self, x, y):
        return self.b.fcmp_ordered("==", self._v(x), self._v(y))

    def isnan(self, x):
        return self.b.fcmp_unordered("uno", x, x)

    def or_(self, p, q):
        return self.b.or_(p, q)

    def and_(self, p, q):
        return self.b.and_(p, q)

    def where(self, cond, x, y):
        return self.b.select(cond, self._v(x), self._v(y))

    def clamp(self, lo, x, hi):
        """max(lo, min(x, hi)) with NaN propagating (XLA's compare-and-select)."""
        x = self.where(self.lt(x, lo), lo, x)
        return self.where(self.gt(x, hi), hi, x)

    # subnormals
    def daz(self, x):
        """A subnormal `x` read as a zero of its sign (denormals-are-zero)."""
        return self.where(self.lt(self.abs(x), _TINY), self._signed_zero(x), x)

    def mul_ftz(self, x, y):
        """`x * y` flushed to zero as flush-to-zero flushes it: where it is tiny after
        rounding to float32's precision (x86 detects tininess after rounding), so a
        product just below the smallest normal that rounds up to it stays. The
        product is exact in double."""
        b = self.b
        p = b.fmul(b.fpext(self._v(x), F64), b.fpext(self._v(y), F64))
        fabs = intrinsic(b.module, "llvm.fabs", F64, [F64], [F64])
        below = b.fcmp_ordered("<", b.call(fabs, [p]), ir.Constant(F64, _FTZ_BELOW))
        out = b.fptrunc(p, F32)
        return self.where(below, self._signed_zero(out), out)

    # bits
    def pow2(self, n):
        """2**n for integral n in [-127, 127] by its bits (2**-127 reads as 0). A NaN
        n (only where the result is NaN anyway) is read as 0: fptosi of NaN is
        poison in LLVM."""
        b = self.b
        n = self.where(self.isnan(n), 0.0, n)
        k = b.fptosi(n, I32)
        bits = b.add(b.shl(k, ir.Constant(I32, 23)), ir.Constant(I32, 0x3F800000))
        return b.bitcast(bits, F32)

    def frexp(self, x):
        """Mantissa in [0.5, 1) and exponent (as a float) of a positive normal x."""
        b = self.b
        bits = b.bitcast(x, I32)
        e = b.sub(b.lshr(bits, ir.Constant(I32, 23)), ir.Constant(I32, 126))
        mant = b.or_(
            b.and_(bits, ir.Constant(I32, 0x807FFFFF)), ir.Constant(I32, 0x3F000000)
        )
        return b.bitcast(mant, F32), b.sitofp(e, F32)

    # the C library
    def libm(self, symbol, *xs):
        """C's float function `symbol` (`"sinf"`) of `xs`, a computed subnormal result
        flushed to zero (flush-to-zero: XLA calls it with the flag set), one returned
        as given (sinf of a subnormal returns it) kept. The arguments are passed as
        they are: sinf and cosf read a subnormal as the C library reads it under
        denormals-are-zero here (glibc: sinf returns it, cosf gives 1)."""
        b = self.b
        fn = b.module.globals.get(symbol)
        if fn is None:
            fn = ir.Function(b.module, ir.FunctionType(F32, [F32] * len(xs)), symbol)
        xs = [self._v(x) for x in xs]
        out = b.call(fn, xs)
        computed = b.icmp_unsigned("!=", b.bitcast(out, I32), b.bitcast(xs[0], I32))
        tiny = b.and_(computed, self.lt(self.abs(out), _TINY))
        return self.where(tiny, self._signed_zero(out), out)

    @staticmethod
    def libm_reads_subnormals():
        """False: compiled code calls the C library without XLA's flags set, so the
        kernels that hand it an input unchanged (asin, acos) model glibc 2.36's
        reading of a subnormal one."""
        return False


def _emitter(name):
    kernel = xla_kernels.KERNELS[name]

    def emit(em, x):
        return kernel(x, IRMath(em.b))

    emit.__name__ = emit.__qualname__ = f"emit_{name}"
    emit.__doc__ = f"XLA's float32 `{name}` of the IR value `x`, emitted with `em.b`."
    return emit


# The ops `scalar.Elemental` emits with XLA's kernels for float32. Its other float32
# ops (tan, atan, asin, pow, ...) call the C library's float functions directly; their
# kernels run on `IRMath` too (tests/test_xla_kernels_shared.py), not emitted yet.
_NATIVE = (
    *("exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic", "erf", "erf_inv"),
    *("sinh", "cosh", "asinh", "acosh", "atanh", "sin", "cos"),
)
KERNELS = {name: _emitter(name) for name in _NATIVE}
"""`KERNELS[name](em, x)`: the shared kernel `name` run on the float32 IR value `x`
with `em`'s builder (`Elemental`'s method names)."""
