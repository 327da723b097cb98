"""The code examples of JAX's core tutorials, run with `jax` = jaxlite and with real JAX.

Pages: Quickstart, Key concepts, Thinking in JAX, Just-in-time compilation, Automatic
vectorization, Pytrees / Working with pytrees, Control flow and logical operators with
JIT, Stateful computations, Pseudorandom numbers, Introduction to debugging and the
English "Sharp bits". Each example is a function of the module `m` (jaxlite or jax)
that prints what the page prints and returns the values it computes. A test runs it
with both: the printed text must be the same and the values alike (dtype, weak type,
shape, values up to float32 rounding). Printed forms that are the point of an example
(keys, key paths, tree structures, array reprs, errors) are also asserted literally,
so they are checked where JAX is not installed.

Intended differences are kept out of the compared text: tracers print as in the seeds,
jaxprs show broadcast_in_dim's params and no `jit[name=...]` around jnp functions,
docs links point to jaxlite's docs, and NumPy's float32 `exp`/`sin`/`cos` may differ
from XLA's in the last bit (values are compared with a tolerance, not printed).
"""

import contextlib
import dataclasses
import functools
import io
import warnings
from typing import Any, NamedTuple

import numpy as np
import pytest

import jaxlite


def _jax():
    return pytest.importorskip("jax")


def run(example, m):
    """(printed text, returned values) of `example(m)`."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        values = example(m)
        m.effects_barrier()
    return buf.getvalue(), values


def _is_array(x):
    return hasattr(x, "dtype") and hasattr(x, "shape")


def assert_alike(ours, ref, path="out"):
    """Same pytree structure, and each leaf alike: arrays by dtype, weak type, shape
    and value (float32 tolerance); anything else by equality."""
    if isinstance(ref, (list, tuple)) and not _is_array(ref):
        assert type(ours).__name__ == type(ref).__name__, path
        assert len(ours) == len(ref), path
        for i, (a, b) in enumerate(zip(ours, ref)):
            assert_alike(a, b, f"{path}[{i}]")
    elif isinstance(ref, dict):
        assert sorted(ours) == sorted(ref), path
        for k in ref:
            assert_alike(ours[k], ref[k], f"{path}[{k!r}]")
    elif _is_array(ref) and not isinstance(ref, np.generic):
        if str(ref.dtype).startswith("key"):
            assert str(ours.dtype) == str(ref.dtype), path
            ours = jaxlite.random.key_data(ours)
            ref = _jax().random.key_data(ref)
        assert str(ours.dtype) == str(ref.dtype), path
        assert ours.shape == ref.shape, path
        assert getattr(ours, "weak_type", False) == getattr(ref, "weak_type", False), (
            path
        )
        a, b = np.asarray(ours), np.asarray(ref)
        if np.issubdtype(b.dtype, np.inexact):
            np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6, err_msg=path)
        else:
            np.testing.assert_array_equal(a, b, err_msg=path)
    else:
        assert ours == ref, path


def compare_with_jax(example):
    """Run `example` with jaxlite and JAX: same printed text, alike values. Returns
    jaxlite's printed text."""
    jax = _jax()
    text, values = run(example, jaxlite)
    ref_text, ref_values = run(example, jax)
    assert text == ref_text
    assert_alike(values, ref_values)
    return text


def error_of(fn):
    """`(class name, message)` of the exception `fn()` raises."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any error is the result
        return type(e).__name__, str(e)
    raise AssertionError("no exception raised")


def assert_error_like_jax(make_fn, cls, phrase):
    """`make_fn(m)()` raises `cls` with `phrase` with jaxlite, and JAX agrees."""
    name, msg = error_of(make_fn(jaxlite))
    assert name == cls, msg
    assert phrase in msg, msg
    jax = _jax()
    ref_name, ref_msg = error_of(make_fn(jax))
    assert ref_name == cls
    assert phrase in ref_msg


# ----------------------------------------------------------------------------------------
# Quickstart


def _selu(m):
    def selu(x, alpha=1.67, lmbda=1.05):
        return lmbda * m.numpy.where(x > 0, x, alpha * m.numpy.exp(x) - alpha)

    return selu


def ex_quickstart(m):
    jnp, random = m.numpy, m.random
    selu = _selu(m)
    x = jnp.arange(5.0)
    out = [selu(x)]
    key = random.key(1701)
    x = random.normal(key, (1_000_000,))
    out.append(x[:5])
    out.append(m.jit(selu)(x).block_until_ready()[:5])

    def sum_logistic(x):
        return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))

    x_small = jnp.arange(3.0)
    out.append(m.grad(sum_logistic)(x_small))

    def first_finite_differences(f, x, eps=1e-3):
        return jnp.array(
            [(f(x + eps * v) - f(x - eps * v)) / (2 * eps) for v in jnp.eye(len(x))]
        )

    out.append(first_finite_differences(sum_logistic, x_small))
    out.append(m.grad(m.jit(m.grad(m.jit(m.grad(sum_logistic)))))(1.0))
    out.append(m.jacobian(jnp.exp)(x_small))
    out.append(m.jit(m.jacfwd(m.jacrev(sum_logistic)))(x_small))

    key1, key2 = random.split(key)
    mat = random.normal(key1, (150, 100))
    batched_x = random.normal(key2, (10, 100))

    def apply_matrix(x):
        return jnp.dot(mat, x)

    naive = jnp.stack([apply_matrix(v) for v in batched_x])
    manual = m.jit(lambda b: jnp.dot(b, mat.T))(batched_x)
    vmapped = m.jit(lambda b: m.vmap(apply_matrix)(b))(batched_x)
    np.testing.assert_allclose(naive, manual, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(naive, vmapped, atol=1e-4, rtol=1e-4)
    out.append(vmapped[:2, :4])

    key = random.key(43)
    print(random.normal(key))
    print(random.normal(key))
    for i in range(3):
        new_key, subkey = random.split(key)
        val = random.normal(subkey)
        print(f"draw {i}: {val}")
        key = new_key
    return out


def test_quickstart():
    text = compare_with_jax(ex_quickstart)
    assert text.splitlines()[:2] == ["0.07520543", "0.07520543"]


def test_quickstart_selu_repr():
    x = jaxlite.numpy.arange(5.0)
    assert repr(_selu(jaxlite)(x)) == (
        "Array([0.       , 1.05     , 2.1      , 3.1499999, 4.2      ], dtype=float32)"
    )


# ----------------------------------------------------------------------------------------
# Key concepts


class _Params(NamedTuple):
    a: int
    b: float


def ex_key_concepts(m):
    jnp = m.numpy
    x = jnp.arange(5)
    print(isinstance(x, m.Array))
    print(x.devices())
    print(x.sharding)

    def selu(x, alpha=1.67, lambda_=1.05):
        return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    print(m.jit(selu)(1.0))

    @m.jit
    def f(x):
        print(x.shape, x.dtype)
        return x + 1

    result = f(x)
    for params in (
        [1, 2, (jnp.arange(3), jnp.ones(2))],
        {"n": 5, "W": jnp.ones((2, 2)), "b": jnp.zeros(2)},
        _Params(1, 5.0),
    ):
        print(m.tree.structure(params))
        print(m.tree.leaves(params))
    return [result]


def test_key_concepts():
    text = compare_with_jax(ex_key_concepts)
    assert text.splitlines()[:4] == [
        "True",
        "{CpuDevice(id=0)}",
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)",
        "1.05",
    ]
    assert "PyTreeDef([*, *, (*, *)])" in text
    assert "PyTreeDef({'W': *, 'b': *, 'n': *})" in text
    assert "PyTreeDef(CustomNode(namedtuple[_Params], [*, *]))" in text


def test_key_concepts_selu_jaxpr():
    jnp = jaxlite.numpy

    def selu(x, alpha=1.67, lambda_=1.05):
        return lambda_ * jnp.where(x > 0, x, alpha * jnp.exp(x) - alpha)

    text = str(jaxlite.make_jaxpr(selu)(jnp.arange(5.0)))
    assert text == (
        "{ lambda ; a:f32[5]. let\n"
        "    b:bool[5] = gt a 0.0:f32[]\n"
        "    c:f32[5] = exp a\n"
        "    d:f32[5] = mul 1.6699999570846558:f32[] c\n"
        "    e:f32[5] = sub d 1.6699999570846558:f32[]\n"
        "    f:f32[5] = select_n b e a\n"
        "    g:f32[5] = mul 1.0499999523162842:f32[] f\n"
        "  in (g,) }"
    )


# ----------------------------------------------------------------------------------------
# Thinking in JAX


def ex_thinking(m):
    jnp, lax = m.numpy, m.lax
    x_jnp = jnp.linspace(0, 10, 1000)
    y_jnp = 2 * jnp.sin(x_jnp) * jnp.cos(x_jnp)
    x = jnp.arange(10)
    y = x.at[0].set(10)
    print(x)
    print(y)
    print(repr(jnp.add(1, 1.0)))
    print(repr(lax.add(jnp.float32(1), 1.0)))
    x = jnp.array([1, 2, 1])
    y = jnp.ones(10)
    print(repr(jnp.convolve(x, y)))
    result = lax.conv_general_dilated(
        x.reshape(1, 1, 3).astype(float),
        y.reshape(1, 1, 10),
        window_strides=(1,),
        padding=[(len(y) - 1, len(y) - 1)],
    )
    print(repr(result[0, 0]))

    def norm(X):
        X = X - X.mean(0)
        return X / X.std(0)

    rng = np.random.RandomState(1701)
    X = jnp.array(rng.rand(1000, 10))
    print(np.allclose(norm(X), m.jit(norm)(X), atol=1e-6))
    x = jnp.array(rng.randn(10))
    negatives = x[x < 0]

    @m.jit
    def f(x, y):
        print("Running f():")
        print(f"  x.shape = {x.shape}")
        result = jnp.dot(x + 1, y + 1)
        print(f"  result.shape = {result.shape}")
        return result

    a = f(rng.randn(3, 4), rng.randn(4))
    b = f(rng.randn(3, 4), rng.randn(4))  # cached: prints nothing

    @functools.partial(m.jit, static_argnums=(1,))
    def g(x, neg):
        return -x if neg else x

    @m.jit
    def h(x):
        return x.reshape((np.prod(x.shape),))

    return [y_jnp[:20], negatives, a, b, g(1, True), h(jnp.ones((2, 3)))]


def test_thinking_in_jax():
    text = compare_with_jax(ex_thinking)
    assert text.splitlines()[:6] == [
        "[0 1 2 3 4 5 6 7 8 9]",
        "[10  1  2  3  4  5  6  7  8  9]",
        "Array(2., dtype=float32, weak_type=True)",
        "Array(2., dtype=float32)",
        "Array([1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.], dtype=float32)",
        "Array([1., 3., 4., 4., 4., 4., 4., 4., 4., 4., 3., 1.], dtype=float32)",
    ]
    assert text.count("Running f():") == 1


def test_thinking_in_jax_errors():
    def assign(m):
        def fn():
            x = m.numpy.arange(10)
            x[0] = 10

        return fn

    assert_error_like_jax(
        assign,
        "TypeError",
        "JAX arrays are immutable and do not support in-place item assignment. "
        "Instead of x[idx] = y, use x = x.at[idx].set(y)",
    )
    assert_error_like_jax(
        lambda m: lambda: m.lax.add(1, 1.0),
        "TypeError",
        "lax.add requires arguments to have the same dtypes, got int32, float32. "
        "(Tip: jnp.add is a similar function that does automatic type promotion on "
        "inputs).",
    )
    assert_error_like_jax(
        lambda m: lambda: m.jit(lambda x: x[x < 0])(m.numpy.arange(-2.0, 2.0)),
        "NonConcreteBooleanIndexError",
        "Array boolean indices must be concrete; got",
    )
    assert_error_like_jax(
        lambda m: lambda: m.jit(lambda x, neg: -x if neg else x)(1, True),
        "TracerBoolConversionError",
        "Attempted boolean conversion of traced array with shape bool[].",
    )
    assert_error_like_jax(
        lambda m: (
            lambda: m.jit(lambda x: x.reshape(m.numpy.array(x.shape).prod()))(
                m.numpy.ones((2, 3))
            )
        ),
        "TypeError",
        "Shapes must be 1D sequences of concrete values of integer type, got",
    )


# ----------------------------------------------------------------------------------------
# Just-in-time compilation


def ex_jit(m):
    jnp, lax = m.numpy, m.lax
    global_list = []

    def log2(x):
        global_list.append(x)
        return jnp.log(x) / jnp.log(2.0)

    print(m.make_jaxpr(log2)(3.0))
    print(len(global_list))

    def log2_if_rank_2(x):
        if x.ndim == 2:
            return jnp.log(x) / jnp.log(2.0)
        return x

    print(m.make_jaxpr(log2_if_rank_2)(jnp.array([1, 2, 3])))

    def f(x):
        if x > 0:
            return x
        return 2 * x

    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    @m.jit
    def loop_body(prev_i):
        return prev_i + 1

    def g_inner_jitted(x, n):
        i = 0
        while i < n:
            i = loop_body(i)
        return x + i

    print(repr(g_inner_jitted(10, 20)))
    print(m.jit(f, static_argnums=0)(10))
    print(m.jit(g, static_argnames=["n"])(10, 20))

    @functools.partial(m.jit, static_argnames=["n"])
    def g_jit_decorated(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    print(g_jit_decorated(10, 20))

    def unjitted_loop_body(prev_i):
        return prev_i + 1

    i = 0
    while i < 5:
        i = m.jit(functools.partial(unjitted_loop_body))(i)
    while i < 10:
        i = m.jit(lambda x: unjitted_loop_body(x))(i)
    while i < 15:
        i = m.jit(unjitted_loop_body)(i)
    print(repr(i))

    traces = []

    @m.jit
    def counted(x):
        traces.append(x.shape)
        return x * 2

    for arg in (1.0, 2.0, jnp.float32(1.0), 1, jnp.ones(2), jnp.ones(2)):
        counted(arg)
    print(traces, counted._cache_size())
    return [log2(3.0), m.jit(log2)(3.0), lax.cond(True, lambda: 1, lambda: 2)]


def test_jit():
    text = compare_with_jax(ex_jit)
    assert text.startswith(
        "{ lambda ; a:f32[]. let\n"
        "    b:f32[] = log a\n"
        "    c:f32[] = log 2.0:f32[]\n"
        "    d:f32[] = div b c\n"
        "  in (d,) }\n"
        "1\n"
        "{ lambda ; a:i32[3]. let  in (a,) }\n"
        "Array(30, dtype=int32, weak_type=True)\n"
        "10\n30\n30\n"
        "Array(15, dtype=int32, weak_type=True)\n"
        "[(), (), (), (2,)] 4\n"
    )


def ex_jit_side_effects(m):
    jnp = m.numpy

    def impure_print_side_effect(x):
        print("Executing function")
        return x

    print("First call: ", m.jit(impure_print_side_effect)(4.0))
    print("Second call: ", m.jit(impure_print_side_effect)(5.0))
    print(
        "Third call, different type: ",
        m.jit(impure_print_side_effect)(jnp.array([5.0])),
    )
    state = {"g": 0.0}

    def impure_uses_globals(x):
        return x + state["g"]

    print("First call: ", m.jit(impure_uses_globals)(4.0))
    state["g"] = 10.0
    print("Second call: ", m.jit(impure_uses_globals)(5.0))
    print(
        "Third call, different type: ",
        m.jit(impure_uses_globals)(jnp.array([4.0])),
    )


def test_jit_side_effects():
    text = compare_with_jax(ex_jit_side_effects)
    assert text == (
        "Executing function\nFirst call:  4.0\n"
        "Second call:  5.0\n"
        "Executing function\nThird call, different type:  [5.]\n"
        "First call:  4.0\nSecond call:  5.0\nThird call, different type:  [14.]\n"
    )


def test_jit_errors():
    def f(x):
        if x > 0:
            return x
        return 2 * x

    def g(x, n):
        i = 0
        while i < n:
            i += 1
        return x + i

    phrase = "Attempted boolean conversion of traced array with shape bool[]."
    assert_error_like_jax(
        lambda m: lambda: m.jit(f)(10), "TracerBoolConversionError", phrase
    )
    assert_error_like_jax(
        lambda m: lambda: m.jit(g)(10, 20), "TracerBoolConversionError", phrase
    )
    assert_error_like_jax(
        lambda m: lambda: m.jit(f, static_argnums=0)(m.numpy.array(1)),
        "ValueError",
        "Non-hashable static arguments are not supported.",
    )
    assert_error_like_jax(
        lambda m: lambda: m.make_jaxpr(lambda arr, extra: arr)(iter(range(3)), 5.0),
        "TypeError",
        "as an abstract array. The problematic value is of type <class "
        "'range_iterator'> and was passed to the function at path arr.",
    )


# ----------------------------------------------------------------------------------------
# Automatic vectorization


def ex_vmap(m):
    jnp = m.numpy
    x = jnp.arange(5)
    w = jnp.array([2.0, 3.0, 4.0])

    def convolve(x, w):
        output = []
        for i in range(1, len(x) - 1):
            output.append(jnp.dot(x[i - 1 : i + 2], w))
        return jnp.array(output)

    print(repr(convolve(x, w)))
    xs = jnp.stack([x, x])
    ws = jnp.stack([w, w])
    manual = jnp.stack([convolve(xs[i], ws[i]) for i in range(xs.shape[0])])
    vectorized = jnp.stack(
        [jnp.sum(xs[:, i - 1 : i + 2] * ws, axis=1) for i in range(1, 4)], axis=1
    )
    auto = m.vmap(convolve)(xs, ws)
    print(repr(auto))
    v2 = m.vmap(convolve, in_axes=1, out_axes=1)(jnp.transpose(xs), jnp.transpose(ws))
    print(repr(v2))
    v3 = m.vmap(convolve, in_axes=[0, None])(xs, w)
    jitted = m.jit(m.vmap(convolve))(xs, ws)
    mv = m.vmap(lambda x, y: jnp.vdot(x, y), (0, None), 0)
    mm = m.vmap(mv, (None, 1), 1)
    tree = (jnp.ones((5, 3)), (jnp.ones((5, 3)), jnp.ones((5, 3))))
    return [
        manual,
        vectorized,
        v3,
        jitted,
        mm(jnp.arange(6.0).reshape(2, 3), jnp.arange(12.0).reshape(3, 4)),
        m.vmap(lambda t: jnp.dot(t[0], jnp.dot(t[1][0], t[1][1])))(tree),
        m.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))(
            {"a": jnp.arange(3.0), "b": 1.0}
        ),
        m.vmap(lambda x: {"a": x, "b": (x, x + 1)})(jnp.arange(2.0)),
        m.vmap(lambda: 1.0, axis_size=3)(),
        m.vmap(lambda x: x**2, out_axes=1)(jnp.arange(6.0).reshape(2, 3)),
    ]


def test_vmap():
    text = compare_with_jax(ex_vmap)
    assert text == (
        "Array([11., 20., 29.], dtype=float32)\n"
        "Array([[11., 20., 29.],\n       [11., 20., 29.]], dtype=float32)\n"
        "Array([[11., 11.],\n       [20., 20.],\n       [29., 29.]], dtype=float32)\n"
    )


def test_vmap_inconsistent_sizes_message():
    jax = _jax()

    def calls(m):
        jnp = m.numpy
        yield lambda: m.vmap(lambda x, w: x)(jnp.ones((2, 5)), jnp.ones((3, 3)))
        yield lambda: m.vmap(lambda t: t)((jnp.ones(2), [jnp.ones(3)]))
        yield lambda: m.vmap(lambda d: d)({"a": jnp.ones(2), "b": jnp.ones(3)})
        yield lambda: m.vmap(lambda *a: a)(jnp.ones(2), jnp.ones(3))
        yield lambda: m.vmap(lambda x, y=None: x)(jnp.ones(2), y=jnp.ones(3))
        yield lambda: m.vmap(lambda x, y: x, in_axes=(-1, 0))(
            jnp.ones((4, 2)), jnp.ones(3)
        )
        yield lambda: m.vmap(lambda x, y, z, w: x)(
            jnp.ones(2), jnp.ones(3), jnp.ones(4), jnp.ones(4)
        )

    for ours, ref in zip(calls(jaxlite), calls(jax)):
        assert error_of(ours) == error_of(ref)
    assert error_of(next(calls(jaxlite))) == (
        "ValueError",
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 2: axis 0 of argument x of type float32[2,5];\n"
        "  * one axis had size 3: axis 0 of argument w of type float32[3,3]",
    )


def test_vmap_errors():
    assert_error_like_jax(
        lambda m: lambda: m.vmap(lambda x, y: x, in_axes=(0, 0, 0))(1.0, 2.0),
        "ValueError",
        "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
        "the positional arguments passed to the function",
    )
    assert_error_like_jax(
        lambda m: lambda: m.vmap(lambda x: x)(1.0),
        "ValueError",
        "vmap was requested to map its argument along axis 0, which implies that its "
        "rank should be at least 1, but is only 0",
    )
    assert_error_like_jax(
        lambda m: lambda: m.vmap(lambda x: x, out_axes=None)(m.numpy.ones(2)),
        "ValueError",
        "at vmap out_axes, got axis spec None but output was batched on axis 0",
    )


# ----------------------------------------------------------------------------------------
# Working with pytrees


class _Leaf:
    def __repr__(self):
        return "<leaf>"


class MyContainer:
    def __init__(self, name, a, b, c):
        self.name = name
        self.a = a
        self.b = b
        self.c = c

    def __repr__(self):
        return f"MyContainer({self.name!r}, {self.a}, {self.b}, {self.c})"


def _flatten_container(container):
    return [container.a, container.b, container.c], container.name


def _unflatten_container(aux_data, flat_contents):
    return MyContainer(aux_data, *flat_contents)


class MyOtherContainer(NamedTuple):
    name: str
    a: Any
    b: Any
    c: Any


class _ATuple(NamedTuple):
    name: Any


def _register_classes(m):
    """The doc's custom nodes, registered with module `m` (fresh classes each time:
    a class is registered once)."""

    class Container(MyContainer):
        pass

    m.tree_util.register_pytree_node(
        Container,
        _flatten_container,
        lambda aux, flat: Container(aux, *flat),
    )

    @m.tree_util.register_pytree_node_class
    class Container2(MyContainer):
        def tree_flatten(self):
            return (self.a, self.b, self.c), self.name

        @classmethod
        def tree_unflatten(cls, aux_data, children):
            return cls(aux_data, *children)

    @m.tree_util.register_static
    class StaticStr(str):
        pass

    class MyAltContainer(NamedTuple):
        name: StaticStr
        a: Any
        b: Any
        c: Any

    @functools.partial(
        m.tree_util.register_dataclass,
        data_fields=["a", "b", "c"],
        meta_fields=["name"],
    )
    @dataclasses.dataclass
    class MyDataclassContainer:
        name: str
        a: Any
        b: Any
        c: Any

    @m.tree_util.register_dataclass
    @dataclasses.dataclass
    class Auto:
        x: Any
        y: Any
        op: str = dataclasses.field(metadata=dict(static=True))

    return Container, Container2, StaticStr, MyAltContainer, MyDataclassContainer, Auto


def ex_pytrees(m):
    jnp = m.numpy
    for pytree in [
        [1, "a", _Leaf()],
        (1, (2, 3), ()),
        [1, {"k1": 2, "k2": (3, 4)}, 5],
        {"a": 2, "b": (2, 3)},
        jnp.array([1, 2, 3]),
    ]:
        leaves = m.tree.leaves(pytree)
        print(f"{repr(pytree):<45} has {len(leaves)} leaves: {leaves}")
    list_of_lists = [[1, 2, 3], [1, 2], [1, 2, 3, 4]]
    print(m.tree.map(lambda x: x * 2, list_of_lists))
    print(m.tree.map(lambda x, y: x + y, list_of_lists, list_of_lists))

    Container, Container2, StaticStr, Alt, DC, Auto = _register_classes(m)
    print(m.tree.leaves([MyContainer("Alice", 1, 2, 3)]))
    print(m.tree.leaves([Container("Alice", 1, 2, 3), Container("Bob", 4, 5, 6)]))
    print(m.tree.map(lambda x: x + 1, [Container("Alice", 1, 2, 3)]))
    print(m.tree.leaves([Container2("Alice", 1, 2, 3), Container2("Bob", 4, 5, 6)]))
    print(m.tree.leaves([MyOtherContainer("Alice", 1, 2, 3)]))
    print(
        m.tree.leaves(
            [Alt(StaticStr("Alice"), 1, 2, 3), Alt(StaticStr("Bob"), 4, 5, 6)]
        )
    )
    print(
        m.tree.leaves(
            [DC("apple", 5.3, 1.2, 0), DC("banana", np.array([3, 4]), -1.0, 0)]
        )
    )
    print(m.tree.map(lambda x: x * 2, DC("apple", 5.3, 1.2, 0)))
    print(m.tree.leaves(Auto(1, 2, "mul")))

    a_tree = [jnp.zeros((2, 3)), jnp.zeros((3, 4))]
    shapes = m.tree.map(lambda x: x.shape, a_tree)
    print(m.tree.map(jnp.ones, shapes))
    print(m.tree.leaves([None, None, None]))
    print(m.tree.leaves([None, None, None], is_leaf=lambda x: x is None))
    print(m.tree.map(lambda x: x, [None, 1]))

    episode_steps = [dict(t=1, obs=3), dict(t=2, obs=4)]
    print(m.tree.map(lambda *xs: list(xs), *episode_steps))
    print(
        m.tree.transpose(
            outer_treedef=m.tree.structure([0 for e in episode_steps]),
            inner_treedef=m.tree.structure(episode_steps[0]),
            pytree_to_transpose=episode_steps,
        )
    )

    tree = [1, {"k1": 2, "k2": (3, 4)}, _ATuple("foo")]
    flattened, _ = m.tree_util.tree_flatten_with_path(tree)
    for key_path, value in flattened:
        print(f"Value of tree{m.tree_util.keystr(key_path)}: {value}")
    for key_path, _ in flattened:
        print(f"Key path of tree{m.tree_util.keystr(key_path)}: {repr(key_path)}")
    print(m.tree_util.tree_flatten_with_path(Container("Alice", 1, 2, 3))[0])
    print(m.tree_util.tree_flatten_with_path(DC("apple", 5.3, 1.2, 0))[0])
    print(m.tree.map_with_path(lambda p, x: m.tree_util.keystr(p), {"a": [1, 2]}))
    return [m.jit(lambda d: d.a + d.b * 2)(DC("apple", 5.3, 1.2, 0))]


def test_working_with_pytrees():
    text = compare_with_jax(ex_pytrees)
    lines = text.splitlines()
    assert lines[:5] == [
        "[1, 'a', <leaf>]                              has 3 leaves: [1, 'a', <leaf>]",
        "(1, (2, 3), ())                               has 3 leaves: [1, 2, 3]",
        "[1, {'k1': 2, 'k2': (3, 4)}, 5]               has 5 leaves: [1, 2, 3, 4, 5]",
        "{'a': 2, 'b': (2, 3)}                         has 3 leaves: [2, 2, 3]",
        "Array([1, 2, 3], dtype=int32)                 has 1 leaves: "
        "[Array([1, 2, 3], dtype=int32)]",
    ]
    expected = [
        "[[2, 4, 6], [2, 4], [2, 4, 6, 8]]",
        "[MyContainer('Alice', 1, 2, 3)]",
        "[1, 2, 3, 4, 5, 6]",
        "[MyContainer('Alice', 2, 3, 4)]",
        "['Alice', 1, 2, 3]",
        "[5.3, 1.2, 0, array([3, 4]), -1.0, 0]",
        "[1, 2]",
        "[(Array([1., 1.], dtype=float32), Array([1., 1., 1.], dtype=float32)), "
        "(Array([1., 1., 1.], dtype=float32), "
        "Array([1., 1., 1., 1.], dtype=float32))]",
        "[]",
        "[None, None, None]",
        "[None, 1]",
        "{'obs': [3, 4], 't': [1, 2]}",
        "Value of tree[1]['k2'][0]: 3",
        "Value of tree[2].name: foo",
        "Key path of tree[0]: (SequenceKey(idx=0),)",
        "Key path of tree[1]['k2'][0]: (SequenceKey(idx=1), DictKey(key='k2'), "
        "SequenceKey(idx=0))",
        "Key path of tree[2].name: (SequenceKey(idx=2), GetAttrKey(name='name'))",
        "[((FlattenedIndexKey(key=0),), 1), ((FlattenedIndexKey(key=1),), 2), "
        "((FlattenedIndexKey(key=2),), 3)]",
        "[((GetAttrKey(name='a'),), 5.3), ((GetAttrKey(name='b'),), 1.2), "
        "((GetAttrKey(name='c'),), 0)]",
        "{'a': [\"['a'][0]\", \"['a'][1]\"]}",
    ]
    for line in expected:
        assert line in lines, line


def test_pytree_errors():
    def unregistered(m):
        return lambda: m.tree.map(lambda x: x + 1, [MyContainer("Alice", 1, 2, 3)])

    assert_error_like_jax(
        unregistered,
        "TypeError",
        "unsupported operand type(s) for +: 'MyContainer' and 'int'",
    )
    assert_error_like_jax(
        lambda m: lambda: m.tree.map(lambda x, y: x + y, [1, 2], [1, 2, 3]),
        "ValueError",
        "pytree structure error: different lengths of list at key path",
    )
    assert_error_like_jax(
        lambda m: lambda: m.tree.map(lambda x, y: (x, y), [None, 1], [3, 2]),
        "ValueError",
        "pytree structure error: different types at key path",
    )
    assert_error_like_jax(
        lambda m: lambda: m.tree.map(lambda x, y: x, {"a": 1}, {"b": 1}),
        "ValueError",
        "pytree structure error: different pytree metadata at key path",
    )


def test_custom_pytree_initialization():
    """The doc's MyTree, whose __init__ converts with jnp.asarray: jaxlite's vmap
    unflattens with real leaves, as JAX's; the type-checking __init__ works."""
    jnp = jaxlite.numpy

    class MyTree:
        def __init__(self, a):
            if not (type(a) is object or a is None or isinstance(a, MyTree)):
                a = jnp.asarray(a)
            self.a = a

    jaxlite.tree_util.register_pytree_node(
        MyTree, lambda tree: ((tree.a,), None), lambda _, args: MyTree(*args)
    )
    tree = MyTree(jnp.arange(5.0))
    np.testing.assert_array_equal(jaxlite.vmap(lambda x: x)(tree).a, np.arange(5.0))
    np.testing.assert_array_equal(
        jaxlite.jacobian(lambda x: x)(tree).a.a, np.eye(5, dtype=np.float32)
    )


# ----------------------------------------------------------------------------------------
# Control flow and logical operators with JIT


def ex_control_flow(m):
    jnp, lax = m.numpy, m.lax

    @m.jit
    def f(x):
        for _ in range(3):
            x = 2 * x
        return x

    @m.jit
    def g(x):
        y = 0.0
        for i in range(x.shape[0]):
            y = y + x[i]
        return y

    def h(x):
        if x < 3:
            return 3.0 * x**2
        return -4 * x

    def example_fun(length, val):
        return jnp.ones((length,)) * val

    good_example_jit = m.jit(example_fun, static_argnames="length")
    operand = jnp.array([0.0])
    branches = [lambda x: x + 1, lambda x: x * 10, lambda x: -x]

    def cumsum(res, el):
        res = res + el
        return res, res

    @m.jit
    def jax_check_positive_even(x):
        return jnp.logical_and(x % 2 == 0, x > 0)

    print(m.make_jaxpr(lambda: lax.fori_loop(0, 10, lambda i, x: x + i, 0))())
    print(m.make_jaxpr(lambda n: lax.fori_loop(0, n, lambda i, x: x + i, 0))(10))
    return [
        f(3),
        g(jnp.array([1.0, 2.0, 3.0])),
        m.jit(h, static_argnames="x")(2.0),
        good_example_jit(10, 4),
        good_example_jit(5, 4),
        m.grad(h)(2.0),
        m.grad(h)(4.0),
        lax.cond(True, lambda x: x + 1, lambda x: x - 1, operand),
        lax.cond(False, lambda x: x + 1, lambda x: x - 1, operand),
        m.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.0),
        [lax.switch(i, branches, 3.0) for i in (-1, 0, 1, 2, 5)],
        m.jit(lambda i, x: lax.switch(i, branches, x))(7, 3.0),
        lax.select(jnp.arange(3) > 0, jnp.ones(3), jnp.zeros(3)),
        lax.while_loop(lambda x: x < 10, lambda x: x + 1, 0),
        lax.fori_loop(0, 10, lambda i, x: x + i, 0),
        m.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0),
        m.vmap(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2, x))(
            jnp.array([1.0, 3.0, 11.0])
        ),
        lax.scan(cumsum, 0, jnp.array([1, 2, 3, 4, 5])),
        lax.scan(lambda c, x: (c + 1, None), 0, None, length=4),
        lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(5.0), reverse=True),
        lax.map(lambda x: x**2, jnp.arange(4)),
        jax_check_positive_even(24),
        jax_check_positive_even(jnp.array([-1, 2, 5])),
    ]


def test_control_flow():
    text = compare_with_jax(ex_control_flow)
    assert "      length=10\n" in text
    assert "    _:i32[] _:i32[] b:i32[] = while[\n" in text


def test_control_flow_errors():
    def h(x):
        if x < 3:
            return 3.0 * x**2
        return -4 * x

    def python_check_positive_even(x):
        is_even = x % 2 == 0
        return is_even and (x > 0)

    assert_error_like_jax(
        lambda m: lambda: m.jit(h)(2),
        "TracerBoolConversionError",
        "Attempted boolean conversion of traced array with shape bool[].",
    )
    assert_error_like_jax(
        lambda m: lambda: m.jit(lambda n, v: m.numpy.ones((n,)) * v)(10, 4),
        "TypeError",
        "Shapes must be 1D sequences of concrete values of integer type",
    )
    assert_error_like_jax(
        lambda m: lambda: python_check_positive_even(m.numpy.array([-1, 2, 5])),
        "ValueError",
        "The truth value of an array with more than one element is ambiguous.",
    )
    assert_error_like_jax(
        lambda m: (
            lambda: m.lax.cond(
                True, lambda x: x + 1, lambda x: x.astype(int), m.numpy.zeros(1)
            )
        ),
        "TypeError",
        "cond branches must have equal output types but they differ.",
    )
    assert_error_like_jax(
        lambda m: lambda: m.lax.while_loop(lambda x: x, lambda x: x + 1, 0),
        "TypeError",
        "cond_fun must return a boolean scalar, but got output type(s) "
        "[ShapedArray(int32[], weak_type=True)].",
    )
    assert_error_like_jax(
        lambda m: (
            lambda: m.grad(
                lambda x: m.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2, x)
            )(1.0)
        ),
        "ValueError",
        "Reverse-mode differentiation does not work for lax.while_loop or "
        "lax.fori_loop with dynamic start/stop values.",
    )
    assert_error_like_jax(
        lambda m: lambda: m.lax.scan(lambda c, x: ((c, c), c), 0.0, m.numpy.ones(3)),
        "TypeError",
        "scan body function carry input and carry output must have the same pytree "
        "structure",
    )
    assert_error_like_jax(
        lambda m: (
            lambda: m.lax.scan(lambda c, x: (c, c), 0.0, m.numpy.ones(5), length=3)
        ),
        "ValueError",
        "scan got `length` argument of 3 which disagrees with leading axis sizes [5].",
    )


# ----------------------------------------------------------------------------------------
# Stateful computations


def ex_stateful(m):
    jnp = m.numpy

    class Counter:
        def __init__(self):
            self.n = 0

        def count(self):
            self.n += 1
            return self.n

    counter = Counter()
    print([counter.count() for _ in range(3)])
    counter.n = 0
    fast_count = m.jit(counter.count)
    print([int(fast_count()) for _ in range(3)])

    class CounterV2:
        def count(self, n):
            return n + 1, n + 1

    fast_count = m.jit(CounterV2().count)
    state = 0
    for _ in range(3):
        value, state = fast_count(state)
        print(value)

    class Params(NamedTuple):
        weight: Any
        bias: Any

    def init(rng):
        weights_key, bias_key = m.random.split(rng)
        weight = m.random.normal(weights_key, ())
        bias = m.random.normal(bias_key, ())
        return Params(weight, bias)

    def loss(params, x, y):
        pred = params.weight * x + params.bias
        return jnp.mean((pred - y) ** 2)

    @m.jit
    def update(params, x, y):
        grad = m.grad(loss)(params, x, y)
        return m.tree.map(lambda param, g: param - g * 0.005, params, grad)

    rng = m.random.key(42)
    x_rng, noise_rng = m.random.split(rng)
    xs = m.random.normal(x_rng, (128, 1))
    noise = m.random.normal(noise_rng, (128, 1)) * 0.5
    ys = xs * 2 + -1 + noise
    params = init(rng)
    first = update(params, xs, ys)
    for _ in range(1000):
        params = update(params, xs, ys)
    print(type(params).__name__)
    return [init(rng), first, params]


def test_stateful_computations():
    text = compare_with_jax(ex_stateful)
    assert text == "[1, 2, 3]\n[1, 1, 1]\n1\n2\n3\nParams\n"


# ----------------------------------------------------------------------------------------
# Pseudorandom numbers


def ex_random(m):
    random, jnp = m.random, m.numpy
    key = random.key(42)
    print(key)
    print(repr(key))
    print(random.normal(key))
    print(random.normal(key))
    print("old key", key)
    new_key, subkey = random.split(key)
    normal_sample = random.normal(subkey)
    print(r"    \---SPLIT --> new key   ", new_key)
    print(r"             \--> new subkey", subkey, "--> normal", normal_sample)
    key, *forty_two_subkeys = random.split(new_key, num=43)
    print(len(forty_two_subkeys))
    subkeys = random.split(random.key(42), 3)
    print(subkeys)
    sequence = np.stack([random.normal(subkey) for subkey in subkeys])
    print(repr(random.PRNGKey(0)))
    print(random.split(random.PRNGKey(42)))
    print(random.key_impl(random.key(42)))
    key = random.key(0)
    return [
        sequence,
        random.normal(random.key(42), shape=(3,)),
        random.key_data(random.key(42)),
        random.wrap_key_data(jnp.array([0, 42], dtype=jnp.uint32)),
        random.fold_in(random.key(42), 1),
        random.fold_in(random.PRNGKey(42), 1),
        random.uniform(key, (3,)),
        random.randint(key, (3,), 0, 10),
        m.vmap(random.normal)(random.split(key, 3)),
    ]


def test_pseudorandom_numbers():
    text = compare_with_jax(ex_random)
    assert text.startswith(
        "Array((), dtype=key<fry>) overlaying:\n[ 0 42]\n"
        "Array((), dtype=key<fry>) overlaying:\n[ 0 42]\n"
        "-0.028304616\n-0.028304616\n"
        "old key Array((), dtype=key<fry>) overlaying:\n[ 0 42]\n"
        "    \\---SPLIT --> new key    Array((), dtype=key<fry>) overlaying:\n"
        "[1832780943  270669613]\n"
        "             \\--> new subkey Array((), dtype=key<fry>) overlaying:\n"
        "[  64467757 2916123636] --> normal 0.60576403\n"
        "42\n"
        "Array((3,), dtype=key<fry>) overlaying:\n"
    )
    assert "Array([0, 0], dtype=uint32)\n" in text
    assert "[[1832780943  270669613]\n [  64467757 2916123636]]\n" in text
    assert text.endswith("\nthreefry2x32\n")


def test_random_errors():
    assert_error_like_jax(
        lambda m: lambda: m.random.key(0) + 1,
        "TypeError",
        "add does not accept dtypes key<fry>, int32.",
    )
    assert_error_like_jax(
        lambda m: lambda: m.random.key(1.5),
        "TypeError",
        "PRNG key seed must be an integer; got",
    )


# ----------------------------------------------------------------------------------------
# Introduction to debugging


def ex_debugging(m):
    jnp = m.numpy

    @m.jit
    def f(x):
        m.debug.print("jax.debug.print(x) -> {x}", x=x)
        y = jnp.sin(x)
        m.debug.print("jax.debug.print(y) -> {y}", y=y)
        return y

    result = f(2.0)

    def g(x):
        m.debug.print("jax.debug.print(x) -> {}", x)
        y = x * 2
        m.debug.print("jax.debug.print(y) -> {}", y)
        return y

    xs = jnp.arange(3.0)
    out = [result, m.vmap(g)(xs), m.jit(m.vmap(g))(xs)]

    def sq(x):
        m.debug.print("x: {}", x)
        return x**2

    out.append(m.grad(sq)(1.0))
    out.append(m.jit(m.grad(sq))(3.0))

    @m.jit
    def ordered(x, y):
        m.debug.print("x: {}", x, ordered=True)
        m.debug.print("y: {}", y, ordered=True)
        return x + y

    out.append(ordered(1, 2))
    m.debug.print("{x:.2f} and {y}", x=jnp.float32(3.14159), y=jnp.arange(3))
    m.debug.print("{} {}", 1, jnp.array([1.5, 2.0]))
    m.debug.print("{a[0]} {a[1]}", a=(jnp.int32(1), 2.0))
    m.jit(lambda x: m.debug.print("bool {} int8 {}", x > 0, x.astype(jnp.int8)))(
        jnp.arange(3)
    )
    m.jit(lambda x: m.debug.print("{x}", x=x))(jnp.ones((2, 2), jnp.float16))

    def log_value(x):
        print(f"Logged value: {x}")

    @m.jit
    def h(x):
        m.debug.callback(log_value, x)
        return x

    h(1.0)
    m.vmap(h)(jnp.arange(5.0))
    out.append(m.grad(h)(1.0))
    return out


def test_introduction_to_debugging():
    text = compare_with_jax(ex_debugging)
    assert text == (
        "jax.debug.print(x) -> 2.0\n"
        "jax.debug.print(y) -> 0.9092974066734314\n"
        + "".join(f"jax.debug.print(x) -> {v}\n" for v in ("0.0", "1.0", "2.0"))
        + "".join(f"jax.debug.print(y) -> {v}\n" for v in ("0.0", "2.0", "4.0"))
        + "".join(f"jax.debug.print(x) -> {v}\n" for v in ("0.0", "1.0", "2.0"))
        + "".join(f"jax.debug.print(y) -> {v}\n" for v in ("0.0", "2.0", "4.0"))
        + "x: 1.0\nx: 3.0\nx: 1\ny: 2\n"
        "3.14 and [0 1 2]\n"
        "1 [1.5 2. ]\n"
        "1 2.0\n"
        "bool [False  True  True] int8 [0 1 2]\n"
        "[[1. 1.]\n [1. 1.]]\n"
        "Logged value: 1.0\n"
        + "".join(f"Logged value: {v}\n" for v in ("0.0", "1.0", "2.0", "3.0", "4.0"))
        + "Logged value: 1.0\n"
    )


def test_debugging_lax_map_prints_in_order(capsys):
    def f(x):
        jaxlite.debug.print("x -> {}", x)
        jaxlite.debug.print("y -> {}", x * 2)
        return x

    jaxlite.lax.map(f, jaxlite.numpy.arange(2.0))
    assert capsys.readouterr().out == "x -> 0.0\ny -> 0.0\nx -> 1.0\ny -> 2.0\n"


def _nan_errors(m):
    """The errors of the page's two NaN examples with jax_debug_nans on."""
    with contextlib.redirect_stdout(io.StringIO()), np.errstate(all="ignore"):
        m.config.update("jax_debug_nans", True)
        try:
            div = error_of(lambda: m.numpy.divide(0.0, 0.0))
            log = error_of(lambda: m.jit(lambda x: m.numpy.log(x))(-1.0))
        finally:
            m.config.update("jax_debug_nans", False)
    return div, log


def test_debug_nans_errors():
    """As the page shows: with jax_debug_nans the operation that made the NaN raises.
    (JAX itself says so only while its jnp function was not compiled before; then its
    error is about the de-optimized function, so only its class is compared.)"""
    div, log = _nan_errors(jaxlite)
    assert div == ("FloatingPointError", "invalid value (nan) encountered in div")
    assert log[0] == "FloatingPointError"
    assert "invalid value (nan) encountered in log" in log[1]
    ref_div, ref_log = _nan_errors(_jax())
    assert ref_div[0] == ref_log[0] == "FloatingPointError"


# ----------------------------------------------------------------------------------------
# 🔪 JAX - The Sharp Bits 🔪


def ex_sharp_bits(m):
    jnp, lax = m.numpy, m.lax
    array = jnp.arange(10)
    print(lax.fori_loop(0, 10, lambda i, x: x + array[i], 0))
    iterator = iter(range(10))
    print(lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0))

    def pure_uses_internal_state(x):
        state = dict(even=0, odd=0)
        for i in range(10):
            state["even" if i % 2 == 0 else "odd"] += x
        return state["even"] + state["odd"]

    print(m.jit(pure_uses_internal_state)(5.0))

    jax_array = jnp.zeros((3, 3), dtype=jnp.float32)
    updated_array = jax_array.at[1, :].set(1.0)
    print("updated array:\n", updated_array)
    print("original array unchanged:\n", jax_array)
    new_jax_array = jnp.ones((5, 6)).at[::2, 3:].add(7.0)
    print("new array post-addition:")
    print(new_jax_array)

    x = jnp.arange(10)
    oob = [
        x[11],
        x[-11],
        jnp.arange(10.0).at[11].get(),
        jnp.arange(10.0).at[11].get(mode="fill", fill_value=jnp.nan),
        x.at[11].set(23),
        x.at[jnp.array([0, 11, -11, 9])].set(23),
        x[jnp.array([-1, 12, -12])],
        m.jit(lambda x, i: x.at[i].set(-5))(x, 11),
        lax.dynamic_slice(x, (8,), (4,)),
        jnp.take(x, jnp.array([12]), mode="fill"),
    ]

    def permissive_sum(x):
        return jnp.sum(jnp.array(x))

    def nansum(x):
        return x[~jnp.isnan(x)].sum()

    @m.jit
    def nansum_2(x):
        return jnp.where(~jnp.isnan(x), x, 0).sum()

    nan_x = jnp.array([1, 2, jnp.nan, 3, 4])
    print(repr(np.arange(254.0, 258.0).astype("uint8")))
    print(repr(jnp.arange(254.0, 258.0).astype("uint8")))
    print(repr(jnp.array([-1.5, 3e9, jnp.nan, jnp.inf, -jnp.inf]).astype("int32")))
    casts = [
        jnp.array([-1.5, 300.0, jnp.nan, jnp.inf, -jnp.inf]).astype("int8"),
        jnp.array([-1.5, 3e9, jnp.nan, 1e20]).astype("uint32"),
        jnp.array([300, -1, 65536]).astype("uint8"),
        jnp.array([70000.0]).astype(jnp.float16),
    ]
    return [
        oob,
        permissive_sum(list(range(10))),
        nansum(nan_x),
        nansum_2(nan_x),
        m.jit(lambda x: jnp.nonzero(x > 2, size=3, fill_value=-1))(nan_x),
        casts,
    ]


def test_sharp_bits():
    text = compare_with_jax(ex_sharp_bits)
    assert text.startswith("45\n0\n50.0\nupdated array:\n [[0. 0. 0.]\n [1. 1. 1.]")
    assert text.endswith(
        "array([254, 255,   0,   1], dtype=uint8)\n"
        "Array([254, 255, 255, 255], dtype=uint8)\n"
        "Array([         -1,  2147483647,           0,  2147483647, -2147483648],"
        "      dtype=int32)\n"
    )


def test_sharp_bits_scatter_cast_warning():
    """`x.at[i].set(1.5)` on an int array warns as JAX does, then truncates."""
    jax = _jax()
    results = []
    for m in (jaxlite, jax):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = m.numpy.arange(5).at[1].set(1.5)
        messages = [str(w.message) for w in caught if w.category is FutureWarning]
        results.append((messages, np.asarray(out).tolist()))
    assert results[0] == results[1]
    assert results[0] == (
        [
            "scatter inputs have incompatible types: cannot safely cast value from "
            "dtype=float32 to dtype=int32 with jax_numpy_dtype_promotion=standard. In "
            "future JAX releases this will result in an error."
        ],
        [0, 1, 2, 3, 4],
    )


def test_sharp_bits_errors():
    def upd(m):
        def fn():
            x = m.numpy.zeros((3, 3))
            x[1, :] = 1.0

        return fn

    assert_error_like_jax(upd, "TypeError", "JAX arrays are immutable")
    assert_error_like_jax(
        lambda m: lambda: m.numpy.sum([1, 2, 3]),
        "TypeError",
        "sum requires ndarray or scalar arguments, got <class 'list'> at position 0.",
    )
    assert_error_like_jax(
        lambda m: lambda: m.jit(lambda x: x[~m.numpy.isnan(x)].sum())(m.numpy.ones(5)),
        "NonConcreteBooleanIndexError",
        "Array boolean indices must be concrete",
    )
    assert_error_like_jax(
        lambda m: lambda: m.jit(lambda x: m.numpy.nonzero(x > 2))(m.numpy.ones(5)),
        "ConcretizationTypeError",
        "Abstract tracer value encountered where concrete value is expected: traced "
        "array with shape int32[]\nThe size argument of jnp.nonzero must be statically "
        "specified to use jnp.nonzero within JAX transformations.",
    )
    assert_error_like_jax(
        lambda m: lambda: m.jit(lambda x: m.numpy.unique(x))(m.numpy.ones(5)),
        "ConcretizationTypeError",
        "traced array with shape float32[5]\nThe error arose for the first argument "
        "of jnp.unique().",
    )
    assert_error_like_jax(
        lambda m: lambda: m.numpy.arange(3.0).at[1].set(m.numpy.ones(2)),
        "ValueError",
        "Cannot broadcast to shape with fewer dimensions: arr_shape=(2,) shape=()",
    )
    assert_error_like_jax(
        lambda m: lambda: m.numpy.arange(10.0)[m.numpy.array([True] * 11)],
        "IndexError",
        "boolean index did not match shape of indexed array in index 0: got (11,), "
        "expected [10]",
    )
    assert_error_like_jax(
        lambda m: (
            lambda: m.lax.cond(
                True, lambda x: next(x) + 1, lambda x: next(x) - 1, iter(range(10))
            )
        ),
        "TypeError",
        "of type '<class 'range_iterator'>' is not a valid JAX type",
    )


def test_double_precision():
    jax = _jax()
    texts = []
    for m in (jaxlite, jax):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                x = m.random.uniform(m.random.key(0), (1000,), dtype=m.numpy.float64)
            print(x.dtype, [str(w.message)[:48] for w in caught])
            with m.enable_x64(True):
                x = m.random.uniform(m.random.key(0), (1000,), dtype=m.numpy.float64)
                print(x.dtype, repr(m.numpy.arange(3.0)), repr(m.numpy.array(1) + 1))
                print(x[:3])
        texts.append(buf.getvalue())
    assert texts[0] == texts[1]
    assert texts[0].startswith(
        "float32 ['Explicitly requested dtype float64 is not availa']\n"
        "float64 Array([0., 1., 2.], dtype=float64) Array(2, dtype=int64, "
        "weak_type=True)\n"
    )
