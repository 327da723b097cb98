"""Tests for calculus on sampled data: diff, ediff1d, gradient, trapezoid, interp,
unwrap and cross.

Values, dtypes and weak types are compared with real JAX and NumPy; derivatives with
finite differences; jit with eager; vmap with a loop.
"""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from testing import check_close, check_grads

RNG = np.random.default_rng(0)
F = np.array([[1.0, 2, 4, 7], [0, 3, 1, 2]], np.float32)
XP = np.array([0.0, 1, 2, 3])
FP = np.array([1.0, 3, 2, 0], np.float32)
PTS = np.array([-1, 0.5, 1.5, 2.5, 5], np.float32)
A3 = np.array([[1.0, 2, 3], [4, 5, 6]])
B3 = np.array([[7.0, 8, 9], [1, 0, -1]])
PHASE = np.cumsum(RNG.uniform(-3, 3, (3, 8)), 1).astype(np.float32)

CASES = [
    ("diff", (np.array([True, False, False]),), {}),
    ("diff", (np.array([1, 2, 4], np.uint8),), {}),
    ("diff", (F,), dict(n=2, prepend=0.0, append=np.array([[5.0], [6.0]]))),
    ("diff", (F,), dict(axis=0)),
    ("diff", (F, 0), {}),
    ("ediff1d", (F,), dict(to_begin=-1, to_end=np.array([9, 8]))),
    ("ediff1d", (np.array([1, 2, 4], np.int8),), dict(to_end=300)),
    ("gradient", (F,), {}),
    ("gradient", (F, 2.0), dict(axis=1)),
    ("gradient", (F, np.array([0.0, 1, 3, 4])), dict(axis=1)),
    ("gradient", (np.array([1, 4, 9, 16]),), {}),
    ("gradient", (F, np.array([0.0, 2]), np.array([0.0, 1, 3, 4])), {}),
    ("trapezoid", (F,), {}),
    ("trapezoid", (F,), dict(dx=0.5, axis=0)),
    ("trapezoid", (F,), dict(x=np.array([0.0, 1, 3, 4]))),
    ("trapezoid", (np.array([1, 2, 3]),), {}),
    ("trapezoid", (F,), dict(x=F * 2, axis=0)),
    ("interp", (PTS, XP, FP), {}),
    ("interp", (PTS, XP, FP), dict(left=-9, right="extrapolate")),
    ("interp", (PTS, XP, FP), dict(left="extrapolate")),
    ("interp", (PTS, XP, FP), dict(period=2.5)),
    ("interp", (np.array([1, 2]), np.array([0, 3]), np.array([0, 3])), {}),
    ("interp", (PTS, XP, FP + 1j), {}),
    ("interp", (1.5, XP, FP), {}),
    ("interp", (PTS, np.array([0, 1, 1, 3.0]), FP), {}),
    ("unwrap", (np.array([0, 1, 5, 2, 8], np.int32),), {}),
    ("unwrap", (np.array([0, 3.0, 6.5, 9.9]),), dict(period=4)),
    ("unwrap", (np.array([0, 3.0, 6.5, 9.9]),), dict(discont=1.0)),
    ("unwrap", (PHASE,), dict(axis=1)),
    ("cross", (A3, B3), {}),
    ("cross", (A3[:, :2], B3[:, :2]), {}),
    ("cross", (A3[:, :2], B3), {}),
    ("cross", (A3.T, B3.T), dict(axisa=0, axisb=0, axisc=0)),
    ("cross", (np.array([1, 2, 3]), np.array([4, 5, 6])), {}),
    ("cross", (A3, B3[0]), {}),
]


def _id(case):
    name, args, kw = case
    return f"{name}-{[np.shape(a) for a in args]}-{sorted(kw)}"


def _tol(out):
    return 1e-5 if np.dtype(out.dtype) in (np.float32, np.complex64) else 0


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_matches_jax(case):
    jax = pytest.importorskip("jax")
    name, args, kw = case
    ours = getattr(jnp, name)(*args, **kw)
    ref = getattr(jax.numpy, name)(*args, **kw)
    ours = ours if isinstance(ours, list) else [ours]
    ref = ref if isinstance(ref, list) else [ref]
    for o, r in zip(ours, ref, strict=True):
        assert (o.shape, o.dtype, o.weak_type) == (r.shape, r.dtype, r.weak_type)
        check_close(np.asarray(o), np.asarray(r), atol=_tol(o), rtol=_tol(o))


@pytest.mark.filterwarnings("ignore:Arrays of 2-dimensional vectors")
@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_matches_numpy(case):
    name, args, kw = case
    if name == "unwrap" and np.asarray(args[0]).dtype.kind == "i":
        pytest.skip("NumPy unwraps integers in integers; JAX (and jaxlite) in floats")
    if name == "interp" and "period" in kw:
        pytest.skip("NumPy's periodic interp sorts xp differently at the period's edge")
    if any(isinstance(v, str) for v in kw.values()):
        pytest.skip("left/right='extrapolate' is JAX's extension")
    ours = getattr(jnp, name)(*args, **kw)
    ref = getattr(np, name)(*args, **kw)
    ours = ours if isinstance(ours, list) else [ours]
    ref = ref if isinstance(ref, (list, tuple)) else [ref]
    for o, r in zip(ours, ref, strict=True):
        check_close(np.asarray(o), np.asarray(r).astype(o.dtype), atol=2e-5, rtol=2e-5)


@pytest.mark.parametrize("case", CASES[::3], ids=[_id(c) for c in CASES[::3]])
def test_jit_matches_eager(case):
    name, args, kw = case
    f = lambda *a: getattr(jnp, name)(*a, **kw)
    ours, jitted = f(*args), jaxlite.jit(f)(*args)
    for o, j in zip(
        jaxlite.tree_util.tree_leaves(ours), jaxlite.tree_util.tree_leaves(jitted)
    ):
        check_close(np.asarray(j), np.asarray(o))


X = RNG.standard_normal((3, 6)).astype(np.float32)
XP6 = np.array([0.0, 0.7, 1.5, 2.2, 3.0, 4.1], np.float32)


@pytest.mark.parametrize(
    "f, args",
    [
        (
            lambda a, fp: jnp.interp(a, XP6, fp),
            (np.array([0.3, 1.1, 2.9, 3.5, 4.0], np.float32), X[0]),
        ),
        (
            lambda a, fp: jnp.interp(
                a, XP6, fp, left="extrapolate", right="extrapolate"
            ),
            (np.array([-0.5, 1.1, 5.0], np.float32), X[0]),
        ),
        (lambda a, b: jnp.cross(a, b), (X[:, :3], X[:, 3:])),
        (lambda a: jnp.diff(a, n=2, axis=1, prepend=1.0), (X,)),
        (lambda a, t: jnp.trapezoid(a, t), (X, np.cumsum(np.abs(X[0])))),
        (lambda a: jnp.gradient(a, np.array([0.0, 1, 3]), axis=0), (X,)),
        (lambda a: jnp.unwrap(a * 3), (X,)),
        (lambda a: jnp.ediff1d(a, to_begin=2.0), (X,)),
    ],
    ids=[
        "interp",
        "interp_extrapolate",
        "cross",
        "diff",
        "trapezoid",
        "gradient",
        "unwrap",
        "ediff1d",
    ],
)
def test_grads(f, args):
    check_grads(f, args, order=2)


def test_interp_zero_width_interval_has_finite_gradient():
    xp = np.array([0.0, 1.0, 1.0, 2.0], np.float32)
    g = jaxlite.grad(
        lambda x: jnp.interp(x, xp, np.array([0.0, 1.0, 3.0, 4.0], np.float32))
    )
    assert np.isfinite(float(g(np.float32(1.0))))


def test_vmap_matches_loop():
    f = lambda p, q: (jnp.interp(p, XP6, q), jnp.cross(q[:3], q[3:]), jnp.gradient(q))
    out = jaxlite.vmap(f)(X[:, :4], X)
    for k in range(X.shape[0]):
        for o, e in zip(out, f(X[k, :4], X[k])):
            check_close(np.asarray(o[k]), np.asarray(e))


@pytest.mark.parametrize(
    "call, error, phrase",
    [
        (lambda: jnp.diff(F, -1), ValueError, "order must be non-negative"),
        (lambda: jnp.diff(3.0), ValueError, "at least one dimensional"),
        (
            lambda: jnp.gradient(np.ones((1, 3))),
            ValueError,
            "too small to calculate a numerical gradient",
        ),
        (lambda: jnp.gradient(F, edge_order=2), NotImplementedError, "edge_order"),
        (
            lambda: jnp.interp(PTS, XP, FP[:3]),
            ValueError,
            "one-dimensional arrays of equal size",
        ),
        (
            lambda: jnp.interp(PTS, XP, FP, left="bad"),
            ValueError,
            "only valid string value",
        ),
        (lambda: jnp.cross(np.ones(4), np.ones(3)), ValueError, "either 2 or 3"),
        (lambda: jnp.diff([1, 2]), TypeError, "requires ndarray or scalar"),
    ],
)
def test_errors(call, error, phrase):
    with pytest.raises(error, match=phrase):
        call()
