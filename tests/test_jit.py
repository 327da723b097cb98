"""`jit`: caching and retracing, static and donated arguments, pytrees, nesting, the
ahead-of-time API, and agreement with eager evaluation."""

import functools
from collections import namedtuple

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

f32 = np.dtype(np.float32)


def counting(fun):
    """`fun` plus a list that grows by one each time `fun` is traced (or run)."""
    calls = []

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        calls.append(1)
        return fun(*args, **kwargs)

    return wrapped, calls


# ----------------------------------------------------------------------------------------
# The cache


def test_cache_hit_does_not_retrace():
    f, calls = counting(lambda x: x * 2 + 1)
    jf = jax.jit(f)
    x = jnp.ones(3)
    for _ in range(5):
        out = jf(x)
    np.testing.assert_array_equal(out, np.full(3, 3.0, np.float32))
    assert len(calls) == 1


def test_cache_is_shared_by_jit_wrappers_of_one_function():
    # The Sharp bits seed calls jit(f)(x) again and again: f is traced once.
    f, calls = counting(lambda x: x + 1)
    jax.jit(f)(1.0)
    jax.jit(f)(2.0)
    jax.jit(f)(3.0)
    assert len(calls) == 1
    # A different function (even with the same code) has its own cache.
    g, g_calls = counting(lambda x: x + 1)
    jax.jit(g)(1.0)
    assert len(g_calls) == 1


def test_cache_is_per_jit_options():
    f, calls = counting(lambda x, n: x * n)
    jax.jit(f)(1.0, 2.0)
    jax.jit(f, static_argnums=1)(1.0, 2.0)
    assert len(calls) == 2


@pytest.mark.parametrize(
    "first,second",
    [
        (jnp.ones(3), jnp.ones(4)),  # shape
        (jnp.ones(3), jnp.ones((3, 1))),  # rank
        (jnp.ones(3), jnp.ones(3, jnp.int32)),  # dtype
        (jnp.float32(1.0), 1.0),  # weak type
        (1, 1.0),  # Python scalar type
        ((1.0, 2.0), [1.0, 2.0]),  # pytree structure
    ],
    ids=["shape", "rank", "dtype", "weak_type", "scalar_type", "structure"],
)
def test_retrace_on_new_signature(first, second):
    f, calls = counting(lambda x: x)
    jf = jax.jit(f)
    jf(first)
    jf(first)
    assert len(calls) == 1
    jf(second)
    assert len(calls) == 2
    jf(second)
    assert len(calls) == 2


def test_python_scalars_of_one_type_share_a_trace():
    f, calls = counting(lambda x: x * 2)
    jf = jax.jit(f)
    assert [float(jf(v)) for v in (1.0, 2.0, 3.5)] == [2.0, 4.0, 7.0]
    assert len(calls) == 1


def test_numpy_and_jaxlite_arrays_share_a_trace():
    f, calls = counting(lambda x: x * 2)
    jf = jax.jit(f)
    jf(jnp.ones(3))
    jf(np.ones(3, np.float32))
    assert len(calls) == 1
    jf(np.ones(3))  # float64 is stored as float32 too, but is a new signature
    assert len(calls) == 2
    assert jf(np.ones(3)).dtype == f32


def test_side_effects_only_at_trace_time(capsys):
    @jax.jit
    def f(x):
        print("tracing", x.shape)
        return x + 1

    f(jnp.ones(2))
    f(jnp.ones(2))
    f(jnp.zeros(2))
    assert capsys.readouterr().out == "tracing (2,)\n"
    f(jnp.ones(5))
    assert capsys.readouterr().out == "tracing (5,)\n"


def test_globals_are_baked_in_at_trace_time():
    scale = {"value": 2.0}
    f = jax.jit(lambda x: x * scale["value"])
    assert float(f(1.0)) == 2.0
    scale["value"] = 10.0
    assert float(f(1.0)) == 2.0  # cached
    assert float(f(jnp.float32(1.0))) == 10.0  # new signature: traced again


def test_x64_change_retraces():
    f, calls = counting(lambda x: x + 1)
    jf = jax.jit(f)
    assert jf(1.0).dtype == f32
    with jax.enable_x64():
        out = jf(1.0)
        assert out.dtype == np.float64
    assert len(calls) == 2
    assert jf(1.0).dtype == f32
    assert len(calls) == 2


def test_clear_cache():
    f, calls = counting(lambda x: x + 1)
    jf = jax.jit(f)
    jf(1.0)
    jf.clear_cache()
    jf(1.0)
    assert len(calls) == 2


# ----------------------------------------------------------------------------------------
# Static arguments


def test_static_argnums():
    f, calls = counting(lambda x, n: x * n if n > 1 else x)
    jf = jax.jit(f, static_argnums=1)
    assert float(jf(2.0, 3)) == 6.0
    assert float(jf(2.0, 1)) == 2.0
    assert float(jf(5.0, 3)) == 15.0
    assert len(calls) == 2


def test_static_argnums_negative_and_by_keyword():
    jf = jax.jit(lambda x, n: x * n, static_argnums=-1)
    assert float(jf(2.0, 3)) == 6.0
    assert float(jf(2.0, n=3)) == 6.0


def test_static_argnames():
    f, calls = counting(lambda x, mode="add": x + 1 if mode == "add" else x - 1)
    jf = jax.jit(f, static_argnames="mode")
    assert float(jf(1.0, mode="add")) == 2.0
    assert float(jf(1.0, mode="sub")) == 0.0
    assert float(jf(1.0, "sub")) == 0.0  # positional works too
    assert float(jf(1.0)) == 2.0  # the default
    # As in JAX, "sub" by keyword and by position are two calls (two traces): the
    # arguments are not bound to the signature, which may be a wrapped function's.
    assert len(calls) == 4


def test_static_args_hit_the_cache_by_equality():
    f, calls = counting(lambda x, shape: jnp.broadcast_to(x, shape))
    jf = jax.jit(f, static_argnums=1)
    jf(1.0, (2, 3))
    jf(1.0, tuple([2, 3]))
    assert len(calls) == 1


def test_static_value_used_as_shape():
    jf = jax.jit(lambda n: jnp.zeros(n), static_argnums=0)
    assert jf(3).shape == (3,)
    assert jf(5).shape == (5,)


def test_unhashable_static_argument():
    jf = jax.jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(
        ValueError, match="Non-hashable static arguments are not supported"
    ):
        jf(1.0, [1, 2])
    jf2 = jax.jit(lambda x, opts: x, static_argnames="opts")
    with pytest.raises(ValueError, match="Non-hashable static arguments") as info:
        jf2(1.0, opts={"a": 1})
    assert "<class 'dict'>" in str(info.value)


@pytest.mark.parametrize("bad", ["a string", object(), None.__class__, print])
def test_non_array_argument_names_argument_and_suggests_static(bad):
    def f(x, y):
        return x

    with pytest.raises(TypeError) as info:
        jax.jit(f)(1.0, bad)
    msg = str(info.value)
    assert "Error interpreting argument to" in msg
    assert "as an abstract array" in msg
    assert f"of type {type(bad)}" in msg
    assert "passed to the function at path y" in msg
    assert "static_argnums or static_argnames" in msg


def test_non_array_argument_inside_a_pytree():
    def f(params):
        return params["w"]

    with pytest.raises(TypeError, match=r"at path params\['name'\]"):
        jax.jit(f)({"w": 1.0, "name": "layer"})


def test_donate_argnums_is_accepted():
    # As JAX: a donated argument whose buffer the output takes is deleted; the
    # others stay readable (see tests/test_issue13_tracers_jit.py for the rules).
    f = jax.jit(lambda x, y: x + y, donate_argnums=0)
    x, y = jnp.ones(3), jnp.ones(3)
    np.testing.assert_array_equal(f(x, y), np.full(3, 2.0))
    assert x.is_deleted()
    np.testing.assert_array_equal(y, np.ones(3))  # not donated: still readable
    f2 = jax.jit(lambda x, y: (x + y, x - y), donate_argnums=(0, 1))
    x = jnp.ones(3)
    np.testing.assert_array_equal(f2(x, y)[0], np.full(3, 2.0))
    assert x.is_deleted() and y.is_deleted()


# ----------------------------------------------------------------------------------------
# Forms of use


def test_jit_as_decorator():
    @jax.jit
    def f(x):
        return x * 3

    assert float(f(2.0)) == 6.0
    assert f.__name__ == "f"


def test_jit_through_functools_partial():
    @functools.partial(jax.jit, static_argnums=(1,))
    def f(x, n):
        return x**n

    assert float(f(2.0, 3)) == 8.0

    @functools.partial(jax.jit, static_argnames=["n"])
    def g(x, n):
        return x * n

    assert float(g(2.0, n=4)) == 8.0


def test_jit_with_keyword_options_and_no_function():
    deco = jax.jit(static_argnums=1)
    f = deco(lambda x, n: x * n)
    assert float(f(2.0, 5)) == 10.0


def test_jit_requires_a_callable():
    with pytest.raises(TypeError, match="callable"):
        jax.jit(3)


def test_keyword_arguments():
    f, calls = counting(lambda x, y=1.0, *, z=2.0: x + y * z)
    jf = jax.jit(f)
    assert float(jf(1.0, y=2.0, z=3.0)) == 7.0
    assert float(jf(1.0, z=3.0, y=2.0)) == 7.0
    assert float(jf(1.0, 2.0, z=3.0)) == 7.0
    assert float(jf(1.0)) == 3.0


def test_pytree_arguments_and_outputs():
    Point = namedtuple("Point", "x y")

    @jax.jit
    def f(p, d, pair):
        return {"sum": p.x + p.y, "scaled": [d["a"] * 2, d["b"]]}, (pair[0], None)

    out = f(Point(1.0, jnp.ones(2)), {"b": jnp.zeros(3), "a": 2.0}, (jnp.int32(7), 8))
    (d, (first, none)) = out
    assert sorted(d) == ["scaled", "sum"]
    np.testing.assert_array_equal(d["sum"], [2.0, 2.0])
    assert float(d["scaled"][0]) == 4.0
    assert d["scaled"][1].shape == (3,)
    assert int(first) == 7 and none is None


def test_namedtuple_output_keeps_its_type():
    Pair = namedtuple("Pair", "a b")
    out = jax.jit(lambda x: Pair(x, x + 1))(1.0)
    assert type(out) is Pair and float(out.b) == 2.0


def test_single_array_output_and_tuple_output():
    assert isinstance(jax.jit(lambda x: x)(1.0), jax.Array)
    out = jax.jit(lambda x: (x,))(1.0)
    assert isinstance(out, tuple) and len(out) == 1
    assert jax.jit(lambda x: ())(1.0) == ()
    assert jax.jit(lambda x: None)(1.0) is None


def test_constant_outputs():
    out = jax.jit(lambda x: (1.0, jnp.arange(3), x))(2.0)
    assert out[0].weak_type and float(out[0]) == 1.0
    np.testing.assert_array_equal(out[1], [0, 1, 2])


def test_nested_jit():
    inner, inner_calls = counting(lambda x: jnp.sin(x) + 1)
    outer, outer_calls = counting(lambda x: jax.jit(inner)(x) * 2)
    jouter = jax.jit(outer)
    x = np.float32(0.5)
    np.testing.assert_allclose(jouter(x), (np.sin(x) + 1) * 2, rtol=1e-6)
    jouter(x)
    assert len(outer_calls) == 1 and len(inner_calls) == 1
    text = str(jax.make_jaxpr(outer)(x))
    assert "jit[" in text and "name=<lambda>" in text


def test_nested_jit_with_static_args():
    inner = jax.jit(lambda x, n: x * n, static_argnums=1)
    outer = jax.jit(lambda x: inner(x, 3) + inner(x, 4))
    assert float(outer(1.0)) == 7.0


def test_jit_of_jit():
    f = jax.jit(jax.jit(lambda x: x * 2))
    assert float(f(3.0)) == 6.0


def test_jit_method():
    class Model:
        def __init__(self, w):
            self.w = w

        @functools.partial(jax.jit, static_argnums=0)
        def apply(self, x):
            return x * self.w

    assert float(Model(3.0).apply(2.0)) == 6.0


def test_disable_jit_runs_python():
    f, calls = counting(lambda x: x + 1)
    jf = jax.jit(f)
    with jax.disable_jit():
        jf(1.0)
        jf(1.0)
    assert len(calls) == 2


# ----------------------------------------------------------------------------------------
# Ahead of time: lower / trace / eval_shape


@pytest.mark.numpy_backend
def test_lower_exposes_jaxpr_and_generated_source():
    def f(x, y):
        return jnp.sin(x) * y + 1.0

    lowered = jax.jit(f).lower(jnp.ones(3), 2.0)
    src = lowered.as_text()
    # (a 3-element sin is XLA's, lax/xla_float32.py; large arrays get np.sin)
    assert "def f(" in src and "np.sin(a)" in src and "return [" in src
    assert str(lowered.jaxpr) == (
        "{ lambda ; a:f32[3] b:f32[]. let\n"
        "    c:f32[3] = sin a\n"
        "    d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b\n"
        "    e:f32[3] = mul c d\n"
        "    f:f32[3] = add e 1.0:f32[]\n"
        "  in (f,) }"
    )
    compiled = lowered.compile()
    np.testing.assert_allclose(
        compiled(jnp.ones(3), 2.0), np.sin(1.0) * 2 + 1, rtol=1e-6
    )


def test_lower_shares_the_cache():
    f, calls = counting(lambda x: x + 1)
    jf = jax.jit(f)
    jf.lower(1.0)
    jf(2.0)
    assert len(calls) == 1


def test_jit_eval_shape():
    out = jax.jit(lambda x: (x.sum(), x * 2.0)).eval_shape(jnp.ones((2, 3)))
    assert out[0].shape == () and out[1].shape == (2, 3)
    assert out[1].dtype == f32


def test_lowered_jaxpr_is_dead_code_eliminated():
    def f(x):
        jnp.sin(x)  # unused
        return x + 1

    assert [e.primitive.name for e in jax.jit(f).lower(1.0).jaxpr.eqns] == ["add"]


# ----------------------------------------------------------------------------------------
# Values: weak types, aliasing, agreement with eager


def test_weak_type_of_outputs():
    out = jax.jit(lambda x: x * 2)(3.0)
    assert out.weak_type
    assert repr(out) == "Array(6., dtype=float32, weak_type=True)"
    assert not jax.jit(lambda x: x * 2)(jnp.float32(3.0)).weak_type
    assert jax.jit(lambda x: x * 2)(3).dtype == np.int32
    assert jax.jit(lambda x: x * 2)(3).weak_type


@pytest.mark.parametrize(
    "arg",
    [3.0, 3, jnp.float32(3.0), jnp.arange(3), jnp.ones((2, 2)), np.float32(2.0)],
)
def test_weak_types_match_eager(arg):
    for fun in (
        lambda x: x * 2,
        lambda x: x + 1.5,
        lambda x: -x,
        lambda x: jnp.sin(x * 1.0),
    ):
        eager = fun(jnp.asarray(arg) if isinstance(arg, np.generic) else arg)
        jitted = jax.jit(fun)(arg)
        eager = jnp.asarray(eager)
        assert (jitted.dtype, jitted.weak_type) == (eager.dtype, eager.weak_type)


def test_numpy_inputs_are_not_aliased_by_outputs():
    a = np.arange(4, dtype=np.float32)
    out = jax.jit(lambda x: x)(a)
    out2 = jax.jit(lambda x: x.reshape(2, 2))(a)
    a[0] = 100.0
    np.testing.assert_array_equal(out, [0, 1, 2, 3])
    np.testing.assert_array_equal(out2, [[0, 1], [2, 3]])


def test_outputs_are_read_only_through_numpy():
    out = jax.jit(lambda x: x + 1)(jnp.ones(3))
    view = np.asarray(out)
    with pytest.raises(ValueError):
        view[0] = 5.0


def _programs():
    return [
        ("add", lambda x, y: x + y),
        ("mixed", lambda x, y: jnp.sin(x) * y - jnp.cos(y) / 2.0),
        ("exp_log", lambda x, y: jnp.log(jnp.exp(x) + y * y)),
        ("compare_select", lambda x, y: jnp.where(x > y, x, y)),
        ("maximum", lambda x, y: jnp.maximum(x, y) + jnp.minimum(x, y)),
        ("pow", lambda x, y: jnp.abs(x) ** 2 + y**3),
        ("sum", lambda x, y: jnp.sum(x * y)),
        ("sum_axis", lambda x, y: (x[:, None] * y[None, :]).sum(axis=0)),
        ("mean_max", lambda x, y: jnp.mean(x) + jnp.max(y)),
        ("reshape", lambda x, y: jnp.reshape(x, (2, 2)) @ jnp.reshape(y, (2, 2))),
        ("dot", lambda x, y: jnp.dot(x, y)),
        ("astype", lambda x, y: (x * 10).astype(jnp.int32) + y.astype(jnp.int32)),
        ("concat", lambda x, y: jnp.concatenate([x, y, x])),
        ("stack_transpose", lambda x, y: jnp.stack([x, y]).T),
        ("literal_ops", lambda x, y: 2 * x + 1 - y / 4),
        ("integer", lambda x, y: (x * 100).astype(jnp.int32) // 7 % 3),
        ("bool", lambda x, y: jnp.logical_and(x > 0, y < 1)),
        ("clip", lambda x, y: jnp.clip(x, -0.5, 0.5) * y),
        ("tanh_sqrt", lambda x, y: jnp.tanh(x) + jnp.sqrt(jnp.abs(y))),
        ("getitem", lambda x, y: x[1:3] * y[0]),
        ("tuple_out", lambda x, y: (x + y, x * y, 1.0)),
    ]


@pytest.mark.parametrize("name,fun", _programs(), ids=[p[0] for p in _programs()])
def test_jit_agrees_with_eager(name, fun):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal(4).astype(np.float32))
    y = jnp.asarray(rng.standard_normal(4).astype(np.float32))
    eager = fun(x, y)
    jitted = jax.jit(fun)(x, y)
    eager_leaves = jax.tree_util.tree_leaves(eager)
    jit_leaves = jax.tree_util.tree_leaves(jitted)
    assert len(eager_leaves) == len(jit_leaves)
    for e, j in zip(eager_leaves, jit_leaves):
        e = jnp.asarray(e)
        assert (j.shape, j.dtype, j.weak_type) == (e.shape, e.dtype, e.weak_type)
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=1e-6, atol=1e-6)


def test_jit_under_make_jaxpr_is_one_equation():
    f = jax.jit(lambda x: x * 2 + 1)
    closed = jax.make_jaxpr(lambda x: f(x) - 1)(1.0)
    assert [e.primitive.name for e in closed.eqns] == ["jit", "sub"]
    assert closed.eqns[0].params["name"] == "<lambda>"


def test_large_program():
    def f(x):
        for i in range(500):
            x = x * 1.0001 + (i % 3)
        return x

    np.testing.assert_allclose(jax.jit(f)(1.0), f(1.0), rtol=1e-5)


def test_lax_ops_under_jit():
    f = jax.jit(lambda x: lax.add(lax.mul(x, x), lax.neg(x)))
    assert float(f(3.0)) == 6.0


def test_captured_numpy_constants_are_copied_at_trace_time():
    c = np.arange(3, dtype=np.float32)
    f = jax.jit(lambda x: x * c)
    np.testing.assert_array_equal(f(jnp.ones(3)), [0, 1, 2])
    c[0] = 100.0
    np.testing.assert_array_equal(f(jnp.ones(3)), [0, 1, 2])  # cached, as in JAX


def test_jit_inline_records_the_equations_not_a_jit_call():
    from functools import partial

    @partial(jax.jit, inline=True)
    def g(y):
        return y + 1

    text = str(jax.make_jaxpr(lambda x: g(x) * 3)(1.0))
    assert "jit[" not in text and "add a 1.0" in text
    assert float(g(2.0)) == 3.0  # eagerly it is an ordinary compiled call
    assert float(jax.grad(g)(1.0)) == 1.0
    plain = str(jax.make_jaxpr(lambda x: jax.jit(lambda y: y + 1)(x))(1.0))
    assert "jit[" in plain


def test_lower_and_trace_accept_shape_dtype_structs():
    spec = jax.ShapeDtypeStruct((2,), np.float32)
    compiled = jax.jit(lambda x: x * 2).lower(spec).compile()
    np.testing.assert_array_equal(compiled(np.ones(2, np.float32)), [2.0, 2.0])
    text = str(jax.jit(lambda x: x * 2).trace(spec).jaxpr)
    assert text == "{ lambda ; a:f32[2]. let b:f32[2] = mul a 2.0:f32[] in (b,) }"


def test_shape_dtype_struct_keeps_the_dtype_it_is_given():
    spec = jax.ShapeDtypeStruct((), np.int64)
    assert spec.dtype == np.int64  # as JAX; what tracing sees is canonical
    assert str(spec.aval) == "int32[]"
    with pytest.raises(ValueError, match="cannot specify 64-bit types"):
        jax.jit(lambda r: jax.pure_callback(lambda a: np.int64(3), spec, r))(1.0)
