"""Tests for the polynomial functions (poly, polyadd, polysub, polymul, polydiv,
polyder, polyint, polyval, polyfit, roots, vander, trim_zeros) and for the 1-D
convolution and window functions (convolve, correlate, bartlett, blackman, hamming,
hanning, kaiser).

Values, dtypes and weak types are compared with real JAX and NumPy; derivatives with
finite differences; jit with eager; vmap with a loop.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from testing import check_close, check_grads

P = np.array([1.0, -3, 2], np.float32)
Q = np.array([2, 5], np.int32)
XS = np.arange(5.0)
YS = np.array([1.0, 2, 0, 3, 5])
Z = np.array([[0, 0, 0], [0, 1, 0], [0, 0, 2]])

POLY_CASES = [
    ("poly", (np.array([1.0, 2]),), {}),
    ("poly", (np.array([[1.0, 2], [3, 4]]),), {}),
    ("poly", (np.array([1, 2]),), {}),
    ("poly", (np.array([1 + 1j, 1 - 1j]),), {}),
    ("poly", (3.0,), {}),
    ("polyadd", (P, Q), {}),
    ("polyadd", (Q, Q), {}),
    ("polyadd", (np.array([[1, 2]]), np.array([1])), {}),
    ("polysub", (Q, P), {}),
    ("polymul", (P, Q), {}),
    ("polymul", (Q, Q), {}),
    ("polymul", (np.array([0.0, 1]), Q), dict(trim_leading_zeros=True)),
    ("polydiv", (P, np.array([1.0, -1])), {}),
    ("polydiv", (Q, P), {}),
    ("polydiv", (np.array([1.0, 3, 3, 1]), np.array([2.0, 1])), {}),
    (
        "polydiv",
        (np.array([1.0, 3, 3, 1]), np.array([2.0, 1])),
        dict(trim_leading_zeros=True),
    ),
    ("polyder", (P,), {}),
    ("polyder", (np.array([1, 2, 3, 4]), 2), {}),
    ("polyder", (np.array([1.0, 2]), 3), {}),
    ("polyint", (P,), {}),
    ("polyint", (P, 2, np.array([1.0, 2])), {}),
    ("polyint", (np.array([1, 2]),), dict(k=3)),
    ("polyval", (P, np.array([0.0, 1, 2, 3])), {}),
    ("polyval", (Q, 2), {}),
    ("polyval", (Q, np.array([2.5])), {}),
    ("polyval", (np.array([1, 2, 3]), np.array([[1.0, 2]])), {}),
    ("polyfit", (XS, YS, 2), {}),
    ("polyfit", (XS, YS, 1), dict(w=np.ones(5), cov=True)),
    ("polyfit", (XS, YS, 1), dict(full=True)),
    ("polyfit", (np.arange(6.0), np.arange(12.0).reshape(6, 2), 1), dict(cov=True)),
    ("roots", (np.array([1.0, -3, 2]),), {}),
    ("roots", (np.array([0, 0, 1.0, -3, 2, 0]),), {}),
    ("vander", (np.array([1, 2, 3]),), {}),
    ("vander", (np.array([1.0, 2, 3]), 2, True), {}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0]),), {}),
    ("trim_zeros", (np.array([0, 0, 1, 2, 0]), "f"), {}),
    ("trim_zeros", (np.array([0, 1, 0]), "B"), {}),
    ("trim_zeros", (Z,), {}),
    ("trim_zeros", (Z, "f"), dict(axis=1)),
    ("trim_zeros", (np.zeros((2, 3)),), {}),
]
A = np.array([1.0, 2, 3, -1, 0.5], np.float32)
V = np.array([0.0, 1, 2.5], np.float32)
C = np.array([1 + 2j, 3 - 1j], np.complex64)
CONV_INPUTS = [(A, V, m) for m in ("full", "same", "valid")]
CONV_INPUTS += [(V, A, m) for m in ("full", "same", "valid")]
CONV_INPUTS += [(A, C, "same"), (C, A, "full"), (A, V[:2], "same"), (V[:2], A, "same")]
CONV_INPUTS += [(np.array([1, 2, 3]), np.array([0, 1]), "valid")]
SIGNAL_CASES = (
    [(name, args, {}) for name in ("convolve", "correlate") for args in CONV_INPUTS]
    + [
        (name, (m,), {})
        for name in ("bartlett", "blackman", "hamming", "hanning")
        for m in (0, 1, 2, 5, 6)
    ]
    + [
        ("kaiser", (m, beta), {})
        for m in (0, 1, 5, 6)
        for beta in (2.0, np.float32(14))
    ]
)
CASES = POLY_CASES + SIGNAL_CASES


def _id(case):
    name, args, kw = case
    return f"{name}-{[np.shape(a) for a in args]}-{sorted(kw)}"


def _leaves(x):
    return list(x) if isinstance(x, tuple) else [x]


def _tol(name):
    return (
        3e-5 if name in ("polyfit", "roots", "poly", "convolve", "correlate") else 1e-6
    )


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_matches_jax(case):
    jax = pytest.importorskip("jax")
    name, args, kw = case
    ours = _leaves(getattr(jnp, name)(*args, **kw))
    ref = _leaves(getattr(jax.numpy, name)(*args, **kw))
    for o, r in zip(ours, ref, strict=True):
        assert (o.shape, o.dtype, o.weak_type) == (r.shape, r.dtype, r.weak_type)
        check_close(np.asarray(o), np.asarray(r), atol=_tol(name), rtol=_tol(name))


NUMPY_CASES = [
    c
    for c in CASES
    if not c[2]  # keyword variants are JAX's (trim_leading_zeros, axis, ...) or differ
    and c[0]
    not in ("poly", "roots", "polyadd")  # NumPy returns reals / trims / by shape[-1]
    and not (c[0] == "polydiv" and c[1][1].shape[0] > 1 and c[1][0].shape[0] > 3)
]


@pytest.mark.parametrize("case", NUMPY_CASES, ids=[_id(c) for c in NUMPY_CASES])
def test_matches_numpy(case):
    name, args, kw = case
    ours = _leaves(getattr(jnp, name)(*args, **kw))
    ref = _leaves(getattr(np, name)(*args, **kw))
    if name == "polydiv":  # NumPy trims the remainder's leading zeros
        ours[1] = jnp.trim_zeros(ours[1], "f")
        ref[1] = np.trim_zeros(ref[1], "f")
    for o, r in zip(ours, ref, strict=True):
        check_close(np.asarray(o), np.asarray(r).astype(o.dtype), atol=3e-5, rtol=3e-5)


def test_roots_and_poly_match_numpy():
    p = np.array([1.0, -6, 11, -6])
    np.testing.assert_allclose(
        np.sort_complex(np.asarray(jnp.roots(p))),
        np.sort_complex(np.roots(p)),
        atol=1e-4,
    )
    check_close(
        np.asarray(jnp.poly(np.array([1.0, 2, 3]))),
        np.poly([1.0, 2, 3]).astype(np.float32),
    )


X = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)


@pytest.mark.parametrize(
    "f, args",
    [
        (jnp.polyval, (X[0], X[1])),
        (lambda a, v: jnp.convolve(a, v, "same"), (X[0], X[1, :3])),
        (lambda a, v: jnp.correlate(a, v, "full"), (X[0, :3], X[1])),
        (jnp.polymul, (X[0], X[1, :3])),
        (
            lambda u, v: jnp.polydiv(u, v),
            (X[0], X[1, :3] + np.array([3.0, 0, 0], np.float32)),
        ),
        (jnp.poly, (X[0, :4],)),
        (lambda y: jnp.polyfit(np.arange(6.0), y, 2), (X[0],)),
        (lambda p: jnp.polyint(jnp.polyder(p), k=1.0), (X[0],)),
        (lambda b: jnp.kaiser(6, b), (np.float32(3.0),)),
        (lambda a: jnp.vander(a, 4), (X[0],)),
    ],
    ids=[
        "polyval",
        "convolve",
        "correlate",
        "polymul",
        "polydiv",
        "poly",
        "polyfit",
        "polyint",
        "kaiser",
        "vander",
    ],
)
def test_grads(f, args):
    check_grads(f, args, order=2)


def test_jit_and_vmap():
    fs = [
        lambda p, x: jnp.polyval(p, x),
        lambda p, x: jnp.convolve(p, x[:3], "valid"),
        lambda p, x: jnp.polydiv(p, x[:2] + 2),
        lambda p, x: jnp.polyfit(np.arange(6.0), x, 2, full=True)[:2],
        lambda p, x: jnp.roots(p, strip_zeros=False),
        lambda p, x: jnp.kaiser(5, x[0]),
    ]
    for f in fs:
        eager, jitted = _leaves(f(X[0], X[1])), _leaves(jaxlite.jit(f)(X[0], X[1]))
        for e, j in zip(eager, jitted, strict=True):
            check_close(np.asarray(j), np.asarray(e), atol=1e-5, rtol=1e-5)
        if f is fs[4]:
            continue  # eigenvalue order is not continuous in the input
        batched = _leaves(jaxlite.vmap(f)(X, X[::-1]))
        for k in range(X.shape[0]):
            for b, e in zip(batched, _leaves(f(X[k], X[::-1][k])), strict=True):
                check_close(np.asarray(b[k]), np.asarray(e), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (
            lambda: jnp.polyder(P, -1),
            ValueError,
            "Order of derivative must be positive",
        ),
        (lambda: jnp.polyint(P, 2, np.array([1.0, 2, 3])), ValueError, "length 1 or m"),
        (lambda: jnp.vander(np.array([1, 2]), -1), ValueError, "N must be nonnegative"),
        (lambda: jnp.vander(np.ones((2, 2))), ValueError, "one-dimensional"),
        (lambda: jnp.poly(np.ones((2, 3))), ValueError, "square 2d array"),
        (lambda: jnp.polyfit(XS, YS[:3], 1), TypeError, "same length"),
        (
            lambda: jnp.polyfit(XS[:2], YS[:2], 1, cov=True),
            ValueError,
            "must exceed order",
        ),
        (lambda: jnp.convolve(np.array([]), V), ValueError, "inputs cannot be empty"),
        (lambda: jnp.convolve(np.ones((2, 2)), V), ValueError, "1-dimensional inputs"),
        (lambda: jnp.correlate(A, V, "bad"), ValueError, "mode must be one of"),
        (
            lambda: jaxlite.jit(jnp.hamming)(3),
            jaxlite.errors.ConcretizationTypeError,
            "M argument of jnp.hamming",
        ),
        (
            lambda: jaxlite.jit(jnp.trim_zeros)(A),
            jaxlite.errors.ConcretizationTypeError,
            "trim_zeros",
        ),
    ],
)
def test_errors(call, error, phrase):
    with pytest.raises(error, match=phrase):
        call()


def test_polyval_with_several_polynomials_broadcasts_like_numpy():
    p = np.arange(15.0, dtype=np.float32).reshape(5, 3)
    for x in [0.5, np.array([0.5, 2.0, 1.0], np.float32), np.ones((2, 3), np.float32)]:
        np.testing.assert_allclose(jnp.polyval(p, x), np.polyval(p, x), rtol=1e-6)
    got = jaxlite.grad(lambda x: jnp.polyval(p, x).sum())(0.5)
    want = sum(np.polyval(np.polyder(p[:, i]), 0.5) for i in range(3))
    np.testing.assert_allclose(got, want, rtol=1e-6)
