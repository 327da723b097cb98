"""The code examples of JAX's autodiff documentation, run with jaxlite and real JAX.

Pages: "Automatic differentiation", "Advanced automatic differentiation" (the Autodiff
Cookbook), "Custom derivative rules for JAX-transformable Python functions", "Gradient
checkpointing with jax.checkpoint", and the API pages of grad, jvp, vjp, linearize,
linear_transpose, jacfwd, jacrev and hessian. Each example is written once as a function
of the library module (`jx` is `jaxlite` or `jax`); values are compared with JAX and
with finite differences, and where the printed text is the point (jaxprs, residual
reports, error messages, array reprs) the text is compared exactly.

Values printed by JAX can differ from jaxlite's in the last bit where XLA's
transcendental functions (sin, cos, tanh, exp, log) round differently from NumPy's;
those comparisons use a tolerance.
"""

import functools
import importlib
import io
import re
from collections import namedtuple
from contextlib import redirect_stdout

import numpy as np
import pytest

import jaxlite
from testing import check_close, check_grads

jax = pytest.importorskip("jax")
importlib.import_module("jax.ad_checkpoint")  # `import jax` does not load it

LIBS = [jaxlite, jax]


def both(example, *args):
    """`example(jaxlite, *args)` and `example(jax, *args)`."""
    return example(jaxlite, *args), example(jax, *args)


def printed(fn, *args):
    out = io.StringIO()
    with redirect_stdout(out):
        fn(*args)
    return out.getvalue()


def raised(fn):
    """`(exception class name, message)` of what `fn()` raises."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    raise AssertionError("no exception raised")


def close_trees(a, b, rtol=2e-6, atol=1e-6):
    la, ta = jaxlite.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert str(ta) == str(tb).replace("jax", "jaxlite") or len(la) == len(lb)
    for x, y in zip(la, lb):
        assert np.asarray(x).dtype == np.asarray(y).dtype
        assert np.shape(x) == np.shape(y)
        check_close(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------------
# "Automatic differentiation"


def _logistic(jx):
    jnp = jx.numpy

    def sigmoid(x):
        return 0.5 * (jnp.tanh(x / 2) + 1)

    def predict(W, b, inputs):
        return sigmoid(jnp.dot(inputs, W) + b)

    inputs = jnp.array(
        [
            [0.52, 1.12, 0.77],
            [0.88, -1.08, 0.15],
            [0.52, 0.06, -1.30],
            [0.74, -2.49, 1.39],
        ]
    )
    targets = jnp.array([True, True, False, True])

    def loss(W, b):
        preds = predict(W, b, inputs)
        label_probs = preds * targets + (1 - preds) * (1 - targets)
        return -jnp.sum(jnp.log(label_probs))

    key = jx.random.key(0)
    key, W_key, b_key = jx.random.split(key, 3)
    W = jx.random.normal(W_key, (3,))
    b = jx.random.normal(b_key, ())
    return predict, loss, W, b, inputs


def test_grad_and_higher_derivatives_print_as_jax():
    def example(jx):
        f = lambda x: x**3 + 2 * x**2 - 3 * x + 1  # noqa: E731
        dfdx = jx.grad(f)
        d2fdx, d3fdx = jx.grad(dfdx), jx.grad(jx.grad(dfdx))
        d4fdx = jx.grad(d3fdx)
        return [repr(g(1.0)) for g in (dfdx, d2fdx, d3fdx, d4fdx)]

    ours, theirs = both(example)
    assert (
        ours
        == theirs
        == [
            f"Array({v}, dtype=float32, weak_type=True)"
            for v in ("4.", "10.", "6.", "0.")
        ]
    )
    ours, theirs = both(lambda jx: [jx.grad(jx.grad(jx.numpy.tanh))(2.0)])
    close_trees(ours, theirs)


def test_logistic_regression_gradients_match_jax_and_finite_differences():
    def example(jx):
        _, loss, W, b, _ = _logistic(jx)
        W_grad, b_grad = jx.grad(loss, (0, 1))(W, b)
        value, (Wg, bg) = jx.value_and_grad(loss, (0, 1))(W, b)
        return W_grad, b_grad, jx.grad(loss, argnums=0)(W, b), value, Wg, bg

    ours, theirs = both(example)
    close_trees(ours, theirs)
    _, loss, W, b, _ = _logistic(jaxlite)
    check_grads(loss, (W, b), order=2, rtol=2e-2, atol=2e-2)


def test_grad_of_dicts_and_has_aux():
    def example(jx):
        jnp = jx.numpy
        predict, loss, W, b, inputs = _logistic(jx)

        def loss2(params):
            return loss(params["W"], params["b"])

        def loss_aux(W, b):
            value = loss(W, b)
            return value, {"preds": predict(W, b, inputs), "note": "aux"}

        g, aux = jx.grad(loss_aux, has_aux=True)(W, b)
        (v, aux2), gs = jx.value_and_grad(loss_aux, (0, 1), has_aux=True)(W, b)
        nested = jx.grad(lambda x: x[0]["a"] ** 2 + jnp.sum(x[1][0] * x[1][1]))(
            [{"a": 2.0}, (jnp.ones(2), jnp.arange(2.0))]
        )
        return (
            jx.grad(loss2)({"W": W, "b": b}),
            g,
            aux["preds"],
            aux["note"],
            gs,
            nested,
        )

    ours, theirs = both(example)
    assert ours[3] == theirs[3] == "aux"
    close_trees(ours[:3] + ours[4:], theirs[:3] + theirs[4:])


# ----------------------------------------------------------------------------------
# "Advanced automatic differentiation": stop_gradient, per-example gradients


def _td(jx, stop):
    jnp = jx.numpy
    value_fn = lambda theta, state: jnp.dot(theta, state)  # noqa: E731
    theta = jnp.array([0.1, -0.1, 0.0])
    s_tm1, r_t, s_t = (
        jnp.array([1.0, 2.0, -1.0]),
        jnp.array(1.0),
        jnp.array([2.0, 1, 0]),
    )

    def td_loss(theta, s_tm1, r_t, s_t):
        v_tm1 = value_fn(theta, s_tm1)
        target = r_t + value_fn(theta, s_t)
        if stop:
            target = jx.lax.stop_gradient(target)
        return -0.5 * ((target - v_tm1) ** 2)

    return td_loss, (theta, s_tm1, r_t, s_t)


def test_stop_gradient_td_update_prints_as_documented():
    def example(jx):
        jnp = jx.numpy
        out = [repr(jx.grad(_td(jx, stop)[0])(*_td(jx, stop)[1])) for stop in (0, 1)]
        td_loss, (theta, s_tm1, r_t, s_t) = _td(jx, True)
        batch = [jnp.stack([a, a]) for a in (s_tm1, r_t, s_t)]
        perex = jx.jit(jx.vmap(jx.grad(td_loss), in_axes=(None, 0, 0, 0)))
        out.append(repr(perex(theta, *batch)))
        out.append(repr(jx.vmap(jx.grad(td_loss))(jnp.stack([theta, theta]), *batch)))
        return out

    ours, theirs = both(example)
    assert ours == theirs
    assert ours[0] == "Array([-1.2,  1.2, -1.2], dtype=float32)"
    assert ours[1] == "Array([ 1.2,  2.4, -1.2], dtype=float32)"


def test_straight_through_estimator_and_stop_gradient_api_page():
    def example(jx):
        jnp, sg = jx.numpy, jx.lax.stop_gradient

        def straight_through_f(x):
            zero = x - sg(x)
            return zero + sg(jnp.round(x))

        return [
            repr(v)
            for v in (
                straight_through_f(3.2),
                jx.grad(jnp.round)(3.2),
                jx.grad(straight_through_f)(3.2),
                jx.grad(lambda x: sg(x) ** 2)(3.0),
                jx.grad(jx.grad(lambda x: x**2))(3.0),
                jx.grad(jx.grad(lambda x: sg(x) ** 2))(3.0),
            )
        ] + [str(jx.make_jaxpr(jx.grad(lambda x: x * sg(x)))(2.0))]

    ours, theirs = both(example)
    assert ours == theirs


# ----------------------------------------------------------------------------------
# The Autodiff Cookbook: Jacobians, JVPs/VJPs, Hessian-vector products, complex numbers


def test_jacobians_of_pytrees_and_hessian():
    def example(jx):
        predict, _, W, b, inputs = _logistic(jx)
        f = lambda W: predict(W, b, inputs)  # noqa: E731
        J_dict = jx.jacrev(lambda p, x: predict(p["W"], p["b"], x))(
            {"W": W, "b": b}, inputs
        )
        return jx.jacfwd(f)(W), jx.jacrev(f)(W), J_dict, jx.hessian(f)(W)

    ours, theirs = both(example)
    assert ours[0].shape == (4, 3) and ours[2]["b"].shape == (4,)
    assert ours[3].shape == (4, 3, 3)
    close_trees(ours, theirs, rtol=1e-5)


def test_jax_jacobian_docstrings_print_as_jax():
    def example(jx):
        jnp = jx.numpy

        def f(x):
            return jnp.asarray(
                [x[0], 5 * x[2], 4 * x[1] ** 2 - 2 * x[2], x[2] * x[0] ** 3]
            )

        g = lambda x: x[0] ** 3 - 2 * x[0] * x[1] - x[1] ** 6  # noqa: E731
        h = lambda d: {"c": d["a"] ** 2 * d["b"]}  # noqa: E731
        d = {"a": jnp.ones(2), "b": jnp.float32(3.0)}
        shapes = lambda t: jx.tree_util.tree_map(lambda x: x.shape, t)  # noqa: E731
        x = jnp.array([1.0, 2.0, 3.0])
        return [
            str(jx.jacrev(f)(x)),
            str(jx.hessian(g)(jnp.array([1.0, 2.0]))),
            shapes(jx.hessian(h)(d)),
        ]

    ours, theirs = both(example)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1] == "[[   6.   -2.]\n [  -2. -480.]]"
    assert ours[2] == theirs[2]


def test_jvp_vjp_linearize_docstrings():
    def example(jx):
        jnp = jx.numpy
        primals, tangents = jx.jvp(jnp.sin, (0.1,), (0.2,))
        _, f_vjp = jx.vjp(lambda x, y: (jnp.sin(x), jnp.cos(y)), 0.5, 1.0)
        xbar, ybar = f_vjp((-0.7, 0.3))

        def f(x):
            return 3.0 * jnp.sin(x) + jnp.cos(x / 2.0)

        y, f_jvp = jx.linearize(f, 2.0)
        return (
            primals,
            tangents,
            xbar,
            ybar,
            jx.jvp(f, (2.0,), (3.0,)),
            y,
            f_jvp(3.0),
            f_jvp(4.0),
            jx.vmap(f_jvp)(jnp.arange(3.0)),
            jx.jit(f_jvp)(3.0),
            jx.grad(jnp.tanh)(0.2),
        )

    ours, theirs = both(example)
    close_trees(ours, theirs)
    assert [repr(v) for v in ours[:2]] == [repr(v) for v in theirs[:2]]


def test_vjp_returns_a_pytree_of_residuals_in_jax_order():
    # print_fwd_bwd (checkpoint page) flattens the VJP function to get its residuals.
    def example(jx):
        jnp = jx.numpy
        x, y = jnp.ones(3) * 2.0, jnp.ones(3) * 3.0
        out = []
        for f, args in [
            (lambda x, y: jnp.sin(y) * jnp.cos(x) + x * y, (x, y)),
            (lambda x, y: y * jnp.sin(x), (x, y)),
            (lambda x, y: x * y, (2.0, 3.0)),
            (lambda x: (x * 2.0) * x, (2.0,)),
            (lambda x, y: x * y, (jnp.float32(2.0), jnp.float32(3.0))),
        ]:
            _, f_vjp = jx.vjp(f, *args)
            out.append([np.asarray(r) for r in jx.tree_util.tree_leaves(f_vjp)])
        return out

    ours, theirs = both(example)
    assert [len(r) for r in ours] == [len(r) for r in theirs] == [6, 3, 0, 1, 2]
    close_trees(ours, theirs)


def test_vector_valued_gradients_and_jacobian_matrix_products():
    def example(jx):
        jnp = jx.numpy
        predict, _, W, b, inputs = _logistic(jx)
        f = lambda W: predict(W, b, inputs)  # noqa: E731

        def vgrad(f, x):
            y, vjp_fn = jx.vjp(f, x)
            return vjp_fn(jnp.ones(y.shape))[0]

        key = jx.random.key(0)
        U = jx.random.normal(key, (3, 4))
        S = jx.random.normal(key, (3, 3))
        _, vjp_fun = jx.vjp(f, W)
        loop_mjp = jnp.vstack([vjp_fun(u)[0] for u in U])
        (vmap_mjp,) = jx.vmap(vjp_fun)(U)
        loop_jmp = jnp.vstack([jx.jvp(f, (W,), (s,))[1] for s in S])
        vmap_jmp = jx.vmap(lambda s: jx.jvp(f, (W,), (s,))[1])(S)
        (our_jacrev,) = jx.vmap(vjp_fun)(jnp.eye(4))
        our_jacfwd = jx.vmap(lambda s: jx.jvp(f, (W,), (s,))[1], in_axes=1)(jnp.eye(3))
        return (
            vgrad(lambda x: 3 * x**2, jnp.ones((2, 2))),
            loop_mjp - vmap_mjp,
            loop_jmp - vmap_jmp,
            our_jacrev - jx.jacrev(f)(W),
            our_jacfwd.T - jx.jacfwd(f)(W),
            vmap_mjp,
        )

    ours, theirs = both(example)
    assert str(ours[0]) == str(theirs[0]) == "[[6. 6.]\n [6. 6.]]"
    for diff in ours[1:5]:
        assert np.abs(np.asarray(diff)).max() < 1e-6
    close_trees(ours[5], theirs[5], rtol=1e-5)


def test_hessian_vector_products_three_ways():
    def example(jx):
        jnp = jx.numpy

        def f(X):
            return jnp.sum(jnp.tanh(X) ** 2)

        def hvp(f, primals, tangents):
            return jx.jvp(jx.grad(f), primals, tangents)[1]

        def hvp_revfwd(f, primals, tangents):
            return jx.grad(lambda p: jx.jvp(f, p, tangents)[1])(primals)

        def hvp_revrev(f, primals, tangents):
            (x,), (v,) = primals, tangents
            return jx.grad(lambda x: jnp.vdot(jx.grad(f)(x), v))(x)

        key1, key2 = jx.random.split(jx.random.key(0))
        X, V = jx.random.normal(key1, (3, 2)), jx.random.normal(key2, (3, 2))
        dense = jnp.tensordot(jx.hessian(f)(X), V, 2)
        return (
            hvp(f, (X,), (V,)),
            hvp_revfwd(f, (X,), (V,))[0],
            hvp_revrev(f, (X,), (V,)),
            dense,
        )

    ours, theirs = both(example)
    for value in ours[1:]:
        check_close(np.asarray(value), np.asarray(ours[0]), rtol=1e-4, atol=1e-5)
    close_trees(ours, theirs, rtol=1e-4, atol=1e-5)


def test_complex_numbers_and_holomorphic_differentiation():
    def example(jx):
        jnp = jx.numpy
        z = 3.0 + 4j
        A = jnp.array(
            [[5.0, 2.0 + 3j, 5j], [2.0 - 3j, 7.0, 1.0 + 7j], [-5j, 1.0 - 7j, 12.0]]
        )

        def chol_loss(X):
            L = jnp.linalg.cholesky(X)
            return jnp.sum((L - jnp.sin(L)) ** 2)

        zs = jnp.array([1 + 1j, 2j])
        return (
            jx.grad(lambda z: jnp.real(z) ** 2 + jnp.imag(z) ** 2)(z),
            jx.grad(jnp.sin, holomorphic=True)(z),
            jx.grad(jnp.conjugate, holomorphic=True)(z),
            jx.grad(lambda z: jnp.abs(z) ** 2)(z),
            jx.grad(chol_loss, holomorphic=True)(A),
            jx.jacfwd(jnp.sin, holomorphic=True)(zs),
            jx.jacrev(jnp.sin, holomorphic=True)(zs),
            jx.jacrev(jnp.abs)(jnp.array([3 + 4j])),
            jx.vjp(jnp.sin, 1 + 2j)[1](1.0 + 0j),
        )

    ours, theirs = both(example)
    assert repr(ours[0]) == repr(theirs[0]) == "Array(6.-8.j, dtype=complex64)"
    assert repr(ours[2]) == repr(theirs[2])
    close_trees(ours, theirs, rtol=5e-6, atol=1e-5)


HOLOMORPHIC_CASES = [
    ("grad", True, "r", "sin"),
    ("grad", True, "c", "abs"),
    ("grad", False, "c", "sin"),
    ("grad", False, "r", "int"),
    ("jacfwd", False, "c", "sin"),
    ("jacfwd", True, "r", "sin"),
    ("jacfwd", True, "c", "abs"),
    ("jacfwd", False, "i", "sin"),
    ("jacrev", False, "r", "cplx"),
    ("jacrev", True, "r", "sin"),
    ("jacrev", True, "c", "abs"),
    ("jacrev", False, "r", "int"),
    ("jacrev", False, "i", "sin"),
    ("hessian", False, "c", "sin"),
    ("hessian", True, "c", "abs"),
]


@pytest.mark.parametrize("name,holomorphic,kind,fn", HOLOMORPHIC_CASES)
def test_differentiation_dtype_errors_match_jax(name, holomorphic, kind, fn):
    def example(jx):
        jnp = jx.numpy
        x = {"c": jnp.array([1 + 1j, 2j]), "r": jnp.array([1.0, 2.0])}.get(kind)
        x = jnp.array([1, 2]) if x is None else x
        if name == "grad":
            x = x[0]
        f = {
            "sin": jnp.sin,
            "abs": lambda x: jnp.abs(x) * 1.0,
            "cplx": lambda x: x * (1 + 2j),
            "int": lambda x: (x > 1).astype(jnp.int32).sum(),
        }[fn]
        return raised(lambda: getattr(jx, name)(f, holomorphic=holomorphic)(x))

    ours, theirs = both(example)
    assert ours == theirs


def test_jacobians_of_integer_outputs_and_allow_int():
    def example(jx):
        jnp = jx.numpy
        j = jx.jacfwd(lambda x: (x > 1).astype(jnp.int32))(jnp.array([1.0, 2.0]))
        g = jx.grad(lambda x, i: x * i, argnums=1, allow_int=True)(2.0, 3)
        return repr(j), g.dtype, g.shape

    ours, theirs = both(example)
    assert ours == theirs


# ----------------------------------------------------------------------------------
# Custom derivative rules


def _log1pexp(jx, rule):
    jnp = jx.numpy

    def log1pexp(x):
        return jnp.log(1.0 + jnp.exp(x))

    if rule is None:
        return log1pexp
    f = jx.custom_jvp(log1pexp)
    if rule == "defjvps":
        f.defjvps(lambda t, ans, x: (1 - 1 / (1 + jnp.exp(x))) * t)
        return f

    @f.defjvp
    def log1pexp_jvp(primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return f(x), (1 - 1 / (1 + jnp.exp(x))) * x_dot

    return f


def test_custom_jvp_log1pexp():
    def example(jx, rule):
        jnp = jx.numpy
        f = _log1pexp(jx, rule)
        return (
            jx.grad(f)(100.0),
            jx.jit(f)(3.0),
            jx.jit(jx.grad(f))(3.0),
            jx.vmap(jx.jit(jx.grad(f)))(jnp.arange(3.0)),
            str(jx.make_jaxpr(jx.grad(f))(3.0)),
        )

    for rule in (None, "defjvp", "defjvps"):
        ours, theirs = both(example, rule)
        close_trees(ours[:4], theirs[:4])
        assert ours[4] == theirs[4]
        assert np.isnan(ours[0]) == (rule is None)
    check_grads(_log1pexp(jaxlite, "defjvp"), (3.0,), order=2, rtol=1e-2, atol=1e-2)


def test_custom_jvp_conventions_and_defjvps():
    def example(jx):
        jnp = jx.numpy

        @jx.custom_jvp
        def f(x):
            return x / (1 + jnp.sqrt(x))

        f.defjvps(
            lambda t, ans, x: ((jnp.sqrt(x) + 2) / (2 * (jnp.sqrt(x) + 1) ** 2)) * t
        )

        @jx.custom_jvp
        def g(x, y):
            return jnp.sin(x) * y

        g.defjvps(
            lambda x_dot, out, x, y: jnp.cos(x) * x_dot * y,
            lambda y_dot, out, x, y: jnp.sin(x) * y_dot,
        )

        @jx.custom_jvp
        def h(x, y):
            return x**2 * y

        h.defjvps(None, lambda y_dot, out, x, y: x**2 * y_dot)

        @jx.custom_jvp
        def branchy(x):
            return jnp.sin(x) if x > 0 else jnp.cos(x)

        @branchy.defjvp
        def branchy_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return branchy(x), (2 * t if x > 0 else 3 * t)

        plain = lambda x: x / (1 + jnp.sqrt(x))  # noqa: E731
        return [
            repr(v)
            for v in (
                jx.grad(plain)(0.0),
                jx.grad(f)(0.0),
                g(2.0, 3.0),
                jx.jvp(g, (2.0, 3.0), (1.0, 0.0))[1],
                jx.grad(g)(2.0, 3.0),
                jx.grad(h)(2.0, 3.0),
                jx.grad(h, 1)(2.0, 3.0),
                jx.grad(branchy)(1.0),
                jx.grad(branchy)(-1.0),
            )
        ]

    ours, theirs = both(example)
    assert ours[0] == theirs[0] == "Array(nan, dtype=float32, weak_type=True)"
    assert ours[1] == theirs[1] == "Array(1., dtype=float32, weak_type=True)"
    assert ours[5:] == theirs[5:]


def test_custom_jvp_and_vjp_call_the_rules_as_documented():
    def example(jx):
        jnp = jx.numpy

        @jx.custom_jvp
        def f(x):
            print("called f!")
            return jnp.sin(x)

        @f.defjvp
        def f_jvp(primals, tangents):
            print("called f_jvp!")
            (x,), (t,) = primals, tangents
            return f(x), jnp.cos(x) * t

        @jx.custom_vjp
        def g(x):
            print("called g!")
            return jnp.sin(x)

        def g_fwd(x):
            print("called g_fwd!")
            return g(x), jnp.cos(x)

        def g_bwd(cos_x, y_bar):
            print("called g_bwd!")
            return (cos_x * y_bar,)

        g.defvjp(g_fwd, g_bwd)

        def run():
            f(3.0)
            jx.vmap(f)(jnp.arange(3.0))
            jx.jit(f)(3.0)
            jx.jvp(f, (3.0,), (1.0,))
            jx.grad(f)(3.0)
            g(3.0)
            jx.grad(g)(3.0)
            _, g_vjp = jx.vjp(g, 3.0)
            g_vjp(1.0)

        return printed(run), raised(lambda: jx.jvp(g, (3.0,), (1.0,)))

    ours, theirs = both(example)
    assert ours == theirs
    assert (
        ours[1][1]
        == "can't apply forward-mode autodiff (jvp) to a custom_vjp function."
    )


def _clip_gradient(jx):
    @jx.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    def fwd(lo, hi, x):
        return x, (lo, hi)

    def bwd(res, g):
        lo, hi = res
        return (None, None, jx.numpy.clip(g, lo, hi))

    clip_gradient.defvjp(fwd, bwd)
    return clip_gradient


def test_custom_vjp_clip_gradient():
    def example(jx):
        jnp = jx.numpy
        clip = _clip_gradient(jx)
        clip_sin = lambda x: jnp.sin(clip(-0.75, 0.75, x))  # noqa: E731
        t = jnp.array([0.0, 2.0, 4.0, 6.0, 8.0])
        return jx.vmap(jx.grad(clip_sin))(t), [
            repr(jx.grad(clip_sin)(v)) for v in (0.0, 3.0)
        ]

    ours, theirs = both(example)
    close_trees(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def _fixed_point_sqrt(jx):
    jnp = jx.numpy

    @functools.partial(jx.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return jnp.abs(x_prev - x) > 1e-6

        def body_fun(carry):
            _, x = carry
            return x, f(a, x)

        _, x_star = jx.lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
        return x_star

    def fixed_point_fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = jx.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    def fixed_point_rev(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = jx.vjp(lambda a: f(a, x_star), a)
        (a_bar,) = vjp_a(
            fixed_point(
                functools.partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar
            )
        )
        return a_bar, jnp.zeros_like(x_star)

    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

    def newton_sqrt(a):
        return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)

    return newton_sqrt


def test_custom_vjp_fixed_point_with_nondiff_argnums():
    def example(jx):
        newton_sqrt = _fixed_point_sqrt(jx)
        return (
            newton_sqrt(2.0),
            jx.grad(newton_sqrt)(2.0),
            jx.grad(jx.grad(newton_sqrt))(2.0),
            jx.jit(jx.vmap(jx.grad(newton_sqrt)))(jx.numpy.array([1.0, 2.0, 3.0, 4.0])),
        )

    ours, theirs = both(example)
    close_trees(ours, theirs)
    check_close(np.asarray(ours[1]), 0.5 / np.sqrt(2.0), rtol=1e-5)
    check_close(np.asarray(ours[2]), -0.25 * 2.0**-1.5, rtol=1e-4)


def test_custom_rules_on_pytrees_and_nondiff_functions():
    Point = namedtuple("Point", ["x", "y"])

    def example(jx):
        jnp = jx.numpy

        @jx.custom_jvp
        def f(pt):
            return {"a": pt.x**2, "b": (jnp.sin(pt.x), jnp.cos(pt.y))}

        @f.defjvp
        def f_jvp(primals, tangents):
            (pt,), (pt_dot,) = primals, tangents
            ans_dot = {
                "a": 2 * pt.x * pt_dot.x,
                "b": (jnp.cos(pt.x) * pt_dot.x, -jnp.sin(pt.y) * pt_dot.y),
            }
            return f(pt), ans_dot

        @jx.custom_vjp
        def g(pt):
            return {"a": pt.x**2, "b": (jnp.sin(pt.x), jnp.cos(pt.y))}

        def g_bwd(pt, ct):
            x_bar = 2 * pt.x * ct["a"] + jnp.cos(pt.x) * ct["b"][0]
            return (Point(x_bar, -jnp.sin(pt.y) * ct["b"][1]),)

        g.defvjp(lambda pt: (g(pt), pt), g_bwd)

        @functools.partial(jx.custom_jvp, nondiff_argnums=(0,))
        def app(fn, x):
            return fn(x)

        app.defjvp(lambda fn, p, t: (fn(p[0]), 2.0 * t[0]))

        @functools.partial(jx.custom_vjp, nondiff_argnums=(0,))
        def app_v(fn, x):
            return fn(x)

        app_v.defvjp(lambda fn, x: (fn(x), x), lambda fn, x, g: (5 * g,))
        pt = Point(1.0, 2.0)
        return (
            f(pt)["a"],
            jx.grad(lambda pt: f(pt)["a"] + f(pt)["b"][0])(pt),
            jx.grad(lambda pt: g(pt)["a"] + g(pt)["b"][0])(pt),
            app(lambda x: x**3, 3.0),
            jx.grad(app, 1)(lambda x: x**3, 3.0),
            jx.grad(app_v, 1)(lambda x: x**2, 4.0),
        )

    ours, theirs = both(example)
    assert ours[0] == theirs[0] == 1.0 and type(ours[0]) is float  # eager: as given
    assert type(ours[1]).__name__ == "Point"
    close_trees(ours[1:], theirs[1:])


def test_custom_jvp_closures_and_traced_nondiff_arguments():
    def example(jx):
        jnp = jx.numpy

        @functools.partial(jx.custom_jvp, nondiff_argnums=(0,))
        def scale(s, x):
            return s * x

        scale.defjvp(lambda s, p, t: (s * p[0], s * t[0]))

        @functools.partial(jx.custom_vjp, nondiff_argnums=(0,))
        def scale_v(s, x):
            return s * x

        scale_v.defvjp(lambda s, x: (s * x, None), lambda s, r, g: (s * g,))
        return (
            jx.jit(scale)(2.0, 3.0),
            jx.grad(lambda s: scale(s, 3.0))(2.0),
            jx.grad(lambda x: scale(jnp.sin(x), x))(2.0),
            jx.vmap(lambda s: scale(s, 3.0))(jnp.arange(3.0)),
            str(jx.make_jaxpr(scale)(2.0, 3.0)),
            raised(lambda: jx.jit(scale_v)(2.0, 3.0)),
        )

    ours, theirs = both(example)
    close_trees(ours[:4], theirs[:4])
    assert ours[4] == theirs[4]
    assert ours[5][0] == theirs[5][0] == "UnexpectedTracerError"
    assert ours[5][1].splitlines()[0] == theirs[5][1].splitlines()[0]


def test_custom_rule_errors_match_jax():
    def example(jx):
        jnp = jx.numpy

        def vjp_fn(fwd, bwd):
            f = jx.custom_vjp(lambda x: jnp.sin(x))
            f.defvjp(fwd, bwd)
            return f

        def jvp_fn(rule):
            f = jx.custom_jvp(lambda x: jnp.sin(x))
            f.defjvp(rule)
            return f

        fwd = lambda x: (jnp.sin(x), x)  # noqa: E731
        bad_bwds = [
            lambda x, g: g,
            lambda x, g: (g, g),
            lambda x, g: (jnp.ones(2),),
            lambda x, g: ([g],),
        ]
        bad_jvps = [
            lambda p, t: (jnp.sin(p[0]), (t[0],)),
            lambda p, t: (jnp.sin(p[0]), jnp.ones(2)),
            lambda p, t: (jnp.sin(p[0]), jnp.int32(1)),
            lambda p, t: (jnp.ones(3), t[0]),
        ]
        out = [raised(lambda b=b: jx.grad(vjp_fn(fwd, b))(1.0)) for b in bad_bwds]
        out += [raised(lambda r=r: jx.jvp(jvp_fn(r), (1.0,), (1.0,))) for r in bad_jvps]
        nojvp = jx.custom_jvp(lambda x: x)
        out.append(raised(lambda: nojvp(1.0)))
        two = jx.custom_vjp(lambda x, y: x * y)
        two.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g, None))
        out.append(repr(jx.grad(two, argnums=(0, 1))(1.0, 2.0)))
        return out

    ours, theirs = both(example)
    # JAX names the lambda `<lambda>`; jaxlite too: the messages are identical.
    assert ours == theirs


def test_custom_vjp_bwd_may_debug_print():
    def example(jx):
        @jx.custom_vjp
        def debug(x):
            return x

        def debug_bwd(x, g):
            jx.debug.print("bwd x={x} g={g}", x=x, g=g)
            return (g,)

        debug.defvjp(lambda x: (x, x), debug_bwd)
        foo = lambda x: jx.numpy.sin(debug(x**2))  # noqa: E731
        return printed(lambda: print(jx.grad(foo)(3.0), jx.jit(jx.grad(foo))(3.0)))

    ours, theirs = both(example)
    assert (
        ours.splitlines()[0]
        == theirs.splitlines()[0]
        == "bwd x=9.0 g=-0.9111302495002747"
    )


def test_closure_convert_and_custom_gradient():
    def example(jx):
        conv, consts = jx.closure_convert(lambda x: x * 2.0, 1.0)

        @jx.custom_gradient
        def cg(x):
            return x**2, lambda g: (g * 10.0,)

        return conv(3.0), len(consts), jx.grad(cg)(3.0), cg(3.0)

    ours, theirs = both(example)
    close_trees(ours, theirs)


# ----------------------------------------------------------------------------------
# Gradient checkpointing


def _g(jx):
    def g(W, x):
        y = jx.numpy.dot(W, x)
        return jx.numpy.sin(y)

    return g


def _layers(jx, wrap=lambda g: g):
    g = wrap(_g(jx))

    def f(W1, W2, W3, x):
        x = g(W1, x)
        x = g(W2, x)
        x = g(W3, x)
        return x

    return f


def _weights(jx):
    jnp = jx.numpy
    return jnp.ones((5, 4)), jnp.ones((6, 5)), jnp.ones((7, 6)), jnp.ones(4)


def _named_layers(jx):
    name = jx.ad_checkpoint.checkpoint_name
    g = _g(jx)

    def f4(W1, W2, W3, x):
        x = name(g(W1, x), name="a")
        x = name(g(W2, x), name="b")
        x = name(g(W3, x), name="c")
        return x

    return f4


def test_print_saved_residuals_matches_jax():
    def example(jx):
        cp, psr = jx.checkpoint_policies, jx.ad_checkpoint.print_saved_residuals
        ws = _weights(jx)
        f3 = jx.checkpoint(_layers(jx), policy=cp.dots_with_no_batch_dims_saveable)
        f4 = jx.checkpoint(_named_layers(jx), policy=cp.save_only_these_names("a"))
        return [
            printed(psr, _layers(jx), *ws),
            printed(psr, _layers(jx, jx.checkpoint), *ws),
            printed(psr, f3, *ws),
            printed(psr, f4, *ws),
        ]

    ours, theirs = both(example)
    assert ours == theirs
    assert ours[0].splitlines()[:5] == [
        "f32[5,4] from the argument W1",
        "f32[6,5] from the argument W2",
        "f32[7,6] from the argument W3",
        "f32[4] from the argument x",
        f"f32[5] output of sin from {__file__}:{_g.__code__.co_firstlineno + 3}:15 "
        "(_g.<locals>.g)",
    ]


POLICY_NAMES = [
    "everything_saveable",
    "nothing_saveable",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "save_only_these_names",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "save_from_both_policies",
]


def _policy(cp, name):
    if name in ("save_only_these_names", "save_any_names_but_these"):
        return getattr(cp, name)("act")
    if name == "save_anything_except_these_names":
        return cp.save_anything_except_these_names("act")
    if name == "save_from_both_policies":
        return cp.save_from_both_policies(
            cp.dots_saveable, cp.save_only_these_names("act")
        )
    return getattr(cp, name)


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_checkpoint_policies_residuals_and_gradients(name):
    def example(jx):
        jnp = jx.numpy

        def loss(params, x):
            for W in params:
                x = jx.ad_checkpoint.checkpoint_name(jnp.sin(jnp.dot(W, x)), "act")
            return jnp.sum(x)

        params = [jnp.ones((3, 3)) * 0.1, jnp.ones((3, 3)) * 0.2]
        lf = jx.checkpoint(loss, policy=_policy(jx.checkpoint_policies, name))
        text = printed(
            jx.ad_checkpoint.print_saved_residuals, lf, params, jnp.arange(3.0)
        )
        return jx.grad(lf)(params, jnp.arange(3.0)), text

    ours, theirs = both(example)
    close_trees(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def _print_fwd_bwd(jx, f, *args):
    """The checkpointing page's helper, printing instead of drawing a rich table."""
    tree_flatten, tree_unflatten = (
        jx.tree_util.tree_flatten,
        jx.tree_util.tree_unflatten,
    )
    args, in_tree = tree_flatten((args, {}))

    def f_(*args):
        args, kwargs = tree_unflatten(in_tree, args)
        return f(*args, **kwargs)

    fwd = jx.make_jaxpr(lambda *args: jx.vjp(f_, *args))(*args).jaxpr
    y, f_vjp = jx.vjp(f_, *args)
    res, in_tree = tree_flatten(f_vjp)

    def g_(*args):
        *res, y = args
        return tree_unflatten(in_tree, res)(y)

    bwd = jx.make_jaxpr(g_)(*res, y).jaxpr
    return f"forward computation:\n{fwd}\nbackward computation:\n{bwd}"


def test_print_fwd_bwd_jaxprs_match_jax():
    def example(jx):
        jnp = jx.numpy
        cp = jx.checkpoint_policies
        ws = _weights(jx)
        f3 = jx.checkpoint(_layers(jx), policy=cp.dots_with_no_batch_dims_saveable)
        g = lambda x: jnp.sin(jnp.sin(x))  # noqa: E731
        h = lambda x: jnp.cos(jnp.cos(x))  # noqa: E731
        return [
            _print_fwd_bwd(jx, _layers(jx), *ws),
            _print_fwd_bwd(jx, f3, *ws),
            _print_fwd_bwd(jx, lambda x: h(g(x)), 3.0),
            _print_fwd_bwd(jx, lambda x: h(jx.checkpoint(g)(x)), 3.0),
        ]

    ours, theirs = both(example)
    assert ours == theirs
    assert "reduce_precision[exponent_bits=8 mantissa_bits=23]" in ours[1]
    assert "let jaxpr = { lambda" in ours[1]  # a sub-jaxpr of > 10 equations


def test_make_jaxpr_of_checkpointed_grads_matches_jax():
    def example(jx):
        jnp = jx.numpy
        g = lambda x: jnp.sin(jnp.sin(x))  # noqa: E731
        f_checkpoint = lambda x: jnp.cos(jnp.cos(jx.checkpoint(g)(x)))  # noqa: E731

        @functools.partial(jx.checkpoint, static_argnums=(1,))
        def foo(x, is_training):
            return jnp.sin(x) if is_training else jnp.cos(x)

        return [
            str(jx.make_jaxpr(jx.grad(f_checkpoint))(3.0)),
            str(jx.make_jaxpr(jx.checkpoint(g))(3.0)),
            str(jx.make_jaxpr(jx.grad(jx.checkpoint(g)))(3.0)),
            str(jx.make_jaxpr(jx.linearize(jx.checkpoint(g), 3.0)[1])(1.0)),
            repr(jx.grad(foo)(3.0, True)),
            repr(jx.grad(f_checkpoint)(3.0)),
            jx.remat is jx.checkpoint,
        ]

    ours, theirs = both(example)
    assert ours[:4] == theirs[:4]
    assert ours[6] is theirs[6] is False
    check_close(float(ours[5][6:16].rstrip(",")), float(theirs[5][6:16].rstrip(",")))


def test_checkpoint_gradients_against_finite_differences():
    cp = jaxlite.checkpoint_policies
    f3 = jaxlite.checkpoint(
        _layers(jaxlite), policy=cp.dots_with_no_batch_dims_saveable
    )
    ws = tuple(
        np.random.default_rng(0).uniform(-0.5, 0.5, np.shape(w)).astype(np.float32)
        for w in _weights(jaxlite)
    )
    check_grads(f3, ws, order=1, modes=("rev",), rtol=2e-2, atol=2e-2)
    check_grads(_layers(jaxlite, jaxlite.checkpoint), ws, order=2, rtol=2e-2, atol=2e-2)


# ----------------------------------------------------------------------------------
# API pages: linear_transpose, linearize, jvp/vjp/grad errors


def test_linear_transpose_docstring_and_errors():
    def example(jx):
        jnp = jx.numpy
        f = lambda x, y: 0.5 * x - 0.5 * y  # noqa: E731
        scalar = jx.ShapeDtypeStruct(shape=(), dtype=np.dtype(np.float32))
        A = jnp.arange(6.0).reshape(2, 3)
        ft = jx.linear_transpose(lambda v: A @ v, jnp.zeros(3))
        return [
            repr(jx.linear_transpose(f, scalar, scalar)(1.0)),
            repr(ft(jnp.ones(2))),
            repr(
                jx.linear_transpose(
                    lambda d: {"s": d["a"] + d["b"]}, {"a": 1.0, "b": 2.0}
                )({"s": 3.0})
            ),
            len(jx.tree_util.tree_leaves(ft)),
            raised(lambda: ft(jnp.ones(3))),
            raised(lambda: ft((jnp.ones(2),))),
            raised(lambda: jx.linear_transpose(lambda x: x > 0, 1.0)),
        ]

    ours, theirs = both(example)
    assert ours == theirs
    assert ours[0] == "(Array(0.5, dtype=float32), Array(-0.5, dtype=float32))"


def test_linearize_has_aux_vmap_jit_and_tree_errors():
    def example(jx):
        jnp = jx.numpy
        y, f_jvp, aux = jx.linearize(
            lambda x: (jnp.sin(x), {"k": "v"}), 1.0, has_aux=True
        )
        y2, f2 = jx.linearize(lambda x, y: x * y, jnp.ones(3), 2.0)
        return (
            f_jvp(2.0),
            aux,
            f2(jnp.arange(3.0), 1.0),
            jx.vmap(f_jvp)(jnp.arange(3.0)),
            jx.jit(f_jvp)(3.0),
            raised(lambda: f2(jnp.arange(3.0)))[0],
        )

    ours, theirs = both(example)
    assert ours[1] == theirs[1] == {"k": "v"} and ours[5] == theirs[5]
    close_trees(ours[0::2][:3], theirs[0::2][:3])


def test_jvp_vjp_grad_error_messages_match_jax():
    def example(jx):
        jnp = jx.numpy
        _, f_vjp = jx.vjp(jnp.sin, 1.0)
        return [
            raised(lambda: jx.grad(lambda x: x)(jnp.ones(2))),
            raised(lambda: jx.grad(lambda x: x, argnums=2)(1.0)),
            raised(lambda: f_vjp(jnp.ones(2))),
            raised(lambda: f_vjp(1)),
            raised(lambda: jx.jvp(jnp.sin, (1.0,), (jnp.ones(2),))),
            raised(lambda: jx.jvp(jnp.sin, (1.0,), (1,))),
            raised(lambda: jx.jvp(jnp.sin, 1.0, 1.0)),
            raised(lambda: jx.jvp(lambda x, y: x, (1.0, 2.0), (1.0,))),
            raised(lambda: f_vjp((1.0,)))[0],
            raised(lambda: jx.grad(lambda x: x, has_aux=True)(1.0))[1].split(", but")[
                0
            ],
        ]

    ours, theirs = both(example)
    assert ours == theirs


def test_vjp_with_non_array_aux_and_float0_cotangents():
    def example(jx):
        y, f_vjp, aux = jx.vjp(lambda x: (x * 2, "aux"), 1.0, has_aux=True)
        _, g_vjp = jx.vjp(lambda x, n: x * n, 2.0, 3)
        ct = g_vjp(1.0)[1]
        return repr(y), repr(f_vjp(1.0)), aux, ct.dtype, ct.shape

    ours, theirs = both(example)
    assert ours == theirs


# ----------------------------------------------------------------------------------
# Derivative rules as JAX writes them (they print and round the same)

UNARY = "exp log log1p expm1 tanh logistic sin cos tan asin acos atan sinh cosh".split()
UNARY += "asinh acosh atanh sqrt rsqrt square abs".split()


def test_unary_and_binary_derivative_rules_stage_as_jax():
    def example(jx):
        lax, out = jx.lax, []
        for n in UNARY:
            x = 2.0 if n == "acosh" else 0.5
            out.append(
                str(
                    jx.make_jaxpr(
                        lambda x, g, n=n: jx.jvp(getattr(lax, n), (x,), (g,))
                    )(x, 1.0)
                )
            )
            out.append(str(jx.make_jaxpr(jx.grad(getattr(lax, n)))(x)))
        for n in "atan2 div mul rem max min".split():
            f = getattr(lax, n)
            out.append(
                str(
                    jx.make_jaxpr(lambda a, b, c, d, f=f: jx.jvp(f, (a, b), (c, d)))(
                        0.5, 0.7, 1.0, 1.0
                    )
                )
            )
        return out

    ours, theirs = both(example)
    assert ours == theirs
    ours, theirs = both(lambda jx: [jx.grad(abs)(0.0), jx.grad(jx.numpy.abs)(-2.0)])
    assert [float(v) for v in ours] == [float(v) for v in theirs] == [1.0, -1.0]


@pytest.mark.parametrize("y", [-5, -3, -2, -1, 0, 1, 2, 3, 5, 7, 13])
def test_integer_pow_rounds_as_jax(y):
    x = np.random.default_rng(y + 20).uniform(0.1, 3.1, 2000).astype(np.float32)
    ours = np.asarray(jaxlite.lax.integer_pow(x, y))
    theirs = np.asarray(jax.lax.integer_pow(x, y))
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


def test_transposed_dot_keeps_preferred_element_type():
    def example(jx):
        A = jx.numpy.ones((2, 3))
        return str(
            jx.make_jaxpr(jx.grad(lambda v: jx.numpy.sum(A @ v)))(jx.numpy.ones(3))
        )

    ours, theirs = both(example)
    assert re.findall(r"preferred_element_type=\w+", ours) == re.findall(
        r"preferred_element_type=\w+", theirs
    )
