"""The Schur decomposition (lax.linalg.schur and its NumPy kernels), the functions of
jax.scipy.linalg built on it (schur, rsf2csf, sqrtm, funm, solve_sylvester) and
lax.linalg.qdwh: properties of the factors, values against SciPy and real JAX,
jit against eager, vmap against a loop, and derivatives against finite differences."""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.linalg as jsl
from jaxlite import lax
from jaxlite.lax import linalg_schur_numpy
from testing import check_close, check_grads

RNG = np.random.default_rng(11)
A4 = RNG.normal(size=(4, 4)).astype(np.float32)
A5 = RNG.normal(size=(5, 5)).astype(np.float32)
B3 = RNG.normal(size=(3, 3)).astype(np.float32)
C53 = RNG.normal(size=(5, 3)).astype(np.float32)
AC = (RNG.normal(size=(4, 4)) + 1j * RNG.normal(size=(4, 4))).astype(np.complex64)
JORDAN = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]], np.float32)


def _matrices():
    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(1, 10))
        a = rng.normal(size=(n, n))
        if trial % 3 == 0:
            a = a + 1j * rng.normal(size=(n, n))
        if trial % 5 == 0:
            a = np.round(a)  # repeated and zero eigenvalues
        yield a
    yield np.roll(np.eye(6), 1, 0)  # a cyclic permutation: every step stagnates
    yield np.zeros((3, 3))
    yield np.ones((4, 4))
    yield np.array([[0.0, 1.0], [-1.0, 0.0]])


def test_schur_kernel_factors():
    for a in _matrices():
        t, q = linalg_schur_numpy.schur(a)
        n = a.shape[0]
        check_close(q @ t @ q.conj().T, a, rtol=1e-12, atol=1e-12)
        check_close(q.conj().T @ q, np.eye(n), rtol=1e-12, atol=1e-12)
        assert not np.any(np.tril(t, -2))
        sub = np.diag(t, -1)
        if np.iscomplexobj(a):
            assert not np.any(sub)
        for k in np.nonzero(sub)[0]:  # standardised 2 x 2 blocks (LAPACK's form)
            assert k + 1 == len(sub) or sub[k + 1] == 0
            assert t[k, k] == pytest.approx(t[k + 1, k + 1])
            assert t[k, k + 1] * t[k + 1, k] < 0


def test_schur_kernel_nan_on_failure():
    t, q = linalg_schur_numpy.schur(np.array([[np.nan, 1.0], [0.0, 1.0]], np.float32))
    assert t.dtype == np.float32 and np.isnan(t).all() and np.isnan(q).all()


def test_lax_schur_batches_jits_and_vmaps():
    x = np.stack([A4, A4.T, 2 * A4])
    t, q = lax.linalg.schur(x)
    assert t.shape == q.shape == x.shape and t.dtype == np.float32
    for i in range(3):
        ti, qi = lax.linalg.schur(x[i])
        check_close(np.asarray(t[i]), np.asarray(ti))
        check_close(np.asarray(q[i]), np.asarray(qi))
    tv = jaxlite.vmap(lambda a: lax.linalg.schur(a)[0])(x)
    check_close(np.asarray(tv), np.asarray(t))
    tj = jaxlite.jit(lambda a: lax.linalg.schur(a, compute_schur_vectors=False))(x)
    assert isinstance(tj, list) and len(tj) == 1
    check_close(np.asarray(tj[0]), np.asarray(t))


def test_lax_schur_errors():
    with pytest.raises(TypeError, match="schur does not accept dtype int32"):
        lax.linalg.schur(np.eye(3, dtype=np.int32))
    with pytest.raises(ValueError, match="must be a square matrix"):
        lax.linalg.schur(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="must have rank at least 2"):
        lax.linalg.schur(np.ones(3, np.float32))
    with pytest.raises(NotImplementedError, match="sort feature of LAPACK's gees"):
        lax.linalg.schur(A4, sort_eig_vals=True)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        jaxlite.jvp(lambda a: lax.linalg.schur(a)[0], (A4,), (A4,))
    with pytest.raises(ValueError, match="Expected 'output' to be either"):
        jsl.schur(A4, output="neither")


def test_lax_schur_jaxpr_matches_jax():
    jax = pytest.importorskip("jax")
    ours = str(jaxlite.make_jaxpr(lax.linalg.schur)(A4))
    theirs = str(jax.make_jaxpr(jax.lax.linalg.schur)(A4))
    assert ours == theirs


def test_scipy_schur_complex_and_rsf2csf():
    sp = pytest.importorskip("scipy.linalg")
    t, z = jsl.schur(A5, output="complex")
    assert t.dtype == np.complex64
    check_close(np.asarray(z @ t @ z.conj().T), A5, rtol=1e-4, atol=1e-4)
    tr, zr = jsl.schur(A5)
    tc, zc = jsl.rsf2csf(tr, zr)
    assert not np.any(np.tril(np.asarray(tc), -1))
    check_close(np.asarray(zc @ tc @ zc.conj().T), A5, rtol=1e-4, atol=1e-4)
    ref_t, _ = sp.rsf2csf(*sp.schur(A5.astype(np.float64)))

    def spectrum(t):
        d = np.round(np.diag(np.asarray(t)).astype(np.complex128), 4)
        return d[np.lexsort((d.imag, d.real))]

    check_close(spectrum(tc), spectrum(ref_t), rtol=1e-3, atol=1e-3)
    with pytest.raises(ValueError, match="Input array shapes must match"):
        jsl.rsf2csf(tr, np.eye(2, dtype=np.float32))


def test_sqrtm_values():
    sp = pytest.importorskip("scipy.linalg")
    # (no negative real eigenvalues: their principal root depends on the sign of a
    # rounding-level imaginary part)
    spd = (A5 @ A5.T + np.eye(5)).astype(np.float32)
    for a in (spd, AC, JORDAN, np.zeros((3, 3), np.float32)):
        root = np.asarray(jsl.sqrtm(a))
        check_close(root, sp.sqrtm(a.astype(np.complex128)), rtol=2e-4, atol=2e-4)
    batch = np.stack([JORDAN, 2 * JORDAN])
    check_close(np.asarray(jsl.sqrtm(batch)[1]), np.asarray(jsl.sqrtm(2 * JORDAN)))
    check_close(np.asarray(jaxlite.jit(jsl.sqrtm)(A5)), np.asarray(jsl.sqrtm(A5)))


def test_funm_values():
    sp = pytest.importorskip("scipy.linalg")
    check_close(np.asarray(jsl.funm(A4, jnp.exp)), sp.expm(A4.astype(np.float64)), rtol=1e-3, atol=1e-3)  # fmt: skip
    f, err = jsl.funm(AC, jnp.sin, disp=False)
    check_close(np.asarray(f), sp.funm(AC.astype(np.complex128), np.sin), rtol=1e-3, atol=1e-3)  # fmt: skip
    assert err.dtype == np.float32 and 0 < float(err) <= 1
    with pytest.raises(ValueError, match="expected square array_like input"):
        jsl.funm(C53, jnp.exp)


@pytest.mark.parametrize("method", ["schur", "eigen"])
def test_solve_sylvester(method):
    sp = pytest.importorskip("scipy.linalg")
    x = jsl.solve_sylvester(A5, B3, C53, method=method)
    assert x.dtype == np.float32
    check_close(np.asarray(x), sp.solve_sylvester(A5, B3, C53), rtol=1e-3, atol=1e-3)
    xc = jsl.solve_sylvester(AC, B3[:2, :2], AC[:, :2], method=method)
    c128 = np.complex128
    ref = sp.solve_sylvester(
        AC.astype(c128), B3[:2, :2].astype(c128), AC[:, :2].astype(c128)
    )
    check_close(np.asarray(xc), ref, rtol=1e-3, atol=1e-3)
    eye = np.eye(2, dtype=np.float32)
    assert np.isnan(np.asarray(jsl.solve_sylvester(eye, -eye, eye))).all()


def test_solve_sylvester_transformations():
    batch = np.stack([A5, A5.T])
    looped = np.stack([np.asarray(jsl.solve_sylvester(a, B3, C53)) for a in batch])
    check_close(np.asarray(jsl.solve_sylvester(batch, B3, C53)), looped, rtol=1e-5, atol=1e-5)  # fmt: skip
    vm = jaxlite.vmap(jsl.solve_sylvester, (0, None, None))(batch, B3, C53)
    check_close(np.asarray(vm), looped, rtol=1e-5, atol=1e-5)
    jit = jaxlite.jit(jsl.solve_sylvester)(A5, B3, C53)
    check_close(np.asarray(jit), looped[0], rtol=1e-5, atol=1e-5)
    # linear in C: its gradient is the solution of the adjoint equation
    check_grads(lambda c: jsl.solve_sylvester(A5, B3, c), (C53,), order=1, modes=("fwd", "rev"))  # fmt: skip
    with pytest.raises(ValueError, match="Incompatible shapes for Sylvester"):
        jsl.solve_sylvester(A5, B3, C53.T)
    with pytest.raises(ValueError, match="Unrecognized method"):
        jsl.solve_sylvester(A5, B3, C53, method="magic")


def test_sqrtm_is_not_differentiable_as_in_jax():
    # JAX's sqrtm goes through the Schur decomposition, which has no derivative rule.
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur'"):
        jaxlite.grad(lambda a: jnp.real(jsl.sqrtm(a)).sum())(A4)


def _matches_jax(f, tol):
    jax = pytest.importorskip("jax")
    ours = jaxlite.tree_util.tree_leaves(f(jaxlite))
    theirs = jax.tree_util.tree_leaves(f(jax))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        o, t = jnp.asarray(o), jax.numpy.asarray(t)
        assert (o.shape, o.dtype, o.weak_type) == (t.shape, t.dtype, t.weak_type)
        check_close(np.asarray(o), np.asarray(t), rtol=tol, atol=tol)


@pytest.mark.parametrize(
    "name, x, kw",
    [
        ("square", A4, {}),
        ("tall", C53, {}),
        ("complex", AC, {}),
        (
            "ill_conditioned",
            (A4 @ np.diag([1, 1e-3, 1e-5, 1e-6])).astype(np.float32),
            {},
        ),  # fmt: skip
        ("max_iterations", A4, {"max_iterations": 2}),
        ("eps", A4, {"eps": 1e-3}),
        ("dynamic_shape", np.pad(A4, ((0, 2), (0, 1))), {"dynamic_shape": (4, 4)}),
        ("zero", np.zeros((3, 3), np.float32), {}),
    ],
)
def test_qdwh_matches_jax(name, x, kw):
    _matches_jax(lambda m: m.lax.linalg.qdwh(x, **kw), 2e-4)


def test_qdwh_polar_and_transformations():
    u, h, num_iters, converged = lax.linalg.qdwh(C53)
    check_close(np.asarray(u.T @ u), np.eye(3), rtol=1e-5, atol=1e-5)
    check_close(np.asarray(u @ h), C53, rtol=1e-5, atol=1e-5)
    assert bool(converged) and 0 < int(num_iters) <= 10
    jitted = jaxlite.jit(lambda a: lax.linalg.qdwh(a)[0])(C53)
    check_close(np.asarray(jitted), np.asarray(u), rtol=1e-6, atol=1e-6)
    batch = np.stack([C53, 2 * C53 + 1])
    vm = jaxlite.vmap(lambda a: lax.linalg.qdwh(a)[0])(batch)
    for i in range(2):
        check_close(np.asarray(vm[i]), np.asarray(lax.linalg.qdwh(batch[i])[0]), rtol=1e-5, atol=1e-5)  # fmt: skip
    with pytest.raises(ValueError, match="must have M >= N"):
        lax.linalg.qdwh(C53.T)
