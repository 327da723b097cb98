"""Collectives over named vmap/pmap axes (lax/parallel.py): values against a
per-example NumPy computation and against real JAX, nesting, jit inside vmap, pmap,
derivatives against finite differences and JAX, printed jaxprs, and JAX's errors.
Also the transpose of a linear custom_jvp function (linear_transpose of solve)."""

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from testing import check_close, check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3)).astype(np.float32)


def vmap_i(f, **kw):
    return jaxlite.vmap(f, axis_name="i", **kw)


# ----------------------------------------------------------------------------------------
# Values against a per-example NumPy computation


def test_psum_pmean_pmax_pmin_values():
    for f, ref in [
        (lax.psum, X.sum(0)),
        (lax.pmean, X.mean(0)),
        (lax.pmax, X.max(0)),
        (lax.pmin, X.min(0)),
    ]:
        out = vmap_i(lambda x, f=f: f(x, "i"))(X)
        check_close(out, np.broadcast_to(ref, X.shape), rtol=1e-6)


def test_psum_constant_is_axis_size_times_value():
    out = vmap_i(lambda x: lax.psum(1, "i"))(X)
    assert out.dtype == np.int32 and out.weak_type
    np.testing.assert_array_equal(out, [4, 4, 4, 4])
    out = vmap_i(lambda x: lax.psum(True, "i"))(X)
    assert out.dtype == np.int32 and not out.weak_type
    np.testing.assert_array_equal(vmap_i(lambda x: lax.axis_size("i"))(X), [4] * 4)
    np.testing.assert_array_equal(
        vmap_i(lambda x: lax.psum(x > 0, "i"))(X), [np.sum(X > 0, 0)] * 4
    )


def test_pytree_operands_and_in_axes():
    out = vmap_i(lambda t: lax.psum({"a": t[0], "b": 2 * t[1]}, "i"))((X, X))
    check_close(out["a"], np.broadcast_to(X.sum(0), X.shape))
    check_close(out["b"], np.broadcast_to(2 * X.sum(0), X.shape))
    out = vmap_i(lambda x: lax.psum(x, "i"), in_axes=1, out_axes=1)(X.T)
    check_close(out, np.broadcast_to(X.sum(0), X.shape).T)


def test_axis_index_and_nested_names():
    np.testing.assert_array_equal(vmap_i(lambda x: lax.axis_index("i"))(X), range(4))
    Y = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)

    def nest(f):
        return jaxlite.vmap(jaxlite.vmap(f, axis_name="j"), axis_name="i")

    check_close(nest(lambda y: lax.psum(y, "i"))(Y), np.broadcast_to(Y.sum(0), Y.shape))
    check_close(
        nest(lambda y: lax.psum(y, "j"))(Y),
        np.broadcast_to(Y.sum(1, keepdims=True), Y.shape),
    )
    check_close(
        nest(lambda y: lax.psum(y, ("i", "j")))(Y),
        np.broadcast_to(Y.sum((0, 1)), Y.shape),
    )
    idx = nest(lambda y: lax.axis_index(("i", "j")))(Y[..., 0])
    np.testing.assert_array_equal(idx, np.arange(6).reshape(2, 3))
    np.testing.assert_array_equal(
        nest(lambda y: lax.axis_size(("i", "j")))(Y[..., 0]), 6
    )
    # the inner vmap closes over a value batched only by the outer one
    out = jaxlite.vmap(
        lambda x: jaxlite.vmap(lambda k: lax.psum(x, "i") * k, axis_name="j")(
            jnp.arange(2.0)
        ),
        axis_name="i",
    )(X[:, 0])
    check_close(out, np.outer(np.full(4, X[:, 0].sum()), [0.0, 1.0]))


@pytest.mark.parametrize(
    "axis,tiled", [(0, False), (1, False), (-1, False), (0, True), (-1, True)]
)
def test_all_gather(axis, tiled):
    Z = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    out = vmap_i(lambda x: lax.all_gather(x, "i", axis=axis, tiled=tiled))(Z)
    ref = np.concatenate(list(Z), axis) if tiled else np.stack(list(Z), axis)
    for k in range(4):
        check_close(out[k], ref)


def test_ppermute_and_pshuffle():
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    out = vmap_i(lambda x: lax.ppermute(x, "i", perm))(X)
    check_close(out, np.roll(X, 1, axis=0))
    out = vmap_i(lambda x: lax.ppermute(x, "i", [(0, 2), (3, 1)]))(X)
    ref = np.zeros_like(X)
    ref[2], ref[1] = X[0], X[3]
    check_close(out, ref)
    out = vmap_i(lambda x: lax.pshuffle(x, "i", [2, 0, 3, 1]))(X)
    check_close(out, X[[2, 0, 3, 1]])
    out = vmap_i(lambda x: lax.ppermute(1.0, "i", [(0, 1)]))(X)
    check_close(out, np.array([0.0, 1.0, 0.0, 0.0], np.float32))


@pytest.mark.parametrize("dim,tiled", [(0, False), (1, False), (0, True), (1, True)])
def test_psum_scatter(dim, tiled):
    shape = [4, 8] if tiled else [4, 4]
    if dim == 1:
        shape = shape[::-1]
    Z = RNG.standard_normal((4, *shape)).astype(np.float32)
    out = vmap_i(
        lambda z: lax.psum_scatter(z, "i", scatter_dimension=dim, tiled=tiled)
    )(Z)
    total = Z.sum(0)
    for k in range(4):
        block = np.split(total, 4, axis=dim)[k]
        check_close(out[k], block if tiled else np.squeeze(block, dim), rtol=1e-5)


@pytest.mark.parametrize(
    "split,concat,tiled", [(0, 0, False), (0, 1, False), (1, 0, False), (0, 1, True)]
)
def test_all_to_all(split, concat, tiled):
    shape = [4, 3]
    if split == 1:
        shape = [3, 4]
    if tiled:
        shape = [8, 2]
    Z = np.arange(4 * np.prod(shape), dtype=np.float32).reshape(4, *shape)
    out = vmap_i(lambda z: lax.all_to_all(z, "i", split, concat, tiled=tiled))(Z)
    for j in range(4):  # member j receives block j of every member k, in order of k
        blocks = [np.split(Z[k], 4, axis=split)[j] for k in range(4)]
        if tiled:
            ref = np.concatenate(blocks, concat)
        else:
            ref = np.stack([np.squeeze(b, split) for b in blocks], concat)
        check_close(out[j], ref)


def test_jit_inside_vmap_and_pmap():
    f = jaxlite.jit(lambda x: lax.psum(x, "i") + lax.axis_index("i"))
    ref = X.sum(0) + np.arange(4)[:, None]
    check_close(vmap_i(f)(X), ref, rtol=1e-6)
    # a jit call with only unbatched operands still sees the vmap's name
    g = jaxlite.jit(lambda c: lax.psum(c, "i"))
    check_close(vmap_i(lambda x: g(2.0) * x)(X), 8.0 * X)
    check_close(
        vmap_i(lambda x: jaxlite.jit(lambda: lax.axis_index("i"))())(X), range(4)
    )
    out = jaxlite.pmap(lambda x: x / lax.psum(x, "i"), axis_name="i")(np.arange(4.0))
    check_close(out, np.arange(4.0) / 6.0)
    out = jaxlite.pmap(lambda x: lax.all_gather(x, "i"), axis_name="i")(X)
    check_close(out, np.broadcast_to(X, (4, *X.shape)))


def test_collectives_in_scan_and_cond_under_vmap():
    def body(c, x):
        return c + lax.psum(x, "i"), lax.axis_index("i")

    def f(x):
        return lax.scan(body, 0.0, x)

    c, idx = vmap_i(f)(X)
    check_close(c, np.full(4, X.sum()), rtol=1e-5)
    np.testing.assert_array_equal(idx, np.repeat(np.arange(4)[:, None], 3, 1))
    out = vmap_i(lambda x: lax.cond(x[0] > 0, lambda: lax.pmax(x, "i"), lambda: x))(X)
    ref = np.where(X[:, :1] > 0, X.max(0), X)
    check_close(out, ref)


# ----------------------------------------------------------------------------------------
# Derivatives


def test_grad_of_pmean_inside_vmap():
    # transpose of psum is psum: d/dx_k of pmean(x^2) (per member) is 2 x_k
    out = vmap_i(jaxlite.grad(lambda x: lax.pmean(x**2, "i")))(X[:, 0])
    check_close(out, 2 * X[:, 0], rtol=1e-6)
    out = vmap_i(jaxlite.grad(lambda x: lax.psum(x**2, "i")))(X[:, 0])
    check_close(out, 8 * X[:, 0], rtol=1e-6)


def test_grad_through_vmapped_collectives_fd():
    def loss(w, xs):
        def per(x):
            y = jnp.sin(w * x)
            y = lax.pmean(y, "i") + lax.ppermute(
                y, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]
            )
            g = lax.all_gather(y, "i").sum(0)
            s = lax.psum_scatter(jnp.tile(y[:1], 4), "i")
            a = lax.all_to_all(jnp.stack([y] * 4), "i", 0, 0)
            return (g * y).sum() + s * 2.0 + (a**2).sum()

        return vmap_i(per)(xs).sum()

    check_grads(loss, (np.float32(0.7), X), order=1, modes=("fwd", "rev"))
    check_grads(jaxlite.jit(loss), (np.float32(0.7), X), order=1, modes=("rev",))


def test_pmax_has_no_derivative():
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'pmax'"):
        vmap_i(jaxlite.grad(lambda x: lax.pmax(x, "i")))(X[:, 0])


# ----------------------------------------------------------------------------------------
# Errors


def test_unbound_axis_name_errors():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(jnp.ones(3), "i")
    with pytest.raises(NameError, match="Found an unbound axis name: i"):
        jaxlite.jit(lambda x: lax.psum(x, "i"))(jnp.ones(3))
    with pytest.raises(NameError, match="Found an unbound axis name: j"):
        vmap_i(lambda x: lax.psum(x, "j"))(X)
    with pytest.raises(NameError, match="Found an unbound axis name: i"):
        lax.axis_index("i")
    with pytest.raises(NameError, match="unbound axis name: j"):
        vmap_i(lambda x: lax.all_gather(x, "j"))(X)


def test_bad_arguments():
    with pytest.raises(ValueError, match="does not represent a permutation"):
        vmap_i(lambda x: lax.pshuffle(x, "i", [1, 1, 3, 0]))(X)
    with pytest.raises(ValueError, match="must be unique"):
        vmap_i(lambda x: lax.ppermute(x, "i", [(0, 1), (1, 1)]))(X)
    with pytest.raises(ValueError, match="all_to_all requires the size of the mapped"):
        vmap_i(lambda x: lax.all_to_all(x, "i", 0, 0))(X)
    with pytest.raises(ValueError, match="has to be divisible by the size"):
        vmap_i(lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True))(X)
    with pytest.raises(ValueError, match="must be divisible by shard_count"):
        vmap_i(lambda x: lax.psum_scatter(x, "i", tiled=True))(X)
    with pytest.raises(NotImplementedError, match="axis_index_groups not supported"):
        vmap_i(lambda x: lax.psum(x, "i", axis_index_groups=[[0, 1], [2, 3]]))(X)


# ----------------------------------------------------------------------------------------
# Against real JAX: values, dtypes, printed equations


CASES = {
    "psum": lambda lx: lambda x: lx.psum(x, "i"),
    "pmean_int": lambda lx: lambda x: lx.pmean(x.astype("int32"), "i"),
    "pmax": lambda lx: lambda x: lx.pmax(x, "i"),
    "axis_index": lambda lx: lambda x: lx.axis_index("i") + x,
    "psum_const": lambda lx: lambda x: lx.psum(2.0, "i") * x,
    "all_gather": lambda lx: lambda x: lx.all_gather(x, "i", axis=1),
    "pshuffle": lambda lx: lambda x: lx.pshuffle(x, "i", [3, 2, 0, 1]),
    "psum_scatter": lambda lx: (
        lambda x: lx.psum_scatter(x[:, None] * x, "i", tiled=True)
    ),
    "all_to_all": lambda lx: lambda x: lx.all_to_all(x[:, None] * x, "i", 0, 1),
    "grad_pmean": lambda lx: lambda x: 0 * x,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_jax(name):
    jax = pytest.importorskip("jax")
    Z = RNG.standard_normal((4, 4)).astype(np.float32)
    ours = jaxlite.vmap(CASES[name](lax), axis_name="i")(Z)
    theirs = jax.vmap(CASES[name](jax.lax), axis_name="i")(jax.numpy.asarray(Z))
    assert ours.dtype == theirs.dtype and ours.weak_type == theirs.weak_type
    check_close(ours, np.asarray(theirs), rtol=1e-5)


def test_grad_matches_jax():
    jax = pytest.importorskip("jax")

    def make(j):
        def loss(w, xs):
            per = lambda x: j.lax.pmean(j.numpy.sin(w * x) ** 2, "i") * x  # noqa: E731
            return j.vmap(per, axis_name="i")(xs).sum()

        return loss

    w, xs = np.float32(0.3), X[:, 0]
    check_close(
        jaxlite.grad(make(jaxlite))(w, xs), jax.grad(make(jax))(w, xs), rtol=1e-5
    )
    f = vmap_i(jaxlite.grad(lambda x: lax.pmean(x**2, "i")))
    g = jax.vmap(jax.grad(lambda x: jax.lax.pmean(x**2, "i")), axis_name="i")
    check_close(f(xs), g(xs), rtol=1e-6)


def _eqn_lines(text):
    return [
        ln.strip() for ln in str(text).splitlines() if "psum[" in ln or "pmax[" in ln
    ]


def test_printed_equations_match_jax():
    jax = pytest.importorskip("jax")
    for fn in [
        lambda lx: lambda x: lx.psum(x, "i"),
        lambda lx: lambda x: lx.pmean(x, "i"),
        lambda lx: lambda x: lx.pmax(x, "i"),
    ]:
        ours = jaxlite.make_jaxpr(jaxlite.vmap(fn(lax), axis_name="i"))(X)
        theirs = jax.make_jaxpr(jax.vmap(fn(jax.lax), axis_name="i"))(X)
        assert _eqn_lines(ours) == _eqn_lines(theirs)
        assert "psum[axes=(0,) axis_index_groups=None]" in str(ours) or "pmax[" in str(
            ours
        )
    nested = jaxlite.make_jaxpr(
        jaxlite.vmap(
            jaxlite.vmap(lambda y: lax.psum(y, ("i", "j")), axis_name="j"),
            axis_name="i",
        )
    )(X)
    assert "psum[axes=(0, 1) axis_index_groups=None]" in str(nested)


def test_named_collective_prints_inside_axis_env():
    from jaxlite.interpreters.batching import extend_axis_env

    with extend_axis_env([("i", 4)]):
        text = str(jaxlite.make_jaxpr(lambda x: lax.psum(x, "i"))(1.0))
        gathered = str(jaxlite.make_jaxpr(lambda x: lax.all_gather(x, "i"))(np.ones(3)))
        perm = str(
            jaxlite.make_jaxpr(lambda x: lax.pshuffle(x, "i", [1, 2, 3, 0]))(1.0)
        )
    assert "psum[axes=('i',) axis_index_groups=None]" in text
    assert "all_gather_dimension=0" in gathered and "axis_size=4" in gathered
    assert "ppermute[axis_name=('i',) perm=((1, 0), (2, 1), (3, 2), (0, 3))]" in perm


# ----------------------------------------------------------------------------------------
# custom_jvp functions that are linear transpose through their primal function


def test_linear_transpose_of_solve():
    A = np.array([[3.0, 1.0], [1.0, 2.0]], np.float32)
    b = np.array([1.0, 2.0], np.float32)
    c = np.array([0.5, -1.0], np.float32)
    (out,) = jaxlite.linear_transpose(lambda y: jnp.linalg.solve(A, y), b)(c)
    check_close(out, np.linalg.solve(A.T, c), rtol=1e-5)
    # dot-product test: <c, f(b)> == <f^T(c), b>
    fb = jnp.linalg.solve(A, b)
    check_close(np.dot(c, fb), np.dot(out, b), rtol=1e-5)
    jitted = jaxlite.jit(jaxlite.linear_transpose(lambda y: jnp.linalg.solve(A, y), b))
    check_close(jitted(c)[0], out, rtol=1e-6)


def test_linear_transpose_of_custom_jvp_function():
    @jaxlite.custom_jvp
    def f(x):
        return 3.0 * x

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), 100.0 * tangents[0]  # deliberately wrong: not used

    (out,) = jaxlite.linear_transpose(f, 1.0)(2.0)
    check_close(out, 6.0)


def test_jit_cache_is_keyed_on_the_axis_environment():
    g = jaxlite.jit(lambda x: x * lax.axis_size("i"))
    for n in (4, 8, 4):
        out = jaxlite.vmap(g, axis_name="i")(jnp.ones(n))
        np.testing.assert_array_equal(out, np.full(n, float(n)))


def test_make_jaxpr_axis_env_binds_names():
    text = str(jaxlite.make_jaxpr(lambda x: lax.psum(x, "i"), axis_env=[("i", 4)])(1.0))
    assert "psum[axes=('i',) axis_index_groups=None] a" in text
    jax = pytest.importorskip("jax")
    want = str(jax.make_jaxpr(lambda x: jax.lax.psum(x, "i"), axis_env=[("i", 4)])(1.0))
    assert text == want
