"""Contracts of the custom-rule APIs and the validation of the transformation APIs,
against real JAX 0.10.2 (issue 16, items 4 and 8).

Item 4: custom_jvp symbolic zeros under vmap; custom_vmap under jvp/jacfwd (the rule
sees as batched only what is batched with its tangent) and composed with custom_jvp
and custom_vjp; nondiff_argnames; custom_gradient with a bare-value vjp; the errors of
rules whose outputs do not match; signatures of jacfwd/jacrev; deepcopy of a tracer;
fori_loop over an empty range under disable_jit.

Item 8: jit/vmap/device_put/linearize/grad argument checks, tree_util's structure
errors, `checking_leaks`, and enable_x64 inside traced code, each with JAX's error
class and key phrase.

Each error test asserts the class and phrase on jaxlite, and the same on JAX when it
is installed; value tests compare with JAX.
"""

import copy
import dataclasses
import functools
import gc
import inspect
import re
import weakref

import numpy as np
import pytest
from tests.testing import check_close

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def _real():
    return pytest.importorskip("jax")


def _real_or_none():
    try:
        import jax as real
    except ImportError:
        return None
    return real


def _raises_as_jax(make, cls, phrase):
    """`make(jx)` raises `cls` with `phrase` in its message, under jaxlite and (when
    it is installed) under JAX."""
    for jx in (jax, _real_or_none()):
        if jx is None:
            continue
        with pytest.raises(cls, match=re.escape(phrase)):
            make(jx)


def _np(tree):
    return jax.tree_util.tree_map(np.asarray, tree)


XS = np.arange(3.0, dtype=np.float32) + 0.5


# ----------------------------------------------------------------------------------------
# custom_jvp symbolic zeros under vmap


def _symbolic_zero_fn(jx, seen):
    @jx.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        x, y = primals
        x_dot, y_dot = tangents
        zeros = tuple(type(t).__name__ == "SymbolicZero" for t in tangents)
        seen.append(zeros)
        terms = [
            a * b for a, b, z in ((x_dot, y, zeros[0]), (x, y_dot, zeros[1])) if not z
        ]
        return f(x, y), functools.reduce(lambda a, b: a + b, terms)

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


@pytest.mark.parametrize(
    "program",
    [
        lambda jx, f: jx.vmap(lambda x, y: jx.jvp(lambda x: f(x, y), (x,), (1.0,)))(
            XS, XS + 1
        ),
        lambda jx, f: jx.jvp(lambda x: jx.vmap(f)(x, XS + 1), (XS,), (np.ones(3),)),
        lambda jx, f: jx.jacfwd(lambda x: f(x, XS + 1))(XS),
        lambda jx, f: jx.vmap(jx.grad(f, argnums=1))(XS, XS + 1),
        lambda jx, f: jx.jit(
            jx.vmap(lambda x, y: jx.jvp(lambda x: f(x, y), (x,), (1.0,)))
        )(XS, XS + 1),
    ],
)
def test_custom_jvp_symbolic_zeros_survive_vmap(program):
    real = _real()
    ours, theirs = [], []
    got = program(jax, _symbolic_zero_fn(jax, ours))
    want = program(real, _symbolic_zero_fn(real, theirs))
    check_close(_np(got), _np(want), rtol=1e-6)
    assert ours == theirs and ours  # which tangents the rule saw as symbolic zeros


# ----------------------------------------------------------------------------------------
# custom_vmap under jvp / jacfwd


def _recording_vmap(jx, calls, nonlinear=True):
    @jx.custom_batching.custom_vmap
    def f(x):
        return jx.numpy.sin(x) if nonlinear else 7.0 * x

    @f.def_vmap
    def rule(axis_size, in_batched, xs):
        calls.append((axis_size, list(in_batched)))
        out = jx.numpy.cos(xs) if nonlinear else 11.0 * xs
        return out, in_batched[0]

    return f


_CUSTOM_VMAP_PROGRAMS = {
    "jacfwd": lambda jx, f: jx.jacfwd(f)(XS),
    "batched_tangents": lambda jx, f: jx.vmap(
        lambda x, t: jx.jvp(f, (x,), (t,)), in_axes=(None, 0), out_axes=(None, 0)
    )(np.float32(1.0), XS),
    "batched_primals": lambda jx, f: jx.vmap(
        lambda x, t: jx.jvp(f, (x,), (t,)), in_axes=(0, None)
    )(XS, np.float32(4.0)),
    "both_batched": lambda jx, f: jx.vmap(lambda x, t: jx.jvp(f, (x,), (t,)))(
        XS, XS * 2
    ),
    "jvp_of_vmap": lambda jx, f: jx.jvp(jx.vmap(f), (XS,), (XS * 2,)),
    "jit_jacfwd": lambda jx, f: jx.jit(jx.jacfwd(f))(XS),
}


@pytest.mark.parametrize("name", sorted(_CUSTOM_VMAP_PROGRAMS))
def test_custom_vmap_rule_sees_only_what_is_batched(name):
    real = _real()
    program = _CUSTOM_VMAP_PROGRAMS[name]
    ours, theirs = [], []
    got = program(jax, _recording_vmap(jax, ours))
    want = program(real, _recording_vmap(real, theirs))
    check_close(_np(got), _np(want), rtol=1e-6)
    assert ours == theirs and ours


def test_custom_vmap_jacfwd_calls_the_rule_unbatched():
    calls = []
    j = jax.jacfwd(_recording_vmap(jax, calls))(XS)
    check_close(j, -np.diag(np.sin(XS)), rtol=1e-6)
    assert calls == [(3, [False])]


def _jvp_with_replicated_tangent(jx, f):
    return jx.vmap(
        lambda x, t: jx.jvp(f, (x,), (t,)), in_axes=(0, None), out_axes=(0, None)
    )(XS, np.float32(4.0))


def test_custom_vmap_linear_rule_keeps_replicated_tangents_unbatched():
    tangents = []
    for jx in (jax, _real_or_none()):
        if jx is None:
            continue
        linear = _recording_vmap(jx, [], nonlinear=False)
        _, ty = _jvp_with_replicated_tangent(jx, linear)
        assert np.shape(ty) == ()  # not broadcast over the batch
        tangents.append(np.asarray(ty))
        with pytest.raises(ValueError, match="at vmap out_axes"):
            _jvp_with_replicated_tangent(jx, _recording_vmap(jx, []))
    check_close(tangents[0], np.float32(44.0))  # the JVP of the rule (11 x)
    if len(tangents) == 2:
        check_close(tangents[0], tangents[1])


def test_custom_vmap_jvp_allows_primals_that_depend_on_tangents():
    def program(jx):
        @jx.custom_jvp
        def odd_cos(x):
            return jx.numpy.cos(x)

        @odd_cos.defjvp
        def odd_cos_jvp(primals, tangents):
            (x,), (t,) = primals, tangents
            return jx.numpy.cos(x * t), t

        @jx.custom_batching.custom_vmap
        def f(x):
            return jx.numpy.sin(x)

        f.def_vmap(lambda n, b, xs: (odd_cos(xs), b[0]))
        return jx.vmap(lambda x, t: jx.jvp(f, (x,), (t,)), in_axes=(None, 0))(
            np.float32(1.0), XS
        )

    ys, ts = program(jax)
    check_close(ys, np.cos(XS), rtol=1e-6)
    check_close(ts, XS)
    real = _real_or_none()
    if real is not None:
        check_close(_np(program(real)), _np((ys, ts)), rtol=1e-6)


def test_custom_vmap_reverse_mode_beyond_jax():
    """JAX cannot linearise a custom_vmap function ("Linearization failed to produce
    known values"); jaxlite splits its JVP into the primal call and a linear tangent
    call, so grad works, batched too."""
    calls = []
    f = _recording_vmap(jax, calls)
    check_close(jax.grad(f)(np.float32(0.5)), np.cos(np.float32(0.5)), rtol=1e-6)
    assert not calls
    # Under vmap, the primal call goes through the rule; the cotangent is the
    # transpose of the function's own JVP (transposition has no vmap rule to use).
    check_close(jax.vmap(jax.grad(f))(XS), np.cos(XS), rtol=1e-6)
    assert calls == [(3, [True])]
    check_close(jax.grad(lambda x: jax.vmap(f)(x).sum())(XS), -np.sin(XS), rtol=1e-6)
    real = _real_or_none()
    if real is not None:
        with pytest.raises(ValueError, match="Linearization failed"):
            real.grad(_recording_vmap(real, []))(np.float32(0.5))


def test_sequential_vmap_loops_under_nested_vmap():
    calls = []

    def host(v):
        calls.append(np.shape(v))
        return np.sin(v).astype(np.float32)

    @jax.custom_batching.sequential_vmap
    def f(x):
        return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    out = jax.vmap(jax.vmap(f))(np.ones((2, 3), np.float32))
    check_close(out, np.sin(np.ones((2, 3), np.float32)), rtol=1e-6)
    assert calls == [()] * 6  # one example per call, as JAX's rule calls `f` again


def test_custom_vmap_rule_output_errors_as_jax():
    def with_rule(jx, rule):
        @jx.custom_batching.custom_vmap
        def f(x):
            return jx.numpy.sin(x)

        f.def_vmap(rule)
        return jx.vmap(f)(XS)

    _raises_as_jax(
        lambda jx: with_rule(jx, lambda n, b, xs: ([xs, xs], b)),
        ValueError,
        "structure of output value and output batching specification returned by "
        "custom vmap rule (<lambda>) do not match",
    )
    _raises_as_jax(
        lambda jx: with_rule(jx, lambda n, b, xs: ([xs], b)),
        ValueError,
        "structure of output returned by custom vmap rule (<lambda>) does not match "
        "that of original custom-vmapped function",
    )


# ----------------------------------------------------------------------------------------
# Composition of the custom wrappers


@pytest.mark.parametrize("order", ["vmap_outside", "vmap_inside"])
def test_def_methods_forward_through_composed_wrappers(order):
    jvp_calls, vmap_calls = [], []

    def base(x):
        return 2.0 * x

    if order == "vmap_outside":
        f = jax.custom_batching.custom_vmap(jax.custom_jvp(base))
    else:
        f = jax.custom_jvp(jax.custom_batching.custom_vmap(base))

    @f.def_vmap
    def rule(n, b, xs):
        vmap_calls.append(n)
        return 2.0 * xs, b[0]

    @f.defjvp
    def f_jvp(primals, tangents):
        jvp_calls.append(1)
        return 2.0 * primals[0], 3.0 * tangents[0]

    check_close(jax.vmap(f)(XS), 2 * XS)
    assert vmap_calls == [3]
    check_close(jax.jvp(f, (np.float32(1.0),), (np.float32(1.0),))[1], 3.0)
    assert jvp_calls
    with pytest.raises(AttributeError):
        f.not_a_def_method  # noqa: B018  (only def* names forward, as in JAX)

    real = _real_or_none()
    if real is not None:
        g = real.custom_vjp(real.custom_batching.custom_vmap(base))
        assert callable(g.def_vmap) and callable(g.defvjp)


def test_custom_vjp_of_custom_vmap():
    @jax.custom_vjp
    @jax.custom_batching.custom_vmap
    def f(x, y):
        return jnp.sin(x) * y

    @f.def_vmap
    def f_vmap_rule(axis_size, in_batched, xs, ys):
        return jnp.cos(xs) * ys, True

    f.defvjp(
        lambda x, y: (f(x, y), (jnp.cos(x), jnp.sin(x), y)),
        lambda res, g: (res[0] * g * res[2], res[1] * g),
    )
    ys = np.linspace(-0.1, 0.1, 3).astype(np.float32)
    check_close(jax.vmap(f)(XS, ys), np.cos(XS) * ys, rtol=1e-6)
    check_close(jax.grad(f)(XS[0], ys[0]), np.cos(XS[0]) * ys[0], rtol=1e-6)


# ----------------------------------------------------------------------------------------
# nondiff_argnames, custom_gradient, resolving keyword arguments


def test_nondiff_argnames_as_jax():
    def program(jx):
        @functools.partial(jx.custom_jvp, nondiff_argnames=("power",))
        def f(x, power):
            return x**power

        @f.defjvp
        def f_jvp(power, primals, tangents):
            (x,), (t,) = primals, tangents
            return x**power, power * x ** (power - 1) * t

        @functools.partial(jx.custom_vjp, nondiff_argnames=("scale",))
        def g(x, scale):
            return x * scale

        g.defvjp(lambda x, scale: (x * scale, None), lambda scale, r, ct: (ct * scale,))
        x = np.float32(1.5)
        return (
            jx.grad(f)(x, 3),
            jx.grad(lambda x: f(x, power=2))(x),
            jx.grad(g)(x, 4.0),
            jx.grad(lambda x: g(x, scale=5.0))(x),
            f.nondiff_argnums,
            g.nondiff_argnums,
        )

    ours = program(jax)
    assert ours[4:] == ((1,), (1,))
    real = _real_or_none()
    if real is not None:
        theirs = program(real)
        assert ours[4:] == theirs[4:]
        check_close(_np(ours[:4]), _np(theirs[:4]), rtol=1e-6)


def test_nondiff_argnames_count_only_parameters_passable_by_name():
    def f(x, /, y, *, z=1):
        return x

    for jx in (jax, _real_or_none()):
        if jx is not None:
            assert jx.custom_jvp(
                f, nondiff_argnames=("x", "y", "z")
            ).nondiff_argnums == (1,)


def test_custom_gradient_vjp_may_return_a_bare_value():
    def program(jx):
        @jx.custom_gradient
        def f(x):
            return x**2, lambda g: g * x

        return f(3.0), jx.grad(f)(3.0), jx.grad(jx.grad(f))(3.0)

    ours = program(jax)
    check_close(_np(ours), (9.0, 3.0, 1.0))
    real = _real_or_none()
    if real is not None:
        check_close(_np(ours), _np(program(real)))


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp", "custom_vmap"])
def test_arguments_that_do_not_bind_raise_as_jax(kind):
    def make(jx):
        def f(x, y, *, z=None):
            return x * y

        if kind == "custom_jvp":
            g = jx.custom_jvp(f)
            g.defjvp(lambda p, t: (f(*p), t[0]))
        elif kind == "custom_vjp":
            g = jx.custom_vjp(f)
            g.defvjp(lambda x, y: (f(x, y), None), lambda r, ct: (ct, ct))
        else:
            g = jx.custom_batching.custom_vmap(f)
            g.def_vmap(lambda n, b, x, y: (x * y, True))
        return g

    head = (
        f"The input arguments to the {kind}-decorated function f could not be resolved"
    )
    _raises_as_jax(lambda jx: make(jx)(0.5), TypeError, head)
    _raises_as_jax(
        lambda jx: make(jx)(0.5),
        TypeError,
        "Binding failed with the error:\nmissing a required argument: 'y'",
    )
    _raises_as_jax(
        lambda jx: make(jx)(0.5, 0.1, z=1.0),
        TypeError,
        "The following keyword arguments could not be resolved to positions: z",
    )
    check_close(make(jax)(2.0, y=3.0), 6.0)  # defaults and keywords still bind


# ----------------------------------------------------------------------------------------
# Rules whose outputs do not match


def _scan_apply(jx, f, x):
    y, _ = jx.lax.scan(lambda c, _: (f(c), None), x, None, length=1)
    return y


def test_custom_jvp_rule_primal_output_mismatch_raises_as_jax():
    def make(jx, rule_out):
        @jx.custom_jvp
        def f(x):
            return x

        f.defjvp(lambda p, t: rule_out(p[0], t[0]))
        return jx.jvp(
            lambda x: _scan_apply(jx, f, x), (np.float32(1),), (np.float32(1),)
        )

    _raises_as_jax(
        lambda jx: make(jx, lambda x, t: ((x, x), (t, t))),
        TypeError,
        "the JVP rule output's first element had container/pytree structure:\n"
        "    (float32[], float32[])\n"
        "while the custom_jvp-decorated function f had output container/pytree "
        "structure:\n    float32[].",
    )
    _raises_as_jax(
        lambda jx: make(
            jx, lambda x, t: (jx.numpy.stack([x, x]), jx.numpy.stack([t, t]))
        ),
        TypeError,
        "the JVP rule output's first element had shapes/dtypes of:\n    float32[2]\n"
        "while the custom_jvp-decorated function f had output shapes/dtypes of:\n"
        "    float32[]",
    )


def test_custom_vjp_fwd_primal_output_mismatch_raises_as_jax():
    def make(jx, fwd_out):
        @jx.custom_vjp
        def f(x):
            return x

        f.defvjp(lambda x: (fwd_out(x), None), lambda r, ct: (ct,))
        return jx.grad(lambda x: _scan_apply(jx, f, x))(np.float32(1))

    _raises_as_jax(
        lambda jx: make(jx, lambda x: (x, x)),
        TypeError,
        "the fwd rule output's first element had container/pytree structure:\n"
        "    (float32[], float32[])\n"
        "while the custom_vjp-decorated function f had output container/pytree "
        "structure:\n    float32[].",
    )


def test_custom_vjp_bwd_may_return_a_prefix_of_the_arguments():
    def program(jx):
        @jx.custom_vjp
        def f(d, y):
            return d["a"] * d["b"] * y

        f.defvjp(lambda d, y: (f(d, y), y), lambda y, ct: (ct * y, ct))
        return jx.grad(f, argnums=(0, 1))({"a": 1.0, "b": 2.0}, 3.0)

    ours = program(jax)
    check_close(_np(ours), ({"a": 3.0, "b": 3.0}, 1.0))
    real = _real_or_none()
    if real is not None:
        check_close(_np(ours), _np(program(real)))


def test_closure_convert_structure_mismatch_raises_as_jax():
    def make(jx):
        _, vjp = jx.vjp(lambda x, z: z * x, 2.0, 3.0)
        pure, consts = jx.closure_convert(vjp, 2.0)
        check_close(_np(pure(2.0, *consts)), _np(vjp(2.0)))
        return pure(2.0, consts)

    _raises_as_jax(
        make,
        TypeError,
        "The inputs to the closure produced by closure_convert must have the same "
        "Pytree structure",
    )


# ----------------------------------------------------------------------------------------
# Signatures, deepcopy, fori_loop


@pytest.mark.parametrize("transform", ["jacfwd", "jacrev", "hessian", "grad", "vmap"])
def test_transformed_functions_keep_the_signature(transform):
    def g(x, y=2.0, *, scale=1.0):
        """Some docs."""
        return x * y * scale

    ours = getattr(jax, transform)(g)
    assert str(inspect.signature(ours)) == "(x, y=2.0, *, scale=1.0)"
    assert ours.__name__ == "g" and inspect.unwrap(ours) is g
    real = _real_or_none()
    if real is not None:
        theirs = getattr(real, transform)(g)
        assert inspect.signature(ours) == inspect.signature(theirs)


def test_deepcopy_of_a_tracer_is_a_new_tracer():
    seen = []

    def f(x):
        y = copy.deepcopy(x)
        z = copy.copy(x)
        seen.append((y is x, z is x, isinstance(y, jax.core.Tracer)))
        return y * z

    check_close(jax.jit(f)(3.0), 9.0)
    check_close(jax.grad(f)(3.0), 6.0)
    assert seen == [(False, False, True)] * 2


@pytest.mark.parametrize(
    "lower, upper", [(0, 0), (5, 2), (np.int32(0), np.int32(0)), (3, 3)]
)
def test_fori_loop_over_an_empty_range_under_disable_jit(lower, upper):
    calls = []

    def body(i, c):
        calls.append(i)
        return c + 1.0

    with jax.disable_jit():
        out = lax.fori_loop(lower, upper, body, 3.0)
    assert out == 3.0 and not calls
    real = _real_or_none()
    if real is not None:
        with real.disable_jit():
            assert real.lax.fori_loop(lower, upper, lambda i, c: c + 1.0, 3.0) == out


def test_loop_bodies_are_not_kept_alive_by_the_trace_caches():
    def run():
        big = jnp.ones(10)
        body = lambda i, x: x + big  # noqa: E731
        mapped = lambda x: x + big  # noqa: E731
        lax.fori_loop(0, 3, body, jnp.ones(10))
        lax.map(mapped, jnp.ones(3))
        return weakref.ref(body), weakref.ref(mapped)

    refs = run()
    gc.collect()
    assert all(r() is None for r in refs)


# ----------------------------------------------------------------------------------------
# jit, grad, jvp, vjp, linearize: argument checks


def _gen(x):
    yield x


@pytest.mark.parametrize(
    "transform",
    [
        lambda jx: jx.jit(_gen),
        lambda jx: jx.vmap(_gen),
        lambda jx: jx.grad(_gen),
        lambda jx: jx.value_and_grad(_gen),
        lambda jx: jx.jacfwd(_gen),
        lambda jx: jx.jacrev(_gen),
        lambda jx: jx.jvp(_gen, (1.0,), (1.0,)),
        lambda jx: jx.vjp(_gen, 1.0),
        lambda jx: jx.linearize(_gen, 1.0),
    ],
)
def test_generator_functions_are_refused_as_jax(transform):
    _raises_as_jax(
        transform, TypeError, "Expected a function, got a generator function"
    )


def test_jit_argument_checks_as_jax():
    def f(x, y):
        return x + y

    def h(a, /, b, *args, **kwargs):
        return a

    _raises_as_jax(
        lambda jx: jx.jit(f, static_argnums=3),
        ValueError,
        "Jitted function has static_argnums=(3,), but only accepts 2 positional",
    )
    _raises_as_jax(
        lambda jx: jx.jit(f, static_argnames="z"),
        ValueError,
        "Jitted function has invalid argnames {'z'} in static_argnames. Function "
        "does not take these args.",
    )
    for names in ("a", "args"):
        _raises_as_jax(
            lambda jx, names=names: jx.jit(h, static_argnames=names),
            ValueError,
            f"invalid argnames {{'{names}'}} in static_argnames. These are "
            "positional-only",
        )
    _raises_as_jax(
        lambda jx: jx.jit(f, static_argnames="y", donate_argnames="y"),
        ValueError,
        "static_argnames and donate_argnames cannot intersect",
    )
    _raises_as_jax(
        lambda jx: jx.jit(f, static_argnums=1, donate_argnums=1),
        ValueError,
        "static_argnames and donate_argnames cannot intersect",
    )
    _raises_as_jax(
        lambda jx: jx.jit(f, static_argnums=1)(1.0, [2.0]),
        ValueError,
        "Non-hashable static arguments are not supported",
    )
    _raises_as_jax(
        lambda jx: jx.jit(f, static_argnames="y")(1.0, y=np.ones(2)),
        ValueError,
        "Non-hashable static arguments are not supported",
    )

    class HashableWithoutEq:
        def __hash__(self):
            return 1

        def __eq__(self, other):
            raise NotImplementedError("no eq")

    def twice(jx):
        g = jx.jit(lambda x, y: x, static_argnums=1)
        g(1.0, HashableWithoutEq())
        g(1.0, HashableWithoutEq())

    _raises_as_jax(
        twice, ValueError, "static arguments should be comparable using __eq__"
    )

    def staticmethod_jit(jx):
        class A:
            @jx.jit
            @staticmethod
            def m(x):
                return x

    _raises_as_jax(
        staticmethod_jit, TypeError, "staticmethod arguments are not supported"
    )
    _raises_as_jax(
        lambda jx: jx.jit(lambda x: x)(jx.numpy.int32),
        TypeError,
        "Error interpreting argument to",
    )


def test_traced_function_returning_a_non_jax_value_raises_as_jax():
    def f(x):
        return (2.0, f)

    _raises_as_jax(
        lambda jx: jx.eval_shape(f, 1.0),
        TypeError,
        "returned a value of type <class 'function'> at output component [1], which "
        "is not a valid JAX type",
    )
    _raises_as_jax(
        lambda jx: jx.jit(lambda x: (x, x.dtype))(1.0),
        TypeError,
        "at output component [1], which is not a valid JAX type",
    )


def test_differentiation_argument_checks_as_jax():
    _raises_as_jax(
        lambda jx: jx.grad(lambda x: x)("foo"),
        TypeError,
        "Argument 'foo' of type <class 'str'> is not a valid JAX type",
    )
    _raises_as_jax(
        lambda jx: jx.grad(lambda x: x)(np.array([1, 2], dtype=object)),
        TypeError,
        "is not a valid JAX type",
    )
    _raises_as_jax(
        lambda jx: jx.jvp(lambda x, y: x * y, (np.float32(2),), [np.float32(2)]),
        TypeError,
        "primal and tangent arguments to jax.jvp must have the same tree structure",
    )

    def vjp_twice(jx):
        def foo(x):
            return x, x

        _, f_vjp = jx.vjp(foo, 1.0)
        return f_vjp(1.0, 1.0)

    _raises_as_jax(
        vjp_twice,
        TypeError,
        "The function returned by `jax.vjp` applied to foo was called with 2 arguments",
    )


@pytest.mark.parametrize(
    "primal, tangent",
    [
        (1.0, 1),  # an int tangent for a float primal
        (np.ones(2, np.int32), np.ones(2, np.int32)),  # an int tangent for an int
        (np.ones(3, np.float32), np.ones((3, 2), np.float32)),  # another shape
        (1.0, np.float16(1.0)),  # another float type
    ],
)
def test_linearized_function_checks_tangent_types_as_jax(primal, tangent):
    _raises_as_jax(
        lambda jx: jx.linearize(lambda x: x, primal)[1](tangent),
        ValueError,
        "linearized function called on tangent values inconsistent with the "
        "original primal values",
    )


def test_linearized_function_accepts_tangents_of_the_right_type():
    _, f_jvp = jax.linearize(lambda x: x * 2, 1.0)
    check_close(f_jvp(np.float64(1.0)), 2.0)  # canonicalized to float32
    _, f_jvp = jax.linearize(lambda x: x, np.ones(2, np.int32))
    assert f_jvp(np.zeros(2, jax.dtypes.float0)).dtype == jax.dtypes.float0
    with pytest.raises(TypeError, match="expected PyTreeDef"):
        jax.linearize(lambda a, b: a, 1.0, 2.0)[1](1.0)


def test_make_jaxpr_and_pmap_names_and_errors_as_jax():
    def foo(x):
        return x

    assert jax.make_jaxpr(foo).__name__ == "make_jaxpr(foo)"
    _raises_as_jax(
        lambda jx: jx.pmap(lambda a, b: a + b, static_broadcasted_argnums=(1,))(
            np.ones((1, 1)), b=1
        ),
        ValueError,
        "pmapped function has static_broadcasted_argnums=(1,) but was called with "
        "only 1 positional argument",
    )


# ----------------------------------------------------------------------------------------
# vmap


def test_vmap_axis_specification_checks_as_jax():
    def f(x):
        return x

    for axes in (False, {"a": 0}, np.array(0), np.int32(0), 0.0):
        _raises_as_jax(
            lambda jx, axes=axes: jx.vmap(f, in_axes=axes),
            TypeError,
            "vmap in_axes must be an int, None, or a tuple of entries corresponding "
            "to the positional arguments passed to the function",
        )
    _raises_as_jax(
        lambda jx: jx.vmap(f, out_axes=False),
        TypeError,
        "vmap out_axes must be an int, None, or (nested) container with those types "
        "as leaves",
    )
    check_close(jax.vmap(f, in_axes=({"a": 0},))({"a": XS})["a"], XS)


def test_vmap_size_errors_as_jax():
    _raises_as_jax(
        lambda jx: jx.vmap(lambda x: x, axis_size=2)(np.arange(8)),
        ValueError,
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * the `axis_size` argument was 2;\n"
        "  * one axis had size 8: axis 0 of argument x of type int32[8]",
    )
    _raises_as_jax(
        lambda jx: jx.vmap(lambda a, b, c: a)(XS, np.ones(4), np.ones(4)),
        ValueError,
        "  * most axes (2 of them) had size 4, e.g. axis 0 of argument b of type "
        "float32[4];\n  * one axis had size 3: axis 0 of argument a of type float32[3]",
    )
    _raises_as_jax(
        lambda jx: jx.vmap(lambda d: d)({}),
        ValueError,
        "vmap wrapped function must be passed at least one argument containing an "
        "array or axis_size must be specified, got empty *args=({},) and **kwargs={}",
    )
    _raises_as_jax(
        lambda jx: jx.vmap(lambda x: x, in_axes=None)(XS),
        ValueError,
        "vmap must have at least one non-None value in in_axes or axis_size must be "
        "specified",
    )
    _raises_as_jax(
        lambda jx: jx.vmap(lambda x: x, out_axes=None, axis_name="foo")(XS),
        ValueError,
        "vmap has mapped output (axis_name=foo) but out_axes is None",
    )


def test_vmap_tree_prefix_errors_as_jax():
    _raises_as_jax(
        lambda jx: jx.vmap(lambda x: x, in_axes=([0],))(XS),
        ValueError,
        "vmap in_axes specification must be a tree prefix of the corresponding "
        "value; \n  Mismatch details (1 found):\n  pytree structure error: different "
        "types at key path\n    vmap in_axes[0]",
    )
    _raises_as_jax(
        lambda jx: jx.vmap(lambda x: x, in_axes=({"a": 0},))({"b": XS}),
        ValueError,
        "pytree structure error: different pytree metadata at key path\n"
        "    vmap in_axes[0]",
    )
    _raises_as_jax(
        lambda jx: jx.vmap(lambda x: x, out_axes=(0, 0))(XS),
        ValueError,
        "vmap out_axes specification must be a tree prefix of the corresponding value",
    )


def test_vmap_docstring_as_jax():
    def f(x):
        """Does things."""
        return x

    doc = jax.vmap(f).__doc__
    assert doc.startswith("Vectorized version of f. Takes similar arguments as f")
    assert doc.endswith("\n\nOriginal documentation:\n\nDoes things.")
    real = _real_or_none()
    if real is not None:
        assert real.vmap(f).__doc__ == doc


# ----------------------------------------------------------------------------------------
# device_put


def test_device_put_checks_as_jax():
    x = {"a": jnp.arange(2), "b": jnp.arange(3)}
    _raises_as_jax(
        lambda jx: jx.device_put(x, device={"a": [None, None], "b": (None, None)}),
        ValueError,
        "device_put device specification must be a tree prefix of the corresponding "
        "value; \n  Mismatch details (2 found)",
    )
    for bad in ("cpu", 0):
        _raises_as_jax(
            lambda jx, bad=bad: jx.device_put(np.arange(3), bad),
            ValueError,
            f"`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, "
            f"`jax.Device`, `Format`, `jax.memory.Space` or a pytree of these values. "
            f"Received invalid value: {bad}",
        )
    _raises_as_jax(
        lambda jx: jx.device_put("cpu"),
        TypeError,
        "Argument 'cpu' of type <class 'str'> is not a valid JAX type",
    )
    _raises_as_jax(
        lambda jx: jx.device_put(object()),
        TypeError,
        "as an abstract array; it does not have a dtype attribute",
    )
    _raises_as_jax(
        lambda jx: jx.device_put(np.array([object()])),
        TypeError,
        "Dtype object is not a valid JAX array type",
    )
    _raises_as_jax(
        lambda jx: jx.device_put(np.ones(2), donate=True, may_alias=True),
        ValueError,
        "may_alias and donate cannot be True at the same time.",
    )
    dev = jax.devices()[0]
    out = jax.device_put((x, 1.0), ({"a": dev, "b": None}, dev))
    check_close(out[0]["b"], np.arange(3))


# ----------------------------------------------------------------------------------------
# tree_util


class _BadNode:
    def __init__(self, result):
        self.result = result


jax.tree_util.register_pytree_node(_BadNode, lambda b: b.result, lambda a, c: None)


@pytest.mark.parametrize(
    "result, phrase",
    [
        ("hello", "tuple, got 'hello'"),
        ((2, 3, 4), "tuple, got (2, 3, 4)"),
        ((7, 7), "tuple where 'children' is iterable, got (7, 7)"),
    ],
)
@pytest.mark.parametrize(
    "op", ["tree_flatten", "tree_leaves", "tree_flatten_with_path", "flatten_one_level"]
)
def test_bad_flatten_functions_raise_as_jax(result, phrase, op):
    if op == "flatten_one_level" and result == (7, 7):
        return  # flattens one level only: the children are not iterated
    with pytest.raises(
        ValueError,
        match=re.escape(
            "The to_iterable function for a custom PyTree node should return a "
            "(children, aux_data) " + phrase
        ),
    ):
        getattr(jax.tree_util, op)(_BadNode(result))


def test_tree_structure_errors_as_jax():
    _raises_as_jax(
        lambda jx: jx.tree_util.tree_broadcast((1, 2, 3), (0, {"a": 0, "b": 0})),
        ValueError,
        "pytree structure error: different lengths of tuple at key path\n"
        "    broadcast_prefix prefix_tree",
    )

    def metadata_arrays(jx):
        @jx.tree_util.register_dataclass
        @dataclasses.dataclass
        class Tree:
            x: object = dataclasses.field(metadata={"static": True})

        f = jx.jit(lambda t: 0)
        f(Tree(jx.numpy.arange(4)))
        f(Tree(jx.numpy.arange(4)))

    _raises_as_jax(
        metadata_arrays,
        ValueError,
        "Exception raised while checking equality of metadata fields of pytree.",
    )
    errors = jax.tree_util.prefix_errors([1, (2, 3)], [0, {"a": 0}])
    assert len(errors) == 1 and "different types" in str(errors[0]("spec"))


# ----------------------------------------------------------------------------------------
# Tracer leaks


def _leak_programs():
    def jit_leak(jx):
        lst = []
        jx.jit(lambda x: lst.append(x) or x)(3)

    def scan_leak(jx):
        lst = []
        jx.lax.scan(lambda c, x: (lst.append(c) or c, None), 1.0, np.arange(3.0))

    def vmap_leak(jx):
        lst = []
        jx.vmap(lambda x: lst.append(x) or x)(np.arange(3.0))

    def inner_jit_leak(jx):
        def f(x):
            lst = []
            return jx.jit(lambda y: lst.append(y) or y)(x)

        jx.jit(f)(3)

    return {
        "jit": (jit_leak, "DynamicJaxprTrace"),
        "scan": (scan_leak, "DynamicJaxprTrace"),
        "vmap": (vmap_leak, "BatchTrace"),
        "inner_jit": (inner_jit_leak, "DynamicJaxprTrace"),
    }


@pytest.mark.parametrize("name", sorted(_leak_programs()))
def test_checking_leaks_reports_leaked_tracers_as_jax(name):
    program, trace = _leak_programs()[name]
    for jx in (jax, _real_or_none()):
        if jx is None:
            continue
        program(jx)  # without checking, leaking is allowed
        with jx.checking_leaks():
            with pytest.raises(Exception, match=f"Leaked trace {trace}") as info:
                program(jx)
        assert "is referred to by <list" in str(info.value)


def test_checking_leaks_has_no_false_positives():
    with jax.checking_leaks():
        check_close(jax.jit(lambda x: x + 1)(1.0), 2.0)
        check_close(lax.scan(lambda c, x: (c + x, None), 0.0, XS)[0], XS.sum())
        check_close(jax.vmap(jax.grad(lambda x: x**2))(XS), 2 * XS)
        check_close(jax.jacfwd(_recording_vmap(jax, []))(XS), -np.diag(np.sin(XS)))

        @jax.custom_vjp
        def f(x):
            return x

        f.defvjp(lambda x: (x, None), lambda r, ct: (2 * ct,))
        check_close(jax.vmap(jax.grad(f))(XS), np.full(3, 2.0))
    with jax.checking_leaks():
        assert jax.config.jax_check_tracer_leaks
    assert not jax.config.jax_check_tracer_leaks


# ----------------------------------------------------------------------------------------
# enable_x64 inside traced code; configuration changes retrace


def test_enable_x64_inside_traced_code_as_jax():
    def program(jx):
        def g(x):
            with jx.enable_x64(True):
                y = jx.numpy.arange(3) + x
                z = x.astype(jx.numpy.float64) * 2
            return y, z

        def scanned(c, _):
            with jx.enable_x64(True):
                d = c.astype(jx.numpy.float64) * 2
            return c, d

        outs = jx.jit(g)(1)
        ys = jx.lax.scan(scanned, np.float32(1.0), None, length=2)[1]
        return [o.dtype for o in outs] + [ys.dtype]

    ours = program(jax)
    assert ours == [np.int64, np.float64, np.float64]
    real = _real_or_none()
    if real is not None:
        assert program(real) == ours


def test_config_changes_between_calls_retrace_as_jax():
    def program(jx):
        traces = []

        @jx.jit
        def f():
            traces.append(1)
            return jx.numpy.array(np.float64(0.0))

        dtypes = [f().dtype]
        with jx.enable_x64():
            dtypes.append(f().dtype)
        dtypes.append(f().dtype)
        jx.config.update("jax_enable_x64", True)
        try:
            dtypes.append(f().dtype)
        finally:
            jx.config.update("jax_enable_x64", False)
        return dtypes, len(traces)

    ours = program(jax)
    assert ours == ([np.float32, np.float64, np.float32, np.float64], 2)
    real = _real_or_none()
    if real is not None:
        assert program(real) == ours
