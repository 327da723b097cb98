"""jaxlite.scipy.special: SciPy's special functions on jaxlite arrays (jax.scipy.special).

Each function promotes its arguments as JAX does (integers to the default float, weak
Python scalars kept weak) and is written with lax primitives and jnp functions, so it
traces, batches and differentiates like any other code. The heavy numerics are the
primitives of `lax/special.py`; this module adds the identities on top of them. Where a
function's straightforward derivative is wrong or NaN at a boundary (xlogy at x = 0,
log_ndtr in the far tail, logsumexp's maximum) it carries a `custom_jvp`, as in JAX.
"""

from __future__ import annotations

import functools
import math
import operator
from fractions import Fraction

import numpy as np

from jaxlite import dtypes, lax
from jaxlite.core import concrete_or_error
from jaxlite.eager_jit import eager_jit
from jaxlite.lax import special_scipy as _scipy_kernels
from jaxlite.lax.custom_derivatives import custom_jvp
from jaxlite.lax.rules import FLOAT, check_dtype
from jaxlite.numpy import ufuncs as _ufuncs
from jaxlite.numpy.ufuncs import promote_args_inexact
from jaxlite.scipy.special_complex import complex_gamma, complex_loggamma

__all__ = [
    "bernoulli",
    "bessel_jn",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp1",
    "expi",
    "expit",
    "expn",
    "factorial",
    "fresnel",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "hyp1f1",
    "hyp2f1",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "owens_t",
    "poch",
    "polygamma",
    "rel_entr",
    "sici",
    "softmax",
    "spence",
    "sph_harm_y",
    "wofz",
    "xlog1py",
    "xlogy",
    "zeta",
]

_where = _ufuncs.where


def _const(x, value):
    """`value` as a scalar of x's dtype, weak only when `x` is a weak scalar (as JAX's
    constants: a weak array meets strong constants, so results lose the weak type)."""
    if np.ndim(x) == 0 and dtypes.is_weakly_typed(x):
        return lax.full_like(x, value, shape=())
    return lax.full((), value, dtypes.dtype(x))


def _full(x, value):
    return lax.full_like(x, value)


def _real_only(name, *args):
    for a in args:
        if dtypes.issubdtype(a.dtype, np.complexfloating):
            raise ValueError(f"{name} does not support complex-valued inputs.")


def _float_only(name, x):
    """ndtr, ndtri, log_ndtr and spence accept float32 and float64 arrays only."""
    from jaxlite import numpy as jnp

    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        see = "." if name == "log_ndtr" else ", see docstring for supported types."
        raise TypeError(
            f"x.dtype={x.dtype} is not supported{see} ({name} accepts float32 and "
            "float64 arrays.)"
        )
    return x


def _strong(x):
    """`x` without its weak type: where JAX's implementation mixes in constants of a
    fixed dtype, its result is strongly typed even for Python scalar inputs."""
    return lax.convert_element_type(x, dtypes.dtype(x))


# ----------------------------------------------------------------------------------------
# The gamma family


def gammaln(x):
    """Log of the absolute value of the gamma function."""
    (x,) = promote_args_inexact("gammaln", x)
    return lax.lgamma(x)


def gammasgn(x):
    """The sign of the gamma function (NaN at its poles and at NaN)."""
    (x,) = promote_args_inexact("gammasgn", x)
    _real_only("gammasgn", x)
    floor_x = lax.floor(x)
    negative = lax.lt(x, _const(x, 0))
    pole = (negative & lax.eq(x, floor_x)) | _ufuncs.isnan(x)
    odd = lax.ne(_ufuncs.remainder(floor_x, _const(x, 2)), _const(x, 0))
    minus = (negative & odd) | (lax.eq(x, _const(x, 0)) & _ufuncs.signbit(x))
    out = _where(minus, _full(x, -1), _full(x, 1))
    return _strong(_where(pole, _full(x, np.nan), out))


def gamma(x):
    """The gamma function, for real and complex arguments."""
    (x,) = promote_args_inexact("gamma", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return complex_gamma(x)
    return lax.mul(gammasgn(x), lax.exp(lax.lgamma(x)))


def loggamma(x):
    """The principal branch of log(gamma(x)); for real x, NaN where x <= 0."""
    (x,) = promote_args_inexact("loggamma", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return complex_loggamma(x)
    return _where(lax.gt(x, _const(x, 0)), lax.lgamma(x), _full(x, np.nan))


def digamma(x):
    """The digamma function, the derivative of gammaln."""
    (x,) = promote_args_inexact("digamma", x)
    return lax.digamma(x)


def polygamma(n, x):
    """The n-th derivative of digamma; `n` must have an integer dtype."""
    if not dtypes.issubdtype(dtypes.result_type(n), np.integer):
        raise ValueError(
            "Argument `n` to polygamma must be of integer type. Got dtype "
            f"{dtypes.result_type(n)}."
        )
    n, x = promote_args_inexact("polygamma", n, x)
    _real_only("polygamma", x)
    return lax.polygamma(n, x)


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (q + k)**-x (q is required)."""
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the "
            "Hurwitz Zeta function."
        )
    x, q = promote_args_inexact("zeta", x, q)
    return lax.zeta(x, q)


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x)."""
    a, x = promote_args_inexact("gammainc", a, x)
    return lax.igamma(a, x)


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return lax.igammac(a, x)


def _stirling_remainder(z):
    """lgamma(z) - ((z - 1/2) log z - z + log(2 pi)/2) = sum_k B_2k / (2k (2k-1)
    z**(2k-1)), for z >= 8."""
    inv = lax.div(_const(z, 1), z)
    inv2 = lax.mul(inv, inv)
    total = _full(z, 0)
    for k in range(8, 0, -1):
        coeff = float(_BERNOULLI[2 * k] / (2 * k * (2 * k - 1)))
        total = lax.add(lax.mul(total, inv2), _const(z, coeff))
    return lax.mul(total, inv)


def _betaln(a, b):
    """log |B(a, b)|: lgamma differences, or Stirling's series when both a and b are
    at least 8 (the differences of large lgammas would lose digits)."""
    large = lax.ge(lax.min(a, b), _const(a, 8))
    sa, sb = _where(large, a, _full(a, 8)), _where(large, b, _full(b, 8))
    s = lax.add(sa, sb)
    half = _const(a, 0.5)
    stirling = lax.add(
        lax.add(
            lax.mul(lax.sub(sa, half), lax.log(lax.div(sa, s))),
            lax.mul(lax.sub(sb, half), lax.log(lax.div(sb, s))),
        ),
        lax.add(
            lax.mul(_const(a, -0.5), lax.log(lax.div(s, _const(a, 2 * np.pi)))),
            lax.sub(
                lax.add(_stirling_remainder(sa), _stirling_remainder(sb)),
                _stirling_remainder(s),
            ),
        ),
    )
    direct = lax.sub(lax.add(lax.lgamma(a), lax.lgamma(b)), lax.lgamma(lax.add(a, b)))
    return _where(large, stirling, direct)


def betaln(a, b):
    """Log of the absolute value of the beta function."""
    a, b = promote_args_inexact("betaln", a, b)
    check_dtype("lgamma", a.dtype, FLOAT)
    return _betaln(a, b)


def beta(a, b):
    """The beta function gamma(a) gamma(b) / gamma(a + b)."""
    a, b = promote_args_inexact("beta", a, b)
    _real_only("beta", a)
    sign = lax.mul(lax.mul(gammasgn(a), gammasgn(b)), gammasgn(lax.add(a, b)))
    return lax.mul(sign, lax.exp(_betaln(a, b)))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    _real_only("betainc", x)
    return lax.betainc(a, b, x)


def factorial(n, exact=False):
    """n! = gamma(n + 1) for real n, and 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_args_inexact("factorial", n)
    value = lax.exp(lax.lgamma(lax.add(n, _const(n, 1))))
    return _where(lax.lt(n, _const(n, 0)), _full(n, 0), value)


def comb(N, k, *, repetition=False):  # noqa: N803  (SciPy's name)
    """N choose k from log-gammas; 0 where k < 0, N < 0 or (without repetition) k > N."""
    N, k = promote_args_inexact("comb", N, k)  # noqa: N806
    check_dtype("lgamma", N.dtype, FLOAT)
    if repetition:
        value = comb(lax.sub(lax.add(N, k), _const(N, 1)), k)
        first = lax.eq(k, _const(k, 0)) & lax.ge(N, _const(N, 0))
        return _where(first, _full(value, 1), value)
    ok = lax.le(k, N) & lax.ge(N, _const(N, 0)) & lax.ge(k, _const(k, 0))
    safe_n, safe_k = _where(ok, N, _full(N, 0)), _where(ok, k, _full(k, 0))
    one = _const(N, 1)
    log_value = lax.sub(
        lax.sub(lax.lgamma(lax.add(safe_n, one)), lax.lgamma(lax.add(safe_k, one))),
        lax.lgamma(lax.add(lax.sub(safe_n, safe_k), one)),
    )
    return _where(ok, lax.exp(log_value), _full(log_value, 0))


def multigammaln(a, d):
    """The log of the multivariate gamma function of dimension d (a Python int)."""
    from jaxlite import numpy as jnp

    d = concrete_or_error(int, d, "d argument of multigammaln")
    a, d_ = promote_args_inexact("multigammaln", a, d)
    constant = lax.mul(
        lax.mul(lax.mul(_const(a, 0.25), d_), lax.sub(d_, _const(a, 1))),
        _const(a, math.log(math.pi)),
    )
    shifts = jnp.arange(d, dtype=a.dtype) / 2
    terms = gammaln(jnp.expand_dims(a, -1) - shifts)
    return lax.add(jnp.sum(terms, axis=-1), constant)


@custom_jvp
def poch(z, m):
    """The rising factorial (Pochhammer symbol) gamma(z + m) / gamma(z)."""
    z, m = promote_args_inexact("poch", z, m)
    _real_only("jnp.poch", z)
    zm = lax.add(z, m)
    sign = lax.mul(gammasgn(zm), gammasgn(z))
    value = lax.mul(sign, lax.exp(lax.sub(lax.lgamma(zm), lax.lgamma(z))))
    return _where(lax.eq(m, _const(m, 0)), _full(value, 1), value)


def _poch_jvp(primals, tangents):
    z, m = primals
    z_dot, m_dot = tangents
    out = poch(z, m)
    psi_zm = lax.digamma(lax.add(z, m))
    d_z = lax.mul(lax.sub(psi_zm, lax.digamma(z)), out)
    d_m = lax.mul(psi_zm, out)
    return out, d_z * z_dot + d_m * m_dot


poch.defjvp(_poch_jvp)


# ----------------------------------------------------------------------------------------
# Error function and the normal distribution


def erf(x):
    """The error function."""
    (x,) = promote_args_inexact("erf", x)
    return lax.erf(x)


def erfc(x):
    """The complementary error function 1 - erf(x)."""
    (x,) = promote_args_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x):
    """The inverse of the error function."""
    (x,) = promote_args_inexact("erfinv", x)
    return lax.erf_inv(x)


def erfcx(x):
    """The scaled complementary error function exp(x**2) erfc(x)."""
    (x,) = promote_args_inexact("erfcx", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return wofz(lax.complex(lax.neg(lax.imag(x)), lax.real(x)))  # w(i x)
    return _strong(_erfcx(x))


@custom_jvp
def _erfcx(x):
    # Beyond `switch`, erfc underflows: use the asymptotic series
    # erfcx(x) ~ 1/(x sqrt(pi)) sum_k (-1)**k (2k-1)!! / (2x**2)**k.
    switch = 25.0 if x.dtype == np.float64 else 8.0
    large = lax.gt(x, _const(x, switch))
    xs = _where(large, _full(x, 0), x)
    direct = lax.mul(lax.exp(lax.mul(xs, xs)), lax.erfc(xs))
    xl = _where(large, x, _full(x, 2 * switch))
    inv = lax.div(_const(x, 1), lax.mul(_const(x, 2), lax.mul(xl, xl)))
    total, term = _full(x, 1), _full(x, 1)
    for k in range(1, 12):
        term = lax.mul(term, lax.mul(inv, _const(x, -(2 * k - 1))))
        total = lax.add(total, term)
    series = lax.div(total, lax.mul(xl, _const(x, math.sqrt(math.pi))))
    return _where(large, series, direct)


def _erfcx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = _erfcx(x)
    slope = lax.sub(
        lax.mul(lax.mul(_const(x, 2), x), out), _const(x, 2 / np.sqrt(np.pi))
    )
    return out, lax.mul(t, slope)


_erfcx.defjvp(_erfcx_jvp)


def ndtr(x):
    """The standard normal CDF, 0.5 erfc(-x / sqrt(2)) (accurate in both tails)."""
    x = _float_only("ndtr", x)
    return _strong(_ndtr(x))


def _ndtr(x):
    return lax.mul(_const(x, 0.5), lax.erfc(lax.mul(x, _const(x, -np.sqrt(0.5)))))


def _norm_logpdf(x):
    return lax.sub(
        lax.mul(_const(x, -0.5), lax.mul(x, x)), _const(x, 0.5 * np.log(2 * np.pi))
    )


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _log_ndtr(x, series_order):
    # Above 0: log1p(-ndtr(-x)) (ndtr(x) is near 1 there); between: log(ndtr(x));
    # below `lower`, where ndtr underflows: the asymptotic series of log ndtr with
    # `series_order` terms.
    lower, upper = (-37.0, 0.0) if x.dtype == np.float64 else (-12.0, 0.0)
    above = lax.gt(x, _const(x, upper))
    below = lax.lt(x, _const(x, lower))
    safe = _where(above | below, _full(x, 0), x)
    middle = lax.log(_ndtr(safe))
    xa = _where(above, x, _full(x, upper + 1))
    upper_tail = lax.log1p(lax.neg(_ndtr(lax.neg(xa))))
    xb = _where(below, x, _full(x, lower - 1))
    inv = lax.div(_const(x, 1), lax.mul(xb, xb))
    total, term = _full(x, 1), _full(x, 1)
    for k in range(1, series_order + 1):
        term = lax.mul(term, lax.mul(inv, _const(x, -(2 * k - 1))))
        total = lax.add(total, term)
    lower_tail = lax.add(
        lax.sub(_norm_logpdf(xb), lax.log(lax.neg(xb))), lax.log(total)
    )
    return _where(above, upper_tail, _where(below, lower_tail, middle))


def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    out = _log_ndtr(x, series_order)
    return out, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), out)))


_log_ndtr.defjvp(_log_ndtr_jvp)


def log_ndtr(x, series_order=3):
    """log of the standard normal CDF, accurate far into both tails."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = _float_only("log_ndtr", x)
    return _strong(_log_ndtr(x, series_order))


@custom_jvp
def _ndtri(p):
    # Lower half q = min(p, 1 - p): a start from erf_inv (or, for tiny q, from the
    # tail asymptotics), then Newton steps on log ndtr(y) = log q, which converge
    # from either side and stay accurate in the far tail.
    half = _const(p, 0.5)
    upper = lax.gt(p, half)
    q = _where(upper, lax.sub(_const(p, 1), p), p)
    ok = lax.gt(q, _const(p, 0)) & lax.le(q, half)
    q = _where(ok, q, _full(p, 0.25))
    log_q = lax.log(q)
    # Below `switch`, 2q - 1 rounds too close to -1 for erf_inv to give a good start.
    switch = 1e-10 if p.dtype == np.float64 else 1e-5
    tiny = lax.lt(q, _const(p, switch))
    start = lax.mul(
        _const(p, np.sqrt(2)),
        lax.erf_inv(
            lax.sub(lax.mul(_const(p, 2), _where(tiny, half, q)), _const(p, 1))
        ),
    )
    t2 = lax.mul(_const(p, -2), log_q)
    asymptotic = lax.neg(
        lax.sqrt(lax.sub(lax.sub(t2, lax.log(t2)), _const(p, np.log(2 * np.pi))))
    )
    y = _where(tiny, asymptotic, start)
    for _ in range(3 if p.dtype == np.float64 else 2):
        log_cdf = _log_ndtr(y, 8)
        step = lax.mul(
            lax.sub(log_cdf, log_q), lax.exp(lax.sub(log_cdf, _norm_logpdf(y)))
        )
        y = lax.sub(y, step)
    y = _where(upper, lax.neg(y), y)
    y = _where(lax.eq(p, half), _full(p, 0), y)
    y = _where(lax.eq(p, _const(p, 0)), _full(p, -np.inf), y)
    y = _where(lax.eq(p, _const(p, 1)), _full(p, np.inf), y)
    bad = lax.lt(p, _const(p, 0)) | lax.gt(p, _const(p, 1)) | _ufuncs.isnan(p)
    return _where(bad, _full(p, np.nan), y)


def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    y = _ndtri(p)
    return y, lax.mul(t, lax.exp(lax.neg(_norm_logpdf(y))))


_ndtri.defjvp(_ndtri_jvp)


def ndtri(p):
    """The inverse of ndtr: the standard normal quantile function."""
    p = _float_only("ndtri", p)
    return _strong(_ndtri(p))


# ----------------------------------------------------------------------------------------
# Logistic, entropies and x log y


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    (x,) = promote_args_inexact("expit", x)
    return lax.logistic(x)


@custom_jvp
def logit(x):
    """The inverse of expit: log(x / (1 - x))."""
    (x,) = promote_args_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_const(x, 1), x)))


logit.defjvps(lambda t, out, x: lax.div(t, lax.mul(x, lax.sub(_const(x, 1), x))))


@custom_jvp
def xlogy(x, y):
    """x * log(y), and 0 where x = 0 (unless y is NaN)."""
    x, y = promote_args_inexact("xlogy", x, y)
    keep = lax.ne(x, _const(x, 0)) | _ufuncs.isnan(y)
    return _where(keep, _ufuncs.multiply(x, lax.log(y)), _full(x, 0))


def _xlogy_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = xlogy(x, y)
    t = x_dot * _ufuncs.log(y) + y_dot * x / y
    return out, lax.convert_element_type(t, out.dtype)


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x, y):
    """x * log1p(y), and 0 where x = 0 (unless y is NaN)."""
    x, y = promote_args_inexact("xlog1py", x, y)
    keep = lax.ne(x, _const(x, 0)) | _ufuncs.isnan(y)
    return _where(keep, _ufuncs.multiply(x, lax.log1p(y)), _full(x, 0))


def _xlog1py_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = xlog1py(x, y)
    t = x_dot * _ufuncs.log1p(y) + y_dot * x / (1 + y)
    return out, lax.convert_element_type(t, out.dtype)


xlog1py.defjvp(_xlog1py_jvp)


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


def _xlogx_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (_ufuncs.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x):
    """Elementwise entropy -x log x (0 at 0, -inf for x < 0)."""
    (x,) = promote_args_inexact("entr", x)
    _real_only("entr", x)
    negative = lax.lt(x, _const(x, 0))
    return lax.select(negative, _full(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
    """Elementwise relative entropy p log(p / q) (0 at p = 0, inf where undefined)."""
    p, q = promote_args_inexact("rel_entr", p, q)
    _real_only("rel_entr", p)
    zero = _const(p, 0)
    both_positive = lax.gt(p, zero) & lax.gt(q, zero)
    p_zero = lax.eq(p, zero) & lax.ge(q, zero)
    safe_p = _where(both_positive, p, _full(p, 1))
    safe_q = _where(both_positive, q, _full(q, 1))
    value = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    other = _where(p_zero, _full(value, 0), _full(value, np.inf))
    return _where(both_positive, value, other)


def kl_div(p, q):
    """Elementwise Kullback-Leibler divergence p log(p / q) - p + q."""
    p, q = promote_args_inexact("kl_div", p, q)
    _real_only("kl_div", p)
    return lax.add(lax.sub(rel_entr(p, q), p), q)


def boxcox(x, lmbda):
    """The Box-Cox transformation (x**lmbda - 1) / lmbda, log(x) at lmbda = 0."""
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    return _boxcox(lax.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transformation of 1 + x."""
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    return _boxcox(lax.log1p(x), lmbda)


def _boxcox(log_x, lmbda):
    zero = lax.eq(lmbda, _const(lmbda, 0))
    safe = _where(zero, _full(lmbda, 1), lmbda)
    return _where(zero, log_x, _ufuncs.expm1(safe * log_x) / safe)


# ----------------------------------------------------------------------------------------
# Bessel functions


def i0e(x):
    """The exponentially scaled modified Bessel function of order 0."""
    (x,) = promote_args_inexact("i0e", x)
    return lax.bessel_i0e(x)


def i0(x):
    """The modified Bessel function of order 0."""
    (x,) = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1e(x):
    """The exponentially scaled modified Bessel function of order 1."""
    (x,) = promote_args_inexact("i1e", x)
    return lax.bessel_i1e(x)


def i1(x):
    """The modified Bessel function of order 1."""
    (x,) = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


# ----------------------------------------------------------------------------------------
# Exponential integrals and the dilogarithm


@custom_jvp
def _exp1(x):
    # x <= 1: E1 = -gamma - log x - sum_k (-x)**k / (k k!); beyond: the continued
    # fraction e**-x / (x + 1 - 1 / (x + 3 - 4 / (x + 5 - ...))), evaluated backwards.
    small = lax.le(x, _const(x, 1))
    xs = _where(small, x, _full(x, 0.5))
    total, term = _full(x, 0), _full(x, 1)
    for k in range(1, 25):
        term = lax.mul(term, lax.div(lax.neg(xs), _const(x, k)))
        total = lax.add(total, lax.div(term, _const(x, k)))
    series = lax.sub(lax.sub(_const(x, -np.euler_gamma), lax.log(xs)), total)
    xl = _where(small, _full(x, 2), x)
    frac = lax.add(xl, _const(x, 2 * 60 + 1))
    for k in range(60, 0, -1):
        frac = lax.sub(
            lax.add(xl, _const(x, 2 * k - 1)), lax.div(_const(x, k * k), frac)
        )
    cf = lax.div(lax.exp(lax.neg(xl)), frac)
    out = _where(small, series, cf)
    out = _where(lax.eq(x, _const(x, 0)), _full(x, np.inf), out)
    return _where(lax.lt(x, _const(x, 0)) | _ufuncs.isnan(x), _full(x, np.nan), out)


_exp1.defjvps(lambda t, out, x: lax.mul(t, lax.neg(lax.div(lax.exp(lax.neg(x)), x))))


def exp1(x):
    """The exponential integral E1(x) = int_1^inf e**(-x t) / t dt, for x >= 0."""
    (x,) = promote_args_inexact("exp1", x)
    _real_only("exp1", x)
    return _strong(_exp1(x))


@custom_jvp
def _expi(x):
    # x < 0: -E1(-x). 0 < x <= 40: gamma + log x + sum_k x**k / (k k!) (positive terms).
    # x > 40: the asymptotic series e**x / x sum_k k! / x**k.
    negative = lax.lt(x, _const(x, 0))
    big = lax.gt(x, _const(x, 40))
    xn = _where(negative, lax.neg(x), _full(x, 1))
    from_e1 = lax.neg(_exp1(xn))
    xs = _where(negative | big, _full(x, 1), x)
    total, term = _full(x, 0), _full(x, 1)
    for k in range(1, 100):
        term = lax.mul(term, lax.div(xs, _const(x, k)))
        total = lax.add(total, lax.div(term, _const(x, k)))
    series = lax.add(lax.add(_const(x, np.euler_gamma), lax.log(xs)), total)
    xl = _where(big, x, _full(x, 50))
    acc, term = _full(x, 1), _full(x, 1)
    for k in range(1, 30):
        term = lax.mul(term, lax.div(_const(x, k), xl))
        acc = lax.add(acc, term)
    asymptotic = lax.mul(lax.div(lax.exp(xl), xl), acc)
    out = _where(negative, from_e1, _where(big, asymptotic, series))
    return _where(lax.eq(x, _const(x, 0)), _full(x, -np.inf), out)


_expi.defjvps(lambda t, out, x: lax.mul(t, lax.div(lax.exp(x), x)))


def expi(x):
    """The exponential integral Ei(x) (principal value); -E1(-x) for x < 0."""
    (x,) = promote_args_inexact("expi", x)
    _real_only("expi", x)
    return _strong(_expi(x))


def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf e**(-x t) / t**n dt,
    for a whole number n >= 0 (upward recurrence from E1, or the continued fraction
    when x is small relative to n, where the recurrence would lose digits)."""
    n, x = promote_args_inexact("expn", n, x)
    _real_only("expn", x)
    return _strong(_expn(n, x))


@custom_jvp
def _expn(n, x):
    from jaxlite import numpy as jnp

    n, x = jnp.broadcast_arrays(n, x)
    e1 = _exp1(_where(lax.gt(x, _const(x, 0)), x, _full(x, 1)))
    exp_x = lax.exp(lax.neg(x))
    # Continued fraction (Numerical Recipes' expint), good for x > 1 and any n.
    xl = _where(lax.gt(x, _const(x, 0)), x, _full(x, 1))
    frac = lax.add(xl, lax.add(n, _const(x, 2 * 60)))
    for k in range(60, 0, -1):
        frac = lax.sub(
            lax.add(xl, lax.add(n, _const(x, 2 * k - 2))),
            lax.div(lax.mul(_const(x, k), lax.add(n, _const(x, k - 1))), frac),
        )
    cf = lax.div(exp_x, frac)
    # Series for x <= 1: E_n = (-x)**(n-1)/(n-1)! (psi(n) - log x) - sum_{k != n-1}
    # (-x)**k / ((k - n + 1) k!).
    xs = _where(lax.gt(x, _const(x, 0)), x, _full(x, 1))
    nm1 = lax.sub(n, _const(x, 1))
    total, term = _full(x, 0), _full(x, 1)
    power_term = _full(x, 0)
    for k in range(0, 40):
        if k > 0:
            term = lax.mul(term, lax.div(lax.neg(xs), _const(x, k)))
        is_pole = lax.eq(nm1, _const(x, k))
        denom = _where(is_pole, _full(x, 1), lax.sub(_const(x, k), nm1))
        total = lax.add(total, _where(is_pole, _full(x, 0), lax.div(term, denom)))
        power_term = _where(is_pole, term, power_term)
    psi_n = lax.digamma(_where(lax.ge(n, _const(x, 1)), n, _full(x, 1)))
    series = lax.sub(lax.mul(power_term, lax.sub(psi_n, lax.log(xs))), total)
    out = _where(lax.le(x, _const(x, 1)), series, cf)
    out = _where(lax.eq(n, _const(x, 1)), e1, out)
    out = _where(lax.eq(n, _const(x, 0)), lax.div(exp_x, x), out)
    at_zero = _where(
        lax.ge(n, _const(x, 2)), lax.div(_const(x, 1), nm1), _full(x, np.inf)
    )
    out = _where(lax.eq(x, _const(x, 0)), at_zero, out)
    bad = (
        lax.lt(n, _const(x, 0))
        | lax.lt(x, _const(x, 0))
        | lax.ne(n, lax.floor(n))
        | _ufuncs.isnan(x)
    )
    return _where(bad, _full(x, np.nan), out)


def _expn_jvp(primals, tangents):
    n, x = primals
    _, x_dot = tangents
    out = _expn(n, x)
    return out, lax.neg(_expn(lax.sub(n, _const(n, 1)), x)) * x_dot


_expn.defjvp(_expn_jvp)


def _li2_small(w):
    """Li2(w) for |w| <= 1/2 by the Bernoulli series in u = -log(1 - w):
    Li2 = sum_n B_n u**(n+1) / (n+1)! = u - u**2/4 + sum_k B_2k u**(2k+1) / (2k+1)!."""
    u = lax.neg(lax.log1p(lax.neg(w)))
    u2 = lax.mul(u, u)
    total = _full(w, 0)
    for k in range(11, 0, -1):
        coeff = float(_BERNOULLI[2 * k] / math.factorial(2 * k + 1))
        total = lax.mul(lax.add(total, _const(w, coeff)), u2)
    return lax.add(lax.sub(u, lax.mul(_const(w, 0.25), u2)), lax.mul(u, total))


@custom_jvp
def _spence(x):
    # spence(x) = Li2(1 - x). Reduce to |w| <= 1/2: x > 2 by x -> 1/x, x < 1/2 by
    # Li2(z) = pi**2/6 - log z log(1 - z) - Li2(1 - z), x > 3/2 by z -> z / (z - 1).
    one = _const(x, 1)
    big = lax.gt(x, _const(x, 2))
    xr = _where(big, lax.div(one, _where(big, x, one)), x)
    low = lax.lt(xr, _const(x, 0.5))
    high = lax.gt(xr, _const(x, 1.5))
    z = lax.sub(one, xr)  # Li2(z) wanted
    safe_low = _where(low & lax.gt(xr, _const(x, 0)), xr, _full(x, 0.25))
    low_val = lax.sub(
        lax.sub(
            _const(x, np.pi**2 / 6),
            lax.mul(lax.log(lax.sub(one, safe_low)), lax.log(safe_low)),
        ),
        _li2_small(safe_low),
    )
    z_high = _where(high, z, _full(x, -0.75))
    w_high = lax.div(z_high, lax.sub(z_high, one))
    log1mz = lax.log1p(lax.neg(z_high))
    high_val = lax.sub(
        lax.neg(_li2_small(w_high)), lax.mul(_const(x, 0.5), lax.mul(log1mz, log1mz))
    )
    mid = _where(low | high, _full(x, 0), z)
    value = _where(low, low_val, _where(high, high_val, _li2_small(mid)))
    log_x = lax.log(_where(big, x, one))
    value = _where(
        big,
        lax.sub(lax.neg(value), lax.mul(_const(x, 0.5), lax.mul(log_x, log_x))),
        value,
    )
    value = _where(lax.eq(x, _const(x, 0)), _full(x, np.pi**2 / 6), value)
    return _where(lax.lt(x, _const(x, 0)) | _ufuncs.isnan(x), _full(x, np.nan), value)


def _spence_slope(x):
    one = _const(x, 1)
    at_one = lax.eq(x, one)
    safe = _where(at_one, _full(x, 2), x)
    return _where(at_one, _full(x, -1), lax.div(lax.log(safe), lax.sub(one, safe)))


_spence.defjvps(lambda t, out, x: lax.mul(t, _spence_slope(x)))


def spence(x):
    """Spence's function, the dilogarithm Li2(1 - x), for x >= 0."""
    x = _float_only("spence", x)
    return _strong(_spence(x))


# ----------------------------------------------------------------------------------------
# Bernoulli numbers


def _bernoulli_exact(n):
    """B_0 .. B_n as Fractions (Akiyama-Tanigawa), with B_1 = -1/2 as SciPy."""
    out = []
    row = []
    for m in range(n + 1):
        row.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        out.append(row[0])
    if n >= 1:
        out[1] = Fraction(-1, 2)
    return out


_BERNOULLI = _bernoulli_exact(30)


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (n a Python int), as a float array."""
    from jaxlite import numpy as jnp

    n = concrete_or_error(operator.index, n, "Argument n of bernoulli")
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    values = _BERNOULLI if n <= 30 else _bernoulli_exact(n)
    return jnp.array(
        [float(b) for b in values[: n + 1]], dtype=dtypes.default_float_dtype()
    )


# ----------------------------------------------------------------------------------------
# logsumexp and softmax


def _reduction_axes(name, axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(
                f"{name}: axis {a} is out of bounds for array of dimension {ndim}"
            )
        out.append(a % ndim)
    return tuple(sorted(set(out)))


@eager_jit
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) along `axis`, computed stably (the maximum, whose gradient
    is not needed, is held constant). With `return_sign` also the sign of the sum;
    without it a negative sum gives NaN."""
    from jaxlite import numpy as jnp

    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact("logsumexp", a, b)
        a_arr = jnp.where(b_arr != 0, a_arr, -np.inf)
    else:
        (a_arr,) = promote_args_inexact("logsumexp", a)
        b_arr = a_arr
    axes = _reduction_axes("logsumexp", axis, a_arr.ndim)
    amax = jnp.max(
        _ufuncs.real(a_arr) if jnp.iscomplexobj(a_arr) else a_arr,
        axis=axes,
        keepdims=keepdims,
        where=where,
        initial=-np.inf,
    )
    amax = lax.stop_gradient(lax.select(_ufuncs.isfinite(amax), amax, _full(amax, 0)))
    amax_kept = amax if keepdims else jnp.expand_dims(amax, axes)
    exp_a = lax.exp(lax.sub(a_arr, amax_kept.astype(a_arr.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = jnp.sum(exp_a, axis=axes, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or not jnp.iscomplexobj(a_arr):
        sumexp = lax.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not jnp.iscomplexobj(out):
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out


@eager_jit
def softmax(x, /, *, axis=None):
    """exp(x) / sum(exp(x)) along `axis` (all axes by default, as SciPy)."""
    (x,) = promote_args_inexact("softmax", x)
    return _softmax_fn(_reduction_axes("softmax", axis, x.ndim))(x)


def _softmax_fn(axes):
    """softmax along `axes` with the derivative y * (x_dot - sum(y * x_dot)), which
    never differentiates through the normalisation (as JAX)."""
    from jaxlite import numpy as jnp

    @custom_jvp
    def fn(x):
        x_max = jnp.max(x, axes, keepdims=True)
        x_max = lax.select(_ufuncs.isfinite(x_max), x_max, _full(x_max, 0))
        unnormalized = jnp.exp(x - lax.stop_gradient(x_max))
        return unnormalized / jnp.sum(unnormalized, axes, keepdims=True)

    def jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        y = fn(x)
        return y, y * (x_dot - jnp.sum(y * x_dot, axes, keepdims=True))

    fn.defjvp(jvp)
    return fn


@eager_jit
def log_softmax(x, /, *, axis=None):
    """x - logsumexp(x) along `axis` (all axes by default, as SciPy)."""
    from jaxlite import numpy as jnp

    (x,) = promote_args_inexact("log_softmax", x)
    axes = _reduction_axes("log_softmax", axis, x.ndim)
    x_max = jnp.max(x, axes, keepdims=True)
    x_max = lax.select(_ufuncs.isfinite(x_max), x_max, _full(x_max, 0))
    shifted = x - lax.stop_gradient(x_max)
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axes, keepdims=True))


# ----------------------------------------------------------------------------------------
# Faddeeva, Fresnel, sine/cosine integrals, Owen's T, hypergeometric and Bessel J: thin
# wrappers of the primitives of lax/special_scipy.py (float64 NumPy kernels).


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz); real inputs become complex."""
    (z,) = promote_args_inexact("wofz", z)
    if not dtypes.issubdtype(z.dtype, np.complexfloating):
        z = lax.convert_element_type(z, np.result_type(z.dtype, np.complex64))
    return _scipy_kernels.wofz_p.bind(z)


def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    (x,) = promote_args_inexact("dawsn", x)
    _real_only("dawsn", x)
    return _strong(_scipy_kernels.dawsn_p.bind(x))


def fresnel(x):
    """The Fresnel integrals `(S(x), C(x))` of sin and cos(pi t^2 / 2) from 0 to x."""
    (x,) = promote_args_inexact("fresnel", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError(
            "Support for complex-valued inputs is not implemented yet."
        )
    return (
        _strong(_scipy_kernels.fresnel_s_p.bind(x)),
        _strong(_scipy_kernels.fresnel_c_p.bind(x)),
    )


def sici(x):
    """The sine and cosine integrals `(Si(x), Ci(x))` (Ci even, -inf at 0)."""
    (x,) = promote_args_inexact("sici", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(
            f"Argument `x` to sici must be real-valued. Got dtype {x.dtype.name}."
        )
    return (
        _strong(_scipy_kernels.sin_integral_p.bind(x)),
        _strong(_scipy_kernels.cos_integral_p.bind(x)),
    )


def owens_t(h, a):
    """Owen's T function: the bivariate normal probability of a wedge."""
    h, a = promote_args_inexact("owens_t", h, a)
    _real_only("owens_t", h)
    return _strong(_scipy_kernels.owens_t_p.bind(h, a))


def hyp1f1(a, b, x):
    """The confluent hypergeometric function 1F1(a; b; x) (derivatives in x only)."""
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    _real_only("hyp1f1", a)
    return _strong(_scipy_kernels.hyp1f1_p.bind(a, b, x))


def hyp2f1(a, b, c, x):
    """The Gauss hypergeometric function 2F1(a, b; c; x) for x < 1 (derivatives in x
    only); NaN for x > 1."""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    _real_only("hyp2f1", a)
    return _strong(_scipy_kernels.hyp2f1_p.bind(a, b, c, x))


def bessel_jn(z, *, v, n_iter=50):
    """Bessel functions of the first kind of orders 0..v at z, stacked on a new first
    axis (shape `(v + 1, *z.shape)`). `n_iter` is accepted for JAX compatibility; the
    kernel iterates until it has converged."""
    (z,) = promote_args_inexact("bessel_jn", z)
    _real_only("bessel_jn", z)
    v = operator.index(v)
    if v < 0:
        raise ValueError(f"bessel_jn requires a non-negative order v, got {v}.")
    return _strong(_scipy_kernels.bessel_jn_p.bind(z, v=v))


# Spherical harmonics live in their own module.
from jaxlite.scipy.special_harmonics import sph_harm_y  # noqa: E402
