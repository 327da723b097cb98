"""jaxlite.scipy.integrate, cluster.vq, ndimage, interpolate and stats.gaussian_kde
against SciPy and real JAX: values, shapes and dtypes, jit against eager, vmap against
a loop, gradients against finite differences, pytree behaviour and errors."""

import importlib

import numpy as np
import pytest
from tests.testing import check_grads

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.scipy import integrate, interpolate, ndimage
from jaxlite.scipy.cluster import vq
from jaxlite.scipy.stats import gaussian_kde

RNG = np.random.default_rng(0)


def _same(a, b, tol=1e-4):
    la, lb = jaxlite.tree_util.tree_leaves(a), jaxlite.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        assert x.dtype == y.dtype, (x.dtype, y.dtype)
        np.testing.assert_allclose(x, y, rtol=tol, atol=tol, equal_nan=True)


def _jax():
    return pytest.importorskip("jax")


def _jmod(name):
    """A submodule of real JAX (the oracle), skipping the test without JAX."""
    _jax()
    return importlib.import_module(name)


def _scipy(name):
    """A SciPy module (the reference), skipping the test without SciPy (PyPy)."""
    pytest.importorskip("scipy")
    return importlib.import_module(name)


def test_exports_match_jax():
    pairs = [
        ("jax.scipy.integrate", integrate),
        ("jax.scipy.ndimage", ndimage),
        ("jax.scipy.interpolate", interpolate),
        ("jax.scipy.cluster.vq", vq),
    ]
    for name, ours in pairs:
        mod = _jmod(name)
        theirs = {n for n in dir(mod) if not n.startswith("_")}
        assert theirs <= set(dir(ours)), theirs - set(dir(ours))
    assert hasattr(jaxlite.scipy, "cluster") and hasattr(jaxlite.scipy, "ndimage")


def test_trapezoid():
    sint = _scipy("scipy.integrate")
    jax = _jax()
    y = RNG.standard_normal((3, 9)).astype(np.float32)
    x = np.sort(RNG.random(9)).astype(np.float32)
    _same(jax.scipy.integrate.trapezoid(y, x), integrate.trapezoid(y, x))
    _same(
        jax.scipy.integrate.trapezoid(y, dx=0.3, axis=0),
        integrate.trapezoid(y, dx=0.3, axis=0),
    )
    np.testing.assert_allclose(
        integrate.trapezoid(y, x), sint.trapezoid(y, x), rtol=1e-5
    )


def test_vq():
    svq = _scipy("scipy.cluster.vq")
    jvq = _jmod("jax.scipy.cluster.vq")

    obs = RNG.standard_normal((10, 3)).astype(np.float32)
    book = RNG.standard_normal((4, 3)).astype(np.float32)
    code, dist = vq.vq(obs, book)
    _same(jvq.vq(obs, book), (code, dist))
    scode, sdist = svq.vq(obs, book)
    np.testing.assert_array_equal(code, scode)
    np.testing.assert_allclose(dist, sdist, rtol=1e-5)
    _same(jvq.vq(obs[:, 0], book[:, 0]), vq.vq(obs[:, 0], book[:, 0]))
    _same(jvq.vq(np.arange(5), np.array([1, 3])), vq.vq(np.arange(5), np.array([1, 3])))
    _same(jaxlite.jit(vq.vq)(obs, book), (code, dist))
    batched = jaxlite.vmap(vq.vq, in_axes=(0, None))(obs.reshape(2, 5, 3), book)
    _same(batched, (code.reshape(2, 5), dist.reshape(2, 5)))
    with jaxlite.enable_x64():
        check_grads(
            lambda o: vq.vq(o, book.astype(np.float64))[1],
            (obs.astype(np.float64),),
            order=1,
        )
    with pytest.raises(ValueError, match="should have the same rank"):
        vq.vq(obs, book[0])
    with pytest.raises(ValueError, match="ndim different than 1 or 2"):
        vq.vq(obs[None], book[None])
    with pytest.raises(TypeError):
        vq.vq([[1.0]], book)


@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates(order):
    snd = _scipy("scipy.ndimage")
    jnd = _jmod("jax.scipy.ndimage")

    img = RNG.standard_normal((5, 6)).astype(np.float32)
    imgi = np.arange(30, dtype=np.int32).reshape(5, 6)
    coords = [
        RNG.uniform(-3, 8, (4, 7)).astype(np.float32),
        RNG.uniform(-3, 9, (4, 7)).astype(np.float32),
    ]
    for mode in ["constant", "nearest", "wrap", "mirror", "reflect"]:
        ours = ndimage.map_coordinates(img, coords, order, mode, cval=1.5)
        _same(jnd.map_coordinates(img, coords, order, mode, cval=1.5), ours)
        _same(
            jnd.map_coordinates(imgi, coords, order, mode),
            ndimage.map_coordinates(imgi, coords, order, mode),
        )
        # SciPy agrees away from its own boundary conventions for 'mirror'/'reflect'
        inside = [np.clip(c, 0.1, 3.9) for c in coords]
        np.testing.assert_allclose(
            ndimage.map_coordinates(img, inside, order, mode),
            snd.map_coordinates(img, inside, order=order, mode=mode),
            rtol=1e-5,
            atol=1e-5,
        )
    ints = [np.array([0, 2, 7]), np.array([1, -1, 3])]
    _same(
        jnd.map_coordinates(img, ints, order), ndimage.map_coordinates(img, ints, order)
    )


def test_map_coordinates_transformations_and_errors():
    img = RNG.standard_normal((5, 6)).astype(np.float32)
    c = RNG.uniform(0, 4, (2, 8)).astype(np.float32)

    def f(img, c):
        return ndimage.map_coordinates(img, [c[0], c[1]], 1, "nearest")

    _same(jaxlite.jit(f)(img, c), f(img, c), 1e-6)
    cs = RNG.uniform(0, 4, (3, 2, 8)).astype(np.float32)
    _same(
        jaxlite.vmap(f, in_axes=(None, 0))(img, cs),
        jnp.stack([f(img, ci) for ci in cs]),
        1e-6,
    )
    with jaxlite.enable_x64():
        c64 = np.array([[0.3, 1.7, 2.2], [0.6, 3.1, 4.4]])
        check_grads(f, (img.astype(np.float64), c64), order=1)
    with pytest.raises(NotImplementedError, match="does not yet support mode"):
        ndimage.map_coordinates(img, list(c), 1, "grid-wrap")
    with pytest.raises(NotImplementedError, match="requires order<=1"):
        ndimage.map_coordinates(img, list(c), 3)
    with pytest.raises(ValueError, match="sequence of length input.ndim"):
        ndimage.map_coordinates(img, [c[0]], 1)


GRID = (np.array([0.0, 1.0, 2.5, 4.0]), np.array([-1.0, 0.0, 3.0]))
VALS = RNG.standard_normal((4, 3, 2)).astype(np.float32)
QUERY = RNG.uniform(-1.5, 5, (6, 2)).astype(np.float32)


@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_regular_grid_interpolator(method):
    sinterp = _scipy("scipy.interpolate")
    JRGI = _jmod("jax.scipy.interpolate").RegularGridInterpolator  # noqa: N806

    rgi = interpolate.RegularGridInterpolator
    for fill in [np.nan, None, 0.5]:
        ours = rgi(GRID, VALS, method, fill_value=fill)(QUERY)
        _same(JRGI(GRID, VALS, method, fill_value=fill)(QUERY), ours)
    v2 = VALS[..., 0]
    q3 = QUERY.reshape(2, 3, 2)
    _same(JRGI(GRID, v2, method)(q3), rgi(GRID, v2, method)(q3))
    _same(
        JRGI(GRID, v2)(tuple(QUERY.T), method=method),
        rgi(GRID, v2)(tuple(QUERY.T), method=method),
    )
    ref = sinterp.RegularGridInterpolator(GRID, v2, method, bounds_error=False)(QUERY)
    np.testing.assert_allclose(
        rgi(GRID, v2, method)(QUERY), ref, rtol=1e-5, atol=1e-6, equal_nan=True
    )


def test_regular_grid_interpolator_pytree_and_transformations():
    rgi = interpolate.RegularGridInterpolator(GRID, VALS[..., 0], fill_value=None)
    leaves, tree = jaxlite.tree_util.tree_flatten(rgi)
    assert len(leaves) == 3  # two grid axes and the values (fill_value None)
    again = jaxlite.tree_util.tree_unflatten(tree, leaves)
    _same(again(QUERY), rgi(QUERY))
    _same(jaxlite.jit(lambda r, q: r(q))(rgi, QUERY), rgi(QUERY), 1e-6)
    _same(jaxlite.vmap(rgi)(QUERY.reshape(3, 2, 2)), rgi(QUERY).reshape(3, 2), 1e-6)
    with jaxlite.enable_x64():
        inside = np.array([[0.3, -0.2], [2.0, 1.5], [3.1, 2.2]])

        def f(values, q):
            return interpolate.RegularGridInterpolator(GRID, values)(q)

        check_grads(f, (VALS[..., 0].astype(np.float64), inside), order=1)
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        interpolate.RegularGridInterpolator(GRID, VALS, "cubic")
    with pytest.raises(NotImplementedError, match="takes no effect under JIT"):
        interpolate.RegularGridInterpolator(GRID, VALS, bounds_error=True)
    with pytest.raises(ValueError, match="there are 4 point arrays"):
        interpolate.RegularGridInterpolator(GRID * 2, VALS[..., 0])
    with pytest.raises(ValueError, match="requested sample points xi have dimension"):
        rgi(np.ones((2, 3)))


DATA = RNG.standard_normal((2, 30)).astype(np.float32)
WEIGHTS = RNG.random(30).astype(np.float32)
PTS = RNG.standard_normal((2, 5)).astype(np.float32)


@pytest.mark.parametrize("bw", [None, "silverman", 0.4])
@pytest.mark.parametrize("weighted", [False, True])
def test_gaussian_kde_vs_jax_and_scipy(bw, weighted):
    sstats = _scipy("scipy.stats")
    jax = _jax()
    w = WEIGHTS if weighted else None
    kj = jax.scipy.stats.gaussian_kde(DATA, bw, w)
    kl = gaussian_kde(DATA, bw, w)
    _same(
        [kj.neff, kj.dataset, kj.weights, kj.covariance, kj.inv_cov],
        [kl.neff, kl.dataset, kl.weights, kl.covariance, kl.inv_cov],
    )
    for meth in ["evaluate", "pdf", "logpdf", "__call__"]:
        _same(getattr(kj, meth)(PTS), getattr(kl, meth)(PTS))
    _same(
        kj.integrate_gaussian(np.zeros(2), np.eye(2)),
        kl.integrate_gaussian(np.zeros(2), np.eye(2)),
    )
    _same(
        kj.integrate_kde(jax.scipy.stats.gaussian_kde(DATA[:, :7])),
        kl.integrate_kde(gaussian_kde(DATA[:, :7])),
    )
    ks = sstats.gaussian_kde(DATA.astype(np.float64), bw, w)
    np.testing.assert_allclose(kl.pdf(PTS), ks.pdf(PTS), rtol=1e-4)
    np.testing.assert_allclose(kl.logpdf(PTS), ks.logpdf(PTS), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        kl.integrate_gaussian(np.zeros(2), np.eye(2)),
        ks.integrate_gaussian(np.zeros(2), np.eye(2)),
        rtol=1e-4,
    )


def test_gaussian_kde_1d_resample_and_callable_bandwidth():
    sstats = _scipy("scipy.stats")
    jax = _jax()
    k1j, k1l = jax.scipy.stats.gaussian_kde(DATA[0]), gaussian_kde(DATA[0])
    _same(k1j.integrate_box_1d(-0.5, 1.0), k1l.integrate_box_1d(-0.5, 1.0))
    np.testing.assert_allclose(
        k1l.integrate_box_1d(-0.5, 1.0),
        sstats.gaussian_kde(DATA[0]).integrate_box_1d(-0.5, 1.0),
        rtol=1e-4,
    )
    _same(k1j.pdf(PTS[0]), k1l.pdf(PTS[0]))
    # resample is bit-compatible with JAX's PRNG
    _same(
        jax.scipy.stats.gaussian_kde(DATA, weights=WEIGHTS).resample(
            jax.random.key(0), (7,)
        ),
        gaussian_kde(DATA, weights=WEIGHTS).resample(jaxlite.random.key(0), (7,)),
    )
    _same(k1j.resample(jax.random.key(3)), k1l.resample(jaxlite.random.key(3)))
    kc = gaussian_kde(DATA, bw_method=lambda k: 0.5 * k.neff**-0.2)
    kj = jax.scipy.stats.gaussian_kde(DATA, bw_method=lambda k: 0.5 * k.neff**-0.2)
    _same(kj.covariance, kc.covariance)


def test_gaussian_kde_pytree_transformations_and_errors():
    import dataclasses

    kde = gaussian_kde(DATA, weights=WEIGHTS)
    leaves, tree = jaxlite.tree_util.tree_flatten(kde)
    assert len(leaves) == 5
    _same(jaxlite.tree_util.tree_unflatten(tree, leaves).pdf(PTS), kde.pdf(PTS))
    _same(jaxlite.jit(lambda k, p: k.logpdf(p))(kde, PTS), kde.logpdf(PTS), 1e-5)
    _same(
        jaxlite.jit(lambda d, p: gaussian_kde(d).pdf(p))(DATA, PTS),
        gaussian_kde(DATA).pdf(PTS),
        1e-5,
    )
    batched = jaxlite.vmap(lambda p: kde.pdf(p), in_axes=1)(PTS[:, :, None])
    _same(batched, jnp.stack([kde.pdf(PTS[:, i : i + 1]) for i in range(5)]), 1e-6)
    with jaxlite.enable_x64():
        d64, p64 = DATA[:, :8].astype(np.float64), PTS.astype(np.float64)
        check_grads(lambda d, p: gaussian_kde(d).logpdf(p), (d64, p64), order=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        kde.neff = 3.0
    with pytest.raises(NotImplementedError, match="does not support complex data"):
        gaussian_kde(DATA + 1j)
    with pytest.raises(ValueError, match="should have multiple elements"):
        gaussian_kde(np.ones(1))
    with pytest.raises(ValueError, match="`weights` input should be of length n"):
        gaussian_kde(DATA, weights=WEIGHTS[:4])
    with pytest.raises(ValueError, match="`bw_method` should be 'scott', 'silverman'"):
        gaussian_kde(DATA, bw_method="wide")
    with pytest.raises(ValueError, match="points have dimension 3, dataset has"):
        kde.pdf(np.ones((3, 2)))
    with pytest.raises(ValueError, match="only handles 1D pdfs"):
        kde.integrate_box_1d(0.0, 1.0)
    with pytest.raises(NotImplementedError, match="use `integrate_box_1d`"):
        kde.integrate_box(np.zeros(2), np.ones(2))
    with pytest.raises(NotImplementedError, match="bandwidth method is not supported"):
        kde.set_bandwidth("scott")
    with pytest.raises(ValueError, match="not the same dimensionality"):
        kde.integrate_kde(gaussian_kde(DATA[0]))


# ------------------------------------------------------------ spatial.transform

QUAT = RNG.standard_normal((5, 4)).astype(np.float32)
VECS = RNG.standard_normal((5, 3)).astype(np.float32)


def _rotation_results(R, q, v, mats, angs, gimbal):
    """Every Rotation method on fixed inputs, for one jitted JAX run and jaxlite."""
    r = R.from_quat(q)
    out = {
        "quat": r.quat,
        "matrix": r.as_matrix(),
        "from_matrix": R.from_matrix(mats).quat,
        "rotvec": r.as_rotvec(True),
        "from_rotvec": R.from_rotvec(v).quat,
        "from_rotvec0": R.from_rotvec(v * 0).quat,
        "mrp": r.as_mrp(),
        "from_mrp": R.from_mrp(v).quat,
        "apply_inv": r.apply(v, inverse=True),
        "apply_one": r[0].apply(v),
        "compose": (r * r.inv()[::-1]).quat,
        "magnitude": r.magnitude(),
        "canonical": r.as_quat(True, True),
        "concat": R.concatenate([r, r[:2]]).quat,
        "identity": R.identity().quat,
        "mean": r.mean(v[:, 0] ** 2).as_matrix(),
    }
    for seq in ["ZYX", "xzx"]:  # one Tait-Bryan, one proper Euler (JAX compiles slowly)
        out["from_euler_" + seq] = R.from_euler(seq, angs).quat
        out["from_euler_deg_" + seq] = R.from_euler(seq, angs * 50, True).quat
        out["as_euler_" + seq] = r.as_euler(seq, True)
        out["gimbal_" + seq] = R.from_euler(seq, gimbal).as_euler(seq)
    return out


def test_rotation_vs_jax_and_scipy():
    jax = _jax()
    jt = _jmod("jax.scipy.spatial.transform")
    from scipy.spatial.transform import Rotation as SR

    from jaxlite.scipy.spatial.transform import Rotation as R

    mats = SR.random(20, random_state=1).as_matrix().astype(np.float32)
    angs = RNG.uniform(-3, 3, (5, 3)).astype(np.float32)
    gimbal = np.array([[0.3, 0.0, 0.2], [0.1, np.pi / 2, 0.4]], np.float32)
    args = (QUAT, VECS, mats, angs, gimbal)
    theirs = jax.jit(lambda *a: _rotation_results(jt.Rotation, *a))(*args)
    ours = _rotation_results(R, *args)
    for key in theirs:
        _same(theirs[key], ours[key], 1e-3 if "euler" in key else 1e-4)
    lr, sr = R.from_quat(QUAT), SR.from_quat(QUAT.astype(np.float64))
    np.testing.assert_allclose(lr.as_matrix(), sr.as_matrix(), atol=1e-5)
    np.testing.assert_allclose(lr.as_rotvec(), sr.as_rotvec(), atol=1e-5)
    np.testing.assert_allclose(lr.apply(VECS), sr.apply(VECS), atol=1e-5)
    for seq in ["xyz", "ZYX", "xzx", "XYX", "yxz"]:
        np.testing.assert_allclose(lr.as_euler(seq), sr.as_euler(seq), atol=1e-3)
        np.testing.assert_allclose(
            R.from_euler(seq, angs).as_matrix(),
            SR.from_euler(seq, angs).as_matrix(),
            atol=1e-5,
        )


def test_slerp_vs_jax_and_scipy():
    jt = _jmod("jax.scipy.spatial.transform")
    from scipy.spatial.transform import Rotation as SR
    from scipy.spatial.transform import Slerp as SS

    from jaxlite.scipy.spatial.transform import Rotation as R
    from jaxlite.scipy.spatial.transform import Slerp

    t = np.array([0.0, 1.0, 3.0, 4.0, 7.0], np.float32)
    tt = np.array([0.0, 0.5, 2.2, 5.5, 7.0], np.float32)

    def run(mod_slerp, mod_rot, q, t, tt):
        s = mod_slerp.init(t, mod_rot.from_quat(q))
        return s, s(tt), s(tt[3])

    jax = _jax()
    theirs = jax.jit(lambda *a: run(jt.Slerp, jt.Rotation, *a))(QUAT, t, tt)
    _same(theirs, run(Slerp, R, QUAT, t, tt))
    sl = Slerp.init(t, R.from_quat(QUAT))
    ref = SS(t, SR.from_quat(QUAT.astype(np.float64)))(tt).as_matrix()
    np.testing.assert_allclose(sl(tt).as_matrix(), ref, atol=1e-4)
    with pytest.raises(TypeError, match="must be a `Rotation` instance"):
        Slerp.init(t, QUAT)
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init(t[:1], R.from_quat(QUAT[:1]))
    with pytest.raises(ValueError, match="equal to number of timestamps"):
        Slerp.init(t[:3], R.from_quat(QUAT))
    with pytest.raises(ValueError, match="at most 1-dimensional"):
        sl(tt[None])


def test_rotation_transformations_and_errors():
    from jaxlite.scipy.spatial.transform import Rotation as R

    rot = R.from_quat(QUAT)
    leaves, _ = jaxlite.tree_util.tree_flatten(rot)
    assert len(leaves) == 1
    apply = jaxlite.jit(lambda r, v: r.apply(v))
    _same(apply(rot, VECS), rot.apply(VECS), 1e-6)
    euler = jaxlite.vmap(lambda q: R.from_quat(q).as_euler("zyx"))(QUAT)
    _same(euler, jnp.stack([R.from_quat(q).as_euler("zyx") for q in QUAT]), 1e-6)
    with jaxlite.enable_x64():
        q64, v64 = QUAT[:2].astype(np.float64), VECS[:2].astype(np.float64)
        check_grads(lambda q, v: R.from_quat(q).apply(v), (q64, v64), order=1)
        check_grads(lambda rv: R.from_rotvec(rv).as_euler("XYZ"), (v64,), order=1)
    with pytest.raises(TypeError, match="not subscriptable"):
        rot[0][0]
    with pytest.raises(TypeError, match="has no len"):
        len(rot[0])
    with pytest.raises(ValueError, match="Expected 3 axes"):
        rot.as_euler("xy")
    with pytest.raises(ValueError, match="consecutive axes to be different"):
        R.from_euler("xxy", np.zeros(3))
    with pytest.raises(ValueError, match="Expected axes from `seq`"):
        R.from_euler("xYz", np.zeros(3))
    with pytest.raises(ValueError, match="number of values equal to number"):
        rot.mean(np.ones(3))
    with pytest.raises(NotImplementedError):
        R.random(jaxlite.random.key(0))
