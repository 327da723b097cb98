"""Ahead-of-time stages (issue 16, item 7), compared with JAX 0.10.2.

`jit(f).trace/lower(...)`, `Lowered` (args_info, in_tree/out_tree, out_info, as_text,
compiler_ir, cost_analysis, compile with compiler options), `Compiled` (called with
JAX's argument checks and errors, runtime_executable, memory_analysis, as_text),
`jit(..., compiler_options=...)`, donation (a donated argument is deleted; JAX's
warning where it cannot be), and `lax.platform_dependent` staged as JAX stages it,
under jit, vmap and grad.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax, stages
from jaxlite.errors import JaxRuntimeError


def _real():
    return pytest.importorskip("jax")


def _libs():
    """The two libraries, jaxlite first; JAX only where installed."""
    try:
        return [jaxlite, _real()]
    except pytest.skip.Exception:
        return [jaxlite]


def _f(x, y, *, z=1.0):
    return x * y + z, {"s": x.sum()}


def _lowered(api):
    x = api.numpy.ones(3)
    return api.jit(_f).lower(x, 2.0, z=api.numpy.float32(1.0))


def _arg(api, value, dtype=None):
    """`value` as an Array of `api` (`dtype` given), NumPy values as they are."""
    if dtype is None:
        return value
    return api.numpy.asarray(value, dtype=dtype)


# ----------------------------------------------------------------------------------------
# Lowered


def test_stage_classes():
    f = jaxlite.jit(_f)
    assert isinstance(f, stages.Wrapped)
    assert isinstance(f.trace(1.0, 2.0), stages.Traced)
    lowered = f.lower(1.0, 2.0)
    assert isinstance(lowered, stages.Lowered)
    assert isinstance(lowered.compile(), stages.Compiled)
    assert isinstance(f.trace(1.0, 2.0).lower(), stages.Lowered)


def test_lowered_describes_its_arguments_and_results_as_jax():
    seen = []
    for api in _libs():
        lo = _lowered(api)
        info = api.tree_util.tree_leaves(lo.args_info)
        seen.append(
            (
                str(lo.in_tree),
                str(lo.out_tree),
                [(i.shape, str(i.dtype), i.donated, i._aval.weak_type) for i in info],
                [
                    (o.shape, str(o.dtype))
                    for o in api.tree_util.tree_leaves(lo.out_info)
                ],
                str(lo.in_avals),
            )
        )
    assert seen[0][0] == "PyTreeDef(((*, *), {'z': *}))"
    assert len({repr(s) for s in seen}) == 1, seen


def test_args_info_and_in_tree_leave_static_arguments_out():
    for api in _libs():
        f = api.jit(lambda x, n: x * n, static_argnums=1)
        lo = f.lower(api.numpy.ones(3), 4)
        assert str(lo.in_tree) == "PyTreeDef(((*,), {}))"
        compiled = lo.compile()
        np.testing.assert_array_equal(compiled(api.numpy.ones(3)), [4.0, 4.0, 4.0])
        with pytest.raises(TypeError, match="the lengths do not match"):
            compiled(api.numpy.ones(3), 4)


def test_as_text_and_compiler_ir():
    lo = _lowered(jaxlite)
    assert "def " in lo.as_text() or "define" in lo.as_text()  # what runs
    assert lo.as_text(dialect="jaxpr") == str(lo.compiler_ir())
    assert isinstance(lo.compiler_ir(), jaxlite.core.ClosedJaxpr)
    assert lo.compiler_ir("hlo") is None  # JAX's answer where unavailable
    with pytest.raises(NotImplementedError, match="does not lower to stablehlo"):
        lo.as_text("stablehlo")
    for api in _libs():
        with pytest.raises(ValueError, match="unknown dialect: foo"):
            _lowered(api).as_text("foo")
        with pytest.raises(ValueError, match="unknown dialect: foo"):
            _lowered(api).compiler_ir("foo")


def test_cost_analysis_has_jax_keys_and_counts():
    a = np.ones((32, 16), np.float32)
    b = np.ones((16, 8), np.float32)
    x = np.ones(100, np.float32)
    for api in _libs():
        lo = api.jit(lambda a, b: a @ b).lower(a, b)
        for cost in (lo.cost_analysis(), lo.compile().cost_analysis()):
            assert cost["flops"] == 2 * 32 * 16 * 8
            assert cost["bytes accessed0{}"] == a.nbytes
            assert cost["bytes accessedout{}"] == 32 * 8 * 4
        exp_sum = api.jit(lambda x, api=api: api.numpy.exp(x).sum())
        cost = exp_sum.lower(x).cost_analysis()
        assert cost["transcendentals"] == 100.0
        assert cost["flops"] == 99.0  # the sum's additions
    f = lambda x: lax.scan(lambda c, _: (c * 2.0, None), x, None, length=10)[0]  # noqa: E731
    assert jaxlite.jit(f).lower(np.ones(4, np.float32)).cost_analysis()["flops"] == 40


def test_memory_analysis():
    a = np.ones((32, 16), np.float32)
    stats = {}
    for api in _libs():
        f = api.jit(lambda a, api=api: api.numpy.tanh(a @ a.T) + 1)
        compiled = f.lower(a).compile()
        m = compiled.memory_analysis()
        stats[api.__name__] = (m.argument_size_in_bytes, m.output_size_in_bytes)
        assert m.alias_size_in_bytes == 0
    assert stats["jaxlite"] == (a.nbytes, 32 * 32 * 4)
    assert len(set(stats.values())) == 1
    m = (
        jaxlite.jit(lambda a: jnp.tanh(a @ a.T) + 1)
        .lower(a)
        .compile()
        .memory_analysis()
    )
    assert m.temp_size_in_bytes == 2 * 32 * 32 * 4  # a @ a.T and its tanh
    assert m.generated_code_size_in_bytes > 0
    donating = jaxlite.jit(lambda x: x + 1, donate_argnums=0).lower(a).compile()
    assert donating.memory_analysis().alias_size_in_bytes == a.nbytes


def test_compiled_runtime_executable_as_text_and_shardings():
    compiled = _lowered(jaxlite).compile()
    exe = compiled.runtime_executable()
    assert exe is not None and exe.source == compiled.as_text()
    (sx, sy), sz = compiled.input_shardings
    assert sx == jaxlite.sharding.SingleDeviceSharding(jaxlite.devices()[0])
    assert jaxlite.tree_util.tree_structure(compiled.output_shardings) == (
        compiled.out_tree
    )


# ----------------------------------------------------------------------------------------
# Compiled: calls and JAX's argument checks


def _call_cases(api):
    ones = api.numpy.ones
    f32 = api.numpy.float32
    return [
        ((ones(3), 2.0), {"z": f32(3)}),  # OK
        ((ones(4), 2.0), {"z": f32(1)}),  # shape
        ((ones(3), 2.0), {}),  # missing keyword
        ((ones(3),), {"z": f32(1)}),  # missing positional
        ((ones(3, api.numpy.int32), 2.0), {"z": f32(1)}),  # dtype
        ((ones(3), f32(2.0)), {"z": f32(1)}),  # strong for weak: fine
        ((np.ones(3, np.float32), 2), {"z": f32(1)}),  # int for float
        ((ones(3), 2.0), {"z": 1.0}),  # weak for strong: fine
        (([ones(3)], 2.0), {"z": f32(1)}),  # a list for an array
        (({"a": ones(3)}, 2.0), {"z": f32(1), "w": f32(0)}),
        (("a", 2.0), {"z": f32(1)}),  # not a JAX type
        ((ones(3), None), {"z": f32(1)}),
    ]


def _outcome(compiled, args, kwargs):
    try:
        out = compiled(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 (the outcome is compared)
        return type(e).__name__, str(e)
    return "ok", [np.asarray(v).tolist() for v in jaxlite.tree_util.tree_leaves(out)]


def test_compiled_calls_check_arguments_as_jax():
    jax = _real()
    ours = _lowered(jaxlite).compile()
    theirs = _lowered(jax).compile()
    for (args, kwargs), (jargs, jkwargs) in zip(_call_cases(jaxlite), _call_cases(jax)):
        assert _outcome(ours, args, kwargs) == _outcome(theirs, jargs, jkwargs)


def test_argument_names_in_type_errors():
    jax = _real()

    def f(p, *args, z):
        return p["w"] + z

    messages = []
    for api in (jaxlite, jax):
        ones = api.numpy.ones
        compiled = (
            api.jit(f)
            .lower({"w": ones(2), "b": (ones(1), 1)}, ones(3), z=ones(2))
            .compile()
        )
        with pytest.raises(TypeError) as info:
            compiled(
                {"w": ones(3), "b": (ones(1), 1.0)},
                ones(4),
                z=ones(2, api.numpy.int32),
            )
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert (
        "Argument 'p['b'][1]' compiled with int32[] and called with float32[]"
        in (messages[0])
    )


def test_compiled_refuses_transformations():
    for api in _libs():
        compiled = api.jit(lambda x: x * 2).lower(api.numpy.ones(3)).compile()
        with pytest.raises(TypeError, match="Cannot apply JAX transformations to a "):
            api.vmap(compiled)(api.numpy.ones((2, 3)))


def test_lower_with_shape_dtype_structs_then_call():
    for api in _libs():
        spec = api.ShapeDtypeStruct((2,), np.float32)
        compiled = api.jit(lambda x: x * 2).lower(spec).compile()
        np.testing.assert_array_equal(compiled(np.ones(2, np.float32)), [2.0, 2.0])


# ----------------------------------------------------------------------------------------
# Traced


def test_traced_as_jax():
    texts = []
    for api in _libs():
        tr = api.jit(lambda x, y: x + y).trace(1.0, 2.0)
        assert tr.fun_name == "<lambda>"
        assert float(tr(3.0, 4.0)) == 7.0
        assert tr.out_info.shape == () and tr.out_info.weak_type
        texts.append(str(tr.jaxpr))
        assert float(tr.lower().compile()(1.0, 1.0)) == 2.0
    assert len(set(texts)) == 1


def test_traced_lower_is_for_the_cpu():
    tr = jaxlite.jit(lambda x: x + 1).trace(1.0)
    tr.lower(lowering_platforms=("cpu",))
    with pytest.raises(RuntimeError, match="Unknown backend tpu"):
        tr.lower(lowering_platforms=("tpu",))


# ----------------------------------------------------------------------------------------
# Compiler options


def test_compiler_options_checked_as_xla_checks_their_names():
    for api in _libs():
        lowered = api.jit(lambda x: x + 1).lower(1.0)
        for good in (
            {"xla_cpu_enable_fast_math": True},
            {"exec_time_optimization_effort": 0.5},
            {"xla_backend_optimization_level": 0},
        ):
            assert float(lowered.compile(good)(1.0)) == 2.0
            assert float(lowered.compile(compiler_options=good)(1.0)) == 2.0
            assert float(api.jit(lambda x: x + 1, compiler_options=good)(1.0)) == 2.0
        bad = {"not_an_option": 1}
        phrase = "INVALID_ARGUMENT: No such compile option: 'not_an_option'"
        with pytest.raises(api.errors.JaxRuntimeError, match=phrase):
            lowered.compile(bad)
        f = api.jit(lambda x: x + 1, compiler_options=bad)  # checked when compiled
        with pytest.raises(api.errors.JaxRuntimeError, match=phrase):
            f(1.0)


def test_the_jaxlite_backend_option_chooses_the_backend():
    lowered = jaxlite.jit(lambda x: jnp.sin(x) * 2).lower(np.ones(8, np.float32))
    numpy_text = lowered.compile({"jaxlite_backend": "numpy"}).as_text()
    assert numpy_text.startswith("def ")
    f = jaxlite.jit(
        lambda x: jnp.cos(x) + 1, compiler_options={"jaxlite_backend": "numpy"}
    )
    assert f.lower(np.ones(8, np.float32)).as_text().startswith("def ")
    from jaxlite.backend import native

    if native.available():
        text = lowered.compile({"jaxlite_backend": "native"}).as_text()
        assert "define" in text
    with pytest.raises(JaxRuntimeError, match="jaxlite_backend"):
        lowered.compile({"jaxlite_backend": "gpu"})


def test_jit_with_different_compiler_options_do_not_share_executables():
    def g(x):
        return x * 3

    plain = jaxlite.jit(g).lower(np.ones(4, np.float32)).as_text()
    numpy_only = jaxlite.jit(g, compiler_options={"jaxlite_backend": "numpy"})
    assert numpy_only.lower(np.ones(4, np.float32)).as_text().startswith("def ")
    assert jaxlite.jit(g).lower(np.ones(4, np.float32)).as_text() == plain


# ----------------------------------------------------------------------------------------
# Donation


@pytest.mark.parametrize("how", ["jit", "compiled"])
def test_a_donated_argument_is_deleted_as_in_jax(how):
    for api in _libs():
        g = api.jit(lambda x, y: (x + 1, y), donate_argnums=0)
        x, y = api.numpy.ones(3), api.numpy.ones(2)
        if how == "compiled":
            lowered = g.lower(x, y)
            assert [
                i.donated for i in api.tree_util.tree_leaves(lowered.args_info)
            ] == [
                True,
                False,
            ]
            assert lowered.donate_argnums == (0,)
            out = lowered.compile()(x, y)
        else:
            out = g(x, y)
        np.testing.assert_array_equal(out[0], [2.0, 2.0, 2.0])
        assert x.is_deleted() and not y.is_deleted()
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            x + 1
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            np.asarray(x)


def test_a_buffer_that_cannot_be_donated_warns_and_stays():
    for api in _libs():
        h = api.jit(lambda x: x.sum(), donate_argnums=0)
        x = api.numpy.ones(3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            h(x)
        messages = [str(w.message) for w in caught if w.category is UserWarning]
        assert any(
            m.startswith("Some donated buffers were not usable: float32[3].")
            for m in messages
        ), messages
        assert not x.is_deleted()
        assert float(h(x)) == 3.0
        lower = api.jit(lambda x: x.sum(), donate_argnums=0).lower
        with pytest.warns(UserWarning, match="Some donated buffers were not usable"):
            lower(api.numpy.ones(2))  # JAX warns when lowering


def test_donation_by_name_and_the_same_buffer_twice():
    for api in _libs():
        g = api.jit(lambda x, y: x + y, donate_argnames="x")
        a = api.numpy.ones(3)
        b = api.numpy.ones(3)
        g(x=a, y=b)
        assert a.is_deleted() and not b.is_deleted()
        c = api.numpy.ones(3)
        with pytest.raises(api.errors.JaxRuntimeError, match="previously donated"):
            api.jit(lambda x, y: x + y, donate_argnums=0)(c, c)


# ----------------------------------------------------------------------------------------
# lax.platform_dependent


def _pd(api, x):
    return api.lax.platform_dependent(x, cpu=api.numpy.sin, tpu=api.numpy.cos)


def _without_branches_platforms(text):
    # JAX's cond carries a `branches_platforms` parameter that jaxlite's has not.
    return re.sub(r"\n\s*branches_platforms=[^\n]*", "", text)


@pytest.mark.parametrize(
    "transform",
    ["none", "jit", "vmap", "grad", "jit_vmap_grad", "grad_grad"],
)
def test_platform_dependent_picks_the_cpu_branch_under_transformations(transform):
    results = []
    for api in _libs():

        def f(x, api=api):
            return _pd(api, x)

        if transform == "jit":
            f = api.jit(f)
        elif transform == "vmap":
            f = api.vmap(f)
        elif transform == "grad":
            f = api.grad(f)
        elif transform == "jit_vmap_grad":
            f = api.jit(api.vmap(api.grad(f)))
        elif transform == "grad_grad":
            f = api.grad(api.grad(f))
        x = np.float32(0.5)
        if transform in ("vmap", "jit_vmap_grad"):
            x = np.linspace(0, 1, 4, dtype=np.float32)
        results.append(np.asarray(f(x)))
    want = {
        "none": np.sin(0.5),
        "jit": np.sin(0.5),
        "vmap": np.sin(np.linspace(0, 1, 4)),
        "grad": np.cos(0.5),
        "jit_vmap_grad": np.cos(np.linspace(0, 1, 4)),
        "grad_grad": -np.sin(0.5),
    }[transform]
    for r in results:
        np.testing.assert_allclose(r, want, rtol=1e-6)


@pytest.mark.parametrize("transform", ["none", "vmap"])
def test_platform_dependent_jaxprs_as_in_jax(transform):
    jax = _real()
    texts = []
    for api in (jaxlite, jax):

        def f(x, api=api):
            return api.lax.platform_dependent(
                x, tpu=api.numpy.cos, default=api.numpy.sin, cuda=api.numpy.cos
            )

        x = np.float32(1.0)
        if transform == "vmap":
            f, x = api.vmap(f), np.ones(3, np.float32)
        texts.append(_without_branches_platforms(str(api.make_jaxpr(f)(x))))
    assert texts[0] == texts[1]
    assert "platform_index[platforms=(('tpu', 'cuda'), None)]" in texts[0]


def test_platform_dependent_traces_every_branch_under_jit_only():
    for api in _libs():
        traced = []

        def branch(name, fn, traced=traced):
            def b(x):
                traced.append(name)
                return fn(x)

            return b

        def f(x, api=api):
            return api.lax.platform_dependent(
                x, cpu=branch("cpu", api.numpy.sin), tpu=branch("tpu", api.numpy.cos)
            )

        f(1.0)
        assert traced == ["cpu"]
        traced.clear()
        api.jit(f)(1.0)
        assert sorted(traced) == ["cpu", "tpu"]


def test_platform_dependent_errors():
    for api in _libs():
        with pytest.raises(ValueError, match="Use 'cuda' or 'rocm'"):
            api.lax.platform_dependent(1.0, gpu=api.numpy.sin)
        with pytest.raises(TypeError, match="the 'tpu' branch must be a callable"):
            api.lax.platform_dependent(1.0, tpu=3)
        with pytest.raises(TypeError, match="the 'default' branch must be a callable"):
            api.lax.platform_dependent(1.0, cpu=api.numpy.sin, default=3)
        no_cpu = lambda x, api=api: api.lax.platform_dependent(x, tpu=api.numpy.cos)  # noqa: E731
        with pytest.raises(NotImplementedError):
            no_cpu(1.0)
        with pytest.raises(NotImplementedError):
            api.jit(no_cpu)(1.0)
        api.make_jaxpr(no_cpu)(1.0)  # only lowering needs the branch
    with pytest.raises(NotImplementedError, match="no branch for the platform 'cpu'"):
        jaxlite.jit(lambda x: lax.platform_dependent(x, tpu=jnp.cos))(2.0)
