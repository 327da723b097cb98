"""Differentiation: jvp/vjp/grad against finite differences, composition, custom rules,
checkpoint and JAX's errors."""

import functools

import numpy as np
import pytest
from tests.testing import check_close, check_grads

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

RNG = np.random.default_rng(0)


def _pos(shape=(3,)):
    return jnp.asarray(RNG.uniform(0.5, 1.5, shape).astype(np.float32))


def _unit(shape=(3,)):
    return jnp.asarray(RNG.uniform(-0.8, 0.8, shape).astype(np.float32))


UNARY = [
    (jnp.sin, _unit),
    (jnp.cos, _unit),
    (jnp.tan, _unit),
    (jnp.tanh, _unit),
    (jnp.exp, _unit),
    (jnp.exp2, _unit),
    (jnp.log, _pos),
    (jnp.log1p, _pos),
    (jnp.expm1, _unit),
    (jnp.sqrt, _pos),
    (lax.rsqrt, _pos),
    (jnp.cbrt, _pos),
    (jnp.arcsin, _unit),
    (jnp.arccos, _unit),
    (jnp.arctan, _unit),
    (jnp.sinh, _unit),
    (jnp.cosh, _unit),
    (jnp.arcsinh, _unit),
    (lambda x: jnp.arccosh(x + 1.5), _pos),
    (jnp.arctanh, _unit),
    (lax.logistic, _unit),
    (jnp.abs, _pos),
    (jnp.square, _unit),
    (jnp.reciprocal, _pos),
    (lambda x: x**3, _unit),
    (jnp.negative, _unit),
    (lax.erf, _unit),
    (lax.erf_inv, _unit),
    (lax.lgamma, _pos),
]


@pytest.mark.parametrize("fun,gen", UNARY, ids=lambda v: getattr(v, "__name__", ""))
def test_unary_grads(fun, gen):
    check_grads(
        fun, (gen(),), order=2 if fun is not lax.lgamma else 1, atol=3e-2, rtol=3e-2
    )


BINARY = [
    jnp.add,
    jnp.subtract,
    jnp.multiply,
    jnp.divide,
    jnp.maximum,
    jnp.minimum,
    jnp.arctan2,
    lambda x, y: jnp.power(x, y),
    lambda x, y: jnp.where(x > y, x, y * 2),
    lambda x, y: lax.rem(x, y),
]


@pytest.mark.parametrize("fun", BINARY)
def test_binary_grads(fun):
    check_grads(fun, (_pos(), _pos() + 0.1), order=2, atol=3e-2, rtol=3e-2)


def test_broadcasting_grads():
    check_grads(lambda x, y: x * y + x, (_unit((2, 3)), _unit((3,))), order=2)
    check_grads(lambda x, y: x / y, (_unit((2, 1)), _pos((1, 3))), order=1)


def test_grad_values_and_weak_types():
    g = jax.grad(lambda x: x * 3.0)(2.0)
    assert repr(g) == "Array(3., dtype=float32, weak_type=True)"
    check_close(jax.grad(lambda x: jnp.sin(x) * x)(1.0), np.cos(1.0) + np.sin(1.0))
    check_close(
        jax.grad(jax.grad(lambda x: jnp.sin(x) * x))(1.0), 2 * np.cos(1.0) - np.sin(1.0)
    )


def test_grad_jaxpr_matches_jax():
    text = str(jax.make_jaxpr(jax.grad(lambda x: jnp.sin(x) * x))(1.0))
    expected = """{ lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = cos a
    _:f32[] = mul b a
    d:f32[] = mul b 1.0:f32[]
    e:f32[] = mul 1.0:f32[] a
    f:f32[] = mul e c
    g:f32[] = add_any d f
  in (g,) }"""
    assert text.split() == expected.split()


def test_argnums_has_aux_value_and_grad():
    f = lambda x, y: (x * y, {"aux": x})  # noqa: E731
    (v, aux), (gx, gy) = jax.value_and_grad(f, argnums=(0, 1), has_aux=True)(2.0, 3.0)
    assert float(v) == 6.0 and float(gx) == 3.0 and float(gy) == 2.0
    assert float(aux["aux"]) == 2.0 and type(aux["aux"]) is jax.Array
    g, aux = jax.grad(f, has_aux=True)(2.0, 3.0)
    assert float(g) == 3.0


def test_allow_int_gives_float0():
    gx, gi = jax.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert float(gx) == 3.0
    assert gi.dtype == jax.dtypes.float0


def test_pytree_grads():
    params = {"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}
    x = jnp.asarray(np.arange(2.0, dtype=np.float32))

    def loss(p):
        return jnp.sum(jnp.tanh(x @ p["w"] + p["b"]) ** 2)

    g = jax.grad(loss)(params)
    assert set(g) == {"w", "b"} and g["w"].shape == (2, 3)
    check_grads(loss, (params,), order=1, modes=("rev",))


def test_jvp_linearize_vjp_agree():
    f = lambda x: jnp.sin(x) * jnp.exp(x)  # noqa: E731
    x, t = _unit(), _unit()
    _, jt = jax.jvp(f, (x,), (t,))
    _, f_lin = jax.linearize(f, x)
    check_close(jt, f_lin(t))
    _, f_vjp = jax.vjp(f, x)
    (ct,) = f_vjp(jnp.ones(3))
    check_close(ct, jax.vmap(jax.grad(f))(x))


COMPOSITIONS = {
    "plain": lambda f: f,
    "jit": jax.jit,
    "jit_grad_jit": lambda f: jax.jit(jax.grad(jax.jit(f))),
}


@pytest.mark.parametrize(
    "name",
    ["grad", "jit(grad)", "grad(jit)", "jit(grad(jit))", "vmap(grad)", "grad(grad)"],
)
def test_composition_matrix(name):
    f = lambda x: jnp.sum(jnp.tanh(x) * x**2)  # noqa: E731
    x = _unit()
    expected = jax.grad(f)(x)
    g = {
        "grad": jax.grad(f),
        "jit(grad)": jax.jit(jax.grad(f)),
        "grad(jit)": jax.grad(jax.jit(f)),
        "jit(grad(jit))": jax.jit(jax.grad(jax.jit(f))),
        "vmap(grad)": lambda x: jnp.sum(
            jax.vmap(jax.grad(lambda xi: jnp.tanh(xi) * xi**2))(x), axis=()
        ),
        "grad(grad)": lambda x: jax.grad(lambda y: jnp.sum(jax.grad(f)(y) * 0) + f(y))(
            x
        ),
    }[name]
    check_close(g(x), expected, atol=1e-5, rtol=1e-5)


def test_hessian_jacobians():
    f = lambda x: jnp.sum(x**3)  # noqa: E731
    x = jnp.arange(3.0)
    check_close(jax.hessian(f)(x), np.diag(6 * np.arange(3.0)))
    g = lambda x: jnp.sin(x) * 2.0  # noqa: E731
    check_close(jax.jacfwd(g)(x), np.diag(2 * np.cos(np.arange(3.0))), atol=1e-6)
    check_close(jax.jacrev(g)(x), np.diag(2 * np.cos(np.arange(3.0))), atol=1e-6)
    check_close(jax.jacfwd(jax.jacrev(f))(x), jax.hessian(f)(x))


def test_no_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] = 1, not 2 (the classic perturbation-confusion check).
    f = lambda x: x * jax.grad(lambda y: x + y)(1.0)  # noqa: E731
    assert float(jax.grad(f)(3.0)) == 1.0


def test_stop_gradient():
    assert float(jax.grad(lambda x: lax.stop_gradient(x) * x)(3.0)) == 3.0


def test_errors():
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        jax.grad(lambda x: x)(1)
    with pytest.raises(
        TypeError,
        match=r"Gradient only defined for scalar-output functions. Output had shape: "
        r"\(3,\)\.",
    ):
        jax.grad(lambda x: x)(jnp.ones(3))
    with pytest.raises(TypeError, match="must have the same tree structure"):
        jax.jvp(lambda x: x, (1.0,), ((1.0, 2.0),))
    with pytest.raises(ValueError, match="different primal and tangent shapes"):
        jax.jvp(lambda x: x, (1.0,), (jnp.ones(2),))


def test_custom_jvp():
    @jax.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        return f(x, y), jnp.cos(x) * tx * y + jnp.sin(x) * ty

    check_close(jax.grad(f)(1.0, 2.0), 2 * np.cos(1.0))
    check_close(jax.jit(jax.grad(f))(1.0, 2.0), 2 * np.cos(1.0))
    check_close(jax.grad(jax.grad(f))(1.0, 2.0), -2 * np.sin(1.0))
    check_close(
        jax.vmap(jax.grad(f))(jnp.arange(3.0), jnp.ones(3)), np.cos(np.arange(3))
    )
    assert "custom_jvp_call" in str(jax.make_jaxpr(f)(1.0, 2.0))


def test_custom_jvp_rule_is_used():
    @jax.custom_jvp
    def clipped(x):
        return x

    clipped.defjvps(lambda t, ans, x: t * 10.0)
    assert float(jax.grad(clipped)(1.0)) == 10.0


def test_custom_jvp_nondiff_argnums():
    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    @app.defjvp
    def app_jvp(f, primals, tangents):
        (x,), (t,) = primals, tangents
        return app(f, x), 2.0 * t

    assert float(jax.grad(lambda x: app(jnp.sin, x))(1.0)) == 2.0


def test_custom_vjp():
    @jax.custom_vjp
    def g(x):
        return jnp.sin(x)

    g.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda r, ct: (r * ct * 3.0,))
    check_close(jax.grad(g)(1.0), 3 * np.cos(1.0))
    check_close(jax.jit(jax.grad(g))(1.0), 3 * np.cos(1.0))
    check_close(jax.vmap(jax.grad(g))(jnp.arange(3.0)), 3 * np.cos(np.arange(3.0)))
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        jax.jvp(g, (1.0,), (1.0,))


def test_custom_vjp_pytree_residuals():
    @jax.custom_vjp
    def f(x, y):
        return x * y

    def fwd(x, y):
        return x * y, {"x": x, "y": (y,)}

    def bwd(res, ct):
        return res["y"][0] * ct, res["x"] * ct

    f.defvjp(fwd, bwd)
    gx, gy = jax.grad(f, argnums=(0, 1))(2.0, 5.0)
    assert (float(gx), float(gy)) == (5.0, 2.0)


def test_checkpoint():
    f = lambda x: jnp.sin(jnp.sin(x))  # noqa: E731
    cf = jax.checkpoint(f)
    check_close(jax.grad(cf)(1.0), jax.grad(f)(1.0))
    check_close(jax.jit(jax.grad(cf))(1.0), jax.grad(f)(1.0))
    check_close(jax.grad(jax.grad(cf))(1.0), jax.grad(jax.grad(f))(1.0))
    assert "remat2" in str(jax.make_jaxpr(cf)(1.0))


def test_bessel_custom_jvp_with_numpy_standin():
    scipy_special = pytest.importorskip("scipy.special")

    @jax.custom_jvp
    def j1(x):
        return jnp.asarray(scipy_special.jv(1, np.asarray(x)), dtype=jnp.float32)

    @j1.defjvp
    def j1_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        j0 = jnp.asarray(scipy_special.jv(0, np.asarray(x)), dtype=jnp.float32)
        return j1(x), t * (j0 - j1(x) / x)

    check_close(jax.grad(j1)(2.0), -0.06447162, atol=1e-6)


def test_linear_transpose():
    t = jax.linear_transpose(lambda x: 2.0 * x, 1.0)
    assert float(t(3.0)[0]) == 6.0


def test_against_jax():
    real_jax = pytest.importorskip("jax")
    f_l = lambda x: jnp.sum(jnp.tanh(x) ** 2 / (1.0 + x * x))  # noqa: E731
    f_j = lambda x: real_jax.numpy.sum(  # noqa: E731
        real_jax.numpy.tanh(x) ** 2 / (1.0 + x * x)
    )
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    check_close(jax.grad(f_l)(x), np.asarray(real_jax.grad(f_j)(x)), atol=1e-6)
    check_close(jax.hessian(f_l)(x), np.asarray(real_jax.hessian(f_j)(x)), atol=1e-5)
