"""associative_scan, custom_linear_solve, custom_root, the bit operations
(bitcast_convert_type, population_count, clz, mulhi, reduce_precision), complex, and
optimization_barrier, unstack, broadcast_shapes, index_take, approx_max_k/min_k:
values against NumPy and JAX, derivatives, vmap against a loop, jit against eager."""

import re

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from testing import check_close, check_grads


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------------------------
# associative_scan


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_cumulative_numpy(n, reverse):
    x = _f32(np.random.default_rng(n), 3, n)
    out = lax.associative_scan(lax.add, x, reverse=reverse, axis=1)
    want = np.cumsum(x[:, ::-1], 1)[:, ::-1] if reverse else np.cumsum(x, 1)
    check_close(out, want, atol=1e-5, rtol=1e-5)
    check_close(lax.associative_scan(jnp.maximum, x, reverse, -1),
                np.maximum.accumulate(x[:, ::-1], 1)[:, ::-1] if reverse else np.maximum.accumulate(x, 1))  # fmt: skip


def test_associative_scan_pytree_matches_jax():
    jax = pytest.importorskip("jax")
    x = _f32(np.random.default_rng(0), 7, 3)

    def linear_recurrence(m):
        # (a, b) pairs compose as affine maps: the classic parallel linear recurrence.
        return lambda x: m.associative_scan(
            lambda p, q: (p[0] * q[0], p[1] * q[0] + q[1]), (x, 2 * x), reverse=True
        )

    out, ref = linear_recurrence(lax)(x), linear_recurrence(jax.lax)(x)
    for o, r in zip(out, ref):
        check_close(np.asarray(o), np.asarray(r), atol=1e-5, rtol=1e-5)
    check_grads(lambda x: linear_recurrence(lax)(x)[1], (x,), order=2)
    check_close(jaxlite.jit(linear_recurrence(lax))(x), out)
    xs = _f32(np.random.default_rng(1), 4, 7, 3)
    batched = jaxlite.vmap(linear_recurrence(lax), in_axes=1)(np.moveaxis(xs, 0, 1))
    loop = [linear_recurrence(lax)(x) for x in xs]
    check_close(
        batched, tuple(np.stack(parts) for parts in zip(*loop)), atol=1e-5, rtol=1e-5
    )


def test_associative_scan_errors():
    with pytest.raises(ValueError, match="must have the same first dimension"):
        lax.associative_scan(lambda a, b: a, (np.ones(3), np.ones(4)))


# --------------------------------------------------------------------------------------
# custom_linear_solve


A = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, -0.5], [0.2, -0.4, 2.0]], np.float32)
SPD = (A + A.T) / 2 + np.eye(3, dtype=np.float32)
A_INV = np.linalg.inv(A).astype(np.float32)


def _linear_solve(m, np_):
    def f(a, b):
        return m.custom_linear_solve(
            lambda x: a @ x,
            b,
            lambda matvec, b: np_.linalg.solve(a, b),
            lambda vecmat, b: np_.linalg.solve(a.T, b),
        )

    return f


def test_custom_linear_solve_values_and_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(2)
    b = _f32(rng, 3)
    f, g = _linear_solve(lax, jnp), _linear_solve(jax.lax, jax.numpy)
    check_close(f(A, b), np.linalg.solve(A, b), atol=1e-5, rtol=1e-5)
    check_close(jaxlite.jit(f)(A, b), f(A, b))
    loss = lambda f: lambda a, b: (f(a, b) ** 2).sum()  # noqa: E731
    for got, want in zip(
        jaxlite.grad(loss(f), (0, 1))(A, b), jax.grad(loss(g), (0, 1))(A, b)
    ):
        check_close(got, np.asarray(want), atol=1e-5, rtol=1e-4)
    t = (_f32(rng, 3, 3), _f32(rng, 3))
    check_close(
        jaxlite.jvp(f, (A, b), t)[1],
        np.asarray(jax.jvp(g, (A, b), t)[1]),
        atol=1e-5,
        rtol=1e-4,
    )
    check_grads(f, (A, b), order=2, modes=("fwd", "rev"))


def test_custom_linear_solve_vmap_matches_loop():
    rng = np.random.default_rng(3)
    As = np.stack([A, A + np.eye(3, dtype=np.float32), 2 * A])
    bs = _f32(rng, 3, 3)
    f = _linear_solve(lax, jnp)
    for in_axes in [(0, 0), (None, 0), (0, None)]:
        a = As if in_axes[0] is not None else A
        b = bs if in_axes[1] is not None else bs[0]
        loop = [f(As[k] if in_axes[0] is not None else A, bs[k] if in_axes[1] is not None else bs[0]) for k in range(3)]  # fmt: skip
        check_close(
            jaxlite.vmap(f, in_axes)(a, b), np.stack(loop), atol=1e-5, rtol=1e-5
        )
    per_example = jaxlite.vmap(jaxlite.grad(lambda a, b: f(a, b).sum()), (None, 0))(
        A, bs
    )
    loop = [jaxlite.grad(lambda a, b=b: f(a, b).sum())(A) for b in bs]
    check_close(per_example, np.stack(loop), atol=1e-5, rtol=1e-5)


def test_custom_linear_solve_uses_the_solver_not_its_iterations():
    # A few Jacobi sweeps are not a converged solve, but the derivative is A^{-1}.
    d = np.diag(SPD)

    def jacobi(matvec, b):
        x = b / d
        for _ in range(200):
            x = x + (b - matvec(x)) / d
        return x

    def f(b):
        return lax.custom_linear_solve(
            lambda x: jnp.dot(SPD, x), b, jacobi, symmetric=True
        )

    b = np.array([1.0, 2.0, 3.0], np.float32)
    check_close(jaxlite.jacrev(f)(b), np.linalg.inv(SPD), atol=1e-4, rtol=1e-4)
    check_close(jaxlite.jacfwd(f)(b), np.linalg.inv(SPD), atol=1e-4, rtol=1e-4)


def test_custom_linear_solve_has_aux_and_pytrees():
    def solve(matvec, b):
        return {"x": b["x"] / 2.0}, b["x"].sum()

    b = {"x": np.arange(3.0, dtype=np.float32)}
    x, aux = lax.custom_linear_solve(
        lambda v: {"x": 2.0 * v["x"]}, b, solve, symmetric=True, has_aux=True
    )
    check_close(x["x"], b["x"] / 2)
    check_close(aux, np.float32(3.0))
    g = jaxlite.grad(lambda b: lax.custom_linear_solve(
        lambda v: {"x": 2.0 * v["x"]}, b, solve, symmetric=True, has_aux=True)[0]["x"].sum())(b)  # fmt: skip
    check_close(g["x"], np.full(3, 0.5, np.float32))


def test_custom_linear_solve_errors():
    b = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="transpose_solve required for backwards mode"):
        jaxlite.grad(
            lambda b: lax.custom_linear_solve(lambda x: A @ x, b, lambda mv, b: b).sum()
        )(b)
    with pytest.raises(
        TypeError, match=re.escape("matvec() output pytree structure must match b")
    ):
        lax.custom_linear_solve(lambda x: (x, x), b, lambda mv, b: b)
    with pytest.raises(
        TypeError, match=re.escape("solve() output pytree structure must match b")
    ):
        lax.custom_linear_solve(lambda x: x, b, lambda mv, b: [b])


# --------------------------------------------------------------------------------------
# custom_root


def _sqrt_by_newton(m):
    def sqrt(a):
        def solve(f, x0):
            x = x0
            for _ in range(25):
                x = x - f(x) / (2 * x)
            return x

        return m.custom_root(lambda x: x**2 - a, 1.0, solve, lambda g, y: y / g(1.0))

    return sqrt


def test_custom_root_values_and_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    ours, theirs = _sqrt_by_newton(lax), _sqrt_by_newton(jax.lax)
    for a in (2.0, 9.0):
        check_close(ours(a), np.float32(np.sqrt(a)))
        check_close(jaxlite.grad(ours)(a), np.float32(jax.grad(theirs)(a)))
        check_close(
            jaxlite.grad(jaxlite.grad(ours))(a),
            np.float32(jax.grad(jax.grad(theirs))(a)),
        )
    check_close(jaxlite.jit(jaxlite.grad(ours))(4.0), np.float32(0.25))
    a = np.array([1.0, 4.0, 9.0], np.float32)
    check_close(jaxlite.vmap(ours)(a), np.sqrt(a))
    check_close(jaxlite.vmap(jaxlite.grad(ours))(a), 0.5 / np.sqrt(a))


def test_custom_root_vector_system_and_aux():
    # Solve A x = b as the root of f(x) = A x - b; d x / d b = A^{-1}.
    def root(b):
        def solve(f, x0):
            return jnp.linalg.solve(A, b), jnp.float32(1.0)

        # (tangent_solve avoids jnp.linalg.solve, whose custom_jvp_call has no
        # transpose rule in jaxlite yet)
        return lax.custom_root(lambda x: A @ x - b, jnp.zeros(3), solve,
                               lambda g, y: A_INV @ y, has_aux=True)  # fmt: skip

    b = np.array([1.0, -1.0, 2.0], np.float32)
    x, aux = root(b)
    check_close(x, np.linalg.solve(A, b), atol=1e-5, rtol=1e-5)
    check_close(
        jaxlite.jacfwd(lambda b: root(b)[0])(b), np.linalg.inv(A), atol=1e-5, rtol=1e-5
    )
    check_close(
        jaxlite.jacrev(lambda b: root(b)[0])(b), np.linalg.inv(A), atol=1e-5, rtol=1e-5
    )


# --------------------------------------------------------------------------------------
# Bits


INT_DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


def _ints(rng, dtype, *shape):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_bit_counts_match_numpy(dtype):
    x = _ints(np.random.default_rng(4), dtype, 4, 5)
    u = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    check_close(lax.population_count(x), np.bitwise_count(u).astype(dtype))
    width = 8 * x.dtype.itemsize
    lengths = np.array([int(v).bit_length() for v in u.ravel()]).reshape(x.shape)
    check_close(lax.clz(x), (width - lengths).astype(dtype))
    check_close(jaxlite.jit(lax.clz)(x), lax.clz(x))
    check_close(jaxlite.vmap(lax.population_count, 1)(x), lax.population_count(x).T)


@pytest.mark.parametrize("dtype", INT_DTYPES + [np.int64, np.uint64])
def test_mulhi_matches_wide_products(dtype):
    with jaxlite.enable_x64(np.dtype(dtype).itemsize == 8):
        rng = np.random.default_rng(5)
        x, y = _ints(rng, dtype, 50), _ints(rng, dtype, 50)
        bits = 8 * np.dtype(dtype).itemsize
        want = [(int(a) * int(b)) >> bits for a, b in zip(x, y)]
        want = (
            np.array([w % (1 << bits) for w in want], np.uint64)
            .astype(np.dtype(f"u{bits // 8}"))
            .view(dtype)
        )
        out = lax.mulhi(x, y)
        assert out.dtype == dtype
        np.testing.assert_array_equal(np.asarray(out), want)


def test_bitcast_convert_type():
    x = _f32(np.random.default_rng(6), 2, 3)
    check_close(lax.bitcast_convert_type(x, np.int32), x.view(np.int32))
    as_bytes = lax.bitcast_convert_type(x, np.uint8)
    assert as_bytes.shape == (2, 3, 4)
    check_close(lax.bitcast_convert_type(as_bytes, np.float32), x)
    xs = _f32(np.random.default_rng(7), 4, 2, 3)
    check_close(jaxlite.vmap(lambda v: lax.bitcast_convert_type(v, np.uint16), 2)(np.moveaxis(xs, 0, 2)),
                np.stack([x.view(np.uint16).reshape(2, 3, 2) for x in xs]))  # fmt: skip
    assert (
        jaxlite.grad(
            lambda x: lax.bitcast_convert_type(x, np.int32).astype(np.float32).sum()
        )(x).sum()
        == 0
    )
    with pytest.raises(TypeError, match="does not support bool or complex values"):
        lax.bitcast_convert_type(x, np.bool_)
    with pytest.raises(ValueError, match="Attempting to convert array of shape"):
        lax.bitcast_convert_type(np.ones((2, 3), np.int8), np.int16)


def test_bits_match_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(8)
    for dtype in INT_DTYPES:
        x, y = _ints(rng, dtype, 6), _ints(rng, dtype, 6)
        for name in ("population_count", "clz"):
            np.testing.assert_array_equal(
                np.asarray(getattr(lax, name)(x)), np.asarray(getattr(jax.lax, name)(x))
            )
        np.testing.assert_array_equal(
            np.asarray(lax.mulhi(x, y)), np.asarray(jax.lax.mulhi(x, y))
        )
    for call, error, phrase in [
        (lambda m: m.population_count(np.ones(2, np.float32)), TypeError, "population_count does not accept dtype float32"),
        (lambda m: m.mulhi(np.ones(2, np.float32), np.ones(2, np.float32)), TypeError, "mulhi does not accept dtype float32 at position 0"),
        (lambda m: m.reduce_precision(np.ones(2, np.int32), 5, 10), TypeError, "reduce_precision does not accept dtype int32"),
        (lambda m: m.complex(np.ones(2, np.float32), np.ones(2, np.float16)), TypeError, "complex does not accept dtype float16 at position 1"),
    ]:  # fmt: skip
        with pytest.raises(error, match=re.escape(phrase)):
            call(lax)
        with pytest.raises(error, match=re.escape(phrase)):
            call(jax.lax)


def test_reduce_precision_matches_jax_and_float16():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(9)
    x = (rng.standard_normal(400) * 10.0 ** rng.integers(-3, 4, 400)).astype(np.float32)
    x = x[(np.abs(x) > 1e-4) & (np.abs(x) < 6e4)]  # float16's normal range
    check_close(lax.reduce_precision(x, 5, 10), x.astype(np.float16).astype(np.float32))
    x = (rng.standard_normal(400) * 10.0 ** rng.integers(-45, 39, 400)).astype(
        np.float32
    )
    x = np.concatenate([x, np.float32([np.nan, np.inf, -np.inf, 0.0, -0.0])])
    for e, m in [(5, 10), (8, 7), (4, 3), (2, 0), (8, 23), (3, 30)]:
        np.testing.assert_array_equal(np.asarray(lax.reduce_precision(x, e, m)),
                                      np.asarray(jax.lax.reduce_precision(x, e, m)))  # fmt: skip
    # Linear, as in JAX: the tangent is rounded the same way.
    t = np.full(3, 1.2345678, np.float32)
    out = jaxlite.jvp(lambda x: lax.reduce_precision(x, 8, 7), (t,), (t,))[1]
    check_close(
        out,
        np.asarray(jax.jvp(lambda x: jax.lax.reduce_precision(x, 8, 7), (t,), (t,))[1]),
    )


def test_complex():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(10)
    x, y = _f32(rng, 2, 3), _f32(rng, 2, 3)
    out = lax.complex(x, y)
    assert out.dtype == np.complex64
    check_close(out, x + 1j * y)
    check_close(lax.complex(x, np.float32(2.0)), x + 2j)
    for part in ("real", "imag"):
        loss = lambda m, p=part: (
            lambda x, y: getattr(m, p)(m.complex(x, 2 * y) * m.complex(y, x)).sum()
        )  # noqa: E731
        for got, want in zip(
            jaxlite.grad(loss(lax), (0, 1))(x, y), jax.grad(loss(jax.lax), (0, 1))(x, y)
        ):
            check_close(got, np.asarray(want), atol=1e-5, rtol=1e-5)
    check_grads(lambda x, y: lax.abs(lax.complex(x, y)), (x, y), order=2)
    xs = _f32(rng, 4, 3)
    check_close(jaxlite.vmap(lax.complex, (0, None))(xs, y[0]), xs + 1j * y[0])


# --------------------------------------------------------------------------------------
# Small ones


def test_optimization_barrier_is_the_identity_with_rules():
    x = _f32(np.random.default_rng(11), 2, 3)
    out = lax.optimization_barrier((x, 2.0))
    check_close(out[0], x)
    text = str(jaxlite.make_jaxpr(lambda x: lax.optimization_barrier((x, 2.0)))(x))
    assert "optimization_barrier a 2.0:f32[]" in text
    check_grads(lambda x: lax.optimization_barrier(x * x), (x,), order=2)
    check_close(jaxlite.vmap(lambda x: lax.optimization_barrier(x)[0])(x), x[:, 0])
    with pytest.raises(ValueError, match="got sharding None which is not allowed"):
        lax.with_sharding_constraint(x, None)


def test_unstack_broadcast_shapes_index_take_match_jax():
    jax = pytest.importorskip("jax")
    x = _f32(np.random.default_rng(12), 3, 4)
    for axis in (0, 1, -1):
        for o, r in zip(lax.unstack(x, axis), jax.lax.unstack(x, axis)):
            check_close(o, np.asarray(r))
    for shapes in [((2, 1), (3,)), ((1,), ()), ((5, 1, 3), (4, 1), (1,))]:
        assert lax.broadcast_shapes(*shapes) == jax.lax.broadcast_shapes(*shapes)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        lax.broadcast_shapes((2,), (3,))
    idx = (np.array([0, 2, -1, 4], np.int32), np.array([1, -1, 0, 6], np.int32))
    check_close(
        lax.index_take(x, idx, (0, 1)), np.asarray(jax.lax.index_take(x, idx, (0, 1)))
    )
    check_close(
        lax.index_take(x, idx[1:], (1,)),
        np.asarray(jax.lax.index_take(x, idx[1:], (1,))),
    )
    check_grads(lambda x: lax.index_take(x, idx, (0, 1)), (x,), order=1)


def test_approx_top_k_matches_jax():
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(13)
    x = _f32(rng, 3, 7)
    for name in ("approx_max_k", "approx_min_k"):
        for kwargs in [
            dict(k=2),
            dict(k=3, reduction_dimension=0),
            dict(k=2, aggregate_to_topk=False),
        ]:
            out = getattr(lax, name)(x, **kwargs)
            ref = getattr(jax.lax, name)(x, **kwargs)
            for o, r in zip(out, ref):
                assert o.dtype == r.dtype
                np.testing.assert_array_equal(np.asarray(o), np.asarray(r))
    for n, k, recall in [(2000, 10, 0.95), (100000, 5, 0.95), (5000, 100, 0.99)]:
        z = rng.random((2, n)).astype(np.float32)
        for operand in (z, z[0]):
            got = lax.approx_max_k(
                operand, k, recall_target=recall, aggregate_to_topk=False
            )[0]
            want = jax.lax.approx_max_k(
                operand, k, recall_target=recall, aggregate_to_topk=False
            )[0]
            assert got.shape == want.shape
    check_grads(lambda x: lax.approx_min_k(x, 2)[0], (x,), order=2)
    check_close(
        jaxlite.vmap(lambda x: lax.approx_max_k(x, 2)[1])(x), lax.approx_max_k(x, 2)[1]
    )
