"""jaxlite.scipy.sparse.linalg (cg, gmres, bicgstab) and jaxlite.experimental.sparse
(BCOO, BCSR, sparsify, sparse autodiff) against real JAX 0.10.2, NumPy and finite
differences: values, nse/indices where JAX defines them, gradients, jit and vmap.

The iterative solvers are compared in float64 (x64 on in both libraries, restored
after each test) so that tolerances are about convergence, not rounding; one float32
case uses a loose tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as scipy_sparse

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.experimental import sparse
from jaxlite.scipy.sparse import linalg as splinalg
from testing import check_grads

jax = pytest.importorskip("jax")
jjnp = pytest.importorskip("jax.numpy")
jsparse = pytest.importorskip("jax.experimental.sparse")
jsplinalg = pytest.importorskip("jax.scipy.sparse.linalg")


@pytest.fixture
def x64():
    """x64 on in jaxlite and JAX for one test."""
    old_lite = jaxlite.config.jax_enable_x64
    old_jax = jax.config.jax_enable_x64
    jaxlite.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jaxlite.config.update("jax_enable_x64", old_lite)
        jax.config.update("jax_enable_x64", old_jax)


def _np(x):
    return np.asarray(x.todense() if hasattr(x, "todense") else x)


def _sparse_matrix(rng, shape, density=0.5, dtype=np.float32):
    x = rng.normal(size=shape).astype(dtype)
    x[rng.random(shape) >= density] = 0
    return x


# --------------------------------------------------------------------------------------
# jax.scipy.sparse.linalg


def _systems(rng, n=6):
    a = rng.normal(size=(n, n))
    spd = a @ a.T + n * np.eye(n)
    nonsym = a + n * np.eye(n)
    b = rng.normal(size=n)
    return spd, nonsym, b


SOLVERS = [
    ("cg", {}, "spd"),
    ("bicgstab", {}, "nonsym"),
    ("gmres", {"solve_method": "batched"}, "nonsym"),
    ("gmres", {"solve_method": "incremental"}, "nonsym"),
    ("gmres", {"solve_method": "incremental", "restart": 2}, "nonsym"),
]


@pytest.mark.parametrize("name, kwargs, kind", SOLVERS)
def test_solver_matches_numpy_and_jax(x64, name, kwargs, kind):
    spd, nonsym, b = _systems(np.random.default_rng(0))
    a = spd if kind == "spd" else nonsym
    x, info = getattr(splinalg, name)(a, b, tol=1e-12, **kwargs)
    x_jax, info_jax = getattr(jsplinalg, name)(a, b, tol=1e-12, **kwargs)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(x, x_jax, rtol=1e-9, atol=1e-10)
    assert x.dtype == np.float64
    if name == "gmres":
        assert int(info) == int(info_jax) == 0
    else:
        assert info is None and info_jax is None


@pytest.mark.parametrize("name, kwargs, kind", SOLVERS)
def test_solver_operator_forms_and_preconditioner(x64, name, kwargs, kind):
    """A as a function and as a BCOO matrix; M (Jacobi) as a matrix and a function;
    an initial guess."""
    spd, nonsym, b = _systems(np.random.default_rng(1))
    a = spd if kind == "spd" else nonsym
    expected = np.linalg.solve(a, b)
    solve = getattr(splinalg, name)
    inv_diag = 1.0 / np.diag(a)
    x0 = np.full_like(b, 0.1)
    for op in (lambda v: jnp.asarray(a) @ v, sparse.BCOO.fromdense(a)):
        for M in (np.diag(inv_diag), lambda v: inv_diag * v):
            x, _ = solve(op, b, x0=x0, M=M, tol=1e-12, **kwargs)
            np.testing.assert_allclose(x, expected, rtol=1e-9, atol=1e-10)
    x_jax, _ = getattr(jsplinalg, name)(
        a, b, x0=x0, M=np.diag(inv_diag), tol=1e-12, **kwargs
    )
    np.testing.assert_allclose(x, x_jax, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name, kwargs, kind", SOLVERS)
def test_solver_on_pytrees(x64, name, kwargs, kind):
    spd, nonsym, b = _systems(np.random.default_rng(2), n=5)
    a = spd if kind == "spd" else nonsym

    def make(np_mod):
        def matvec(x):
            flat = np_mod.concatenate([x["u"], x["v"].ravel()])
            y = np_mod.asarray(a) @ flat
            return {"u": y[:3], "v": y[3:].reshape(1, 2)}

        return matvec

    tree = {"u": b[:3], "v": b[3:].reshape(1, 2)}
    x, _ = getattr(splinalg, name)(make(jnp), tree, tol=1e-12, **kwargs)
    x_jax, _ = getattr(jsplinalg, name)(make(jjnp), tree, tol=1e-12, **kwargs)
    expected = np.linalg.solve(a, b)
    np.testing.assert_allclose(x["u"], expected[:3], rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(
        x["v"], expected[3:].reshape(1, 2), rtol=1e-9, atol=1e-10
    )
    np.testing.assert_allclose(x["v"], x_jax["v"], rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name, kwargs, kind", SOLVERS[:3])
def test_solver_gradients(x64, name, kwargs, kind):
    """Implicit differentiation with respect to the matrix (a closed-over operand)
    and b: JAX's gradients, finite differences, and the analytic -A^-T g x^T."""
    spd, nonsym, b = _systems(np.random.default_rng(3), n=4)
    a = spd if kind == "spd" else nonsym

    def loss(np_mod, solve):
        def f(a, b):
            x, _ = solve(a, b, tol=1e-13, **kwargs)
            return np_mod.sum(x**2) + x[0]

        return f

    f = loss(jnp, getattr(splinalg, name))
    ga, gb = jaxlite.grad(f, (0, 1))(a, b)
    ja, jb = jax.grad(loss(jjnp, getattr(jsplinalg, name)), (0, 1))(a, b)
    np.testing.assert_allclose(ga, ja, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(gb, jb, rtol=1e-7, atol=1e-10)
    x = np.linalg.solve(a, b)
    g = 2 * x + np.eye(len(b))[0]
    lam = np.linalg.solve(a.T, g)
    np.testing.assert_allclose(gb, lam, rtol=1e-7)
    np.testing.assert_allclose(ga, -np.outer(lam, x), rtol=1e-7, atol=1e-10)
    check_grads(f, (a, b), order=1, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_cg_gradient_with_respect_to_sparse_operator(x64):
    """A BCOO operator built from traced data: the gradient flows to `data`."""
    spd, _, b = _systems(np.random.default_rng(8), n=5)
    mat, ref = sparse.BCOO.fromdense(spd), jsparse.BCOO.fromdense(spd)

    def loss(sp, solve, indices):
        def f(data):
            op = sp.BCOO((data, indices), shape=spd.shape)
            return (solve(op, b, tol=1e-13)[0] ** 2).sum()

        return f

    f = loss(sparse, splinalg.cg, mat.indices)
    data = np.asarray(mat.data)
    expected = jax.grad(loss(jsparse, jsplinalg.cg, ref.indices))(data)
    np.testing.assert_allclose(jaxlite.grad(f)(data), expected, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(
        jaxlite.jit(jaxlite.grad(f))(data), expected, rtol=1e-8, atol=1e-12
    )


def test_cg_under_jit_and_vmap(x64):
    spd, _, _ = _systems(np.random.default_rng(4))
    bs = np.random.default_rng(5).normal(size=(3, spd.shape[0]))
    solve = jaxlite.jit(jaxlite.vmap(lambda b: splinalg.cg(spd, b, tol=1e-12)[0]))
    np.testing.assert_allclose(
        solve(bs), np.linalg.solve(spd, bs.T).T, rtol=1e-9, atol=1e-10
    )
    grads = jaxlite.vmap(jaxlite.grad(lambda b: splinalg.cg(spd, b)[0].sum()))(bs)
    jax_grads = jax.vmap(jax.grad(lambda b: jsplinalg.cg(spd, b)[0].sum()))(bs)
    np.testing.assert_allclose(grads, jax_grads, rtol=1e-6)


@pytest.mark.parametrize("solve_method", ["batched", "incremental"])
def test_gmres_vmap_over_matrices(x64, solve_method):
    rng = np.random.default_rng(6)
    mats = rng.normal(size=(3, 5, 5)) + 5 * np.eye(5)
    bs = rng.normal(size=(3, 5))
    out = jaxlite.vmap(
        lambda a, b: splinalg.gmres(a, b, tol=1e-12, solve_method=solve_method)[0]
    )(mats, bs)
    np.testing.assert_allclose(
        out, np.linalg.solve(mats, bs[..., None])[..., 0], rtol=1e-9, atol=1e-10
    )


def test_solvers_float32():
    spd, nonsym, b = _systems(np.random.default_rng(7))
    for name, a in (("cg", spd), ("bicgstab", nonsym), ("gmres", nonsym)):
        x, _ = getattr(splinalg, name)(a.astype(np.float32), b.astype(np.float32))
        assert x.dtype == np.float32
        np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-3, atol=1e-4)


def test_solver_errors():
    with pytest.raises(ValueError, match="must be a square matrix"):
        splinalg.cg(np.ones((2, 3), np.float32), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="matching tree structure"):
        splinalg.cg(lambda x: x, {"a": jnp.ones(2)}, x0=[jnp.ones(2)])
    with pytest.raises(ValueError, match="matching shapes"):
        splinalg.bicgstab(lambda x: x, jnp.ones(2), x0=jnp.ones(3))
    with pytest.raises(ValueError, match="invalid solve_method"):
        splinalg.gmres(lambda x: x, jnp.ones(2), solve_method="qr")
    with pytest.raises(TypeError, match="function or ndarray"):
        splinalg.cg(3, jnp.ones(2))


def test_scipy_sparse_module_layout():
    import jaxlite.scipy

    assert jaxlite.scipy.sparse.linalg.cg is splinalg.cg
    assert jaxlite.experimental.sparse.BCOO is sparse.BCOO


# --------------------------------------------------------------------------------------
# BCOO: conversion and index normalisation


LAYOUTS = [
    (0, 0),
    (1, 0),
    (0, 1),
    (1, 1),
    (2, 0),
]


@pytest.mark.parametrize("n_batch, n_dense", LAYOUTS)
def test_fromdense_todense_match_jax(n_batch, n_dense):
    x = _sparse_matrix(np.random.default_rng(10), (3, 4, 5))
    mat = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    ref = jsparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    assert (mat.nse, mat.n_batch, mat.n_dense, mat.shape) == (
        ref.nse,
        ref.n_batch,
        ref.n_dense,
        ref.shape,
    )
    np.testing.assert_array_equal(mat.indices, ref.indices)
    np.testing.assert_array_equal(mat.data, ref.data)
    assert mat.indices.dtype == ref.indices.dtype == np.int32
    assert mat.indices_sorted and mat.unique_indices
    np.testing.assert_array_equal(mat.todense(), x)
    assert repr(mat) == repr(ref)
    # A larger nse pads with out-of-bounds indices, as JAX.
    padded = sparse.bcoo_fromdense(x, nse=mat.nse + 2, n_batch=n_batch, n_dense=n_dense)
    ref_padded = jsparse.bcoo_fromdense(
        x, nse=ref.nse + 2, n_batch=n_batch, n_dense=n_dense
    )
    np.testing.assert_array_equal(padded.indices, ref_padded.indices)
    np.testing.assert_array_equal(padded.todense(), x)


def test_fromdense_under_jit_needs_nse():
    x = _sparse_matrix(np.random.default_rng(11), (4, 4))
    out = jaxlite.jit(lambda m: sparse.BCOO.fromdense(m, nse=9))(x)
    ref = jsparse.BCOO.fromdense(x, nse=9)
    np.testing.assert_array_equal(out.indices, ref.indices)
    np.testing.assert_array_equal(out.todense(), x)
    with pytest.raises(jaxlite.errors.ConcretizationTypeError, match="nse"):
        jaxlite.jit(lambda m: sparse.BCOO.fromdense(m))(x)


DUPLICATES = (
    np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32),
    np.array([[0, 1], [2, 2], [0, 1], [3, 0], [1, 1]], np.int32),  # (3, 0) is padding
)


def test_duplicates_sum_sort_and_extract_match_jax():
    mat = sparse.BCOO(DUPLICATES, shape=(3, 3))
    ref = jsparse.BCOO(DUPLICATES, shape=(3, 3))
    np.testing.assert_array_equal(mat.todense(), ref.todense())
    for method in (
        lambda m: m.sum_duplicates(),
        lambda m: m.sum_duplicates(nse=5, remove_zeros=False),
        lambda m: m.sort_indices(),
        lambda m: m.T.sort_indices(),
    ):
        out, expected = method(mat), method(ref)
        np.testing.assert_array_equal(out.data, expected.data)
        np.testing.assert_array_equal(out.indices, expected.indices)
        assert out.indices_sorted == expected.indices_sorted
        assert out.unique_indices == expected.unique_indices
    dense = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    for unique in (True, False):
        np.testing.assert_array_equal(
            sparse.bcoo_extract(mat, dense, assume_unique=unique).data,
            jsparse.bcoo_extract(ref, dense, assume_unique=unique).data,
        )
    # Explicitly stored zeros are eliminated (not ones that cancel), as in JAX.
    data = np.array([1.0, 0.0, -1.0, 2.0, 3.0], np.float32)
    zeros = sparse.BCOO((data, DUPLICATES[1]), shape=(3, 3)).sum_duplicates()
    ref_zeros = jsparse.BCOO((data, DUPLICATES[1]), shape=(3, 3)).sum_duplicates()
    np.testing.assert_array_equal(zeros.indices, ref_zeros.indices)
    np.testing.assert_array_equal(zeros.data, ref_zeros.data)


def test_sum_duplicates_under_jit():
    mat = sparse.BCOO(DUPLICATES, shape=(3, 3))
    out = jaxlite.jit(lambda m: m.sum_duplicates(nse=4))(mat)
    np.testing.assert_array_equal(out.todense(), mat.todense())
    with pytest.raises(ValueError, match="nse must be specified"):
        jaxlite.jit(lambda m: sparse.bcoo_sum_duplicates(m))(mat)


@pytest.mark.parametrize("n_batch, n_dense", [(1, 0), (0, 1)])
def test_batched_sum_duplicates_matches_jax(n_batch, n_dense):
    x = _sparse_matrix(np.random.default_rng(12), (2, 3, 4))
    mat = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    ref = jsparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    doubled = sparse.bcoo_concatenate([mat, mat], dimension=n_batch)
    ref_doubled = jsparse.bcoo_concatenate([ref, ref], dimension=n_batch)
    out = sparse.bcoo_sum_duplicates(doubled)
    expected = jsparse.bcoo_sum_duplicates(ref_doubled)
    np.testing.assert_array_equal(out.indices, expected.indices)
    np.testing.assert_allclose(out.data, expected.data)


@pytest.mark.parametrize("n_batch, n_dense", LAYOUTS)
@pytest.mark.parametrize("new", [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2)])
def test_update_layout(n_batch, n_dense, new):
    x = _sparse_matrix(np.random.default_rng(13), (2, 3, 4))
    mat = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    out = mat.update_layout(n_batch=new[0], n_dense=new[1], on_inefficient=None)
    assert (out.n_batch, out.n_dense) == new
    np.testing.assert_array_equal(out.todense(), x)


def test_update_layout_inefficiency():
    mat = sparse.BCOO.fromdense(np.eye(3, dtype=np.float32))
    with pytest.raises(sparse.SparseEfficiencyError, match="inefficient storage"):
        mat.update_layout(n_batch=1)
    with pytest.warns(sparse.SparseEfficiencyWarning, match="inefficient storage"):
        mat.update_layout(n_dense=1, on_inefficient="warn")


# --------------------------------------------------------------------------------------
# BCOO: operations compared with JAX through their dense values

# (name, function of (sparse module, numpy module, operand)); run with jaxlite and JAX.
OPS = [
    ("matvec", lambda sp, np_, m: m @ np_.arange(5.0)),
    ("matmat", lambda sp, np_, m: m @ np_.ones((5, 2))),
    ("vecmat", lambda sp, np_, m: np_.arange(4.0) @ m),
    ("transpose", lambda sp, np_, m: m.transpose((0, 2, 1)) if m.ndim == 3 else m.T),
    ("sum0", lambda sp, np_, m: m.sum(0)),
    ("sum_last", lambda sp, np_, m: m.sum(m.ndim - 1)),
    ("sum_all", lambda sp, np_, m: m.sum()),
    ("mul_scalar", lambda sp, np_, m: 2.0 * m),
    ("mul_dense", lambda sp, np_, m: m * np_.arange(5.0)),
    ("mul_column", lambda sp, np_, m: m * np_.arange(4.0)[:, None]),
    ("mul_sparse", lambda sp, np_, m: m * m),
    ("add_same", lambda sp, np_, m: m + 3 * m),
    ("add_other", lambda sp, np_, m: m + m.sum_duplicates(nse=m.nse)),
    ("sub_sparse", lambda sp, np_, m: m - m * m),
    ("add_dense", lambda sp, np_, m: m + np_.ones(m.shape)),
    ("div", lambda sp, np_, m: m / 4.0),
    ("neg_abs_pow", lambda sp, np_, m: abs(-m) ** 3),
    ("sin", lambda sp, np_, m: sp.sparsify(np_.sin)(m)),
    ("astype", lambda sp, np_, m: m.astype(np.float16)),
    ("reshape", lambda sp, np_, m: m.reshape(m.shape[0], -1)),
    ("slice", lambda sp, np_, m: m[1:, 1:4]),
    ("index", lambda sp, np_, m: m[1]),
    ("newaxis", lambda sp, np_, m: m[None]),
    ("rev", lambda sp, np_, m: m[::-1]),
    ("stack", lambda sp, np_, m: sp.sparsify(lambda a: np_.stack([a, 2 * a]))(m)),
    ("concat0", lambda sp, np_, m: sp.bcoo_concatenate([m, m], dimension=0)),
    ("concat1", lambda sp, np_, m: sp.bcoo_concatenate([m, m], dimension=1)),
    (
        "broadcast",
        lambda sp, np_, m: sp.bcoo_broadcast_in_dim(
            m, shape=(2, *m.shape), broadcast_dimensions=tuple(range(1, m.ndim + 1))
        ),
    ),
    ("squeeze", lambda sp, np_, m: sp.bcoo_squeeze(m[:1], dimensions=(0,))),
    (
        "spdot",
        lambda sp, np_, m: sp.bcoo_dot_general(
            m, m, dimension_numbers=(([m.ndim - 1], [m.ndim - 1]), ([], []))
        ),
    ),
    (
        "dot_contract_first",
        lambda sp, np_, m: sp.bcoo_dot_general(
            m, np_.ones((m.shape[0], 2)), dimension_numbers=(([0], [0]), ([], []))
        ),
    ),
    (
        "todense_in_sparsify",
        lambda sp, np_, m: sp.sparsify(lambda a: np_.exp(sp.todense(a)))(m),
    ),
]


@pytest.mark.parametrize("name, op", OPS, ids=[o[0] for o in OPS])
@pytest.mark.parametrize("shape, n_batch, n_dense", [((4, 5), 0, 0), ((3, 4, 5), 1, 0)])
def test_op_matches_jax(name, op, shape, n_batch, n_dense):
    x = _sparse_matrix(np.random.default_rng(20), shape)
    mat = sparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    ref = jsparse.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense)
    try:
        expected = op(jsparse, jjnp, ref)
    except Exception as e:  # JAX does not support this layout: neither need we
        pytest.skip(f"JAX raises {type(e).__name__}")
    out = op(sparse, jnp, mat)
    assert isinstance(out, sparse.BCOO) == isinstance(expected, jsparse.BCOO)
    assert out.shape == expected.shape
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(_np(out), _np(expected), rtol=1e-5, atol=1e-5)


def test_unsupported_primitive_errors():
    mat = sparse.BCOO.fromdense(np.eye(3, dtype=np.float32))
    with pytest.raises(NotImplementedError, match="sparse rule for exp .*dense output"):
        sparse.sparsify(jnp.exp)(mat)
    with pytest.raises(NotImplementedError, match="sparse rule for cumsum"):
        sparse.sparsify(lambda m: jnp.cumsum(m, 0))(mat)
    with pytest.raises(NotImplementedError, match="contracting over dense"):
        sparse.BCOO.fromdense(np.eye(3, dtype=np.float32), n_dense=1) @ jnp.ones(3)


def test_multiply_dense_and_reduce_sum_functions_match_jax():
    x = _sparse_matrix(np.random.default_rng(21), (2, 3, 4))
    mat = sparse.BCOO.fromdense(x, n_batch=1)
    ref = jsparse.BCOO.fromdense(x, n_batch=1)
    v = np.arange(4.0, dtype=np.float32)
    np.testing.assert_allclose(
        sparse.bcoo_multiply_dense(mat, v), jsparse.bcoo_multiply_dense(ref, v)
    )
    for axes in [(0,), (1,), (2,), (0, 2)]:
        out = sparse.bcoo_reduce_sum(mat, axes=axes)
        expected = jsparse.bcoo_reduce_sum(ref, axes=axes)
        assert (out.shape, out.nse, out.n_batch) == (
            expected.shape,
            expected.nse,
            expected.n_batch,
        )
        np.testing.assert_allclose(out.todense(), expected.todense())
    prod = sparse.bcoo_multiply_sparse(mat, mat)
    np.testing.assert_allclose(prod.todense(), x * x)


@pytest.mark.parametrize(
    "dims, rhs_shape",
    [
        ((([2], [0]), ([], [])), (5, 2)),
        ((([1, 2], [0, 1]), ([], [])), (4, 5)),
        ((([2], [1]), ([0], [0])), (3, 5, 2)),
        ((([0], [1]), ([], [])), (2, 3)),
    ],
)
def test_dot_general_matches_jax(dims, rhs_shape):
    rng = np.random.default_rng(22)
    x = _sparse_matrix(rng, (3, 4, 5))
    rhs = rng.normal(size=rhs_shape).astype(np.float32)
    for n_batch in (0, 1):
        mat = sparse.BCOO.fromdense(x, n_batch=n_batch)
        ref = jsparse.BCOO.fromdense(x, n_batch=n_batch)
        try:
            expected = jsparse.bcoo_dot_general(ref, rhs, dimension_numbers=dims)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                sparse.bcoo_dot_general(mat, rhs, dimension_numbers=dims)
            continue
        out = sparse.bcoo_dot_general(mat, rhs, dimension_numbers=dims)
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------
# BCOO: derivatives, jit, vmap


def test_grads_with_respect_to_data_match_jax_and_finite_differences(x64):
    rng = np.random.default_rng(30)
    x = _sparse_matrix(rng, (4, 5), dtype=np.float64)
    mat = sparse.BCOO.fromdense(x)
    ref = jsparse.BCOO.fromdense(x)
    v = rng.normal(size=5)
    w = rng.normal(size=(4, 5))

    def losses(sp, np_, indices):
        def todense(data):
            return np_.sum(sp.BCOO((data, indices), shape=(4, 5)).todense() ** 2 * w)

        def matvec(data, v):
            return np_.sum(np_.sin(sp.BCOO((data, indices), shape=(4, 5)) @ v))

        def fromdense(m):
            return np_.sum(sp.BCOO.fromdense(m, nse=21).data ** 3)

        return todense, matvec, fromdense

    ours = losses(sparse, jnp, mat.indices)
    theirs = losses(jsparse, jjnp, ref.indices)
    args = [(np.asarray(mat.data),), (np.asarray(mat.data), v), (x,)]
    for f, g, a in zip(ours, theirs, args):
        argnums = tuple(range(len(a)))
        got = jaxlite.grad(f, argnums)(*a)
        want = jax.grad(g, argnums)(*a)
        for got_i, want_i in zip(got, want):
            np.testing.assert_allclose(got_i, want_i, rtol=1e-10, atol=1e-12)
    check_grads(ours[0], args[0], order=2, modes=("fwd", "rev"))
    check_grads(ours[1], args[1], order=2, modes=("fwd", "rev"))
    # fromdense picks its indices from the values: finite differences are taken
    # where no entry is zero, so that the pattern does not change.
    full = x + (x == 0) * 0.5
    check_grads(ours[2], (full,), order=2, modes=("fwd", "rev"))


def test_sparse_autodiff_api_matches_jax():
    rng = np.random.default_rng(31)
    x = _sparse_matrix(rng, (4, 5))
    v = rng.normal(size=5).astype(np.float32)
    mat, ref = sparse.BCOO.fromdense(x), jsparse.BCOO.fromdense(x)

    def f(np_):
        return lambda m, v: np_.sum((m @ v) ** 2)

    g = sparse.grad(f(jnp))(mat, v)
    gj = jsparse.grad(f(jjnp))(ref, v)
    assert isinstance(g, sparse.BCOO) and g.shape == gj.shape
    np.testing.assert_array_equal(g.indices, gj.indices)
    np.testing.assert_allclose(g.data, gj.data, rtol=1e-6)
    (val, (gm, gv)) = sparse.value_and_grad(f(jnp), argnums=(0, 1))(mat, v)
    (valj, (gmj, gvj)) = jsparse.value_and_grad(f(jjnp), argnums=(0, 1))(ref, v)
    np.testing.assert_allclose(val, valj, rtol=1e-6)
    np.testing.assert_allclose(gm.data, gmj.data, rtol=1e-6)
    np.testing.assert_allclose(gv, gvj, rtol=1e-6)
    for ours, theirs in (
        (sparse.jacrev, jsparse.jacrev),
        (sparse.jacfwd, jsparse.jacfwd),
    ):
        jac = ours(lambda m: m @ v)(mat)
        jac_j = theirs(lambda m: m @ v)(ref)
        assert (jac.shape, jac.n_batch) == (jac_j.shape, jac_j.n_batch)
        np.testing.assert_allclose(jac.todense(), jac_j.todense(), rtol=1e-6)
    # Plain grad of a BCOO argument: a BCOO cotangent with float0 indices, as JAX.
    plain = jaxlite.grad(f(jnp), allow_int=True)(mat, v)
    plain_j = jax.grad(f(jjnp), allow_int=True)(ref, v)
    np.testing.assert_allclose(plain.data, plain_j.data, rtol=1e-6)
    assert plain.indices.dtype == plain_j.indices.dtype


def test_jit_with_sparse_arguments_and_results():
    rng = np.random.default_rng(32)
    x = _sparse_matrix(rng, (4, 5))
    mat = sparse.BCOO.fromdense(x)
    v = rng.normal(size=5).astype(np.float32)

    @jaxlite.jit
    def f(m, v):
        return m @ v, (m * 2).T, m.sum(1)

    mv, mt, ms = f(mat, v)
    np.testing.assert_allclose(mv, x @ v, rtol=1e-6, atol=1e-6)
    assert isinstance(mt, sparse.BCOO) and mt.shape == (5, 4)
    np.testing.assert_allclose(mt.todense(), 2 * x.T)
    np.testing.assert_allclose(ms.todense(), x.sum(1), rtol=1e-6, atol=1e-6)


def test_vmap_over_sparse_batch_dimension():
    rng = np.random.default_rng(33)
    x = _sparse_matrix(rng, (3, 4, 5))
    v = rng.normal(size=5).astype(np.float32)
    mat = sparse.BCOO.fromdense(x, n_batch=1)
    ref = jsparse.BCOO.fromdense(x, n_batch=1)
    out = jaxlite.vmap(lambda m: m @ v)(mat)
    np.testing.assert_allclose(out, jax.vmap(lambda m: m @ v)(ref), rtol=1e-6)
    # Sparse outputs gain the mapped axis as a batch dimension.
    made = jaxlite.vmap(lambda d: sparse.BCOO.fromdense(d, nse=6))(x)
    made_j = jax.vmap(lambda d: jsparse.BCOO.fromdense(d, nse=6))(x)
    assert (made.shape, made.n_batch, made.nse) == (made_j.shape, made_j.n_batch, 6)
    np.testing.assert_array_equal(made.indices, made_j.indices)
    # A fixed sparse matrix against a batch of dense vectors.
    single = sparse.BCOO.fromdense(x[0])
    vs = rng.normal(size=(7, 5)).astype(np.float32)
    np.testing.assert_allclose(
        jaxlite.vmap(lambda w: single @ w)(vs), vs @ x[0].T, rtol=1e-5, atol=1e-6
    )
    with pytest.raises(ValueError, match="must correspond to a batch dimension"):
        jaxlite.vmap(lambda m: m)(single)


def test_sparsify_transformation():
    rng = np.random.default_rng(34)
    x = _sparse_matrix(rng, (4, 5))
    v = rng.normal(size=5).astype(np.float32)
    mat, ref = sparse.BCOO.fromdense(x), jsparse.BCOO.fromdense(x)

    def f(np_):
        def fun(m, v):
            y = (m * v).T @ np_.sin(m @ v)
            return y + (m + m).sum(0) + np_.tanh(m).sum()

        return fun

    out = sparse.sparsify(f(jnp))(mat, v)
    expected = jsparse.sparsify(f(jjnp))(ref, v)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, f(np)(x, v), rtol=1e-5, atol=1e-6)
    jitted = jaxlite.jit(sparse.sparsify(f(jnp)))(mat, v)
    np.testing.assert_allclose(jitted, out, rtol=1e-5, atol=1e-6)
    gv = jaxlite.grad(lambda v: sparse.sparsify(f(jnp))(mat, v).sum())(v)
    gv_j = jax.grad(lambda v: jsparse.sparsify(f(jjnp))(ref, v).sum())(v)
    np.testing.assert_allclose(gv, gv_j, rtol=1e-5, atol=1e-6)
    # A jitted inner function is interpreted inline.
    inner = sparse.sparsify(lambda m: jaxlite.jit(lambda a: 2 * a)(m))(mat)
    assert isinstance(inner, sparse.BCOO)
    np.testing.assert_allclose(inner.todense(), 2 * x)


def test_numpyro_car_log_prob_path():
    """What numpyro's CAR distribution does with is_sparse=True."""
    adj = scipy_sparse.random(6, 6, density=0.4, random_state=0, format="csr")
    adj = ((adj + adj.T) > 0).astype(np.float32)
    phi = np.random.default_rng(35).normal(size=(3, 6)).astype(np.float32)
    mat = sparse.BCOO.from_scipy_sparse(adj)
    ref = jsparse.BCOO.from_scipy_sparse(adj)
    np.testing.assert_array_equal(mat.indices, ref.indices)

    def quad(m, np_):
        return lambda p: np_.sum(p * (m @ p[..., np_.newaxis]).squeeze(axis=-1), -1)

    out = jaxlite.jit(quad(mat, jnp))(phi)
    np.testing.assert_allclose(out, quad(ref, jjnp)(phi), rtol=1e-5)
    np.testing.assert_allclose(
        out, np.einsum("bi,ij,bj->b", phi, adj.toarray(), phi), rtol=1e-5
    )
    g = jaxlite.grad(lambda p: quad(mat, jnp)(p).sum())(phi)
    np.testing.assert_allclose(g, phi @ (adj.toarray() + adj.toarray().T), rtol=1e-5)


# --------------------------------------------------------------------------------------
# BCSR, constructors


@pytest.mark.parametrize("n_batch", [0, 1])
def test_bcsr_matches_jax(n_batch):
    rng = np.random.default_rng(40)
    shape = (2, 4, 5) if n_batch else (4, 5)
    x = _sparse_matrix(rng, shape)
    mat = sparse.BCSR.fromdense(x, n_batch=n_batch)
    ref = jsparse.BCSR.fromdense(x, n_batch=n_batch)
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(mat, name), getattr(ref, name))
    np.testing.assert_array_equal(mat.todense(), x)
    np.testing.assert_array_equal(mat.to_bcoo().todense(), x)
    v = rng.normal(size=5).astype(np.float32)
    np.testing.assert_allclose(mat @ v, ref @ v, rtol=1e-6, atol=1e-6)
    back = sparse.BCSR.from_bcoo(sparse.BCOO.fromdense(x, n_batch=n_batch))
    np.testing.assert_array_equal(back.indptr, ref.indptr)
    if n_batch:
        np.testing.assert_allclose(jaxlite.vmap(lambda m: m @ v)(mat), x @ v, rtol=1e-5)
    else:
        csr = scipy_sparse.csr_matrix(x)
        np.testing.assert_array_equal(sparse.BCSR.from_scipy_sparse(csr).todense(), x)
        grad = jaxlite.grad(
            lambda d: (sparse.BCSR((d, mat.indices, mat.indptr), shape=shape) @ v).sum()
        )(mat.data)
        grad_j = jax.grad(
            lambda d: (
                jsparse.BCSR((d, ref.indices, ref.indptr), shape=shape) @ v
            ).sum()
        )(ref.data)
        np.testing.assert_allclose(grad, grad_j, rtol=1e-6)


@pytest.mark.parametrize("k", [-2, 0, 1, 4])
@pytest.mark.parametrize("n_batch", [0, 1])
def test_eye_and_empty_match_jax(k, n_batch):
    out = sparse.eye(3, 4, k=k, n_batch=n_batch)
    ref = jsparse.eye(3, 4, k=k, n_batch=n_batch)
    assert (out.shape, out.nse, out.n_batch, out.dtype) == (
        ref.shape,
        ref.nse,
        ref.n_batch,
        ref.dtype,
    )
    np.testing.assert_array_equal(out.todense(), ref.todense())
    empty = sparse.empty((2, 3), nse=2, n_batch=n_batch)
    ref_empty = jsparse.empty((2, 3), nse=2, n_batch=n_batch)
    np.testing.assert_array_equal(empty.indices, ref_empty.indices)
    np.testing.assert_array_equal(empty.todense(), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="not recognized"):
        sparse.empty((2, 3), sparse_format="dia")


def test_random_bcoo_and_todense_passthrough():
    mat = sparse.random_bcoo(
        jaxlite.random.key(0), (5, 6), nse=0.3, sorted_indices=True
    )
    assert (mat.shape, mat.nse) == ((5, 6), 9)
    assert mat.indices_sorted
    # unique indices: the dense array has nse nonzeros
    assert int((np.asarray(mat.todense()) != 0).sum()) == 9
    dense = np.ones((2, 2), np.float32)
    np.testing.assert_array_equal(sparse.todense(dense), dense)
    assert jaxlite.grad(lambda a: sparse.todense(a).sum())(dense).shape == (2, 2)
    np.testing.assert_array_equal(jaxlite.vmap(sparse.todense)(dense), dense)
