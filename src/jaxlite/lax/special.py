"""Special functions as elementwise primitives: erf and its inverse, the gamma family
(lgamma, digamma, polygamma, Hurwitz zeta, the regularized incomplete gamma functions
and their derivatives in the shape parameter), the regularized incomplete beta function
and the exponentially scaled modified Bessel functions of order 0 and 1.

Each implementation is NumPy code of our own that computes in float64 and rounds to
the operand's dtype, so float32 results are correctly rounded almost everywhere and
float64 results are close to full precision: series and continued fractions that run
until every element has converged (incomplete gamma and beta), Euler-Maclaurin
summation (zeta), power series and the asymptotic expansion (Bessel). Edge values
(poles, the ends of the domain, NaN) follow SciPy, except where SciPy gives NaN for a
well-defined limit (zeta(inf, 2) = 0, polygamma(1, inf) = 0).

Derivatives are written with lax functions, so they can be differentiated again; where
JAX refuses a derivative (betainc in `a` and `b`, polygamma in `m`) we refuse it too,
with JAX's error. Beyond JAX: zeta is differentiable in both arguments (`zeta_ds`), and
igamma_grad_a and random_gamma_grad in `x`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from jaxlite import dtypes
from jaxlite.backend import lowering_rules
from jaxlite.backend import xla_kernels as _kernels
from jaxlite.backend.native import native_rules
from jaxlite.core import Primitive, abstract_eval_rules
from jaxlite.interpreters import ad, batching
from jaxlite.lax import xla_float32, xla_float32_fast
from jaxlite.lax.elementwise import (
    abs,
    add,
    div,
    exp,
    full_of,
    gt,
    integer_pow,
    lax_operands,
    log,
    log1p,
    mul,
    neg,
    select,
    sign,
    sub,
)
from jaxlite.lax.rules import FLOAT, defbinary, defunary
from jaxlite.lax.structural import operand

__all__ = [
    "bessel_i0e",
    "bessel_i0e_p",
    "bessel_i1e",
    "bessel_i1e_p",
    "betainc",
    "digamma",
    "digamma_p",
    "erf",
    "erf_inv",
    "erf_inv_p",
    "erf_p",
    "erfc",
    "erfc_p",
    "igamma",
    "igamma_grad_a",
    "igamma_grad_a_p",
    "igamma_p",
    "igammac",
    "igammac_p",
    "lgamma",
    "lgamma_p",
    "polygamma",
    "polygamma_p",
    "random_gamma_grad",
    "random_gamma_grad_p",
    "regularized_incomplete_beta_p",
    "zeta",
    "zeta_p",
]

_EPS = np.finfo(np.float64).eps
_TINY = 1e-300
_MAX_ITER = 100_000


def _quiet(kernel):
    """Run a NumPy kernel without floating-point warnings: IEEE results (inf, nan) are
    the answer at the edges, as in JAX."""

    def run(*args):
        with np.errstate(all="ignore"):
            return kernel(*args)

    run.__name__ = kernel.__name__
    return run


def _float64(*args):
    """The operands as broadcast float64 arrays, and the dtype to round the result to."""
    dtype = np.asarray(args[0]).dtype
    arrays = np.broadcast_arrays(*(np.asarray(a, np.float64) for a in args))
    return [np.array(a) for a in arrays], dtype


def _rounded(out, dtype):
    return np.asarray(out).astype(dtype)[()]


def _vectorize_math(fn, pole=None):
    """Vectorise a `math` function; `pole(x)` gives the value where it raises."""

    def safe(v):
        try:
            return fn(v)
        except (ValueError, OverflowError):
            return pole(v) if pole is not None else np.nan

    ufunc = np.frompyfunc(safe, 1, 1)

    def apply(x):
        x = np.asarray(x)
        out = np.asarray(ufunc(x.astype(np.float64)), dtype=np.float64)
        return out.astype(x.dtype)[()]

    return apply


_erf_np = _vectorize_math(math.erf)
_erfc_np = _vectorize_math(math.erfc)
_lgamma_np = _vectorize_math(math.lgamma, pole=lambda v: np.inf)


def _lgamma64(x):
    return np.asarray(_lgamma_np(np.asarray(x, np.float64)), np.float64)


# ----------------------------------------------------------------------------------------
# erf_inv: Newton's method on erf(y) = x from Giles' single-precision approximation.


def _erf_inv_np(x):
    x = np.asarray(x)
    w = x.astype(np.float64)
    t = -np.log((1.0 - w) * (1.0 + w))
    y = _giles(w, t)
    for _ in range(3):
        err = np.asarray(_erf_np(y), np.float64) - w
        y = y - err / (2 / np.sqrt(np.pi) * np.exp(-(y**2)))
    y = np.where(np.abs(w) == 1, np.sign(w) * np.inf, y)
    return np.where(np.abs(w) > 1, np.nan, y).astype(x.dtype)[()]


def _giles(w, t):
    """Giles' erfinv polynomials (XLA's float32 erf_inv, `backend/xla_kernels.py`), in
    float64: the starting point of the Newton steps above."""
    small = t < 5
    ts, tl = t - 2.5, np.sqrt(np.maximum(t, 0)) - 3
    p = q = 0.0
    for c, d in zip(_kernels.ERFINV_CENTRAL, _kernels.ERFINV_TAIL):
        p, q = float(c) + p * ts, float(d) + q * tl
    return np.where(small, p, q) * w


# Bernoulli numbers B_2, B_4, ..., B_24 (Euler-Maclaurin and Stirling series).
_BERNOULLI_2J = [
    Fraction(1, 6),
    Fraction(-1, 30),
    Fraction(1, 42),
    Fraction(-1, 30),
    Fraction(5, 66),
    Fraction(-691, 2730),
    Fraction(7, 6),
    Fraction(-3617, 510),
    Fraction(43867, 798),
    Fraction(-174611, 330),
    Fraction(854513, 138),
    Fraction(-236364091, 2730),
]

# ----------------------------------------------------------------------------------------
# digamma: the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
# series; reflection psi(1 - x) - psi(x) = pi cot(pi x) below 1/2.


def _digamma64(v):
    reflect = v < 0.5
    w = np.where(reflect, 1.0 - v, v)
    acc = np.zeros_like(w)
    for _ in range(10):
        small = w < 10
        acc = acc - np.where(small, 1.0 / w, 0.0)
        w = np.where(small, w + 1, w)
    inv2 = 1.0 / (w * w)
    tail = np.zeros_like(w)
    for k in range(7, 0, -1):  # sum_k B_2k / (2k w**2k), Horner in 1/w**2
        tail = (tail + float(_BERNOULLI_2J[k - 1] / (2 * k))) * inv2
    series = np.log(w) - 0.5 / w - tail
    out = acc + series
    out = np.where(reflect, out - np.pi / np.tan(np.pi * v), out)
    near_root = np.abs(v - _DIGAMMA_ROOT) < 0.2
    if near_root.any():
        out[near_root] = _digamma_near_root(v[near_root])
    return np.where((v <= 0) & (v == np.floor(v)), np.nan, out)


def _digamma_near_root(v):
    """Taylor series about the positive root x0 of digamma, where the sums above
    cancel: psi(x) = sum_k (-1)**(k+1) zeta(k + 1, x0) (x - x0)**k."""
    dx = (v - _DIGAMMA_ROOT) - _DIGAMMA_ROOT_LOW
    out = np.zeros_like(v)
    for coeff in _DIGAMMA_TAYLOR[::-1]:
        out = (out + coeff) * dx
    return out


def _digamma_np(x):
    x = np.asarray(x)
    return _rounded(_digamma64(x.astype(np.float64)), x.dtype)


# ----------------------------------------------------------------------------------------
# zeta(s, q) = sum_k (q + k)**-s, by Euler-Maclaurin: sum the first terms directly until
# q + n > 9 (and n >= 9), then the integral, half the next term and 12 Bernoulli terms.

_ZETA_SHIFT = 9.0
# B_2j / (2j)!, j = 1, 2, ...
_EM_COEFFS = [
    float(b / math.factorial(2 * j)) for j, b in enumerate(_BERNOULLI_2J, start=1)
]


def _zeta64(s, q):
    out = np.zeros_like(s)
    total = np.zeros_like(s)
    a = q.copy()
    pole = (q <= 0) & (q == np.floor(q))
    # As JAX: NaN below s = 1, for q <= 0 with a non-integer s, and for infinite s or
    # q (whose limits JAX does not take).
    bad = (s < 1) | np.isnan(s) | np.isnan(q) | ((q <= 0) & (s != np.floor(s)))
    bad |= np.isinf(s) | np.isposinf(q)
    live = ~(pole | bad | np.isinf(s) | np.isinf(q) | (s == 1))
    for i in range(_MAX_ITER):
        step = live & ((a <= _ZETA_SHIFT) | (i < _ZETA_SHIFT))
        if not step.any():
            break
        total = np.where(step, total + np.where(step, a, 1.0) ** -s, total)
        a = np.where(step, a + 1, a)
    a = np.where(live, a, 10.0)
    sl = np.where(live, s, 2.0)
    w = a**-sl
    tail = a * w / (sl - 1) + 0.5 * w
    rising = sl  # s (s + 1) ... (s + 2j - 2)
    power = w / a  # a**(-s - 2j + 1)
    for j, coeff in enumerate(_EM_COEFFS, start=1):
        term = coeff * rising * power
        tail = tail + term
        rising = rising * (sl + 2 * j - 1) * (sl + 2 * j)
        power = power / (a * a)
    out = np.where(live, total + tail, out)
    out = np.where(pole | (s == 1), np.inf, out)
    return np.where(bad, np.nan, out)


# The positive root of digamma as a float64 pair, and its Taylor coefficients.
_DIGAMMA_ROOT = 1.4616321449683622
_DIGAMMA_ROOT_LOW = 9.549995429965697e-17
_DIGAMMA_TAYLOR = [
    (-1) ** (k + 1) * float(_zeta64(np.array([k + 1.0]), np.array([_DIGAMMA_ROOT]))[0])
    for k in range(1, 24)
]


def _zeta_np(s, q):
    (s, q), dtype = _float64(s, q)
    return _rounded(_zeta64(s, q), dtype)


def _polygamma_np(m, x):
    (m, x), dtype = _float64(m, x)
    order = (m >= 0) & (m == np.floor(m)) & np.isfinite(m)
    out = np.where(order & (m == 0), _digamma64(x), np.nan)
    higher = order & (m > 0)
    if higher.any():
        n = np.where(higher, m, 1.0)
        sign_ = np.where(np.fmod(n, 2) == 0, -1.0, 1.0)
        factorial = np.exp(_lgamma64(n + 1))
        z = _zeta64(n + 1, x)
        # At the poles psi^(m) tends to +inf from both sides for odd m; for even m
        # the two sides disagree, so the value is NaN (as in JAX).
        value = np.where(np.isinf(z) & (sign_ < 0), np.nan, sign_ * factorial * z)
        out = np.where(higher, value, out)
    return _rounded(out, dtype)


# ----------------------------------------------------------------------------------------
# Iterations run on the elements that have not converged yet: `_Active` keeps their
# positions and state and drops an element as soon as its sum has converged.


class _Active:
    def __init__(self, size, **state):
        self.index = np.arange(size)
        self.__dict__.update(state)
        self._names = list(state)

    def __bool__(self):
        return self.index.size > 0

    def keep(self, mask):
        self.index = self.index[mask]
        for name in self._names:
            setattr(self, name, getattr(self, name)[mask])


def _log1pmx(t):
    """log(1 + t) - t without cancellation for small t: with u = t / (2 + t),
    log(1 + t) = 2 (u + u**3/3 + u**5/5 + ...) and 2u - t = -t**2 / (2 + t)."""
    small = np.abs(t) < 0.3
    ts = np.where(small, t, 0.0)
    u = ts / (2 + ts)
    u2 = u * u
    series = np.zeros_like(ts)
    for k in range(25, 1, -1):
        series = series * u2 + 1 / (2 * k - 1)
    series = -ts * ts / (2 + ts) + 2 * u * u2 * series
    return np.where(small, series, np.log1p(t) - t)


def _stirling_remainder(z):
    """lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2), for z >= 10."""
    inv = 1 / z
    inv2 = inv * inv
    total = np.zeros_like(z)
    power = inv
    for j, coeff in enumerate(_BERNOULLI_2J[:8], start=1):
        total = total + float(coeff / (2 * j * (2 * j - 1))) * power
        power = power * inv2
    return total


# ----------------------------------------------------------------------------------------
# Regularized incomplete gamma P(a, x) and Q(a, x) = 1 - P(a, x). Below max(1, a) the
# series P = x**a e**-x / Gamma(a + 1) * sum_n x**n / ((a + 1) ... (a + n)); above it
# the continued fraction Q = x**a e**-x / Gamma(a) / (x + 1 - a - 1 (1 - a) / (x + 3 - a
# - ...)), by the modified Lentz method. With `grad`, both also carry their derivative
# in `a` (dual numbers), which gives D = (dP/da) / (dP/dx).


def _igamma_series(a, x, grad):
    total = np.ones_like(a)
    d_total = np.zeros_like(a)
    s = _Active(a.size, a=a, x=x, term=np.ones_like(a), d_term=np.zeros_like(a))
    n = 0
    while s and n < _MAX_ITER:
        n += 1
        ap = s.a + n
        ratio = s.x / ap
        if grad:
            s.d_term = (s.d_term - s.term / ap) * ratio
            d_total[s.index] += s.d_term
        s.term = s.term * ratio
        total[s.index] += s.term
        done = s.term <= _EPS * total[s.index]
        if grad:
            done &= np.abs(s.d_term) <= _EPS * np.abs(d_total[s.index])
        s.keep(~done)
    return total, d_total


def _igamma_cf(a, x, grad):
    b = x + 1 - a
    d = 1 / np.where(np.abs(b) < _TINY, _TINY, b)
    h, d_h = d.copy(), d * d  # d_h: the derivative in `a` (d_b = -1)
    s = _Active(
        a.size, a=a, b=b, c=np.full_like(a, 1 / _TINY), d=d, d_b=-np.ones_like(a),
        d_c=np.zeros_like(a), d_d=d * d,
    )  # fmt: skip
    i = 0
    while s and i < _MAX_ITER:
        i += 1
        an, d_an = -i * (i - s.a), float(i)
        s.b = s.b + 2
        den = an * s.d + s.b
        d_den = d_an * s.d + an * s.d_d + s.d_b
        den = np.where(np.abs(den) < _TINY, _TINY, den)
        d_new = 1 / den
        d_d_new = -d_den * d_new * d_new
        c_new = s.b + an / s.c
        s.d_c = s.d_b + d_an / s.c - an * s.d_c / (s.c * s.c)
        s.c = np.where(np.abs(c_new) < _TINY, _TINY, c_new)
        s.d, s.d_d = d_new, d_d_new
        delta = s.c * s.d
        d_delta = s.d_c * s.d + s.c * s.d_d
        h_old, d_h_old = h[s.index], d_h[s.index]
        h[s.index] = h_old * delta
        step = d_h_old * delta + h_old * d_delta
        d_h[s.index] = step
        done = np.abs(delta - 1) <= _EPS
        if grad:
            done &= np.abs(step - d_h_old) <= _EPS * np.abs(step)
        s.keep(~done)
    return h, d_h


def _igamma_log_scale(a, x):
    """log(x**a e**-x / Gamma(a + 1)); for a >= 10 as a log1pmx((x - a)/a) minus
    Stirling's terms, which keeps its absolute error small when a and x are large."""
    large = a >= 10
    al = np.where(large, a, 10.0)
    stirling = (
        al * _log1pmx((x - al) / al)
        - 0.5 * np.log(2 * np.pi * al)
        - _stirling_remainder(al)
    )
    direct = a * np.log(x) - x - _lgamma64(a + 1)
    return np.where(large, stirling, direct)


def _igamma64(a, x, want):
    """want: "p", "q", "grad_a" (dP/da) or "sample_grad" (-(dP/da) / (dP/dx))."""
    grad = want in ("grad_a", "sample_grad")
    nan = np.isnan(a) | np.isnan(x) | (a < 0) | (x < 0) | ((a == 0) & (x == 0))
    special = nan | (x == 0) | (a == 0) | np.isinf(x) | np.isinf(a)
    use_cf = ~special & (x > 1) & (x > a)
    use_series = ~special & ~use_cf
    p = np.zeros_like(a)
    q = np.zeros_like(a)
    ratio = np.zeros_like(a)  # D = (dP/da) / (dP/dx)
    log_pdf = np.zeros_like(a)  # log of dP/dx
    if use_series.any():
        aa, xx = a[use_series], x[use_series]
        total, d_total = _igamma_series(aa, xx, grad)
        log_scale = _igamma_log_scale(aa, xx)
        p_s = np.exp(log_scale) * total
        p[use_series] = p_s
        q[use_series] = 1 - p_s
        if grad:
            d_log = np.log(xx) - _digamma64(aa) - 1 / aa
            ratio[use_series] = xx / aa * (d_log * total + d_total)
            log_pdf[use_series] = log_scale + np.log(aa / xx)
    if use_cf.any():
        aa, xx = a[use_cf], x[use_cf]
        h, d_h = _igamma_cf(aa, xx, grad)
        log_scale = _igamma_log_scale(aa, xx) + np.log(aa)
        q_c = np.exp(log_scale) * h
        q[use_cf] = q_c
        p[use_cf] = 1 - q_c
        if grad:
            ratio[use_cf] = -xx * ((np.log(xx) - _digamma64(aa)) * h + d_h)
            log_pdf[use_cf] = log_scale - np.log(xx)
    # Edges: x = 0 gives P = 0; x = inf (even for a = inf, as in JAX) or a = 0 gives
    # P = 1; a = inf with x finite gives P = 0.
    one = ~nan & (np.isinf(x) | ((a == 0) & (x > 0)))
    p = np.where(one, 1.0, p)
    q = np.where(one, 0.0, q)
    zero = ~nan & ~one & special
    p = np.where(zero, 0.0, p)
    q = np.where(zero, 1.0, q)
    if want == "p":
        out = p
    elif want == "q":
        out = q
    elif want == "grad_a":
        out = np.where(special, 0.0, ratio * np.exp(log_pdf))
        nan |= ((a == 0) | np.isinf(a)) & (x != 0)  # x = 0: P = 0 for every a
    else:
        out = np.where(special, np.where(np.isinf(x), np.nan, 0.0), -ratio)
        nan |= ((a == 0) | np.isinf(a)) & (x != 0)
    return np.where(nan, np.nan, out)


def _igamma_kernel(want):
    def impl(a, x):
        (a, x), dtype = _float64(a, x)
        return _rounded(_igamma64(a, x, want), dtype)

    return impl


# ----------------------------------------------------------------------------------------
# Regularized incomplete beta I_x(a, b): the continued fraction of Numerical Recipes'
# betacf (modified Lentz), with the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) above the
# mean so that it converges quickly.


def _lbeta64(a, b):
    """log B(a, b); Stirling's series with its remainder when both are large (lgamma
    differences would lose digits there)."""
    large = np.minimum(a, b) >= 10
    aa, bb = np.where(large, a, 10.0), np.where(large, b, 10.0)
    s = aa + bb
    stirling = (
        0.5 * np.log(2 * np.pi)
        - 0.5 * np.log(s)
        + (aa - 0.5) * np.log(aa / s)
        + (bb - 0.5) * np.log(bb / s)
        + _stirling_remainder(aa)
        + _stirling_remainder(bb)
        - _stirling_remainder(s)
    )
    direct = _lgamma64(a) + _lgamma64(b) - _lgamma64(a + b)
    return np.where(large, stirling, direct)


def _betainc_log_front(a, b, x):
    """log(x**a (1 - x)**b / B(a, b)). When a and b are large it is computed around the
    mean p = a / (a + b): the linear terms of a log(x/p) + b log((1-x)/(1-p)) cancel
    exactly, leaving a log1pmx((x-p)/p) + b log1pmx((p-x)/(1-p)) plus Stirling's terms."""
    large = np.minimum(a, b) >= 10
    aa, bb = np.where(large, a, 10.0), np.where(large, b, 10.0)
    s = aa + bb
    p, p1 = aa / s, bb / s
    dx = x - p
    around_mean = (
        aa * _log1pmx(dx / p)
        + bb * _log1pmx(-dx / p1)
        + 0.5 * np.log(p * p1 * s / (2 * np.pi))
        - _stirling_remainder(aa)
        - _stirling_remainder(bb)
        + _stirling_remainder(s)
    )
    direct = a * np.log(x) + b * np.log1p(-x) - _lbeta64(a, b)
    return np.where(large, around_mean, direct)


def _betainc_cf(a, b, x):
    """The continued fraction 1/(1+ d1/(1+ d2/(1+ ...))) of I_x(a, b), with
    d_2m = m (b - m) x / ((a + 2m - 1)(a + 2m)) and
    d_2m+1 = -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1))."""
    d = 1 - (a + b) * x / (a + 1)
    d = 1 / np.where(np.abs(d) < _TINY, _TINY, d)
    h = d.copy()
    s = _Active(a.size, a=a, b=b, x=x, c=np.ones_like(a), d=d)
    m = 0
    while s and m < _MAX_ITER:
        m += 1
        m2 = 2 * m
        sa, sb, sx = s.a, s.b, s.x
        delta = None
        for coeff in (
            m * (sb - m) * sx / ((sa - 1 + m2) * (sa + m2)),
            -(sa + m) * (sa + sb + m) * sx / ((sa + m2) * (sa + 1 + m2)),
        ):
            d_new = 1 + coeff * s.d
            s.d = 1 / np.where(np.abs(d_new) < _TINY, _TINY, d_new)
            c_new = 1 + coeff / s.c
            s.c = np.where(np.abs(c_new) < _TINY, _TINY, c_new)
            delta = s.d * s.c
            h[s.index] *= delta
        s.keep(np.abs(delta - 1) > _EPS)
    return h


def _betainc64(a, b, x):
    nan = np.isnan(a) | np.isnan(b) | np.isnan(x) | (a < 0) | (b < 0)
    nan |= (x < 0) | (x > 1) | ((a == 0) & (b == 0)) | (np.isinf(a) & np.isinf(b))
    # Where the integral is a step: 1 when all the mass sits at 0, 0 when it sits at 1.
    at_zero = (a == 0) | np.isinf(b)
    at_one = (b == 0) | np.isinf(a)
    edge = nan | at_zero | at_one | (x == 0) | (x == 1)
    out = np.zeros_like(a)
    live = ~edge
    if live.any():
        aa, bb, xx = a[live], b[live], x[live]
        flip = xx > (aa + 1) / (aa + bb + 2)
        a2, b2 = np.where(flip, bb, aa), np.where(flip, aa, bb)
        x2 = np.where(flip, 1 - xx, xx)
        front = np.exp(_betainc_log_front(a2, b2, x2)) / a2
        value = front * _betainc_cf(a2, b2, x2)
        out[live] = np.where(flip, 1 - value, value)
    out = np.where(edge & (x == 1), 1.0, out)
    out = np.where(edge & (x > 0) & (x < 1) & at_zero, 1.0, out)
    out = np.where(edge & (x > 0) & (x < 1) & at_one & ~at_zero, 0.0, out)
    return np.where(nan, np.nan, out)


def _betainc_np(a, b, x):
    (a, b, x), dtype = _float64(a, b, x)
    return _rounded(_betainc64(a, b, x), dtype)


# ----------------------------------------------------------------------------------------
# Exponentially scaled modified Bessel functions: the power series (positive terms, no
# cancellation) up to |x| = 30, the asymptotic expansion
# e**-x I_nu(x) ~ (2 pi x)**-1/2 sum_k (-1)**k prod_{j<=k} (4 nu**2 - (2j-1)**2) / (k! (8x)**k)
# beyond, where 25 terms are below float64 rounding.

_BESSEL_SWITCH = 30.0


def _bessel_ie64(x, nu):
    ax = np.abs(x)
    small = ax <= _BESSEL_SWITCH
    xs = np.where(small, ax, 0.0)
    y = xs * xs / 4
    term = np.ones_like(x) if nu == 0 else xs / 2
    total = term.copy()
    k = 0
    while True:
        k += 1
        term = term * y / (k * (k + nu))
        total = total + term
        if not np.any(term > _EPS * total) or k > 200:
            break
    series = total * np.exp(-xs)
    xl = np.where(small, 2 * _BESSEL_SWITCH, ax)
    mu = 4.0 * nu * nu
    term = np.ones_like(x)
    total = np.ones_like(x)
    for k in range(1, 26):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8 * xl)
        total = total + term
    asymptotic = total / np.sqrt(2 * np.pi * xl)
    out = np.where(small, series, asymptotic)
    out = np.where(np.isinf(ax), 0.0, out)
    if nu == 1:
        out = np.copysign(out, x)
    return np.where(np.isnan(x), np.nan, out)


def _bessel_np(nu):
    def impl(x):
        x = np.asarray(x)
        return _rounded(_bessel_ie64(x.astype(np.float64), nu), x.dtype)

    return impl


# ----------------------------------------------------------------------------------------
# Derivatives, written with lax functions (differentiable again).


def _d_erf(t, x):
    return mul(t, mul(2 / np.sqrt(np.pi), exp(neg(mul(x, x)))))


def _d_erfc(t, x):
    return neg(_d_erf(t, x))


def _d_erf_inv(t, y, x):
    return mul(t, mul(np.sqrt(np.pi) / 2, exp(mul(y, y))))


def _d_lgamma(t, x):
    return mul(t, digamma(x))


def _d_digamma(t, x):
    return mul(t, polygamma(1.0, x))


def _d_polygamma_m(t, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


def _d_polygamma_x(t, m, x):
    return mul(t, polygamma(add(m, 1.0), x))


def _d_zeta_q(t, s, q):
    return mul(t, neg(mul(s, zeta(add(s, 1.0), q))))


def _d_zeta_s(t, s, q):
    return mul(t, zeta_ds(s, q))


def _gamma_log_pdf(a, x):
    """log of the Gamma(a, 1) density at x: (a - 1) log x - x - lgamma(a)."""
    return sub(sub(mul(sub(a, 1.0), log(x)), x), lgamma(a))


def _d_igamma_a(t, a, x):
    return mul(t, igamma_grad_a(a, x))


def _d_igamma_x(t, a, x):
    return mul(t, exp(_gamma_log_pdf(a, x)))


def _d_igammac_a(t, a, x):
    return neg(_d_igamma_a(t, a, x))


def _d_igammac_x(t, a, x):
    return neg(_d_igamma_x(t, a, x))


def _no_second_derivative_in_a(name):
    def rule(t, *args):
        raise NotImplementedError(
            f"Differentiation rule for '{name}' with respect to `a` not implemented: "
            "it would need the second derivative of igamma in `a`. Differentiate with "
            "respect to `x` only, or wrap the function in jax.custom_jvp."
        )

    return rule


def _d_igamma_grad_a_x(t, a, x):
    # d/dx dP/da = d/da (Gamma density) = density * (log x - digamma(a)).
    density = exp(_gamma_log_pdf(a, x))
    return mul(t, mul(density, sub(log(x), digamma(a))))


def _d_random_gamma_grad_x(t, out, a, x):
    # out = -(dP/da) / (dP/dx); d out/dx = -(log x - digamma(a)) - out ((a - 1)/x - 1).
    slope = sub(div(sub(a, 1.0), x), 1.0)
    return mul(t, neg(add(sub(log(x), digamma(a)), mul(out, slope))))


def _d_betainc_ab(t, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _d_betainc_x(t, a, b, x):
    log_beta = sub(add(lgamma(a), lgamma(b)), lgamma(add(a, b)))
    log_density = add(mul(sub(b, 1.0), log1p(neg(x))), mul(sub(a, 1.0), log(x)))
    return mul(t, exp(sub(log_density, log_beta)))


def _d_bessel_i0e(t, y, x):
    return mul(t, sub(bessel_i1e(x), mul(sign(x), y)))


def _d_bessel_i1e(t, y, x):
    eps = float(np.finfo(np.dtype(x.dtype)).eps)
    not_tiny = gt(abs(x), eps)
    safe_x = select(not_tiny, x, full_of(x, eps))
    slope = sub(bessel_i0e(safe_x), mul(y, add(sign(safe_x), div(1.0, safe_x))))
    return mul(t, select(not_tiny, slope, full_of(x, 0.5)))


# ----------------------------------------------------------------------------------------
# Registration: one block per primitive.

erf_p = Primitive("erf")
defunary(erf_p, _quiet(_erf_np), FLOAT)
xla_float32.use_exact_kernel(erf_p, "erf")  # eager, small float32 arrays: XLA's bits
lowering_rules[erf_p] = xla_float32_fast.fast_lowering(
    xla_float32_fast.erf, _quiet(_erf_np)
)
native_rules[erf_p] = "erf"  # XLA's polynomial inline (backend/native/xla_math.py)
ad.defjvp(erf_p, _d_erf)
batching.defvectorized(erf_p)

erfc_p = Primitive("erfc")
defunary(erfc_p, _quiet(_erfc_np), FLOAT)
ad.defjvp(erfc_p, _d_erfc)
batching.defvectorized(erfc_p)

erf_inv_p = Primitive("erf_inv")
defunary(erf_inv_p, _quiet(_erf_inv_np), FLOAT)
xla_float32.use_exact_kernel(erf_inv_p, "erf_inv")
lowering_rules[erf_inv_p] = xla_float32_fast.fast_lowering(
    xla_float32_fast.erf_inv, _quiet(_erf_inv_np)
)
native_rules[erf_inv_p] = "erf_inv"  # float32 only
ad.defjvp_with_output(erf_inv_p, _d_erf_inv)
batching.defvectorized(erf_inv_p)

lgamma_p = Primitive("lgamma")
defunary(lgamma_p, _quiet(_lgamma_np), FLOAT)
ad.defjvp(lgamma_p, _d_lgamma)
batching.defvectorized(lgamma_p)

digamma_p = Primitive("digamma")
defunary(digamma_p, _quiet(_digamma_np), FLOAT)
ad.defjvp(digamma_p, _d_digamma)
batching.defvectorized(digamma_p)

polygamma_p = Primitive("polygamma")
defbinary(polygamma_p, _quiet(_polygamma_np), FLOAT)
ad.defjvp(polygamma_p, _d_polygamma_m, _d_polygamma_x)
batching.defbroadcasting(polygamma_p)

zeta_p = Primitive("zeta")
defbinary(zeta_p, _quiet(_zeta_np), FLOAT)
ad.defjvp(zeta_p, _d_zeta_s, _d_zeta_q)
batching.defbroadcasting(zeta_p)

igamma_p = Primitive("igamma")
defbinary(igamma_p, _quiet(_igamma_kernel("p")), FLOAT)
ad.defjvp(igamma_p, _d_igamma_a, _d_igamma_x)
batching.defbroadcasting(igamma_p)

igammac_p = Primitive("igammac")
defbinary(igammac_p, _quiet(_igamma_kernel("q")), FLOAT)
ad.defjvp(igammac_p, _d_igammac_a, _d_igammac_x)
batching.defbroadcasting(igammac_p)

igamma_grad_a_p = Primitive("igamma_grad_a")
defbinary(igamma_grad_a_p, _quiet(_igamma_kernel("grad_a")), FLOAT)
ad.defjvp(
    igamma_grad_a_p, _no_second_derivative_in_a("igamma_grad_a"), _d_igamma_grad_a_x
)
batching.defbroadcasting(igamma_grad_a_p)

random_gamma_grad_p = Primitive("random_gamma_grad")
defbinary(random_gamma_grad_p, _quiet(_igamma_kernel("sample_grad")), FLOAT)
ad.defjvp_with_output(
    random_gamma_grad_p,
    _no_second_derivative_in_a("random_gamma_grad"),
    _d_random_gamma_grad_x,
)
batching.defbroadcasting(random_gamma_grad_p)

regularized_incomplete_beta_p = Primitive("regularized_incomplete_beta")
defbinary(regularized_incomplete_beta_p, _quiet(_betainc_np), FLOAT)
ad.defjvp(regularized_incomplete_beta_p, _d_betainc_ab, _d_betainc_ab, _d_betainc_x)
batching.defbroadcasting(regularized_incomplete_beta_p)

bessel_i0e_p = Primitive("bessel_i0e")
defunary(bessel_i0e_p, _quiet(_bessel_np(0)), FLOAT)
ad.defjvp_with_output(bessel_i0e_p, _d_bessel_i0e)
batching.defvectorized(bessel_i0e_p)

bessel_i1e_p = Primitive("bessel_i1e")
defunary(bessel_i1e_p, _quiet(_bessel_np(1)), FLOAT)
ad.defjvp_with_output(bessel_i1e_p, _d_bessel_i1e)
batching.defvectorized(bessel_i1e_p)


def _positional_checks(abstract):
    """JAX's checks of n-ary special functions, in JAX's order: each operand's dtype
    by position, then that they share one dtype; then the shapes (`abstract`)."""

    def checked(*avals, **params):
        name = _JAX_NAMES.get(checked.prim_name, checked.prim_name)
        for i, aval in enumerate(avals):
            if not dtypes.issubdtype(aval.dtype, np.floating):
                raise TypeError(
                    f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                    f"Accepted dtypes at position {i} are subtypes of floating."
                )
        if len({aval.dtype for aval in avals}) > 1:
            got = ", ".join(aval.dtype.name for aval in avals)
            raise TypeError(
                f"lax.{name} requires arguments to have the same dtypes, got {got}."
            )
        return abstract(*avals, **params)

    return checked


_JAX_NAMES = {"regularized_incomplete_beta": "regularized_incomplete_beta"}
for _prim in (
    polygamma_p,
    zeta_p,
    igamma_p,
    igammac_p,
    igamma_grad_a_p,
    random_gamma_grad_p,
    regularized_incomplete_beta_p,
):
    abstract_eval_rules[_prim] = _positional_checks(abstract_eval_rules[_prim])
    abstract_eval_rules[_prim].prim_name = _prim.name


# ----------------------------------------------------------------------------------------
# Public lax functions


def _bind(prim, *args):
    """Bind with lax's operand rules: Python scalars take their own default dtype
    (weakly), so `igamma(x, 2)` with a float x is an error, as in JAX."""
    return prim.bind(*(operand(a) for a in args))


def erf(x):
    """Elementwise error function."""
    return _bind(erf_p, x)


def erfc(x):
    """Elementwise complementary error function, 1 - erf(x)."""
    return _bind(erfc_p, x)


def erf_inv(x):
    """Elementwise inverse of the error function."""
    return _bind(erf_inv_p, x)


def lgamma(x):
    """Elementwise log of the absolute value of the gamma function."""
    return _bind(lgamma_p, x)


def digamma(x):
    """Elementwise digamma function, the derivative of lgamma."""
    return _bind(digamma_p, x)


def polygamma(m, x):
    """Elementwise polygamma: the m-th derivative of digamma (m a whole number)."""
    return _bind(polygamma_p, m, x)


def zeta(x, q):
    """Elementwise Hurwitz zeta function: sum over k >= 0 of (q + k)**-x."""
    return _bind(zeta_p, x, q)


def igamma(a, x):
    """Elementwise regularized lower incomplete gamma function P(a, x)."""
    return _bind(igamma_p, a, x)


def igammac(a, x):
    """Elementwise regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _bind(igammac_p, a, x)


def igamma_grad_a(a, x):
    """Elementwise derivative of igamma(a, x) with respect to a."""
    return _bind(igamma_grad_a_p, a, x)


def random_gamma_grad(a, x):
    """Elementwise derivative of a Gamma(a, 1) sample x with respect to a, at a fixed
    value of the CDF: -(d igamma / da) / (d igamma / dx)."""
    return _bind(random_gamma_grad_p, a, x)


def betainc(a, b, x):
    """Elementwise regularized incomplete beta function I_x(a, b)."""
    return _bind(regularized_incomplete_beta_p, a, b, x)


def bessel_i0e(x):
    """Elementwise exponentially scaled modified Bessel function of order 0."""
    return _bind(bessel_i0e_p, x)


def bessel_i1e(x):
    """Elementwise exponentially scaled modified Bessel function of order 1."""
    return _bind(bessel_i1e_p, x)


# ----------------------------------------------------------------------------------------
# d zeta(s, q) / ds, with lax functions: Euler-Maclaurin as above with a fixed shift
# of 12 terms and 8 Bernoulli terms (accurate for q > 0), differentiated in s.

_DS_SHIFT = 12
_DS_TERMS = 8


def zeta_ds(s, q):
    """The derivative of the Hurwitz zeta function in its exponent:
    -sum_k log(q + k) (q + k)**-s."""
    s, q = lax_operands(s, q)
    total = None
    for k in range(_DS_SHIFT):
        base = add(q, float(k))
        term = neg(mul(log(base), exp(neg(mul(s, log(base))))))
        total = term if total is None else add(total, term)
    a = add(q, float(_DS_SHIFT))
    log_a = log(a)
    w = exp(neg(mul(s, log_a)))  # a**-s
    s1 = sub(s, 1.0)
    # d/ds [a**(1-s) / (s-1) + a**-s / 2]
    integral = neg(mul(mul(a, w), add(div(log_a, s1), integer_pow(s1, -2))))
    total = add(total, add(integral, mul(-0.5, mul(log_a, w))))
    rising = s  # R_j(s) = s (s+1) ... (s+2j-2)
    d_rising = full_of(s, 1.0)  # R_j'(s)
    power = div(w, a)  # a**(-s-2j+1)
    for j, coeff in enumerate(_EM_COEFFS[:_DS_TERMS], start=1):
        deriv = sub(d_rising, mul(rising, log_a))
        total = add(total, mul(coeff, mul(deriv, power)))
        for shift in (2 * j - 1, 2 * j):
            factor = add(s, float(shift))
            d_rising = add(mul(d_rising, factor), rising)
            rising = mul(rising, factor)
        power = div(power, mul(a, a))
    return total
