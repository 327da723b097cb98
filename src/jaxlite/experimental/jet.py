"""Taylor-mode automatic differentiation: `jet(fun, primals, series)`.

`jvp` pushes a first-order perturbation through a program; `jet` pushes a whole
truncated Taylor polynomial. Given the derivatives of an input path at a point,
`(x, x', x'', ..., x^(K))`, it returns those of the output path `f(x(t))`, in one pass
whose cost grows like K^2 rather than the 2^K of K nested `jvp`s.

The function is first traced to a jaxpr; an interpreter then walks its equations,
carrying for every variable its primal value and its Taylor coefficients
`[v1, ..., vK]` (the series of `v(t) = v0 + v1 t + v2 t^2 + ...`, i.e. derivatives
divided by factorials; `jet` scales in and out), or `None` when they are all zero.
An equation whose inputs are all zero-series just runs. Otherwise the primitive's rule
in `jet_rules` maps input coefficients to output coefficients:

- linear operations (add, reshape, slice, reduce_sum, ...) apply themselves to each
  coefficient; comparisons, rounding and stop_gradient give zero series;
- bilinear ones (mul, dot_general) take the Cauchy product
  `v_k = sum_j op(u_j, w_{k-j})`;
- the others solve the ODE their derivative satisfies, one coefficient at a time:
  `v = exp(u)` has `v' = v u'`, hence `k v_k = sum_{j=1..k} j u_j v_{k-j}`; `log`,
  `div`, powers, `sin`/`cos`, `tanh`, `logistic`, ... follow the same pattern, and a
  function whose derivative is easy to write (erf, atan, ...) uses the jet of that
  derivative.

Calls (`jit`, `checkpoint`) are interpreted through, and `custom_jvp`/`custom_vjp`
functions are differentiated through their primal definition, as JAX does. The rules
are written with `jaxlite.lax`/`jaxlite.numpy` operations, so `jet` composes with
`jit`, `vmap` and `grad`. A primitive without a rule raises JAX's KeyError, naming it.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

from jaxlite import lax, tree_util
from jaxlite import numpy as jnp
from jaxlite.ad_checkpoint import name_p, remat_p
from jaxlite.core import Literal, Tracer
from jaxlite.dispatch import jit_p
from jaxlite.interpreters.ad import add_any_p
from jaxlite.interpreters.partial_eval import abstractify, debug_info, trace_to_jaxpr
from jaxlite.lax import callbacks
from jaxlite.lax.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p

__all__ = ["jet", "jet_rules"]


def jet(fun, primals, series, factorial_scaled=True, **_):
    """Taylor-mode higher-order derivatives of `fun` at `primals` along `series`.

    `primals` holds one array per positional argument of `fun`; `series` one list per
    argument, all of the same length K: the derivatives 1..K of the input path (or,
    with `factorial_scaled=False`, its Taylor coefficients). Returns
    `(fun(*primals), series_out)`, `series_out` having the output's tree structure
    with a list of K derivatives (coefficients) at each leaf.

    >>> h0, h1, h2 = 0.5**3., 3.*0.5**2., 6.*0.5
    >>> f0, (f1, f2) = jet(jnp.sin, (h0,), ((h1, h2),))  # sin(x^3) at 0.5
    """
    try:
        (order,) = set(map(len, series))
    except ValueError:
        raise ValueError(
            "jet terms have inconsistent lengths for different arguments"
        ) from None
    if len(primals) != len(series):
        raise ValueError(
            f"jet got {len(primals)} primal values but {len(series)} series; pass one "
            "list of terms per primal value."
        )
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not tree_util.treedef_is_leaf(tree_util.tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not tree_util.treedef_is_leaf(tree_util.tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")

    primals = list(primals)
    series = [list(terms) for terms in series]
    if factorial_scaled:
        series = [[t / _fact(k + 1) for k, t in enumerate(ts)] for ts in series]

    box = []

    def flat_fun(*args):
        leaves, tree = tree_util.tree_flatten(fun(*args))
        box.append((leaves, tree))
        return leaves

    in_avals = [abstractify(x) for x in primals]
    closed = trace_to_jaxpr(flat_fun, in_avals, debug_info(fun, "jet", primals, {}))
    raw_outs, out_tree = box[0]

    in_vals = [jnp.asarray(x) for x in primals]
    in_terms = [[jnp.asarray(t) for t in ts] for ts in series]
    jaxpr = closed.jaxpr
    outs, out_series = _jet_jaxpr(jaxpr, closed.consts, in_vals, in_terms, order)

    # Like JAX, an output that is an input or a Python constant comes back as given.
    given = dict(zip(jaxpr.invars, primals))
    out_primals, out_terms = [], []
    for var, raw, p, s in zip(jaxpr.outvars, raw_outs, outs, out_series):
        if not isinstance(raw, Tracer):
            p = raw
        elif type(var) is not Literal and var in given:
            p = given[var]
        if s is None:
            s = [jnp.zeros_like(p)] * order
        out_primals.append(p)
        out_terms.append(list(s))
    if factorial_scaled:
        out_terms = [[t * _fact(k + 1) for k, t in enumerate(ts)] for ts in out_terms]
    return (
        tree_util.tree_unflatten(out_tree, out_primals),
        tree_util.tree_unflatten(out_tree, out_terms),
    )


def _fact(n):
    return float(math.factorial(n))


class JetRuleMissing(KeyError):
    """No Taylor rule for a primitive: a KeyError, as JAX raises, with a message."""

    def __str__(self):
        return self.args[0]


# ----------------------------------------------------------------------------------------
# The interpreter

# Primitives that call a closed jaxpr on their operands, and the parameter holding it.
# custom_jvp/custom_vjp calls use their primal function, ignoring the custom rule.
_call_params = {
    jit_p: "jaxpr",
    remat_p: "jaxpr",
    custom_jvp_call_p: "call_jaxpr",
    custom_vjp_call_p: "call_jaxpr",
}


def _jet_jaxpr(jaxpr, consts, primals, series, order):
    """`(primals, series)` of `jaxpr`'s outputs; a series is a list of `order`
    Taylor coefficients, or None when they are all zero."""
    env = {}

    def read(x):
        if type(x) is Literal:
            return x.val, None
        return env[x]

    for v, c in zip(jaxpr.constvars, consts):
        env[v] = (c, None)
    for v, p, s in zip(jaxpr.invars, primals, series):
        env[v] = (p, s)
    for eqn in jaxpr.eqns:
        prim = eqn.primitive
        ins = [read(x) for x in eqn.invars]
        ps = [p for p, _ in ins]
        ss = [s for _, s in ins]
        if all(s is None for s in ss):
            outs = prim.bind(*ps, **eqn.params)
            outs = outs if prim.multiple_results else [outs]
            out_series = [None] * len(outs)
        elif prim in _call_params:
            inner = eqn.params[_call_params[prim]]
            outs, out_series = _jet_jaxpr(inner.jaxpr, inner.consts, ps, ss, order)
        else:
            rule = jet_rules.get(prim)
            if rule is None:
                raise JetRuleMissing(
                    f"Jet rule for '{prim}' not implemented: jax.experimental.jet has "
                    f"no Taylor rule for the primitive '{prim}'. Write the function "
                    "with supported operations, or take higher derivatives by "
                    "nesting jax.jvp."
                )
            ss = [
                _zero_series(x.aval, order) if s is None else s
                for x, s in zip(eqn.invars, ss)
            ]
            out, out_s = rule(ps, ss, **eqn.params)
            if prim.multiple_results:
                outs = list(out)
                out_series = [None] * len(outs) if out_s is None else list(out_s)
            else:
                outs, out_series = [out], [out_s]
        for v, p, s in zip(eqn.outvars, outs, out_series):
            env[v] = (p, s)
    results = [read(v) for v in jaxpr.outvars]
    return [p for p, _ in results], [s for _, s in results]


class _ZeroTerms(list):
    """The zero coefficients a rule gets for an operand with a zero series."""


def _zero_series(aval, order):
    zero = jnp.zeros(aval.shape, aval.dtype)
    return _ZeroTerms([zero] * order)


def _jet_fn(fun, primals, series):
    """Unscaled jet of a Python function of arrays (used by composite rules)."""
    avals = [abstractify(x) for x in primals]
    closed = trace_to_jaxpr(lambda *xs: [fun(*xs)], avals)
    order = len(series[0])
    outs, out_series = _jet_jaxpr(closed.jaxpr, closed.consts, primals, series, order)
    s = out_series[0]
    return outs[0], [jnp.zeros_like(outs[0])] * order if s is None else s


def _sum(terms):
    return functools.reduce(operator.add, terms)


jet_rules: dict = {}

# ----------------------------------------------------------------------------------------
# Zero and linear rules


def _zero_rule(prim):
    def rule(primals, series, **params):
        return prim.bind(*primals, **params), None

    return rule


def _linear_rule(prim, linear_args=None):
    """`prim` is linear in the operands at `linear_args` (all when None); the others
    (indices, predicates) are passed as they are to every coefficient."""

    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        order = len(series[0])
        terms = []
        for k in range(order):
            args = [
                s[k] if linear_args is None or i in linear_args else p
                for i, (p, s) in enumerate(zip(primals, series))
            ]
            terms.append(prim.bind(*args, **params))
        if prim.multiple_results:
            terms = [list(ts) for ts in zip(*terms)] if terms else [[] for _ in out]
        return out, terms

    return rule


for _name in [
    "eq", "ne", "lt", "le", "gt", "ge", "not", "and", "or", "xor", "floor", "ceil",
    "round", "sign", "stop_gradient", "is_finite", "shift_left",
    "shift_right_arithmetic", "shift_right_logical", "bitcast_convert_type",
    "argmax", "argmin", "population_count", "clz",
]:  # fmt: skip
    _p = getattr(lax, f"{_name}_p")
    jet_rules[_p] = _zero_rule(_p)

for _name in [
    "neg", "add", "sub", "real", "imag", "conj", "complex", "convert_element_type",
    "broadcast_in_dim", "concatenate", "split", "stack", "tile", "pad", "reshape",
    "squeeze", "rev", "transpose", "slice", "reduce_sum", "reduce_window_sum", "fft",
    "copy", "cumsum", "optimization_barrier",
]:  # fmt: skip
    _p = getattr(lax, f"{_name}_p")
    jet_rules[_p] = _linear_rule(_p)
jet_rules[add_any_p] = _linear_rule(add_any_p)
jet_rules[name_p] = _linear_rule(name_p)
jet_rules[lax.dynamic_slice_p] = _linear_rule(lax.dynamic_slice_p, {0})
jet_rules[lax.dynamic_update_slice_p] = _linear_rule(lax.dynamic_update_slice_p, {0, 1})
jet_rules[lax.gather_p] = _linear_rule(lax.gather_p, {0})
jet_rules[lax.scatter_add_p] = _linear_rule(lax.scatter_add_p, {0, 2})
jet_rules[lax.scatter_p] = _linear_rule(lax.scatter_p, {0, 2})


def _select_n_rule(primals, series, **params):
    which, *cases = primals
    out = lax.select_n_p.bind(*primals, **params)
    order = len(series[0])
    terms = [
        lax.select_n_p.bind(which, *(s[k] for s in series[1:]), **params)
        for k in range(order)
    ]
    return out, terms


jet_rules[lax.select_n_p] = _select_n_rule


def _effect_rule(prim):
    """Debug callbacks see the primal values; they have no outputs to differentiate."""

    def rule(primals, series, **params):
        return prim.bind(*primals, **params), None

    return rule


for _p in (callbacks.debug_callback_p, callbacks.debug_print_p):
    jet_rules[_p] = _effect_rule(_p)

# ----------------------------------------------------------------------------------------
# Products and quotients


def _cauchy(op, u, w, k):
    """Coefficient k of the product of series u and w (lists with the primal first)."""
    return _sum(op(u[j], w[k - j]) for j in range(k + 1))


def _bilinear_rule(prim):
    def rule(primals, series, **params):
        x, y = primals
        u, w = [x] + series[0], [y] + series[1]

        def op(a, b):
            return prim.bind(a, b, **params)

        out = op(x, y)
        return out, [_cauchy(op, u, w, k) for k in range(1, len(u))]

    return rule


for _p in (lax.mul_p, lax.dot_general_p, lax.conv_general_dilated_p):
    jet_rules[_p] = _bilinear_rule(_p)


def _div_series(u, w, v0):
    """Coefficients of v = u / w: from u = v w, v_k = (u_k - sum_{j<k} v_j w_{k-j})/w_0."""
    v = [v0]
    for k in range(1, len(u)):
        conv = _sum(v[j] * w[k - j] for j in range(k))
        v.append((u[k] - conv) / w[0])
    return v


def _div_rule(primals, series):
    x, y = primals
    out = lax.div(x, y)
    return out, _div_series([x] + series[0], [y] + series[1], out)[1:]


jet_rules[lax.div_p] = _div_rule


def _rem_rule(primals, series):
    # x - y * trunc(x / y), the quotient being locally constant.
    x, y = primals
    q = jnp.trunc(lax.div(x, y))
    terms = [a - b * q for a, b in zip(*series)]
    return lax.rem(x, y), terms


jet_rules[lax.rem_p] = _rem_rule

# ----------------------------------------------------------------------------------------
# Solutions of v' = g u': exp, log, powers, trigonometric and hyperbolic functions


def _exp_like(u, v0, e0, scale=1):
    """Series of v with v' = scale * e * u', where e = v - v0 + e0 (exp: e0 = v0)."""
    v, e = [v0], [e0]
    for k in range(1, len(u)):
        vk = _sum(j * u[j] * e[k - j] for j in range(1, k + 1)) / k
        v.append(vk * scale if scale != 1 else vk)
        e.append(v[k])
    return v


def _exp_rule(primals, series):
    (x,), (s,) = primals, series
    out = lax.exp(x)
    return out, _exp_like([x] + s, out, out)[1:]


def _expm1_rule(primals, series):
    (x,), (s,) = primals, series
    out = lax.expm1(x)
    return out, _exp_like([x] + s, out, out + 1)[1:]


def _exp2_rule(primals, series):
    (x,), (s,) = primals, series
    out = lax.exp2(x)
    return out, _exp_like([x] + s, out, out, scale=np.log(2.0))[1:]


def _log_like(u, v0, base):
    """Series of v with v' = u' / base, base = u + const: base v' = u'."""
    v = [v0]
    for k in range(1, len(u)):
        conv = _sum(j * v[j] * u[k - j] for j in range(1, k)) / k if k > 1 else 0
        v.append((u[k] - conv) / base)
    return v


def _log_rule(primals, series):
    (x,), (s,) = primals, series
    out = lax.log(x)
    return out, _log_like([x] + s, out, x)[1:]


def _log1p_rule(primals, series):
    (x,), (s,) = primals, series
    out = lax.log1p(x)
    return out, _log_like([x] + s, out, x + 1)[1:]


jet_rules[lax.exp_p] = _exp_rule
jet_rules[lax.expm1_p] = _expm1_rule
jet_rules[lax.exp2_p] = _exp2_rule
jet_rules[lax.log_p] = _log_rule
jet_rules[lax.log1p_p] = _log1p_rule


def _power_series(u, v0, r):
    """Series of v = u^r for a constant r: from u v' = r v u',
    v_k = sum_{j=1..k} ((r + 1) j - k) u_j v_{k-j} / (k u_0)."""
    v = [v0]
    for k in range(1, len(u)):
        num = _sum(((r + 1) * j - k) * u[j] * v[k - j] for j in range(1, k + 1))
        v.append(num / (k * u[0]))
    return v


def _const_power_rule(prim, r):
    def rule(primals, series):
        (x,), (s,) = primals, series
        out = prim.bind(x)
        return out, _power_series([x] + s, out, r)[1:]

    return rule


jet_rules[lax.sqrt_p] = _const_power_rule(lax.sqrt_p, 0.5)
jet_rules[lax.rsqrt_p] = _const_power_rule(lax.rsqrt_p, -0.5)
jet_rules[lax.cbrt_p] = _const_power_rule(lax.cbrt_p, 1 / 3)


def _pow_rule(primals, series):
    x, y = primals
    out = lax.pow(x, y)
    if type(series[1]) is _ZeroTerms:  # a constant exponent: exact for x < 0
        return out, _power_series([x] + series[0], out, y)[1:]
    # x^y = exp(y log x): the jet of y log x, then exp's recurrence.
    _, w_terms = _jet_fn(lambda a, b: b * lax.log(a), [x, y], series)
    return out, _exp_like([None] + w_terms, out, out)[1:]


jet_rules[lax.pow_p] = _pow_rule


def _series_product(u, w):
    return [_cauchy(operator.mul, u, w, k) for k in range(len(u))]


def _integer_pow_rule(primals, series, *, y):
    (x,), (s,) = primals, series
    out = lax.integer_pow(x, y)
    if y == 0:
        return out, None
    # Repeated squaring on the series: exact, also at x = 0 and for negative x.
    base, result, n = [x] + s, None, abs(y)
    while n:
        if n & 1:
            result = base if result is None else _series_product(result, base)
        n >>= 1
        if n:
            base = _series_product(base, base)
    if y < 0:
        one = [jnp.ones_like(x)] + [jnp.zeros_like(t) for t in s]
        result = _div_series(one, result, out)
    return out, result[1:]


def _square_rule(primals, series):
    (x,), (s,) = primals, series
    u = [x] + s
    return lax.square(x), _series_product(u, u)[1:]


jet_rules[lax.integer_pow_p] = _integer_pow_rule
jet_rules[lax.square_p] = _square_rule


def _sin_cos_series(u, s0, c0, sign):
    """sin/cos (sign -1) or sinh/cosh (sign +1): s' = c u', c' = sign s u'."""
    s, c = [s0], [c0]
    for k in range(1, len(u)):
        s.append(_sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k)
        ck = _sum(j * u[j] * s[k - j] for j in range(1, k + 1)) / k
        c.append(ck if sign > 0 else -ck)
    return s, c


def _sin_cos_rule(which, fs, sign):
    def rule(primals, series):
        (x,), (t,) = primals, series
        s, c = _sin_cos_series([x] + t, fs[0](x), fs[1](x), sign)
        v = s if which == 0 else c
        return v[0], v[1:]

    return rule


jet_rules[lax.sin_p] = _sin_cos_rule(0, (lax.sin, lax.cos), -1)
jet_rules[lax.cos_p] = _sin_cos_rule(1, (lax.sin, lax.cos), -1)
jet_rules[lax.sinh_p] = _sin_cos_rule(0, (lax.sinh, lax.cosh), 1)
jet_rules[lax.cosh_p] = _sin_cos_rule(1, (lax.sinh, lax.cosh), 1)


def _quadratic_ode(u, v0, a, b):
    """Series of v with v' = (a + b v^2) u' (tanh: a=1, b=-1; tan: a=1, b=1)."""
    v, g = [v0], [a + b * v0 * v0]
    for k in range(1, len(u)):
        v.append(_sum(j * u[j] * g[k - j] for j in range(1, k + 1)) / k)
        g.append(b * _cauchy(operator.mul, v, v, k))
    return v


def _tanh_rule(primals, series):
    (x,), (s,) = primals, series
    out = lax.tanh(x)
    return out, _quadratic_ode([x] + s, out, 1, -1)[1:]


def _tan_rule(primals, series):
    (x,), (s,) = primals, series
    out = lax.tan(x)
    return out, _quadratic_ode([x] + s, out, 1, 1)[1:]


def _logistic_rule(primals, series):
    # s' = s (1 - s) u' = (s - s^2) u'.
    (x,), (t,) = primals, series
    u = [x] + t
    out = lax.logistic(x)
    v, g = [out], [out * (1 - out)]
    for k in range(1, len(u)):
        v.append(_sum(j * u[j] * g[k - j] for j in range(1, k + 1)) / k)
        g.append(v[k] - _cauchy(operator.mul, v, v, k))
    return out, v[1:]


jet_rules[lax.tanh_p] = _tanh_rule
jet_rules[lax.tan_p] = _tan_rule
jet_rules[lax.logistic_p] = _logistic_rule


def _derivative_rule(prim, derivative):
    """v = prim(u) with v' = derivative(u) u': jet the derivative, then integrate."""

    def rule(primals, series):
        (x,), (s,) = primals, series
        out = prim.bind(x)
        c0, cs = _jet_fn(derivative, [x], [s])
        c, u = [c0] + cs, [x] + s
        terms = [
            _sum(j * u[j] * c[k - j] for j in range(1, k + 1)) / k
            for k in range(1, len(u))
        ]
        return out, terms

    return rule


def _erf_derivative(x):
    return (2 / np.sqrt(np.pi)) * lax.exp(-(x * x))


jet_rules[lax.erf_p] = _derivative_rule(lax.erf_p, _erf_derivative)
jet_rules[lax.atan_p] = _derivative_rule(lax.atan_p, lambda x: 1 / (1 + x * x))
jet_rules[lax.asin_p] = _derivative_rule(lax.asin_p, lambda x: lax.rsqrt(1 - x * x))
jet_rules[lax.acos_p] = _derivative_rule(lax.acos_p, lambda x: -lax.rsqrt(1 - x * x))
jet_rules[lax.asinh_p] = _derivative_rule(lax.asinh_p, lambda x: lax.rsqrt(x * x + 1))
jet_rules[lax.acosh_p] = _derivative_rule(lax.acosh_p, lambda x: lax.rsqrt(x * x - 1))


def _atanh_rule(primals, series):
    # As a composition, so that |x| > 1 gives NaN coefficients as the value does.
    (x,) = primals
    _, terms = _jet_fn(lambda a: 0.5 * lax.log((1 + a) / (1 - a)), primals, series)
    return lax.atanh(x), terms


jet_rules[lax.atanh_p] = _atanh_rule


def _erfc_rule(primals, series):
    _, terms = jet_rules[lax.erf_p](primals, series)
    return lax.erfc(primals[0]), [-t for t in terms]


jet_rules[lax.erfc_p] = _erfc_rule


def _atan2_rule(primals, series):
    x, y = primals
    q, q_terms = _div_rule(primals, series)
    _, terms = jet_rules[lax.atan_p]([q], [q_terms])
    return lax.atan2(x, y), terms


jet_rules[lax.atan2_p] = _atan2_rule

# ----------------------------------------------------------------------------------------
# Piecewise operations: abs, max/min, clamp, reductions by max/min


def _abs_rule(primals, series):
    (x,), (s,) = primals, series
    sign = jnp.where(x < 0, -1, 1).astype(jnp.result_type(x))
    return lax.abs(x), [t * sign for t in s]


jet_rules[lax.abs_p] = _abs_rule


def _choose_rule(prim, wins):
    """max/min: the winner's coefficients, their average where the two tie."""

    def rule(primals, series):
        x, y = primals
        out = prim.bind(x, y)
        first, tie = wins(x, y), x == y
        terms = [
            jnp.where(first, a, jnp.where(tie, (a + b) / 2, b)) for a, b in zip(*series)
        ]
        return out, [jnp.broadcast_to(t, jnp.shape(out)) for t in terms]

    return rule


jet_rules[lax.max_p] = _choose_rule(lax.max_p, operator.gt)
jet_rules[lax.min_p] = _choose_rule(lax.min_p, operator.lt)


def _clamp_rule(primals, series):
    lo, x, hi = primals
    s_lo, s_x, s_hi = series
    m, m_terms = jet_rules[lax.max_p]([lo, x], [s_lo, s_x])
    out, terms = jet_rules[lax.min_p]([m, hi], [m_terms, s_hi])
    return lax.clamp(lo, x, hi), terms


jet_rules[lax.clamp_p] = _clamp_rule


def _reduce_choose_rule(prim):
    """reduce_max/min: the mean of the coefficients of the elements that attain it."""

    def rule(primals, series, *, axes, **params):
        (x,), (s,) = primals, series
        out = prim.bind(x, axes=axes, **params)
        kept = [d for d in range(jnp.ndim(x)) if d not in axes]
        at = lax.broadcast_in_dim(out, jnp.shape(x), kept)
        where = lax.convert_element_type(x == at, jnp.result_type(s[0]))
        count = lax.reduce_sum(where, axes)
        return out, [lax.reduce_sum(t * where, axes) / count for t in s]

    return rule


jet_rules[lax.reduce_max_p] = _reduce_choose_rule(lax.reduce_max_p)
jet_rules[lax.reduce_min_p] = _reduce_choose_rule(lax.reduce_min_p)

del _name, _p
