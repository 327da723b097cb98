"""The gamma function and its logarithm for complex arguments (scipy.special.gamma and
loggamma on complex arrays).

`loggamma` is the analytic continuation of log(Gamma) from the positive reals, with
its branch cut on the negative real axis (it differs from log(gamma(z)) by multiples
of 2 pi i). It is built from three identities, each exact for the branch used:
- Stirling's series `(w - 1/2) log w - w + log(2 pi) / 2 + sum_k B_2k / (2k (2k - 1)
  w^(2k-1))`, accurate to double precision for |w| >= 8 with eight terms;
- the recurrence `loggamma(w) = loggamma(w + 8) - sum_{k<8} log(w + k)` for
  Re w >= 0.1: the principal logarithms of the w + k all have arguments of the sign of
  Im w, so their sum is continuous off the real axis, as loggamma is;
- the reflection `loggamma(z) = log(pi) - L(z) - loggamma(1 - z)` for Re z < 0.1 and
  Im z >= 0, where L(z) = -log 2 + i pi / 2 - i pi z + log1p(-exp(2 pi i z)) is the
  logarithm of sin(pi z) that is continuous on the closed upper half-plane (the
  log1p argument stays off the cut since |exp(2 pi i z)| <= 1); the lower half-plane
  follows from loggamma(conj z) = conj(loggamma(z)), decided by the sign bit of
  Im z as in SciPy (so -1.5 - 0j and -1.5 + 0j lie on opposite sides of the cut).
`gamma` is `exp(loggamma)`; both are NaN + NaN i at the poles (non-positive
integers) and at NaN, as SciPy and JAX. Written in lax operations, so they trace,
batch and differentiate.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from jaxlite import lax
from jaxlite.numpy import ufuncs

__all__ = ["complex_gamma", "complex_loggamma"]

_SHIFT = 8  # recurrence steps: Stirling's series is then used at |w| >= 8.1
_TERMS = 8  # Stirling terms


def _bernoulli(n):
    """The Bernoulli number B_n (B_1 = -1/2), exactly."""
    b = [Fraction(1)]
    for m in range(1, n + 1):
        b.append(-sum(math.comb(m + 1, k) * b[k] for k in range(m)) / (m + 1))
    return b[n]


_STIRLING = [float(_bernoulli(2 * k) / (2 * k * (2 * k - 1))) for k in range(1, 9)]


def _c(z, value):
    return lax.full_like(z, value, shape=())


def _stirling(w):
    """loggamma(w) by Stirling's series (|w| large, |arg w| < pi)."""
    inv = _c(w, 1) / w
    inv2 = inv * inv
    series = _c(w, 0)
    for coeff in reversed(_STIRLING[:_TERMS]):
        series = series * inv2 + _c(w, coeff)
    return (
        (w - _c(w, 0.5)) * lax.log(w) - w + _c(w, 0.5 * math.log(2 * math.pi))
    ) + series * inv


def _loggamma_right(w):
    """loggamma(w) for Re w >= 0.1 (either sign of Im w)."""
    logs = lax.log(w)
    for k in range(1, _SHIFT):
        logs = logs + lax.log(w + _c(w, k))
    return _stirling(w + _c(w, _SHIFT)) - logs


def _log_sin_pi(z):
    """A logarithm of sin(pi z) continuous on the closed upper half-plane."""
    i = _c(z, 1j)
    pi = _c(z, math.pi)
    return (
        _c(z, complex(-math.log(2), math.pi / 2))
        - i * pi * z
        + lax.log1p(-lax.exp(_c(z, 2j * math.pi) * z))
    )


def complex_loggamma(z):
    """The principal branch of log Gamma(z) for complex z."""
    re, im = lax.real(z), lax.imag(z)
    lower = ufuncs.signbit(im)
    upper_z = lax.select(lower, lax.conj(z), z)
    right = lax.ge(re, lax.full_like(re, 0.1))
    # Each branch is evaluated where it is valid (the other gets a harmless point).
    safe_right = lax.select(right, upper_z, lax.full_like(z, 1))
    safe_left = lax.select(right, lax.full_like(z, -0.5), upper_z)
    one = _c(z, 1)
    reflected = (
        _c(z, math.log(math.pi))
        - _log_sin_pi(safe_left)
        - _loggamma_right(one - safe_left)
    )
    out = lax.select(right, _loggamma_right(safe_right), reflected)
    out = lax.select(lower, lax.conj(out), out)
    return _nan_at_poles(z, out)


def complex_gamma(z):
    """Gamma(z) for complex z, as exp(loggamma(z))."""
    return _nan_at_poles(z, lax.exp(complex_loggamma(z)))


def _nan_at_poles(z, out):
    """out, with NaN + NaN i where z is a non-positive integer or has a NaN part."""
    re, im = lax.real(z), lax.imag(z)
    pole = lax.le(re, lax.full_like(re, 0)) & lax.eq(re, lax.floor(re))
    pole = pole & lax.eq(im, lax.full_like(im, 0))
    bad = pole | lax.ne(re, re) | lax.ne(im, im)
    return lax.select(bad, lax.full_like(z, complex(np.nan, np.nan)), out)
