"""Linear algebra: lax.linalg primitives, jax.numpy.linalg and jax.scipy.linalg.

Values are compared with NumPy (and SciPy where installed) and with real JAX;
derivatives with finite differences (check_grads, orders 1 and 2) and, where the
derivative is a convention (det at singular matrices, solve with a symmetric solver),
with JAX's; vmap with a loop over the examples; jit with eager evaluation; errors by
class and key phrase.
"""

import functools

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.linalg as jsl
from jaxlite import lax
from testing import check_close, check_grads

RNG = np.random.default_rng(1234)


def _f(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _c(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(
        np.complex64
    )


def _spd(n, batch=(), dtype=np.float32):
    a = RNG.standard_normal((*batch, n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * RNG.standard_normal((*batch, n, n))
    return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(dtype)


A = _f(4, 4)
A3 = _f(2, 3, 3)
A5 = _f(2, 5, 5)
TALL = _f(5, 3)
WIDE = _f(3, 5)
SPD = _spd(4)
B = _f(4, 2)
LOWER = (np.tril(_f(4, 4)) + 3 * np.eye(4)).astype(np.float32)


def _jax():
    return pytest.importorskip("jax")


def _leaves(x):
    return [np.asarray(v) for v in jaxlite.tree_util.tree_leaves(x)]


def _check_vs_jax(f, *args, tol=1e-4, jax_module=None):
    """`f(module, *args)` with jaxlite's and JAX's module agree in dtype and value."""
    jax = _jax()
    out = jaxlite.tree_util.tree_leaves(f("lite", *args))
    ref = jax.tree_util.tree_leaves(f("jax", *args))
    assert len(out) == len(ref)
    for o, r in zip(out, ref):
        assert o.shape == r.shape and o.dtype == r.dtype, (o.shape, r.shape, o.dtype)
        check_close(np.asarray(o), np.asarray(r), rtol=tol, atol=tol)


def _mods(which):
    """(lax, jnp, scipy.linalg) of jaxlite or of JAX."""
    if which == "lite":
        return lax, jnp, jsl
    jax = _jax()
    import jax.scipy.linalg as jax_sl

    return jax.lax, jax.numpy, jax_sl


# ----------------------------------------------------------------------------------------
# lax.linalg: values


def test_lax_decompositions_reconstruct():
    chol = np.asarray(lax.linalg.cholesky(SPD))
    check_close(chol @ chol.T, SPD, rtol=1e-4, atol=1e-4)
    assert np.allclose(np.triu(chol, 1), 0)
    v, w = lax.linalg.eigh(SPD)
    check_close(np.asarray(v) @ np.diag(w) @ np.asarray(v).T, SPD, rtol=1e-4, atol=1e-4)
    for x in (A, TALL, WIDE):
        lu, piv, perm = (np.asarray(t) for t in lax.linalg.lu(x))
        m, n = x.shape
        k = min(m, n)
        low = np.tril(lu[:, :k], -1) + np.eye(m, k)
        check_close(low @ np.triu(lu[:k]), x[perm], rtol=1e-5, atol=1e-5)
        check_close(np.asarray(lax.linalg.lu_pivots_to_permutation(piv, m)), perm)
        q, r = lax.linalg.qr(x, full_matrices=False)
        check_close(np.asarray(q) @ np.asarray(r), x, rtol=1e-5, atol=1e-5)
        q, r, p = lax.linalg.qr(x, pivoting=True)
        check_close(np.asarray(q) @ np.asarray(r), x[:, p], rtol=1e-5, atol=1e-5)
        u, s, vt = lax.linalg.svd(x, full_matrices=False)
        check_close((np.asarray(u) * s) @ np.asarray(vt), x, rtol=1e-5, atol=1e-5)


def test_lax_complex_decompositions():
    spd = _spd(3, dtype=np.complex64)
    chol = np.asarray(lax.linalg.cholesky(spd))
    check_close(chol @ chol.conj().T, spd, rtol=1e-4, atol=1e-4)
    v, w = lax.linalg.eigh(spd)
    assert w.dtype == np.float32 and v.dtype == np.complex64
    check_close(np.asarray(w), np.linalg.eigvalsh(spd), rtol=1e-4, atol=1e-4)
    x = _c(3, 3)
    lu, _, perm = (np.asarray(t) for t in lax.linalg.lu(x))
    check_close((np.tril(lu, -1) + np.eye(3)) @ np.triu(lu), x[perm], atol=1e-5)
    s = lax.linalg.svd(x, compute_uv=False)
    check_close(np.asarray(s), np.linalg.svd(x, compute_uv=False), atol=1e-5)
    b = _c(3, 2)
    low = np.tril(x) + 3 * np.eye(3)
    out = lax.linalg.triangular_solve(
        low, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True
    )
    check_close(np.asarray(out), np.linalg.solve(low.conj().T, b), atol=1e-5)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_values(left_side, lower, transpose_a, unit_diagonal):
    a = A5[0] + 4 * np.eye(5, dtype=np.float32)
    b = _f(5, 3) if left_side else _f(3, 5)
    out = lax.linalg.triangular_solve(
        a,
        b,
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        unit_diagonal=unit_diagonal,
    )
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        t = t - np.diag(np.diag(t)) + np.eye(5)
    if transpose_a:
        t = t.T
    ref = np.linalg.solve(t, b) if left_side else np.linalg.solve(t.T, b.T).T
    check_close(np.asarray(out), ref, rtol=1e-5, atol=1e-5)


def test_lax_linalg_matches_jax():
    def f(which, x, spd, b, low):
        lx, _, _ = _mods(which)
        la = lx.linalg
        return (
            la.cholesky(spd),
            la.eigh(spd)[1],
            la.lu(x),
            la.qr(x),
            la.qr(TALL, full_matrices=False),
            la.qr(x, pivoting=True),
            la.svd(x, compute_uv=False),
            la.triangular_solve(low, b, left_side=True, lower=True),
            la.triangular_solve(low, b[:, 0], left_side=True, lower=True),
            la.lu_pivots_to_permutation(np.array([2, 2, 3], np.int32), 5),
            la.tridiagonal_solve(x[0], x[1] + 5, x[2], b),
            la.hessenberg(x),
        )

    _check_vs_jax(f, A, SPD, B, LOWER)


def test_lax_svd_and_eig_match_jax_up_to_gauge():
    jax = _jax()
    u, s, vt = lax.linalg.svd(A)
    ju, js, jvt = jax.lax.linalg.svd(A)
    check_close(np.abs(np.asarray(u)), np.abs(np.asarray(ju)), atol=1e-4)
    check_close(np.abs(np.asarray(vt)), np.abs(np.asarray(jvt)), atol=1e-4)
    w, vl, vr = lax.linalg.eig(A)
    jw, jvl, jvr = jax.lax.linalg.eig(A)
    assert w.dtype == jw.dtype == np.complex64
    order, jorder = np.argsort(np.asarray(w)), np.argsort(np.asarray(jw))
    check_close(np.asarray(w)[order], np.asarray(jw)[jorder], atol=1e-4)
    for v, jv in ((vl, jvl), (vr, jvr)):
        # Unit columns spanning the same lines: |<v_i, jv_i>| = 1.
        overlap = np.abs(np.sum(np.conj(np.asarray(v)) * np.asarray(jv), axis=0))
        check_close(np.sort(overlap), np.ones(4), atol=1e-4)
    a = np.asarray(A)
    check_close(a @ np.asarray(vr), np.asarray(vr) * np.asarray(w), atol=1e-4)
    check_close(
        np.asarray(vl).conj().T @ a,
        np.asarray(w)[:, None] * np.asarray(vl).conj().T,
        atol=1e-4,
    )


def test_householder_product_matches_jax():
    jax = _jax()
    h, taus = jax.lax.linalg.hessenberg(A)
    h, taus = np.asarray(h), np.asarray(taus)
    out = lax.linalg.householder_product(h[1:, :-1], taus)
    ref = jax.lax.linalg.householder_product(h[1:, :-1], taus)
    check_close(np.asarray(out), np.asarray(ref), atol=1e-5)


def test_cholesky_not_positive_definite_is_nan():
    out = np.asarray(
        lax.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32))
    )
    # As in JAX: NaN factor, whose upper triangle the public function zeroes.
    assert np.isnan(out[np.tril_indices(2)]).all() and out[0, 1] == 0
    batch = np.stack([SPD, -SPD])
    out = np.asarray(lax.linalg.cholesky(batch))
    assert np.isfinite(out[0]).all() and np.isnan(out[1][np.tril_indices(4)]).all()


def test_jaxpr_primitives_and_params_match_jax():
    jax = _jax()
    cases = [
        (lambda la, x: la.eigh(x, symmetrize_input=False), SPD),
        (lambda la, x: la.qr(x), A),
        (lambda la, x: la.svd(x), A),
        (lambda la, x: la.lu(x), A),
        (lambda la, x: la.eig(x), A),
        (lambda la, x: la.triangular_solve(x, x, left_side=True), A),
        (lambda la, x: la.hessenberg(x), A),
    ]
    for f, x in cases:
        ours = jaxlite.make_jaxpr(functools.partial(f, lax.linalg))(x).jaxpr.eqns
        theirs = jax.make_jaxpr(functools.partial(f, jax.lax.linalg))(x).jaxpr.eqns
        assert [e.primitive.name for e in ours] == [e.primitive.name for e in theirs]
        for e, je in zip(ours, theirs):
            assert sorted(e.params) == sorted(je.params), e.primitive.name
            assert [str(v.aval) for v in e.outvars] == [str(v.aval) for v in je.outvars]


# ----------------------------------------------------------------------------------------
# lax.linalg: derivatives


def test_lax_grads():
    check_grads(lax.linalg.cholesky, (SPD,), order=2)
    check_grads(lambda x: lax.linalg.eigh(x)[1], (SPD,), order=2)
    for x in (A, TALL, WIDE):
        check_grads(lambda x: lax.linalg.lu(x)[0], (x,), order=1)
        check_grads(lambda x: lax.linalg.svd(x, compute_uv=False), (x,), order=2)
        check_grads(lambda x: lax.linalg.qr(x, full_matrices=False), (x,), order=1)
        check_grads(lambda x: lax.linalg.svd(x, full_matrices=False), (x,), order=1)
    check_grads(lambda x: lax.linalg.qr(x), (A3[0],), order=2)
    check_grads(lambda x: lax.linalg.qr(x, pivoting=True)[:2], (A,), order=1)


def test_eigh_eigenvector_grads_gauge_invariant():
    # f(V) = V diag(g(w)) V^T does not depend on the signs of the eigenvectors.
    def f(x):
        v, w = lax.linalg.eigh(x)
        return jnp.matmul(v * jnp.sin(w), v.T)

    check_grads(f, (SPD,), order=2)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("flags", [(True, False, False), (False, True, True)])
def test_triangular_solve_grads(left_side, flags):
    lower, transpose_a, unit_diagonal = flags
    b = B if left_side else B.T

    def f(a, b):
        return lax.linalg.triangular_solve(
            a,
            b,
            left_side=left_side,
            lower=lower,
            transpose_a=transpose_a,
            unit_diagonal=unit_diagonal,
        )

    check_grads(f, (LOWER if lower else LOWER.T, b), order=2)


def test_eig_grads():
    def f(x):
        (w,) = lax.linalg.eig(
            x, compute_left_eigenvectors=False, compute_right_eigenvectors=False
        )
        return jnp.real(w), jnp.imag(w)

    check_grads(f, (A,), order=2)

    def vectors(module, x):
        w, vl, vr = module.linalg.eig(x, enable_eigvec_derivs=True)
        u = np.arange(1.0, 5.0).astype(np.complex64)
        return module.abs(vr.conj().T @ u) ** 2, module.abs(vl.conj().T @ u) ** 2

    sym = A + A.T
    check_grads(functools.partial(vectors, lax), (sym,), order=1)
    jax = _jax()
    direction = _f(4, 4)
    ours = jaxlite.jvp(lambda x: vectors(lax, x), (sym,), (direction,))[1]
    theirs = jax.jvp(lambda x: vectors(jax.lax, x), (sym,), (direction,))[1]
    # Eigenvalue order is LAPACK's in both, so the entries line up.
    check_close(_leaves(ours), _leaves(theirs), rtol=1e-3, atol=1e-3)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs"):
        jaxlite.jvp(lambda x: lax.linalg.eig(x)[2], (A,), (A,))


def test_tridiagonal_and_householder_grads():
    dl, du, b = _f(4), _f(4), _f(4, 2)
    d = (np.abs(_f(4)) + 3).astype(np.float32)
    check_grads(lax.linalg.tridiagonal_solve, (dl, d, du, b), order=2)
    h, taus = lax.linalg.hessenberg(A)
    check_grads(
        lax.linalg.householder_product,
        (np.asarray(h)[1:, :-1], np.asarray(taus)),
        order=1,
    )


def _jvp_matches_jax(name, args):
    jax = _jax()
    import jax.scipy.linalg as jax_sl

    fns = {
        "cholesky": (lax.linalg.cholesky, jax.lax.linalg.cholesky),
        "eigh": (lambda x: lax.linalg.eigh(x)[1], lambda x: jax.lax.linalg.eigh(x)[1]),
        "qr": (lax.linalg.qr, jax.lax.linalg.qr),
        "svd": (
            lambda x: lax.linalg.svd(x, compute_uv=False),
            lambda x: jax.lax.linalg.svd(x, compute_uv=False),
        ),
        "lu": (lambda x: lax.linalg.lu(x)[0], lambda x: jax.lax.linalg.lu(x)[0]),
        "det": (jnp.linalg.det, jax.numpy.linalg.det),
        "slogdet": (
            lambda x: tuple(jnp.linalg.slogdet(x)),
            lambda x: tuple(jax.numpy.linalg.slogdet(x)),
        ),
        "solve": (jnp.linalg.solve, jax.numpy.linalg.solve),
        "triangular_solve": tuple(
            functools.partial(
                m.linalg.triangular_solve,
                left_side=True,
                lower=True,
                transpose_a=True,
                conjugate_a=True,
            )
            for m in (lax, jax.lax)
        ),
        "expm": (jsl.expm, jax_sl.expm),
    }
    ours, theirs = fns[name]
    tangents = tuple(_c(*np.shape(x)) for x in args)
    got = jaxlite.jvp(ours, args, tangents)[1]
    want = jax.jvp(theirs, args, tangents)[1]
    check_close(_leaves(got), _leaves(want), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize(
    "name",
    ["cholesky", "eigh", "qr", "svd", "lu", "det", "slogdet", "solve",
     "triangular_solve", "expm"],
)  # fmt: skip
def test_complex_jvps_match_jax(name):
    a = _c(4, 4)
    spd = _spd(4, dtype=np.complex64)
    args = {
        "cholesky": (spd,),
        "eigh": (spd,),
        "solve": (a, _c(4, 2)),
        "triangular_solve": (spd, _c(4, 2)),
        "expm": (0.5 * a,),
    }.get(name, (a,))
    _jvp_matches_jax(name, args)


def test_complex_vjps_match_jax():
    jax = _jax()
    a, b = _c(3, 3), _c(3, 1)
    g = jaxlite.grad(lambda x: jnp.real(jnp.sum(jnp.linalg.inv(x) * b)))(a)
    jg = jax.grad(lambda x: jax.numpy.real(jax.numpy.sum(jax.numpy.linalg.inv(x) * b)))(
        a
    )
    check_close(np.asarray(g), np.asarray(jg), rtol=1e-3, atol=1e-3)


def test_unsupported_derivatives_raise():
    with pytest.raises(NotImplementedError, match="full matrices"):
        jaxlite.jvp(lambda x: lax.linalg.svd(x)[0], (TALL,), (TALL,))
    with pytest.raises(NotImplementedError, match="hessenberg"):
        jaxlite.jvp(lambda x: lax.linalg.hessenberg(x)[0], (A,), (A,))
    with pytest.raises(NotImplementedError, match="partial eigen"):
        jaxlite.jvp(
            lambda x: lax.linalg.eigh(x, subset_by_index=(0, 2))[1], (SPD,), (SPD,)
        )


# ----------------------------------------------------------------------------------------
# jax.numpy.linalg


def test_numpy_linalg_namespace_matches_jax():
    jax = _jax()
    public = {n for n in dir(jax.numpy.linalg) if not n.startswith("_")}
    assert public <= set(dir(jnp.linalg))


def _check_pairs(pairs, tol):
    for name, got, want in pairs:
        got, want = (
            _leaves(got),
            [np.asarray(w) for w in jaxlite.tree_util.tree_leaves(want)],
        )
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert g.shape == w.shape, (name, g.shape, w.shape)
            check_close(g, w.astype(g.dtype), rtol=tol, atol=tol, err_msg=name)


def test_numpy_linalg_values_match_numpy():
    la, a, a5, spd, b, tall = jnp.linalg, A, A5, SPD, B, TALL
    eigvals = np.sort_complex(np.asarray(la.eigvals(a)))
    pairs = [
        ("det", la.det(a), np.linalg.det(a)),
        ("det5", la.det(a5), np.linalg.det(a5)),
        ("det2", la.det(a[:2, :2]), np.linalg.det(a[:2, :2])),
        ("det3", la.det(a[:3, :3]), np.linalg.det(a[:3, :3])),
        ("slogdet", tuple(la.slogdet(a5)), tuple(np.linalg.slogdet(a5))),
        ("slogdet_qr", tuple(la.slogdet(a5, method="qr")), tuple(np.linalg.slogdet(a5))),
        ("inv", la.inv(a5), np.linalg.inv(a5)),
        ("solve", la.solve(a, b), np.linalg.solve(a, b)),
        ("solve_vec", la.solve(a, b[:, 0]), np.linalg.solve(a, b[:, 0])),
        ("solve_bcast", la.solve(a5, tall), np.linalg.solve(a5, tall)),
        ("cholesky", la.cholesky(spd), np.linalg.cholesky(spd)),
        ("cholesky_upper", la.cholesky(spd, upper=True), np.linalg.cholesky(spd).T),
        ("eigvalsh", la.eigvalsh(spd), np.linalg.eigvalsh(spd)),
        ("eigh_U", la.eigh(spd, UPLO="U").eigenvalues, np.linalg.eigvalsh(spd, "U")),
        ("eigvals", eigvals, np.sort_complex(np.linalg.eigvals(a))),
        ("pinv", la.pinv(tall), np.linalg.pinv(tall)),
        ("pinv_h", la.pinv(spd, hermitian=True), np.linalg.pinv(spd, hermitian=True)),
        ("lstsq", la.lstsq(tall, a5[0, :, :2])[:2], np.linalg.lstsq(tall, a5[0, :, :2])[:2]),
        ("matrix_rank", la.matrix_rank(tall), np.linalg.matrix_rank(tall)),
        ("matrix_power", la.matrix_power(a, 5), np.linalg.matrix_power(a, 5)),
        ("matrix_power_neg", la.matrix_power(a, -2), np.linalg.matrix_power(a, -2)),
        ("matrix_power_0", la.matrix_power(a5, 0), np.linalg.matrix_power(a5, 0)),
        ("qr", tuple(la.qr(tall)), tuple(np.linalg.qr(tall))),
        ("qr_complete", tuple(la.qr(tall, mode="complete")), tuple(np.linalg.qr(tall, "complete"))),
        ("qr_r", la.qr(tall, mode="r"), np.linalg.qr(tall, mode="r")),
        ("svdvals", la.svdvals(a5), np.linalg.svd(a5, compute_uv=False)),
        ("svd_h", la.svd(spd - 8 * np.eye(4), hermitian=True, compute_uv=False),
         np.linalg.svd(spd - 8 * np.eye(4), compute_uv=False)),
        ("tensorinv", la.tensorinv(a.reshape(4, 2, 2), ind=1), np.linalg.tensorinv(a.reshape(4, 2, 2), ind=1)),
        ("tensorsolve", la.tensorsolve(a.reshape(4, 2, 2), b[:, 0]), np.linalg.tensorsolve(a.reshape(4, 2, 2), b[:, 0])),
        ("multi_dot", la.multi_dot([tall[:, 0], tall, a[:3]]), np.linalg.multi_dot([tall[:, 0], tall, a[:3]])),
        ("multi_dot4", la.multi_dot([a, a, b, b.T]), np.linalg.multi_dot([a, a, b, b.T])),
        ("cond", la.cond(a5), np.linalg.cond(a5)),
        ("cond1", la.cond(a5, 1), np.linalg.cond(a5, 1)),
        ("cond_fro", la.cond(a5, "fro"), np.linalg.cond(a5, "fro")),
        ("cross", la.cross(a[..., :3], a[..., 1:]), np.cross(a[..., :3], a[..., 1:])),
        ("outer", la.outer(a[0], b[:, 0]), np.outer(a[0], b[:, 0])),
        ("trace", la.trace(a5, offset=1), np.trace(a5, 1, -2, -1)),
        ("diagonal", la.diagonal(a5, offset=-1), np.diagonal(a5, -1, -2, -1)),
        ("vecdot", la.vecdot(a, a), np.sum(a * a, -1)),
        ("tensordot", la.tensordot(a, b, axes=1), np.tensordot(a, b, 1)),
        ("matmul", la.matmul(a5, a5), a5 @ a5),
        ("matrix_transpose", la.matrix_transpose(a5), np.swapaxes(a5, -1, -2)),
    ]  # fmt: skip
    _check_pairs(pairs, 2e-3)


def test_numpy_linalg_conventions_match_jax():
    # Results whose conventions NumPy does not fix: dtypes, default tolerances, lstsq's
    # outputs, the sign of a singular matrix's slogdet, cond of a singular matrix.
    sing = A.copy()
    sing[2] = 0

    def f(which, a, tall, sing):
        la = _mods(which)[1].linalg
        return (
            la.lstsq(tall, tall[:, :2]),
            la.pinv(tall, rtol=0.5), la.matrix_rank(tall, rtol=0.5), la.slogdet(sing),
            la.cond(sing), la.eigh(a + a.T).eigenvalues, la.svd(tall, full_matrices=False).S,
        )  # fmt: skip

    _check_vs_jax(f, A, TALL, sing, tol=1e-3)


@pytest.mark.parametrize(
    "ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf, 0, 3, 0.5]
)
def test_norms_match_jax(ord):  # noqa: A002
    def f(which, x):
        la = _mods(which)[1].linalg
        out = []
        if not isinstance(ord, str):
            out += [la.norm(x, ord=ord, axis=1), la.norm(x[0], ord=ord, axis=0)]
            out.append(la.vector_norm(x, ord=2 if ord is None else ord))
        if ord not in (0, 3, 0.5):
            out += [
                la.norm(x, ord=ord, axis=(1, 2)),
                la.norm(x, ord=ord, axis=(2, 0), keepdims=True),
                la.matrix_norm(x, ord="fro" if ord is None else ord),
            ]
        return out

    _check_vs_jax(f, A5, tol=1e-4)
    check_close(np.asarray(jnp.linalg.norm(A5)), np.linalg.norm(A5), rtol=1e-5)


def test_numpy_linalg_grads():
    check_grads(jnp.linalg.det, (A,), order=2)
    check_grads(jnp.linalg.det, (A5,), order=2)
    check_grads(jnp.linalg.det, (A3,), order=2)
    check_grads(lambda x: tuple(jnp.linalg.slogdet(x)), (A5,), order=2)
    check_grads(jnp.linalg.inv, (A3,), order=2)
    check_grads(jnp.linalg.solve, (A, B), order=2)
    check_grads(jnp.linalg.solve, (A5, TALL), order=1)
    check_grads(lambda a, b: jnp.linalg.solve(a, b[:, 0]), (A, B), order=1)
    check_grads(lambda x: jnp.linalg.eigh(x).eigenvalues, (SPD,), order=2)
    check_grads(jnp.linalg.pinv, (TALL,), order=1)
    check_grads(jnp.linalg.pinv, (WIDE,), order=1)
    check_grads(lambda x: jnp.linalg.norm(x, ord="nuc"), (A,), order=1)
    check_grads(lambda x: jnp.linalg.lstsq(x, TALL[:, 0])[0], (TALL,), order=1)
    check_grads(lambda x: jnp.linalg.cholesky(x), (SPD,), order=1)


def test_det_grad_at_singular_matrix_matches_jax():
    jax = _jax()
    sing = A.copy()
    sing[3] = sing[0] + 2 * sing[1]  # rank 3: the adjugate is rank 1 and non-zero
    g = jaxlite.grad(jnp.linalg.det)(sing)
    jg = jax.grad(jax.numpy.linalg.det)(sing)
    check_close(np.asarray(g), np.asarray(jg), rtol=1e-4, atol=1e-4)
    assert np.abs(np.asarray(g)).max() > 0.1
    rank2 = A.copy()
    rank2[2:] = 0
    check_close(np.asarray(jaxlite.grad(jnp.linalg.det)(rank2)), np.zeros((4, 4)))


@pytest.mark.parametrize(
    "name, fn, args, in_axes",
    [
        ("solve", jnp.linalg.solve, (_f(3, 4, 4), _f(3, 4, 2)), (0, 0)),
        ("solve_b", jnp.linalg.solve, (A, _f(4, 2, 3)), (None, 2)),
        ("solve_a", jnp.linalg.solve, (_f(4, 3, 4), B), (1, None)),
        ("inv", jnp.linalg.inv, (_f(3, 4, 4),), (0,)),
        ("det", jnp.linalg.det, (_f(5, 5, 4),), (2,)),
        ("slogdet", lambda x: tuple(jnp.linalg.slogdet(x)), (_f(3, 5, 5),), (0,)),
        ("eigh", lambda x: jnp.linalg.eigh(x).eigenvalues, (_spd(3, (2,)),), (0,)),
        ("svdvals", jnp.linalg.svdvals, (_f(3, 4, 2),), (1,)),
        ("qr", jnp.linalg.qr, (_f(2, 4, 3),), (0,)),
        ("cholesky", jnp.linalg.cholesky, (_spd(3, (2,)),), (0,)),
        ("lu", lax.linalg.lu, (_f(3, 2, 4),), (2,)),
        ("expm", jsl.expm, (_f(3, 3, 3),), (0,)),
        ("tri", lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
         (LOWER, _f(3, 4, 2)), (None, 0)),
        ("tri_right", lambda a, b: lax.linalg.triangular_solve(a, b, lower=True),
         (LOWER, _f(2, 3, 4)), (None, 1)),
    ],
)  # fmt: skip
def test_vmap_matches_loop(name, fn, args, in_axes):
    out = jaxlite.vmap(fn, in_axes=in_axes)(*args)
    size = next(np.shape(a)[d] for a, d in zip(args, in_axes) if d is not None)
    loop = [
        _leaves(
            fn(*(a if d is None else np.take(a, i, d) for a, d in zip(args, in_axes)))
        )
        for i in range(size)
    ]
    expected = [np.stack(parts) for parts in zip(*loop)]
    check_close(_leaves(out), expected, rtol=1e-4, atol=1e-4)


def test_jit_matches_eager():
    def f(a, b, spd):
        return (
            jnp.linalg.solve(a, b),
            jnp.linalg.det(a),
            jnp.linalg.slogdet(a),
            jnp.linalg.inv(a),
            jnp.linalg.eigh(spd),
            jnp.linalg.svd(a),
            jsl.expm(a),
            jsl.lu(a),
            jnp.linalg.norm(a, 2),
        )

    check_close(
        _leaves(jaxlite.jit(f)(A, B, SPD)), _leaves(f(A, B, SPD)), rtol=1e-5, atol=1e-5
    )
    grad = jaxlite.grad(lambda a: jnp.linalg.det(a) + jnp.sum(jnp.linalg.solve(a, B)))
    check_close(
        np.asarray(jaxlite.jit(grad)(A)), np.asarray(grad(A)), rtol=1e-5, atol=1e-5
    )


def test_integer_inputs_promote_to_float():
    x = np.array([[2, 1], [1, 3]], np.int32)
    assert jnp.linalg.inv(x).dtype == np.float32
    assert jnp.linalg.det(x).dtype == np.float32
    check_close(np.asarray(jnp.linalg.det(x)), np.float32(5.0), rtol=1e-6)


def test_float64_under_x64():
    with jaxlite.enable_x64():
        a = A5.astype(np.float64)
        inv = jnp.linalg.inv(a)
        assert inv.dtype == np.float64
        check_close(np.asarray(inv), np.linalg.inv(a), rtol=1e-10, atol=1e-10)
        sign, logdet = jnp.linalg.slogdet(a)
        ref_sign, ref_logdet = np.linalg.slogdet(a)
        check_close(np.asarray(sign), ref_sign)
        check_close(np.asarray(logdet), ref_logdet, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------------------
# jax.scipy.linalg


def test_scipy_linalg_values_match_scipy():
    sp = pytest.importorskip("scipy.linalg")
    sl, a, spd, b, tall = jsl, A, SPD, B, TALL
    lu_piv = sp.lu_factor(a)
    pairs = [
        ("cholesky", sl.cholesky(spd), sp.cholesky(spd)),
        ("cholesky_lower", sl.cholesky(spd, lower=True), sp.cholesky(spd, lower=True)),
        ("cho_solve", sl.cho_solve(sl.cho_factor(spd), b), sp.cho_solve(sp.cho_factor(spd), b)),
        ("cho_solve_l", sl.cho_solve(sl.cho_factor(spd, lower=True), b[:, 0]),
         sp.cho_solve(sp.cho_factor(spd, lower=True), b[:, 0])),
        ("lu", sl.lu(a), sp.lu(a)),
        ("lu_tall", sl.lu(tall), sp.lu(tall)),
        ("lu_permute_l", sl.lu(tall.T, permute_l=True), sp.lu(tall.T, permute_l=True)),
        ("lu_factor", sl.lu_factor(a), lu_piv),
        ("lu_solve", [sl.lu_solve(sl.lu_factor(a), b, trans=t) for t in (0, 1, 2)],
         [sp.lu_solve(lu_piv, b, trans=t) for t in (0, 1, 2)]),
        ("lu_solve_vec", sl.lu_solve(sl.lu_factor(a), b[:, 0]), sp.lu_solve(lu_piv, b[:, 0])),
        ("solve", sl.solve(a, b), sp.solve(a, b)),
        ("solve_pos", sl.solve(spd, b, assume_a="pos"), sp.solve(spd, b, assume_a="pos")),
        ("solve_pos_l", sl.solve(spd, b[:, 0], assume_a="pos", lower=True),
         sp.solve(spd, b[:, 0], assume_a="pos", lower=True)),
        ("solve_triangular", [sl.solve_triangular(spd, b, trans=t, lower=True) for t in (0, 1, 2, "T")],
         [sp.solve_triangular(spd, b, trans=t, lower=True) for t in (0, 1, 2, "T")]),
        ("solve_triangular_unit", sl.solve_triangular(spd, b[:, 0], unit_diagonal=True),
         sp.solve_triangular(spd, b[:, 0], unit_diagonal=True)),
        ("inv", sl.inv(a), sp.inv(a)),
        ("det", sl.det(a), sp.det(a)),
        ("eigh", sl.eigh(spd, eigvals_only=True), sp.eigh(spd, eigvals_only=True)),
        ("svd", sl.svd(tall, compute_uv=False), sp.svd(tall, compute_uv=False)),
        ("qr", sl.qr(tall), sp.qr(tall)),
        ("qr_economic", sl.qr(tall, mode="economic"), sp.qr(tall, mode="economic")),
        ("qr_r_pivoting", sl.qr(tall, mode="r", pivoting=True), sp.qr(tall, mode="r", pivoting=True)),
        ("hessenberg", sl.hessenberg(a, calc_q=True), sp.hessenberg(a, calc_q=True)),
        ("polar", sl.polar(tall), sp.polar(tall)),
        ("polar_left", sl.polar(tall.T, side="left"), sp.polar(tall.T, side="left")),
        ("expm", sl.expm(a), sp.expm(a)),
        ("expm_small", sl.expm(a * 0.01), sp.expm(a * 0.01)),
        ("expm_upper", sl.expm(np.triu(a), upper_triangular=True), sp.expm(np.triu(a))),
        ("expm_batch", sl.expm(np.stack([a, 2 * a])), sp.expm(np.stack([a, 2 * a]))),
        ("expm_frechet", sl.expm_frechet(a, a.T), sp.expm_frechet(a, a.T)),
        ("block_diag", sl.block_diag(a, tall, 3.0, np.ones(2)), sp.block_diag(a, tall, 3.0, np.ones(2))),
        ("toeplitz", sl.toeplitz(a[0], tall[:, 0]), sp.toeplitz(a[0], tall[:, 0])),
        ("toeplitz_c", sl.toeplitz(a[0]), sp.toeplitz(a[0])),
        ("circulant", sl.circulant(a[0]), sp.circulant(a[0])),
        ("hankel", sl.hankel(a[0], tall[:, 0]), sp.hankel(a[0], tall[:, 0])),
        ("hankel_c", sl.hankel(a[0]), sp.hankel(a[0])),
        ("hilbert", sl.hilbert(4), sp.hilbert(4)),
        ("companion", sl.companion(a[0]), sp.companion(a[0])),
        ("eigh_tridiagonal", sl.eigh_tridiagonal(a[0], a[1, :3], eigvals_only=True),
         sp.eigh_tridiagonal(a[0], a[1, :3], eigvals_only=True)),
    ]  # fmt: skip
    _check_pairs(pairs, 2e-3)


def test_scipy_linalg_matches_jax():
    def f(which, a, spd, tall):
        sl = _mods(which)[2]
        return (
            sl.cholesky(spd), sl.lu(tall), sl.qr(tall, pivoting=True),
            sl.hessenberg(a, calc_q=True), sl.block_diag(a, tall), sl.toeplitz(a[0]),
        )  # fmt: skip

    _check_vs_jax(f, A, SPD, TALL, tol=1e-3)


def test_expm_large_norm_and_sqrtm():
    _jax()
    import jax.scipy.linalg as jax_sl

    big = 6 * A
    out = np.asarray(jsl.expm(big))
    ref = np.asarray(jax_sl.expm(big))
    check_close(out / np.abs(ref).max(), ref / np.abs(ref).max(), atol=1e-4)
    root = np.asarray(jsl.sqrtm(SPD))
    assert root.dtype == np.complex64
    check_close(root @ root, SPD.astype(np.complex64), rtol=1e-3, atol=1e-3)
    with jaxlite.enable_x64():
        a = A.astype(np.float64)
        w, v = np.linalg.eig(a)
        ref = (v * np.exp(w)) @ np.linalg.inv(v)
        check_close(np.asarray(jsl.expm(a)), ref.real, rtol=1e-12, atol=1e-12)
        check_close(
            np.asarray(jsl.expm(3 * a)),
            ((v * np.exp(3 * w)) @ np.linalg.inv(v)).real,
            rtol=1e-10,
            atol=1e-10,
        )


def test_scipy_linalg_grads():
    check_grads(jsl.expm, (A * 0.5,), order=2)
    check_grads(jsl.expm, (A * 3,), order=1, rtol=1e-2, atol=1e-2)
    sym = functools.partial(jsl.solve, assume_a="pos")
    check_grads(lambda a, b: sym((a + a.T) / 2, b), (SPD, B), order=2)
    check_grads(
        lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b, trans=1), (A, B), order=1
    )
    check_grads(
        lambda a, b: jsl.solve_triangular(a, b, lower=True), (LOWER, B), order=2
    )
    jax = _jax()
    import jax.scipy.linalg as jax_sl

    g = jaxlite.grad(lambda a: jnp.sum(jsl.solve(a, B, assume_a="pos")))(SPD)
    jg = jax.grad(lambda a: jax.numpy.sum(jax_sl.solve(a, B, assume_a="pos")))(SPD)
    check_close(np.asarray(g), np.asarray(jg), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "fn, exc, phrase",
    [
        (jnp.linalg.det, ValueError, "must have shape [..., n, n]"),
        (jnp.linalg.inv, ValueError, "Argument to inv must have shape [..., n, n]"),
        (jnp.linalg.slogdet, ValueError, "Argument to slogdet() must have shape"),
        (jnp.linalg.eig, ValueError, "must be a square matrix"),
        (jnp.linalg.eigh, TypeError, "incompatible shapes for broadcasting"),
        (jnp.linalg.cholesky, TypeError, "incompatible shapes for broadcasting"),
        (lambda x: lax.linalg.eigh(x, symmetrize_input=False), ValueError,
         "Argument to symmetric eigendecomposition must have shape [..., n, n]"),
        (lambda x: lax.linalg.cholesky(x, symmetrize_input=False), ValueError,
         "The input to cholesky must be a square matrix"),
        (lambda x: lax.linalg.triangular_solve(x, x), ValueError,
         "The first input to triangular_solve must be a square matrix"),
        (lambda x: jnp.linalg.matrix_power(x, 2), TypeError, "must be square"),
        (jsl.expm, ValueError, "square matrix"),
    ],
)  # fmt: skip
def test_non_square_errors(fn, exc, phrase):
    with pytest.raises(
        exc,
        match=phrase.replace("[", r"\[")
        .replace("]", r"\]")
        .replace("(", r"\(")
        .replace(")", r"\)"),
    ):
        fn(_f(2, 3))


def test_other_errors():
    with pytest.raises(TypeError, match="rank at least 2"):
        lax.linalg.lu(_f(3))
    with pytest.raises(TypeError, match="does not accept dtype int32"):
        lax.linalg.lu(np.ones((3, 3), np.int32))
    with pytest.raises(
        ValueError, match="Incompatible shapes for arguments to triangular_solve"
    ):
        lax.linalg.triangular_solve(A, _f(3, 3), left_side=True)
    with pytest.raises(ValueError, match="has to exceed the trailing dimension"):
        lax.linalg.lu_pivots_to_permutation(np.zeros(3, np.int32), 2)
    with pytest.raises(
        ValueError, match="left hand array must be at least two dimensional"
    ):
        jnp.linalg.solve(_f(3), _f(3))
    with pytest.raises(TypeError, match="exponent must be an integer"):
        jnp.linalg.matrix_power(A, 1.5)
    with pytest.raises(ValueError, match="Invalid order 'bad' for matrix norm"):
        jnp.linalg.norm(A, ord="bad")
    with pytest.raises(ValueError, match="Improper number of axes for norm"):
        jnp.linalg.norm(A5, ord=2, axis=(0, 1, 2))
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode"):
        jnp.linalg.qr(A, mode="bad")
    with pytest.raises(ValueError, match="UPLO must be one of None, 'L', or 'U'"):
        jnp.linalg.eigh(A, UPLO="X")
    with pytest.raises(ValueError, match="must be one-dimensional"):
        jnp.linalg.outer(A, B[:, 0])
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        jnp.linalg.cross(A, A)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        jnp.linalg.inv([[1.0, 0.0], [0.0, 1.0]])
    with pytest.raises(NotImplementedError, match="Only the b=None case"):
        jsl.eigh(SPD, SPD)
