"""Control flow under autodiff (issue 13): batched `cond`, `custom_root`, and loop
bodies that close over arrays.

1. Under `vmap` with a batched index a `cond` runs every branch and `select_n` picks.
   An untaken branch can have an infinite or NaN derivative at the elements that do
   not take it (the safe-sqrt pattern); its cotangent there is zero, and the chain
   rule must not turn `0 * inf` into NaN in the result. Also `switch`, an unbatched
   operand, forward mode and a `while_loop` whose predicate is batched.
2. `lax.custom_root`: higher derivatives are the implicit ones (the solver's own
   derivative, zero for a bisection, must not leak in), also in reverse mode over a
   `while_loop` solver; `custom_linear_solve` to higher orders.
3. Loop and branch bodies that call a `jit` function or a custom-derivative function
   closing over an array: the transformed bodies get constants, which the loops must
   keep (they used to fail with `KeyError: Var(...)` or `NameError`).

Each program is written against a JAX-like module and compared with real JAX (where
installed) and with finite differences (`testing.check_grads`).
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import jaxlite
from testing import check_close, check_grads

F32 = np.float32


def arr(*values):
    return np.asarray(values, F32)


def _numpy(tree, m):
    return m.tree_util.tree_map(np.asarray, tree)


def _call(m, f, *args):
    return f(*args)


def _assert_finite(tree):
    for leaf in jaxlite.tree_util.tree_leaves(tree):
        assert np.all(np.isfinite(np.asarray(leaf))), leaf


def _against_jax(build, apply, args, rtol=None, atol=None):
    """`apply(jaxlite, build(jaxlite), *args)` against the same in real JAX (`apply`
    transforms the program with the module's API and calls it)."""
    jax = pytest.importorskip("jax")
    ours = apply(jaxlite, build(jaxlite), *args)
    theirs = apply(jax, build(jax), *args)
    check_close(_numpy(ours, jaxlite), _numpy(theirs, jax), rtol=rtol, atol=atol)
    return ours


# ----------------------------------------------------------------------------------------
# 1. Batched cond: the untaken branch's derivative never reaches the result

EPS = 1e-3


def _safe_sqrt(m):
    lax, jnp = m.lax, m.numpy

    def one(x):
        return lax.cond(x < EPS, lambda x: EPS * jnp.ones_like(x), jnp.sqrt, x)

    def f(x):
        return m.vmap(one)(x).sum()

    return f


def _switch3(m):
    """Three branches; at each point the untaken ones have NaN or infinite
    derivatives (sqrt and log of values <= 0)."""
    lax, jnp = m.lax, m.numpy

    def one(x):
        index = (x > 0).astype(jnp.int32) + (x > 1).astype(jnp.int32)
        return lax.switch(
            index, [lambda x: 2.0 * x, jnp.sqrt, lambda x: jnp.log(x - 1)], x
        )

    def f(x):
        return m.vmap(one)(x).sum()

    return f


def _unbatched_operand(m):
    """`y` is not batched: every element reads it, only some through `sqrt(y)`."""
    lax, jnp = m.lax, m.numpy

    def f(y, x):
        def one(x):
            return lax.cond(x > 0, lambda: jnp.sqrt(y) * x, lambda: 2.0 * y)

        return m.vmap(one)(x).sum()

    return f


def test_grad_of_vmapped_safe_sqrt_is_zero_at_zero():
    """The issue's example: JAX gives [0, 0, 0]; jaxlite gave [nan, nan, nan]."""
    f = _safe_sqrt(jaxlite)
    g = jaxlite.grad(f)(np.zeros(3, F32))
    check_close(g, np.zeros(3, F32))
    jax = pytest.importorskip("jax")
    check_close(g, np.asarray(jax.grad(_safe_sqrt(jax))(np.zeros(3, F32))))


_GRAD_TRANSFORMS = {
    "grad": lambda m, f, *a: m.grad(f)(*a),
    "jit_grad": lambda m, f, *a: m.jit(m.grad(f))(*a),
    "jacfwd": lambda m, f, *a: m.jacfwd(f)(*a),
    "jacrev": lambda m, f, *a: m.jacrev(f)(*a),
    "hessian": lambda m, f, *a: m.hessian(f)(*a),
    "grad_jit": lambda m, f, *a: m.grad(m.jit(f))(*a),
}


@pytest.mark.parametrize("transform", sorted(_GRAD_TRANSFORMS))
@pytest.mark.parametrize(
    "build, x",
    [
        (_safe_sqrt, arr(0.0, 4.0, 9.0, 0.0)),
        (_switch3, arr(-0.5, 0.0, 0.5, 2.0, -1.0)),
    ],
    ids=["safe_sqrt", "switch"],
)
def test_batched_cond_derivatives_match_jax(build, x, transform):
    out = _against_jax(build, _GRAD_TRANSFORMS[transform], (x,), rtol=1e-5, atol=1e-6)
    _assert_finite(out)


@pytest.mark.parametrize(
    "build, x",
    [(_safe_sqrt, arr(0.0, 4.0, 9.0)), (_switch3, arr(-0.5, 0.5, 2.0, -1.0))],
    ids=["safe_sqrt", "switch"],
)
def test_batched_cond_derivatives_match_finite_differences(build, x):
    check_grads(build(jaxlite), (x,), order=2, rtol=1e-3, atol=1e-3)


def test_batched_cond_jvp_and_per_example_grad_match_jax():
    def per_example(m):
        lax, jnp = m.lax, m.numpy
        return lambda x: lax.cond(
            x < EPS, lambda x: EPS * jnp.ones_like(x), jnp.sqrt, x
        )

    x = arr(0.0, 4.0, 9.0)
    t = np.ones(3, F32)
    out = _against_jax(
        per_example,
        lambda m, f, x: m.jvp(m.vmap(f), (x,), (t,)),
        (x,),
    )
    check_close(out[1], arr(0.0, 0.25, 1 / 6))
    out = _against_jax(per_example, lambda m, f, x: m.vmap(m.grad(f))(x), (x,))
    check_close(out, arr(0.0, 0.25, 1 / 6))


def test_batched_cond_unbatched_operand_gets_no_nan():
    """The unbatched `y` is broadcast into the branch: its cotangent sums over the
    batch, and the elements that do not take `sqrt(y)` must add zero, not NaN."""
    f = _unbatched_operand(jaxlite)
    x = arr(-1.0, -2.0)
    check_close(jaxlite.grad(f)(F32(0.0), x), F32(4.0))
    for transform in ("grad", "jacfwd", "jacrev"):
        out = _against_jax(_unbatched_operand, _GRAD_TRANSFORMS[transform], (F32(0), x))
        _assert_finite(out)
    check_grads(f, (F32(0.5), arr(-1.0, 2.0)), order=2, rtol=1e-3, atol=1e-3)


def _batched_while(m):
    """Elements finish after different numbers of steps (the predicate is batched);
    the body keeps running on finished elements, where `sqrt(x - 1)` has NaN or
    infinite derivatives, and those must be dropped."""
    lax, jnp = m.lax, m.numpy

    def one(x, n):
        def body(s):
            i, x = s
            return i + 1, jnp.sqrt(x - 1.0)

        return lax.while_loop(lambda s: s[0] < n, body, (0, x))[1]

    def f(x):
        return m.vmap(one)(x, jnp.array([3, 1, 2]))

    return f


def test_batched_while_forward_derivatives_match_jax():
    x = arr(10.0, 2.0, 5.0)
    out = _against_jax(
        _batched_while,
        lambda m, f, x: m.jvp(f, (x,), (np.ones(3, F32),)),
        (x,),
        rtol=1e-5,
    )
    _assert_finite(out)
    out = _against_jax(_batched_while, _GRAD_TRANSFORMS["jacfwd"], (x,), rtol=1e-5)
    _assert_finite(out)
    out = _against_jax(
        _batched_while, lambda m, f, x: m.jit(m.jacfwd(f))(x), (x,), rtol=1e-5
    )
    check_grads(_batched_while(jaxlite), (x,), order=2, modes=("fwd",), rtol=1e-3)


def test_jvp_inside_vmap_of_while_with_batched_predicate():
    def f(m):
        lax, jnp = m.lax, m.numpy

        def one(x, n):
            def g(x):
                def body(s):
                    i, x = s
                    return i + 1, jnp.sqrt(x - 1.0)

                return lax.while_loop(lambda s: s[0] < n, body, (0, x))[1]

            return m.jvp(g, (x,), (F32(1.0),))

        return lambda x: m.vmap(one)(x, jnp.array([3, 1, 2]))

    out = _against_jax(f, _call, (arr(10.0, 2.0, 5.0),), rtol=1e-5)
    _assert_finite(out)


# ----------------------------------------------------------------------------------------
# 2. custom_root and custom_linear_solve to higher orders


def _bisection(m):
    """A root finder by bisection on [0, 100] in a while_loop: its own derivative with
    respect to anything is zero, so only the implicit derivative is right."""
    lax, jnp = m.lax, m.numpy

    def solve(f, x0):
        def cond(state):
            low, high = state
            mid = 0.5 * (low + high)
            return (low < mid) & (mid < high)

        def body(state):
            low, high = state
            mid = 0.5 * (low + high)
            above = f(mid) > 0
            return jnp.where(above, low, mid), jnp.where(above, mid, high)

        return lax.while_loop(cond, body, (0.0 * x0, 0.0 * x0 + 100.0))[0]

    return solve


def _newton(m):
    """Newton's method in a while_loop; the body differentiates `f` itself."""
    lax, jnp = m.lax, m.numpy

    def solve(f, x0):
        def cond(state):
            i, x = state
            return (jnp.abs(f(x)) > 1e-6) & (i < 30)

        def body(state):
            i, x = state
            return i + 1, x - f(x) / m.grad(f)(x)

        return lax.while_loop(cond, body, (0, x0))[1]

    return solve


def _sqrt_cubed(solver):
    def build(m):
        def f(x):
            def fun(y):
                return y**2 - x**3

            return m.lax.custom_root(fun, 1.0, solver(m), lambda g, y: y / g(1.0))

        return f

    return build


_ROOT_TRANSFORMS = {
    "value": _call,
    "grad": lambda m, f, x: m.grad(f)(x),
    "grad_grad": lambda m, f, x: m.grad(m.grad(f))(x),
    "jacfwd_grad": lambda m, f, x: m.jacfwd(m.grad(f))(x),
    "jacrev_jacfwd": lambda m, f, x: m.jacrev(m.jacfwd(f))(x),
    "jit_grad_grad": lambda m, f, x: m.jit(m.grad(m.grad(f)))(x),
    "grad_grad_grad": lambda m, f, x: m.grad(m.grad(m.grad(f)))(x),
}


@pytest.mark.parametrize("transform", sorted(_ROOT_TRANSFORMS))
@pytest.mark.parametrize("solver", [_bisection, _newton], ids=["bisection", "newton"])
def test_custom_root_derivatives_match_jax(solver, transform):
    _against_jax(
        _sqrt_cubed(solver), _ROOT_TRANSFORMS[transform], (F32(5.0),), rtol=1e-4
    )


def test_custom_root_second_derivative_is_the_implicit_one():
    """d2/dx2 x**1.5 = 0.75 / sqrt(x): 0.335 at 5 (jaxlite gave 1.34, four times as
    much, by differentiating the bisection's solution as a constant)."""
    f = _sqrt_cubed(_bisection)(jaxlite)
    check_close(jaxlite.grad(jaxlite.grad(f))(F32(5.0)), F32(0.75 / np.sqrt(5.0)))
    check_close(
        jaxlite.vmap(jaxlite.grad(jaxlite.grad(f)))(arr(4.0, 9.0)), arr(0.375, 0.25)
    )


@pytest.mark.parametrize("solver", [_bisection, _newton], ids=["bisection", "newton"])
def test_custom_root_derivatives_match_finite_differences(solver):
    """Reverse mode over the while_loop solver to second order (it used to raise
    `Reverse-mode differentiation does not work for lax.while_loop`)."""
    check_grads(_sqrt_cubed(solver)(jaxlite), (F32(5.0),), order=2, rtol=1e-3)


def _root_of_linear_system(m):
    """The root of `A(p) x - b(p)`, parameters closed over by `f`."""
    jnp = m.numpy

    def f(p):
        a = jnp.array([[4.0, 1.0], [1.0, 3.0]]) + p * jnp.eye(2)
        b = jnp.array([1.0, -2.0]) * p

        def solve(g, x0):
            return jnp.linalg.solve(a, b)

        def tangent_solve(g, y):
            return jnp.linalg.solve(m.jacobian(g)(y), y)

        x = m.lax.custom_root(lambda x: a @ x - b, jnp.zeros(2), solve, tangent_solve)
        return jnp.sum(x**2)

    return f


def test_custom_root_vector_system_higher_derivatives():
    p = F32(0.7)
    for transform in ("grad", "grad_grad", "jacfwd_grad", "jacrev_jacfwd"):
        _against_jax(
            _root_of_linear_system, _ROOT_TRANSFORMS[transform], (p,), rtol=1e-4
        )
    check_grads(_root_of_linear_system(jaxlite), (p,), order=2, rtol=1e-3)


def _linear_solve(symmetric):
    def build(m):
        jnp = m.numpy

        def f(p):
            a = jnp.array([[4.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, 2.0]])
            a = a + p * jnp.eye(3)
            b = jnp.array([1.0, 2.0, -1.0]) * p
            x = m.lax.custom_linear_solve(
                lambda v: a @ v,
                b,
                lambda mv, r: jnp.linalg.solve(a, r),
                None if symmetric else (lambda vm, r: jnp.linalg.solve(a.T, r)),
                symmetric=symmetric,
            )
            return jnp.sum(x**2)

        return f

    return build


@pytest.mark.parametrize("transform", sorted(_ROOT_TRANSFORMS))
@pytest.mark.parametrize("symmetric", [False, True], ids=["general", "symmetric"])
def test_custom_linear_solve_higher_derivatives_match_jax(symmetric, transform):
    _against_jax(
        _linear_solve(symmetric), _ROOT_TRANSFORMS[transform], (F32(0.7),), rtol=1e-4
    )


def test_custom_linear_solve_higher_derivatives_match_finite_differences():
    check_grads(_linear_solve(False)(jaxlite), (F32(0.7),), order=3, rtol=1e-3)


def test_custom_linear_solve_shape_error_matches_jax():
    with pytest.raises(ValueError, match=r"solve\(\) output shapes must match b"):
        jaxlite.lax.custom_linear_solve(
            lambda x: x, 1.0, lambda f, x: jaxlite.numpy.ones(2)
        )


# ----------------------------------------------------------------------------------------
# 3. Bodies calling jit / custom_jvp / custom_vjp functions that close over an array

C = arr(1.5, -0.5)
T = arr(1.0, -2.0)


def _inners(m):
    """Functions closing over the array `c`, one per mechanism that carries it into
    a transformed body as a constant."""
    jnp = m.numpy
    c = jnp.asarray(C)

    jitted = m.jit(lambda x: jnp.sin(x) * c)

    @m.custom_jvp
    def cjvp(x):
        return jnp.sin(x) * c

    @cjvp.defjvp
    def _cjvp_rule(primals, tangents):
        (x,), (t,) = primals, tangents
        return cjvp(x), jnp.cos(x) * c * t

    @m.custom_vjp
    def cvjp(x):
        return jnp.sin(x) * c

    def _fwd(x):
        return cvjp(x), jnp.cos(x)

    def _bwd(cos_x, ct):
        return (cos_x * c * ct,)

    cvjp.defvjp(_fwd, _bwd)

    def jit_of_cjvp(x):
        return m.jit(cjvp)(x) + c

    return {
        "jit": jitted,
        "custom_jvp": cjvp,
        "custom_vjp": cvjp,
        "jit_cjvp": jit_of_cjvp,
    }


def _scan_prog(inner):
    def build(m):
        g = _inners(m)[inner]
        lax, jnp = m.lax, m.numpy

        def f(x):
            def body(carry, xi):
                y = g(carry * xi)
                return y + carry, jnp.sum(y * carry)

            carry, ys = lax.scan(body, x, jnp.array([1.0, 0.5, -2.0]))
            return jnp.sum(carry) + jnp.sum(ys)

        return f

    return build


def _reverse_scan_prog(inner):
    def build(m):
        g = _inners(m)[inner]
        lax, jnp = m.lax, m.numpy

        def f(x):
            def body(carry, xi):
                return g(carry) * xi + carry, g(xi * carry)

            carry, ys = lax.scan(
                body, x, jnp.array([[1.0, 0.5], [0.5, -1.0]]), reverse=True
            )
            return jnp.sum(carry * ys[0])

        return f

    return build


def _nested_scan_prog(inner):
    def build(m):
        g = _inners(m)[inner]
        lax, jnp = m.lax, m.numpy

        def f(x):
            def outer(carry, xi):
                def inner_body(c, _):
                    return 0.5 * g(c) + c * xi, None

                carry, _ = lax.scan(inner_body, carry, None, length=2)
                return carry, g(carry)

            carry, ys = lax.scan(outer, x, jnp.array([1.0, -0.5]))
            return jnp.sum(carry) + jnp.sum(ys)

        return f

    return build


def _fori_prog(inner):
    def build(m):
        g = _inners(m)[inner]
        lax, jnp = m.lax, m.numpy

        def f(x):
            return jnp.sum(lax.fori_loop(0, 3, lambda i, x: 0.5 * g(x) + x, x))

        return f

    return build


def _cond_prog(inner):
    def build(m):
        g = _inners(m)[inner]
        lax, jnp = m.lax, m.numpy

        def f(x):
            y = lax.cond(jnp.sum(x) > 0, g, lambda x: x * x, x)
            z = lax.switch(1, [lambda x: x, g, jnp.cos], y)
            return jnp.sum(z)

        return f

    return build


def _sum_vmapped(m, f, xs):
    return m.vmap(f)(xs).sum()


INNERS = ["jit", "custom_jvp", "custom_vjp", "jit_cjvp"]
LOOPS = {
    "scan": _scan_prog,
    "reverse_scan": _reverse_scan_prog,
    "nested_scan": _nested_scan_prog,
    "fori": _fori_prog,
    "cond": _cond_prog,
}
_LOOP_TRANSFORMS = {
    "value": _call,
    "grad": lambda m, f, x: m.grad(f)(x),
    "jit_grad": lambda m, f, x: m.jit(m.grad(f))(x),
    "jvp": lambda m, f, x: m.jvp(f, (x,), (T,)),
    "jit_jvp": lambda m, f, x: m.jit(functools.partial(m.jvp, f))((x,), (T,)),
    "vmap": lambda m, f, x: m.vmap(f)(x),
    "vmap_grad": lambda m, f, x: m.vmap(m.grad(f))(x),
    "grad_vmap": lambda m, f, x: m.grad(functools.partial(_sum_vmapped, m, f))(x),
    "hessian": lambda m, f, x: m.hessian(f)(x),
    "linearize": lambda m, f, x: m.linearize(f, x)[1](T),
}
_BATCHED = {"vmap", "vmap_grad", "grad_vmap"}
_FORWARD = {"jvp", "jit_jvp", "hessian", "linearize"}


@pytest.mark.parametrize("transform", sorted(_LOOP_TRANSFORMS))
@pytest.mark.parametrize("inner", INNERS)
@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_body_closing_over_array_matches_jax(loop, inner, transform):
    x = arr(0.3, 0.7)
    if transform in _BATCHED:
        x = np.stack([x, arr(-0.4, 1.1)])
    if inner == "custom_vjp" and transform in _FORWARD:
        # Forward mode over a custom_vjp function: JAX's error, in both.
        jax = pytest.importorskip("jax")
        for m in (jaxlite, jax):
            with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
                _LOOP_TRANSFORMS[transform](m, LOOPS[loop](inner)(m), x)
        return
    _against_jax(
        LOOPS[loop](inner), _LOOP_TRANSFORMS[transform], (x,), rtol=1e-4, atol=1e-5
    )


@pytest.mark.parametrize("inner", INNERS)
@pytest.mark.parametrize("loop", sorted(LOOPS))
def test_body_closing_over_array_matches_finite_differences(loop, inner):
    modes = ("rev",) if inner == "custom_vjp" else ("fwd", "rev")
    f = LOOPS[loop](inner)(jaxlite)
    check_grads(f, (arr(0.3, 0.7),), order=2, modes=modes, rtol=1e-3)


def _dynamic_loops(inner):
    """fori_loop with a traced trip count and while_loop: a `while` equation, forward
    mode only."""

    def build(m):
        g = _inners(m)[inner]
        lax, jnp = m.lax, m.numpy

        def f(x, n):
            y = lax.fori_loop(0, n, lambda i, x: 0.5 * g(x) + x, x)

            def body(s):
                i, x = s
                return i + 1, g(x) * 0.5 + x

            z = lax.while_loop(lambda s: s[0] < n, body, (0, y))[1]
            return jnp.sum(z)

        return f

    return build


@pytest.mark.parametrize("inner", ["jit", "custom_jvp", "jit_cjvp"])
def test_while_and_dynamic_fori_bodies_closing_over_array(inner):
    x, n = arr(0.3, 0.7), np.int32(3)
    t = arr(1.0, -2.0)
    build = _dynamic_loops(inner)
    _against_jax(build, _call, (x, n), rtol=1e-5)
    _against_jax(
        build,
        lambda m, f, x: m.jvp(functools.partial(f, n=n), (x,), (t,)),
        (x,),
        rtol=1e-5,
    )
    _against_jax(
        build, lambda m, f, x: m.jacfwd(functools.partial(f, n=n))(x), (x,), rtol=1e-4
    )
    _against_jax(
        build, lambda m, f, *a: m.jit(m.jacfwd(f))(*a), (x, n), rtol=1e-4, atol=1e-5
    )
    _against_jax(
        build,
        lambda m, f, *a: m.vmap(m.jacfwd(f), in_axes=(0, None))(*a),
        (np.stack([x, -x]), n),
        rtol=1e-4,
    )
    f = build(jaxlite)
    check_grads(lambda x: f(x, n), (x,), order=2, modes=("fwd",), rtol=1e-3)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jaxlite.grad(f)(x, n)


def test_scan_body_constants_become_scan_operands():
    """The JVP of a body calling a jit that closes over an array passes the array to
    the scan as a constant operand (the body has no free variables)."""
    f = _fori_prog("jit")(jaxlite)
    x = arr(0.3, 0.7)
    jaxpr = jaxlite.make_jaxpr(lambda x, t: jaxlite.jvp(f, (x,), (t,)))(x, x).jaxpr
    (scan_eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
    body = scan_eqn.params["jaxpr"]
    assert not body.jaxpr.constvars
    assert scan_eqn.params["num_consts"] >= 1
    jaxlite.core.typecheck_jaxpr(body.jaxpr)


def test_fori_loop_of_zero_steps_under_disable_jit_returns_init():
    """As in JAX: a zero-trip fori_loop with static bounds returns `init_val` even
    with jit disabled (the Python scan it would become cannot have zero steps)."""
    with jaxlite.disable_jit():
        out = jaxlite.lax.fori_loop(0, 0, lambda i, x: x + i, 1.0)
    check_close(np.asarray(out, F32), F32(1.0))
