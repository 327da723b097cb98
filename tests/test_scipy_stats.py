"""jaxlite.scipy.stats: every distribution function against scipy.stats (values), real
JAX (shapes, dtypes, weak types via jax.eval_shape, and names), finite differences
(gradients), a per-example loop (vmap) and eager evaluation (jit)."""

import numpy as np
import pytest

import jaxlite
import jaxlite.scipy.stats as jst
from testing import check_close, check_grads

ss = pytest.importorskip("scipy.stats")

RNG = np.random.default_rng(3)
X = (RNG.normal(size=6) * 2).astype(np.float32)
U = RNG.uniform(0.01, 0.99, 6).astype(np.float32)
POS = RNG.uniform(0.1, 5, 6).astype(np.float32)
K = np.array([0, 1, 2, 3, 7, -1], np.float32)
ALPHA = np.array([1.5, 2.0, 3.0], np.float32)
SIMPLEX = RNG.dirichlet(ALPHA, size=4).T.astype(np.float32)
MEAN = np.array([0.5, -1.0], np.float32)
COV = np.array([[2.0, 0.3], [0.3, 1.0]], np.float32)
PTS = RNG.normal(size=(5, 2)).astype(np.float32)

_CONTINUOUS = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _cases():
    out = []

    def add(dist, fns, args, tol=2e-6, scipy_args=None):
        for fn in fns:
            out.append((dist, fn, args, tol, scipy_args))

    add("norm", _CONTINUOUS, (X, 0.5, 2.0))
    add("norm", ["ppf", "isf"], (U, 0.5, 2.0))
    add("beta", _CONTINUOUS, (U, 2.0, 3.0), tol=1e-5)
    add("gamma", _CONTINUOUS, (POS, 2.5), tol=1e-5)
    add("chi2", _CONTINUOUS, (POS, 3.0), tol=1e-5)
    add("truncnorm", _CONTINUOUS, (X, -1.0, 2.5), tol=1e-5)
    add("truncnorm", ["logpdf", "logcdf"], (np.float32([-9, -8.5, -8.1]), -9.0, -8.0))
    add("pareto", _CONTINUOUS, (POS + 1, 2.0), tol=1e-5)
    add("pareto", ["ppf"], (U, 2.0))
    add("gumbel_r", _CONTINUOUS + ["ppf"], (X,), tol=1e-5)
    add("gumbel_l", _CONTINUOUS + ["ppf"], (X,), tol=1e-5)
    add("expon", _CONTINUOUS + ["ppf"], (POS,))
    add("cauchy", _CONTINUOUS, (X,), tol=1e-5)
    add("cauchy", ["ppf", "isf"], (U,), tol=1e-5)
    add("logistic", ["logpdf", "pdf", "cdf", "sf"], (X,))
    add("logistic", ["ppf", "isf"], (U,))
    add("laplace", ["logpdf", "pdf", "cdf"], (X, 0.3, 1.5))
    add("uniform", ["logpdf", "pdf", "cdf"], (U * 3 - 1,))
    add("uniform", ["ppf"], (U, -1.0, 2.0))
    add("gennorm", ["logpdf", "pdf", "cdf"], (X, 1.5), tol=1e-5)
    add("t", ["logpdf", "pdf"], (X, 3.5, 1.0, 2.0), tol=1e-5)
    add("vonmises", ["logpdf", "pdf"], (X, 2.0))
    add("wrapcauchy", ["logpdf", "pdf"], (np.abs(X), 0.3))
    add("poisson", ["logpmf", "pmf", "cdf"], (K, 2.5), tol=1e-5)
    add("poisson", ["entropy"], (np.float32([0.5, 5, 50, 500]),), tol=1e-5)
    add("bernoulli", ["logpmf", "pmf"], (np.float32([0, 1, 2]), 0.3))
    add("bernoulli", ["cdf"], (np.float32([-1, 0, 0.5, 1, 2]), 0.3))
    add("bernoulli", ["ppf"], (U, 0.3))
    add("binom", ["logpmf", "pmf"], (K, 7.0, 0.3), tol=1e-5)
    add("geom", ["logpmf", "pmf"], (K, 0.3))
    add("nbinom", ["logpmf", "pmf"], (K, 3.0, 0.4), tol=1e-5)
    add("betabinom", ["logpmf", "pmf"], (K, 7.0, 2.0, 3.0), tol=1e-5)
    add(
        "multinomial",
        ["logpmf", "pmf"],
        (np.array([1, 2, 3]), 6, np.float32([0.2, 0.3, 0.5])),
    )
    add("dirichlet", ["logpdf", "pdf"], (SIMPLEX, ALPHA), tol=1e-5)
    add("multivariate_normal", ["logpdf", "pdf"], (PTS, MEAN, COV))
    add("multivariate_normal", ["logpdf"], (PTS, MEAN, 1.5))
    add("multivariate_normal", ["logpdf"], (PTS[:, 0], 0.2, 1.5))
    return out


CASES = _cases()  # fmt: skip
IDS = [f"{d}.{f}-{i}" for i, (d, f, *_) in enumerate(CASES)]


def _call(module, dist, fn, args):
    return getattr(getattr(module, dist), fn)(*args)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_scipy(case):
    dist, fn, args, tol, _ = case
    got = np.asarray(_call(jst, dist, fn, args), np.float64)
    wide = [a.astype(np.float64) if isinstance(a, np.ndarray) else a for a in args]
    if dist == "multinomial":
        wide[0] = args[0]
    if dist == "dirichlet":  # SciPy wants the float64 simplex exactly normalised
        wide[0] = wide[0] / wide[0].sum(0)
    want = _call(ss, dist, fn, wide)
    np.testing.assert_allclose(got, want, rtol=tol, atol=1e-30, equal_nan=True)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_types_match_jax(case):
    jax = pytest.importorskip("jax")
    dist, fn, args, _, _ = case
    ours = _call(jst, dist, fn, args)
    theirs = jax.eval_shape(lambda: _call(jax.scipy.stats, dist, fn, args))
    assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
    assert ours.weak_type == theirs.weak_type


def test_scalar_arguments_match_jax():
    jax = pytest.importorskip("jax")
    for dist, fn, args in [
        ("norm", "logpdf", (1.0,)),
        ("norm", "ppf", (0.3,)),
        ("gamma", "cdf", (2.0, 1.5)),
        ("poisson", "logpmf", (3, 2.0)),
        ("beta", "sf", (0.3, 2, 3)),
    ]:
        ours = _call(jst, dist, fn, args)
        theirs = jax.eval_shape(
            lambda d=dist, f=fn, a=args: _call(jax.scipy.stats, d, f, a)
        )
        assert (ours.dtype, ours.weak_type) == (theirs.dtype, theirs.weak_type)
        check_close(np.asarray(ours), np.float32(_call(ss, dist, fn, args)), rtol=1e-5)


def test_values_match_jax():
    jax = pytest.importorskip("jax")
    picks = [c for c in CASES if c[1] in ("logpdf", "logpmf", "cdf")][::3]
    theirs = jax.jit(
        lambda: [_call(jax.scipy.stats, d, f, a) for d, f, a, *_ in picks]
    )()
    for (dist, fn, args, *_), t in zip(picks, theirs):
        ours = _call(jst, dist, fn, args)
        np.testing.assert_allclose(ours, t, rtol=5e-5, atol=1e-6, equal_nan=True)


def test_names_match_jax():
    jax = pytest.importorskip("jax")
    skipped = {"gaussian_kde", "mode", "rankdata", "sem"}
    for name in dir(jax.scipy.stats):
        if name.startswith("_") or name in skipped:
            continue
        ours = getattr(jst, name)
        public = {
            n for n in dir(getattr(jax.scipy.stats, name)) if not n.startswith("_")
        }
        missing = {n for n in public if not hasattr(ours, n)}
        assert not missing, (name, missing)


def test_float64_tails():
    with jaxlite.enable_x64():
        x = np.array([-40.0, -10.0, 0.0, 10.0, 40.0])
        np.testing.assert_allclose(jst.norm.logcdf(x), ss.norm.logcdf(x), rtol=1e-13)
        np.testing.assert_allclose(jst.norm.logsf(x), ss.norm.logsf(x), rtol=1e-13)
        q = np.array([1e-200, 1e-10, 0.3, 0.9])
        np.testing.assert_allclose(jst.norm.ppf(q), ss.norm.ppf(q), rtol=1e-13)
        x = np.array([0.5, 30.0, 200.0])
        np.testing.assert_allclose(
            jst.gamma.sf(x, 100.0), ss.gamma.sf(x, 100.0), rtol=1e-11
        )
        np.testing.assert_allclose(
            jst.beta.cdf(np.array([0.01, 0.5]), 300.0, 200.0),
            ss.beta.cdf(np.array([0.01, 0.5]), 300.0, 200.0),
            rtol=1e-11,
        )
        np.testing.assert_allclose(
            jst.truncnorm.logpdf(-30.5, -31.0, -30.0),
            ss.truncnorm.logpdf(-30.5, -31.0, -30.0),
            rtol=1e-9,
        )


GRADS = [
    ("norm.logpdf", lambda x, m, s: jst.norm.logpdf(x, m, s), [X[:3], U[:3], POS[:3]]),
    ("norm.logcdf", lambda x: jst.norm.logcdf(x), [np.float32([-20, -1, 3])]),
    ("norm.ppf", lambda q: jst.norm.ppf(q), [U[:3]]),
    ("gamma.logpdf", lambda x, a: jst.gamma.logpdf(x, a), [POS[:3], POS[3:]]),
    ("gamma.cdf", lambda x: jst.gamma.cdf(x, 1.5), [POS[:3]]),
    ("beta.logpdf", lambda x, a, b: jst.beta.logpdf(x, a, b), [U[:3], POS[:3] + 1, POS[3:] + 1]),
    ("beta.cdf", lambda x: jst.beta.cdf(x, 2.0, 3.0), [U[:3]]),
    ("t.logpdf", lambda x, df: jst.t.logpdf(x, df), [X[:3], POS[:3] + 1]),
    ("truncnorm.logpdf", lambda x: jst.truncnorm.logpdf(x, -1.0, 2.0), [U[:3]]),
    ("poisson.logpmf", lambda mu: jst.poisson.logpmf(K[:4], mu), [POS[:4]]),
    ("dirichlet.logpdf", lambda a: jst.dirichlet.logpdf(SIMPLEX[:, 0], a), [ALPHA]),
    ("vonmises.logpdf", lambda x, k: jst.vonmises.logpdf(x, k), [X[:3], POS[:3]]),
    ("mvn.logpdf", lambda x, m: jst.multivariate_normal.logpdf(x, m, COV), [PTS[:2], MEAN]),
]  # fmt: skip


@pytest.mark.parametrize("case", GRADS, ids=[c[0] for c in GRADS])
def test_gradients(case):
    _, fun, args = case
    check_grads(fun, args, order=2, modes=("fwd", "rev"), atol=3e-3, rtol=3e-3)


def test_gradient_in_gamma_shape():
    # First derivatives in the shape parameter go through igamma_grad_a; the second
    # derivative there is refused, as JAX refuses it.
    check_grads(lambda a: jst.gamma.cdf(POS[:3], a), [POS[3:]], order=1)
    with pytest.raises(NotImplementedError, match="with respect to `a`"):
        jaxlite.grad(jaxlite.grad(lambda a: jst.gamma.cdf(1.0, a)))(2.0)


def test_vmap_matches_loop_and_jit_matches_eager():
    xs = RNG.normal(size=(4, 3)).astype(np.float32)
    a = POS[:4]
    f = jaxlite.vmap(jst.gamma.logcdf, in_axes=(0, 0))
    check_close(
        np.asarray(f(np.abs(xs), a)),
        np.stack([jst.gamma.logcdf(np.abs(x), ai) for x, ai in zip(xs, a)]),
    )
    g = jaxlite.vmap(lambda x: jst.multivariate_normal.logpdf(x, MEAN, COV))
    pts = RNG.normal(size=(4, 3, 2)).astype(np.float32)
    check_close(
        np.asarray(g(pts)),
        np.stack([jst.multivariate_normal.logpdf(p, MEAN, COV) for p in pts]),
    )
    for fun, args in [
        (jst.norm.ppf, (U,)),
        (jst.truncnorm.logcdf, (X, -1.0, 2.5)),
        (jst.poisson.cdf, (K, 2.5)),
        (jst.dirichlet.logpdf, (SIMPLEX, ALPHA)),
    ]:
        check_close(np.asarray(jaxlite.jit(fun)(*args)), np.asarray(fun(*args)))


def test_errors():
    with pytest.raises(ValueError, match="`alpha` must be one-dimensional"):
        jst.dirichlet.logpdf(SIMPLEX, ALPHA[None])
    with pytest.raises(ValueError, match="one entry fewer"):
        jst.dirichlet.logpdf(SIMPLEX[:1], ALPHA)
    with pytest.raises(ValueError, match="must be of integer type"):
        jst.multinomial.logpmf(np.float32([1, 2]), 3, np.float32([0.5, 0.5]))
    with pytest.raises(ValueError, match="incompatible shapes"):
        jst.multivariate_normal.logpdf(PTS, MEAN, np.eye(3))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        jst.multivariate_normal.logpdf(PTS, MEAN, COV, allow_singular=True)


# ----------------------------------------------------------------------------------------
# mode, rankdata, sem

_TIES = np.array(
    [[3.0, 1.0, 3.0, 2.0, 1.0, 1.0], [4.0, 4.0, 0.5, 0.5, 7.0, -1.0]], np.float32
)
_INTS = np.random.default_rng(5).integers(0, 4, (3, 4, 5)).astype(np.int32)


@pytest.mark.parametrize(
    "fn, args, kw",
    [
        ("mode", (_TIES,), {"axis": 1}),
        ("mode", (_INTS,), {"axis": -2, "keepdims": True}),
        ("mode", (_INTS,), {"axis": None}),
        ("mode", (np.array([1.0, np.nan, np.nan, 2.0, 2.0], np.float32),), {}),
        ("mode", (np.zeros((0, 3), np.float32),), {}),
        ("mode", (5.0,), {}),
        ("rankdata", (_TIES,), {"axis": 1}),
        ("rankdata", (_INTS,), {"axis": 0, "method": "min"}),
        ("rankdata", (_INTS,), {"method": "max"}),
        ("rankdata", (_INTS,), {"axis": 2, "method": "dense"}),
        ("rankdata", (_INTS,), {"axis": -1, "method": "ordinal"}),
        (
            "rankdata",
            (np.array([[3.0, np.nan, 3.0], [2.0, 2.0, 1.0]], np.float32),),
            {"axis": 1},
        ),  # fmt: skip
        ("rankdata", (np.zeros(0, np.float32),), {}),
        ("sem", (_TIES,), {}),
        ("sem", (_INTS,), {"axis": None, "ddof": 0, "keepdims": True}),
        (
            "sem",
            (np.array([[1.0, np.nan, 3.0], [4.0, 5.0, np.nan]], np.float32),),
            {"axis": 1, "nan_policy": "omit"},
        ),  # fmt: skip
        ("sem", (np.array([1.0, 2.5], np.float16),), {}),
    ],
)
def test_descriptive_statistics_match_jax(fn, args, kw):
    jax = pytest.importorskip("jax")
    import jax.scipy.stats as jax_stats

    ours = getattr(jst, fn)(*args, **kw)
    theirs = getattr(jax_stats, fn)(*args, **kw)
    assert isinstance(ours, tuple) == isinstance(theirs, tuple)
    for o, t in zip(jaxlite.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):  # fmt: skip
        assert (o.shape, o.dtype, o.weak_type) == (t.shape, t.dtype, t.weak_type)
        check_close(np.asarray(o), np.asarray(t), rtol=2e-6, atol=2e-6)
    # jit against eager
    jitted = jaxlite.jit(lambda *a: getattr(jst, fn)(*a, **kw))(*args)
    for o, j in zip(jaxlite.tree_util.tree_leaves(ours), jaxlite.tree_util.tree_leaves(jitted)):  # fmt: skip
        check_close(np.asarray(j), np.asarray(o))


def test_descriptive_statistics_match_scipy():
    for method in ("average", "min", "max", "dense", "ordinal"):
        for axis in (None, 0, 1):
            ours = jst.rankdata(_TIES, method, axis=axis)
            check_close(np.asarray(ours), ss.rankdata(_TIES, method, axis=axis))
    m = jst.mode(_INTS, axis=1)
    ref = ss.mode(_INTS, axis=1)
    check_close(np.asarray(m.mode), ref.mode)
    check_close(np.asarray(m.count), ref.count)
    check_close(np.asarray(jst.sem(_TIES, axis=1, ddof=2)), ss.sem(_TIES, axis=1, ddof=2), rtol=1e-6)  # fmt: skip


def test_descriptive_statistics_vmap_and_grad():
    looped = np.stack([np.asarray(jst.rankdata(row)) for row in _TIES])
    check_close(np.asarray(jaxlite.vmap(jst.rankdata)(_TIES)), looped)
    looped = [jst.mode(row) for row in _TIES]
    batched = jaxlite.vmap(jst.mode)(_TIES)
    check_close(np.asarray(batched.mode), np.array([r.mode for r in looped]))
    check_close(np.asarray(batched.count), np.array([r.count for r in looped]))
    check_grads(lambda x: jst.sem(x, axis=1), (_TIES,), order=2)


def test_descriptive_statistics_errors():
    with pytest.raises(TypeError, match="rankdata requires ndarray or scalar"):
        jst.rankdata([1, 2])
    with pytest.raises(TypeError, match="mode requires ndarray or scalar"):
        jst.mode([1, 2])
    with pytest.raises(ValueError, match="unknown method 'foo'"):
        jst.rankdata(_TIES, method="foo")
    with pytest.raises(ValueError, match="Illegal nan_policy value 'bad'"):
        jst.mode(_TIES, nan_policy="bad")
    with pytest.raises(NotImplementedError, match="Logic for `nan_policy` of omit"):
        jst.rankdata(_TIES, nan_policy="omit")
    with pytest.raises(NotImplementedError, match="best JIT compile `mode`"):
        jst.mode(_TIES, nan_policy="raise")
    with pytest.raises(ValueError, match="raise is not supported"):
        jst.sem(_TIES, nan_policy="raise")
    with pytest.raises(ValueError, match="out of bounds"):
        jst.mode(_TIES, axis=2)
