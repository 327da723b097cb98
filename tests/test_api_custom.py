"""custom_gradient, closure_convert, SymbolicZero and custom_vmap / sequential_vmap:
values against references and real JAX, under jit, vmap and differentiation."""

import numpy as np
import pytest
from tests.testing import check_close, check_grads

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import custom_batching, custom_derivatives

X = np.array([0.3, -0.7, 1.1], np.float32)


def test_custom_derivatives_module_has_jax_names():
    for name in (
        "custom_jvp",
        "custom_vjp",
        "custom_gradient",
        "closure_convert",
        "SymbolicZero",
        "zero_from_primal",
        "custom_jvp_call_p",
        "custom_vjp_call_p",
    ):
        assert hasattr(custom_derivatives, name), name
    assert jax.custom_gradient is custom_derivatives.custom_gradient
    assert jax.custom_jvp is custom_derivatives.custom_jvp


# custom_gradient


@jax.custom_gradient
def _scaled_mul(x, y):
    return x * y, lambda g: (g * y, g * x * 10)


@jax.custom_gradient
def _log1pexp(x):
    e = jnp.exp(x)
    return jnp.log1p(e), lambda g: (g * (1 - 1 / (1 + e)),)


def test_custom_gradient_uses_the_given_rule():
    check_close(jax.grad(_scaled_mul, (0, 1))(2.0, 3.0), (3.0, 20.0))
    check_close(jax.jit(jax.grad(_scaled_mul, (0, 1)))(2.0, 3.0), (3.0, 20.0))
    xs, ys = jnp.arange(3.0), jnp.ones(3) * 2
    check_close(jax.vmap(jax.grad(_scaled_mul, (0, 1)))(xs, ys), (ys, xs * 10))
    check_close(jax.grad(lambda x: jax.vmap(_scaled_mul)(x, 2 * x).sum())(xs), 22 * xs)
    assert float(_scaled_mul(2.0, 3.0)) == 6.0


def test_custom_gradient_closing_over_intermediates():
    # The rule reads `e`, computed in the forward pass: a residual.
    check_grads(_log1pexp, (X,), order=1, modes=("rev",))
    check_close(
        jax.jit(jax.grad(lambda x: _log1pexp(x).sum()))(X), 1 / (1 + np.exp(-X))
    )
    # The function itself still has an ordinary forward value everywhere.
    check_close(jax.vmap(_log1pexp)(X), np.log1p(np.exp(X)), rtol=1e-6)


def test_custom_gradient_matches_jax():
    real = pytest.importorskip("jax")

    @real.custom_gradient
    def theirs(x, y):
        return x * y, lambda g: (g * y, g * x * 10)

    want = real.grad(theirs, (0, 1))(2.0, 3.0)
    got = jax.grad(_scaled_mul, (0, 1))(2.0, 3.0)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.weak_type == w.weak_type
        check_close(g, np.asarray(w))


# closure_convert


def test_closure_convert_hoists_traced_values_only():
    c = jnp.ones(3)
    f, consts = jax.closure_convert(lambda x: x * c, jnp.ones(3))
    assert consts == []  # concrete values stay inside, as in JAX
    check_close(f(jnp.arange(3.0)), jnp.arange(3.0))

    def g(y):
        f, consts = jax.closure_convert(lambda x: jnp.sin(x * y), jnp.ones(3))
        assert len(consts) == 1
        return f(y, *consts)

    check_close(jax.jit(g)(X), np.sin(X * X))
    check_close(jax.grad(lambda y: g(y).sum())(X), np.cos(X * X) * 2 * X, rtol=1e-6)


def test_closure_convert_with_custom_vjp():
    """The pattern closure_convert exists for: a custom_vjp over a converted closure,
    differentiated with respect to the closed-over value."""

    def apply(f, x):
        converted, consts = jax.closure_convert(f, x)
        return _apply_custom(converted, x, *consts)

    def loss(w):
        return apply(lambda x: jnp.sin(x * w), X).sum()

    w = jnp.float32(0.5)
    check_close(jax.grad(loss)(w), np.sum(np.cos(X * 0.5) * X), rtol=1e-5)


def _apply_custom(f, x, *consts):
    @jax.custom_vjp
    def call(x, *consts):
        return f(x, *consts)

    def fwd(x, *consts):
        return call(x, *consts), (x, consts)

    def bwd(res, ct):
        x, consts = res
        _, pullback = jax.vjp(f, x, *consts)
        return pullback(ct)

    call.defvjp(fwd, bwd)
    return call(x, *consts)


# SymbolicZero and zero_from_primal


def test_symbolic_zeros_reach_the_rule():
    seen = []

    @jax.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        seen.append(tuple(type(t).__name__ for t in tangents))
        tx = tx.instantiate() if isinstance(tx, custom_derivatives.SymbolicZero) else tx
        ty = ty.instantiate() if isinstance(ty, custom_derivatives.SymbolicZero) else ty
        return f(x, y), tx * y + x * ty

    f.defjvp(f_jvp, symbolic_zeros=True)
    assert float(jax.grad(f)(2.0, 3.0)) == 3.0
    assert seen[-1][1] == "SymbolicZero" and seen[-1][0] != "SymbolicZero"
    zero = custom_derivatives.SymbolicZero.from_primal_value(jnp.ones((2, 3)))
    assert zero.shape == (2, 3) and zero.dtype == np.float32
    assert bool(zero)  # as JAX's: an object, not an array (no __bool__ of its own)


def test_zero_from_primal():
    tree = {"a": jnp.ones(2), "n": jnp.int32(3)}
    zeros = custom_derivatives.zero_from_primal(tree)
    check_close(zeros["a"], np.zeros(2, np.float32))
    assert zeros["n"].dtype == jax.float0
    sym = custom_derivatives.zero_from_primal(tree, symbolic_zeros=True)
    assert isinstance(sym["a"], custom_derivatives.SymbolicZero)


# custom_vmap and sequential_vmap


def _counting_vmap(jx):
    jnp = jx.numpy
    calls = []

    @jx.custom_batching.custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def f_rule(axis_size, in_batched, x, y):
        calls.append((axis_size, tuple(in_batched)))
        return jnp.sin(x) * y, in_batched[0] or in_batched[1]

    return f, calls


XS, YS = np.arange(3.0, dtype=np.float32), np.full(3, 2.0, np.float32)


def test_custom_vmap_uses_the_rule():
    f, calls = _counting_vmap(jax)
    check_close(f(1.0, 2.0), np.sin(1.0) * 2, rtol=1e-6)
    assert calls == []
    check_close(jax.vmap(f)(XS, YS), np.sin(XS) * YS, rtol=1e-6)
    assert calls == [(3, (True, True))]
    check_close(jax.vmap(f, (0, None))(XS, 2.0), np.sin(XS) * 2, rtol=1e-6)
    assert calls[-1] == (3, (True, False))
    check_close(jax.jit(jax.vmap(f))(XS, YS), np.sin(XS) * YS, rtol=1e-6)
    check_close(jax.vmap(jax.jit(f))(XS, YS), np.sin(XS) * YS, rtol=1e-6)
    nested = jax.vmap(jax.vmap(f))(np.ones((2, 3), np.float32), np.ones((2, 3)))
    check_close(nested, np.full((2, 3), np.sin(1.0), np.float32), rtol=1e-6)


def test_custom_vmap_differentiation():
    f, calls = _counting_vmap(jax)
    check_grads(f, (0.7, 2.0), order=2)
    check_close(jax.vmap(jax.grad(f))(XS, YS), np.cos(XS) * YS, rtol=1e-6)
    assert calls  # the tangent computation was batched by the rule's JVP
    grad_vmap = jax.grad(lambda x: jax.vmap(f)(x, YS).sum())(XS)
    check_close(grad_vmap, np.cos(XS) * YS, rtol=1e-6)
    primal, tangent = jax.jvp(jax.vmap(f), (XS, YS), (YS, XS))
    check_close(tangent, np.cos(XS) * YS * YS + np.sin(XS) * XS, rtol=1e-6)


def test_custom_vmap_matches_jax():
    real = pytest.importorskip("jax")
    ours, _ = _counting_vmap(jax)
    theirs, _ = _counting_vmap(real)
    for transform in (
        lambda jx, f: jx.vmap(f)(XS, YS),
        lambda jx, f: jx.vmap(f, (0, None))(XS, 2.0),
        lambda jx, f: jx.jvp(jx.vmap(f), (XS, YS), (YS, XS)),
        lambda jx, f: jx.grad(lambda x: jx.vmap(f)(x, YS).sum())(XS),
    ):
        got = transform(jax, ours)
        want = transform(real, theirs)
        check_close(got, real.tree_util.tree_map(np.asarray, want), rtol=1e-6)


def test_custom_vmap_errors():
    @custom_batching.custom_vmap
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No batching rule"):
        f(1.0)

    @f.def_vmap
    def bad_rule(axis_size, in_batched, x):
        return (x, x), True

    with pytest.raises(ValueError, match="structure"):
        jax.vmap(f)(XS)


def test_sequential_vmap_calls_once_per_example():
    calls = []

    def host(v):
        calls.append(np.shape(v))
        return np.sin(v).astype(np.float32)

    @custom_batching.sequential_vmap
    def f(x):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    check_close(jax.vmap(f)(XS), np.sin(XS), rtol=1e-6)
    assert calls == [(), (), ()]
    check_close(
        jax.jit(jax.vmap(f))(np.ones((2, 3), np.float32)), np.sin(np.ones((2, 3)))
    )
    assert calls[3:] == [(3,), (3,)]


def test_custom_vjp_bwd_shapes_are_checked_as_in_jax():
    @jax.custom_vjp
    def f(d):
        return d["a"] * 2

    f.defvjp(lambda d: (f(d), None), lambda res, ct: ({"a": jnp.ones(3)},))
    with pytest.raises(
        ValueError, match=r"at output\[0\]\['a'\] the bwd rule produced"
    ):
        jax.grad(f)({"a": 1.0})


def test_custom_rules_under_vmap_with_unbatched_and_moved_axes():
    """Batched custom_vjp/custom_jvp with in_axes (1, None) and (1, 0): the bwd rule's
    cotangents go back to each input's own batch axis, or are summed over the batch
    for an input shared by the whole batch."""

    @jax.custom_vjp
    def f(x, w):
        return jnp.sin(x) * w

    f.defvjp(
        lambda x, w: (f(x, w), (x, w)),
        lambda r, ct: (jnp.cos(r[0]) * r[1] * ct, jnp.sin(r[0]) * ct),
    )
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2) / 5
    w = np.arange(3.0, dtype=np.float32) + 1
    gx, gw = jax.grad(lambda x, w: jax.vmap(f, (1, None))(x, w).sum(), (0, 1))(xs, w)
    check_close(gx, np.cos(xs) * w[:, None], rtol=1e-6)
    check_close(gw, np.sin(xs).sum(1), rtol=1e-6)
    ws = np.stack([w, 2 * w])
    gx, gw = jax.grad(lambda x, w: jax.vmap(f, (1, 0))(x, w).sum(), (0, 1))(xs, ws)
    check_close(gx, np.cos(xs) * ws.T, rtol=1e-6)
    check_close(gw, np.sin(xs).T, rtol=1e-6)
