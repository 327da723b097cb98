"""Float32 arithmetic as XLA's CPU backend computes it, so samples match JAX bit for bit.

JAX's samples are what XLA's CPU compiler makes of each sampler's arithmetic: it fuses a
multiply that feeds an add into one fused multiply-add, flushes subnormal floats to zero,
evaluates `log`, `log1p`, `exp`, `erf` and `erf_inv` with its own polynomials, and calls
the C library's `powf` and `tanf` for `pow` and `tan`. This module gives the samplers
those roundings as lax-level functions: an exactly rounded `fma` primitive, and
`exp`, `log`, ... bound to `xla_exact`, a primitive that always runs the float32
kernels of `jaxlite.lax.xla_float32` (where each polynomial lives), whatever the size:
the lax primitives use those kernels only for small arrays, and samples must match
JAX at every size. Other float widths use jaxlite's own functions.

One XLA operation is not reproduced: `rsqrt` (which XLA also substitutes for `x /
sqrt(y)`) is the processor's `rsqrtss` estimate refined by one Newton step. The estimate
comes from a table that differs between processor vendors and generations, so the refined
value, correctly rounded 1/sqrt in about 80% of cases, is off by one ulp in the others in
a way only that processor determines. Samplers that need it (gamma's `1 / sqrt(d)`) use
the correctly rounded value and may differ from JAX by an ulp there.
"""

from __future__ import annotations

import math

import numpy as np

from jaxlite import dtypes, lax
from jaxlite import numpy as jnp
from jaxlite.backend import lowering_rules
from jaxlite.backend.native import native_rules
from jaxlite.core import (
    Primitive,
    ShapedArray,
    abstract_eval_rules,
    impl_rules,
    no_effects,
)
from jaxlite.interpreters import ad, batching
from jaxlite.lax import xla_float32
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.lax.elementwise import lax_operands
from jaxlite.lax.rules import FLOAT, broadcast_shapes, check_dtype, check_same_dtypes
from jaxlite.lax.xla_float32 import fma_f32, fma_values, libm_values

__all__ = [
    "divide",
    "erf",
    "erf_inv",
    "exp",
    "fma",
    "log",
    "log1p",
    "mul_add",
    "pow",
    "sum_last_axis",
    "tan",
]


_F32 = np.dtype("float32")


# --------------------------------------------------------------------------------------
# Two primitives XLA has and jaxlite.lax lacks: an exactly rounded fused multiply-add
# (`xla_float32.fma_values`) and a same-width bitcast.


def _fma_abstract(a, b, c):
    avals = (a, b, c)
    check_same_dtypes("fma", avals)
    check_dtype("fma", a.dtype, FLOAT)
    shape = broadcast_shapes("fma", a.shape, b.shape, c.shape)
    weak = all(x.weak_type for x in avals)
    return [ShapedArray(shape, a.dtype, weak)], no_effects


def _fma_out_shape(a, b, c):
    return broadcast_shapes("fma", np.shape(a), np.shape(b), np.shape(c))


def _broadcast_tangent(t, shape):
    if np.shape(t) == shape:
        return t
    dims = () if not np.ndim(t) else tuple(range(len(shape)))
    return lax.broadcast_in_dim(t, shape, dims)


def _fma_jvp_a(t, a, b, c):
    return _broadcast_tangent(lax.mul(t, b), _fma_out_shape(a, b, c))


def _fma_jvp_b(t, a, b, c):
    return _broadcast_tangent(lax.mul(a, t), _fma_out_shape(a, b, c))


def _fma_jvp_c(t, a, b, c):
    return _broadcast_tangent(t, _fma_out_shape(a, b, c))


def _fma_lowering(ctx, a, b, c):
    f32 = all(v.dtype == _F32 for v in ctx.avals_in())
    fn = ctx.add_global(fma_f32 if f32 else fma_values, "fma")
    return f"{fn}({a}, {b}, {c})"


fma_p = Primitive("fma")
impl_rules[fma_p] = lambda a, b, c: [fma_values(a, b, c)]
lowering_rules[fma_p] = _fma_lowering
native_rules[fma_p] = "fma"
abstract_eval_rules[fma_p] = _fma_abstract
ad.defjvp(fma_p, _fma_jvp_a, _fma_jvp_b, _fma_jvp_c)
batching.defbroadcasting(fma_p)


def fma(a, b, c):
    """`a * b + c` rounded once, as XLA computes a multiply fused into an add."""
    return fma_p.bind(*lax_operands(a, b, c))


def divide(x, y):
    """`x / y` with jnp broadcasting, as XLA computes it: a divisor that has to be
    broadcast is inverted before broadcasting (XLA's rewrite `A / broadcast(B) =>
    A * broadcast(1 / B)`), so the quotient is rounded twice."""
    if np.shape(y) != np.shape(x) and np.size(y) < np.size(x):
        return x * lax.div(lax.full_like(y, 1), y)
    return x / y


def sum_last_axis(x):
    """`jnp.sum(x, axis=-1)` in the order XLA's CPU backend adds float32 rows of up
    to 64 elements: one after the other for inputs of at most 4096 elements; for larger
    ones, into 16 interleaved partial sums combined pairwise (sums 0 and 8, 1 and 9,
    ..., then halves again). Other cases use jaxlite's own summation."""
    n = x.shape[-1]
    small = math.prod(x.shape) <= 4096
    if x.dtype != _F32 or n > 64 or (small and n > 32) or n == 0:
        return jnp.sum(x, axis=-1)
    columns = [
        lax.squeeze(c, (x.ndim - 1,)) for c in lax.split(x, (1,) * n, x.ndim - 1)
    ]
    zero = lax.full_like(columns[0], 0)
    if small:
        total = zero
        for column in columns:
            total = lax.add(total, column)
        return total
    partial = [zero] * 16
    for i, column in enumerate(columns):
        partial[i % 16] = lax.add(partial[i % 16], column)
    while len(partial) > 1:
        half = len(partial) // 2
        partial = [lax.add(partial[i], partial[i + half]) for i in range(half)]
    return partial[0]


def mul_add(a, b, c):
    """`a * b + c` as XLA's CPU backend computes it in one fusion: one fma for float32
    and float64; 16-bit floats round the product and the sum separately."""
    a, b, c = lax_operands(a, b, c)
    if np.dtype(a.dtype).itemsize >= 4:
        return fma_p.bind(a, b, c)
    return lax.add(lax.mul(a, b), c)


# -- float32 kernels ---------------------------------------------------------------------
#
# `xla_exact[name=exp] x` runs `jaxlite.lax.xla_float32.exp` on float32 `x` at any
# size (`lax.exp` does so only up to `jaxlite_xla_exact_math_limit` elements).

_EXACT_KERNELS = ("exp", "log", "log1p", "erf", "erf_inv")


def _exact_abstract(x, *, name):
    if x.dtype != _F32:
        raise TypeError(f"xla_exact[name={name}] takes float32 operands, got {x.dtype}")
    return [ShapedArray(x.shape, _F32, x.weak_type)], no_effects


def _exact_lowering(ctx, x, *, name):
    return f"{ctx.add_global(getattr(xla_float32, name), name)}({x})"


_EXACT_DERIVATIVES = {
    "exp": lambda x, y: y,
    "log": lambda x, y: lax.div(lax.full_like(x, 1), x),
    "log1p": lambda x, y: lax.div(lax.full_like(x, 1), lax.add(x, lax.full_like(x, 1))),
    "erf": lambda x, y: lax.mul(
        lax.full_like(x, 2 / np.sqrt(np.pi)), _exact(lax.neg(lax.mul(x, x)), "exp")
    ),
    "erf_inv": lambda x, y: lax.mul(
        lax.full_like(x, np.sqrt(np.pi) / 2), _exact(lax.mul(y, y), "exp")
    ),
}


def _exact_jvp(t, y, x, *, name):
    return lax.mul(t, _EXACT_DERIVATIVES[name](x, y))


xla_exact_p = Primitive("xla_exact")
impl_rules[xla_exact_p] = lambda x, *, name: [getattr(xla_float32, name)(x)]
abstract_eval_rules[xla_exact_p] = _exact_abstract
lowering_rules[xla_exact_p] = _exact_lowering
native_rules[xla_exact_p] = "xla_exact"
ad.defjvp_with_output(xla_exact_p, _exact_jvp)
batching.defvectorized(xla_exact_p)


def _exact(x, name):
    return xla_exact_p.bind(x, name=name)


def _dispatch(name, fallback):
    """XLA's float32 `name` for float32 (and, via float32, 16-bit floats), `fallback`
    for other dtypes; differentiated as JAX differentiates the primitive."""

    def apply(x):
        if x.dtype == _F32:
            return _exact(x, name)
        if dtypes.issubdtype(x.dtype, np.floating) and np.dtype(x.dtype).itemsize < 4:
            # XLA computes 16-bit floats' transcendental functions in float32.
            out = _exact(lax.convert_element_type(x, _F32), name)
            return lax.convert_element_type(out, x.dtype)
        return fallback(x)

    apply.__name__ = name
    apply.__doc__ = f"`{name}` rounded as XLA does for float32."
    fun = custom_jvp(apply)
    derivative = _EXACT_DERIVATIVES[name]

    @fun.defjvp
    def _jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = fun(x)
        return y, lax.mul(t, derivative(x, y))

    return fun


log = _dispatch("log", lax.log)
log1p = _dispatch("log1p", lax.log1p)
exp = _dispatch("exp", lax.exp)
erf = _dispatch("erf", lax.erf)
erf_inv = _dispatch("erf_inv", lax.erf_inv)


# -- pow and tan: the C library's powf and tanf ------------------------------------------
#
# XLA's CPU backend compiles float32 `pow` and `tan` to calls of the C library's `powf`
# and `tanf`. Those are not correctly rounded (glibc's powf is off by one ulp for about
# 0.06% of arguments), so the primitives below call the same functions, elementwise
# (`xla_float32.libm_values`, with XLA's handling of subnormals).


def _libm_abstract(name):
    def abstract(*avals):
        check_same_dtypes(name, avals)
        if avals[0].dtype != _F32:
            raise TypeError(f"{name} takes float32 operands, got {avals[0].dtype}")
        shape = broadcast_shapes(name, *(a.shape for a in avals))
        weak = all(a.weak_type for a in avals)
        return [ShapedArray(shape, _F32, weak)], no_effects

    return abstract


def _powf_jvp_x(t, x, y):
    out = lax.mul(y, powf_p.bind(x, lax.sub(y, lax.full_like(y, 1))))
    return _broadcast_tangent(lax.mul(t, out), _fma_out_shape(x, y, y))


def _powf_jvp_y(t, x, y):
    # 0 ** y has derivative 0 in y (as lax.pow's rule has it), not nan.
    safe_x = jnp.where(lax.eq(x, np.float32(0)), np.float32(1), x)
    out = lax.mul(powf_p.bind(x, y), lax.log(safe_x))
    return _broadcast_tangent(lax.mul(t, out), _fma_out_shape(x, y, y))


powf_p = Primitive("powf")
impl_rules[powf_p] = lambda x, y: [libm_values("powf", x, y)]
abstract_eval_rules[powf_p] = _libm_abstract("powf")
ad.defjvp(powf_p, _powf_jvp_x, _powf_jvp_y)
batching.defbroadcasting(powf_p)


def _tanf_jvp(t, x):
    y = tanf_p.bind(x)
    return lax.mul(t, lax.add(lax.full_like(y, 1), lax.mul(y, y)))


tanf_p = Primitive("tanf")
impl_rules[tanf_p] = lambda x: [libm_values("tanf", x)]
abstract_eval_rules[tanf_p] = _libm_abstract("tanf")
ad.defjvp(tanf_p, _tanf_jvp)
batching.defvectorized(tanf_p)


def _in_float32(fun, fallback, *args):
    """`fun` on float32 operands (16-bit floats computed in float32, as XLA does),
    `fallback` on other dtypes."""
    dtype = args[0].dtype
    if dtype == _F32:
        return fun(*args)
    if dtypes.issubdtype(dtype, np.floating) and np.dtype(dtype).itemsize < 4:
        out = fun(*[lax.convert_element_type(a, _F32) for a in args])
        return lax.convert_element_type(out, dtype)
    return fallback(*args)


def pow(x, y):  # noqa: A001 (lax's name)
    """`x ** y` for float `x` and `y` of one dtype, rounded as XLA's `pow`."""
    x, y = lax_operands(x, y)
    return _in_float32(powf_p.bind, lax.pow, x, y)


def tan(x):
    """`tan(x)`, rounded as XLA's `tan`."""
    (x,) = lax_operands(x)
    return _in_float32(tanf_p.bind, lax.tan, x)
