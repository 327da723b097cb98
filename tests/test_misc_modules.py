"""The thin modules: `jaxlite.typing`, `stages`, `profiler`, `monitoring` and
`test_util` (names against JAX's, behaviour, errors)."""

import gzip
import inspect
import typing

import numpy as np
import pytest

import jaxlite
import jaxlite.monitoring
import jaxlite.numpy as jnp
import jaxlite.profiler
import jaxlite.stages
import jaxlite.test_util
import jaxlite.typing
from jaxlite import monitoring, profiler, test_util

MODULES = ["typing", "stages", "profiler", "monitoring", "test_util", "flatten_util"]


@pytest.mark.parametrize("name", MODULES)
def test_public_names_and_signatures_match_jax(name):
    import importlib

    pytest.importorskip("jax")
    theirs = importlib.import_module(f"jax.{name}")
    ours = importlib.import_module(f"jaxlite.{name}")
    public = [n for n in dir(theirs) if not n.startswith("_")]
    # jax.profiler's ProfileData/ProfileEvent/ProfilePlane read XLA's xplane
    # protobufs and register_subprocess attaches Python profilers to workers:
    # nothing to read or attach without XLA.
    skip = {"ProfileData", "ProfileEvent", "ProfilePlane", "register_subprocess"}
    missing = [n for n in public if n not in skip and not hasattr(ours, n)]
    assert not missing
    for n in public:
        if n in skip or not inspect.isfunction(getattr(theirs, n)):
            continue
        want = list(inspect.signature(getattr(theirs, n)).parameters)
        got = list(inspect.signature(getattr(ours, n)).parameters)
        assert got == want, n


def test_modules_reachable_as_attributes():
    for name in ["typing", "stages", "profiler", "monitoring"]:
        assert hasattr(jaxlite, name)  # imported with jaxlite, as in JAX
    assert jaxlite.test_util.check_grads is test_util.check_grads


# typing


def test_typing_aliases_accept_what_jaxlite_accepts():
    def scale(x: jaxlite.typing.ArrayLike, dtype: jaxlite.typing.DTypeLike = None):
        return jnp.asarray(x, dtype=dtype) * 2

    hints = typing.get_type_hints(scale)
    assert hints["x"] == jaxlite.typing.ArrayLike
    members = typing.get_args(jaxlite.typing.ArrayLike)
    for value in [jnp.ones(2), np.ones(2), np.float32(1), True, 3, 2.5, 1j]:
        assert isinstance(value, members)
    assert {str, np.dtype} <= set(typing.get_args(jaxlite.typing.DTypeLike))


# stages


def test_stages_name_the_objects_jit_returns():
    f = jaxlite.jit(lambda x: jnp.sin(x) + 1)
    assert isinstance(f, jaxlite.stages.Wrapped)
    lowered = f.lower(1.0)
    assert isinstance(lowered, jaxlite.stages.Lowered)
    assert isinstance(f.trace(1.0), jaxlite.stages.Traced)
    compiled = lowered.compile()
    assert isinstance(compiled, jaxlite.stages.Compiled)
    np.testing.assert_allclose(compiled(0.5), np.sin(0.5) + 1, rtol=1e-6)
    info = jaxlite.stages.ArgInfo(jaxlite.core.ShapedArray((2, 3), np.float32), False)
    assert info.shape == (2, 3) and info.dtype == np.float32 and not info.donated


# profiler


def test_trace_context_manager_and_start_stop(tmp_path):
    with profiler.trace(tmp_path / "a"):
        y = jnp.sum(jnp.arange(4.0))
    assert float(y) == 6.0 and (tmp_path / "a").is_dir()
    profiler.start_trace(str(tmp_path / "b"))
    with pytest.raises(RuntimeError, match="Profile has already been started"):
        profiler.start_trace(str(tmp_path / "c"))
    profiler.stop_trace()
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    # An exception inside `trace` propagates and still stops the trace.
    with pytest.raises(ZeroDivisionError):
        with profiler.trace(tmp_path / "d"):
            1 / 0  # noqa: B018
    profiler.start_trace(tmp_path / "e")
    profiler.stop_trace()


def test_annotations_keep_behaviour():
    with profiler.TraceAnnotation("outer", extra=1) as ann:
        with profiler.StepTraceAnnotation("train", step_num=3):
            out = jaxlite.jit(lambda x: x * 2)(3.0)
    assert float(out) == 6.0 and ann.name == "outer"
    assert issubclass(profiler.StepTraceAnnotation, profiler.TraceAnnotation)

    @profiler.annotate_function
    def double(x):
        """Doubles."""
        return 2 * x

    named = profiler.annotate_function(lambda x: x + 1, name="inc")
    assert double(4) == 8 and double.__name__ == "double"
    assert double.__doc__ == "Doubles." and named(1) == 2
    assert float(jaxlite.grad(double)(1.0)) == 2.0

    @profiler.annotate_function
    def boom():
        raise KeyError("inside")

    with pytest.raises(KeyError, match="inside"):
        boom()


def test_device_memory_profile(tmp_path):
    data = profiler.device_memory_profile()
    assert isinstance(data, bytes) and gzip.decompress(data) == b""
    path = tmp_path / "memory.prof"
    profiler.save_device_memory_profile(str(path))
    assert path.read_bytes() == data


def test_profiler_server_one_at_a_time():
    profiler.start_server(9999)
    with pytest.raises(ValueError, match="Only one profiler server"):
        profiler.start_server(9998)
    profiler.stop_server()
    with pytest.raises(ValueError, match="No active profiler server"):
        profiler.stop_server()


# monitoring


@pytest.fixture
def listeners():
    monitoring.clear_event_listeners()
    yield
    monitoring.clear_event_listeners()


def test_listeners_are_called_with_metadata(listeners):
    seen = []
    monitoring.register_event_listener(lambda *a, **k: seen.append(("event", a, k)))
    monitoring.register_event_duration_secs_listener(
        lambda *a, **k: seen.append(("duration", a, k))
    )
    monitoring.register_event_time_span_listener(
        lambda *a, **k: seen.append(("span", a, k))
    )
    monitoring.register_scalar_listener(lambda *a, **k: seen.append(("scalar", a, k)))
    monitoring.record_event("/app/start", user="x")
    monitoring.record_event_duration_secs("/app/step", 0.25, step=3)
    monitoring.record_event_time_span("/app/span", 1.0, 2.5)
    monitoring.record_scalar("/app/loss", 0.5, epoch=1)
    assert seen == [
        ("event", ("/app/start",), {"user": "x"}),
        ("duration", ("/app/step", 0.25), {"step": 3}),
        ("span", ("/app/span", 1.0, 2.5), {}),
        ("scalar", ("/app/loss", 0.5), {"epoch": 1}),
    ]


def test_unregister_and_clear(listeners):
    calls = []

    def first(event, **kwargs):
        calls.append(("first", event))

    def second(event, **kwargs):
        calls.append(("second", event))

    monitoring.register_event_listener(first)
    monitoring.register_event_listener(second)
    monitoring.record_event("/a")
    monitoring.unregister_event_listener(first)
    monitoring.record_event("/b")
    assert calls == [("first", "/a"), ("second", "/a"), ("second", "/b")]
    with pytest.raises(AssertionError, match="not a registered event listener"):
        monitoring.unregister_event_listener(first)
    for register, unregister in [
        ("register_event_duration_secs_listener", "unregister_event_duration_listener"),
        ("register_event_time_span_listener", "unregister_event_time_span_listener"),
        ("register_scalar_listener", "unregister_scalar_listener"),
    ]:
        getattr(monitoring, register)(first)
        getattr(monitoring, unregister)(first)
        with pytest.raises(AssertionError):
            getattr(monitoring, unregister)(first)
    monitoring.clear_event_listeners()
    monitoring.record_event("/c")
    assert calls[-1] == ("second", "/b")


def test_listener_exceptions_propagate(listeners):
    def broken(event, **kwargs):
        raise RuntimeError("listener failed")

    monitoring.register_event_listener(broken)
    with pytest.raises(RuntimeError, match="listener failed"):
        monitoring.record_event("/x")


# test_util


def test_check_grads_passes_for_correct_derivatives():
    x = np.array([0.3, 0.7, 1.2], np.float32)
    # Differences are taken in float32, as in JAX: with the default eps=1e-4 the
    # rounding of f (~1e-7 |f| / eps) can exceed the tolerance at second order,
    # in JAX too depending on the last bits of sin/exp; a larger step is steadier.
    test_util.check_grads(lambda x: jnp.sin(x) * jnp.exp(x), (x,), order=2, eps=1e-3)
    test_util.check_grads(jnp.tanh, (np.float32(0.5),), order=3, modes=("fwd",))
    test_util.check_grads(
        lambda a, b: {"s": jnp.sum(a * b["u"]), "p": a**2},
        (x, {"u": x + 1}),
        order=1,
    )
    with jaxlite.enable_x64():
        x64 = np.array([0.3, 0.5])
        test_util.check_grads(lambda x: jnp.sin(x) ** 3, (x64,), order=2, eps=1e-5)
        test_util.check_grads(
            lambda z: jnp.sum(jnp.abs(z * z)), (np.array([1 + 2j, 0.5 - 1j]),), 1
        )
        test_util.check_grads(lambda z: jnp.sin(z) * z, (np.array([1 + 2j, 0.5j]),), 2)


def _wrong_derivative():
    @jaxlite.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (jnp.sin(p[0]), 2 * jnp.cos(p[0]) * t[0]))
    return f


@pytest.mark.parametrize("modes", [("fwd",), ("rev",)])
def test_check_grads_catches_a_wrong_derivative(modes):
    x = np.array([0.3, 0.7], np.float32)
    with pytest.raises(AssertionError, match="Not equal to tolerance"):
        test_util.check_grads(_wrong_derivative(), (x,), order=1, modes=modes)


def test_check_grads_catches_a_wrong_second_derivative():
    # g has the right first derivative h(x) = 3 x^2, but h's own derivative is
    # wrong (12 x instead of 6 x): order 1 passes, order 2 fails in both modes.
    x = np.array([0.5, 1.5], np.float32)

    @jaxlite.custom_jvp
    def g(x):
        return x**3

    @g.defjvp
    def _g_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return x**3, h(x) * t

    @jaxlite.custom_jvp
    def h(x):
        return 3 * x**2

    h.defjvp(lambda p, t: (3 * p[0] ** 2, 12 * p[0] * t[0]))
    test_util.check_grads(g, (x,), order=1)
    with pytest.raises(AssertionError, match="JVP of JVP"):
        test_util.check_grads(g, (x,), order=2, modes=("fwd",))
    with pytest.raises(AssertionError, match="VJP of VJP"):
        test_util.check_grads(g, (x,), order=2, modes=("rev",))


def test_check_jvp_and_check_vjp_take_derivative_functions():
    x = (np.array([0.2, 0.4], np.float32),)
    test_util.check_jvp(jnp.cos, lambda p, t: jaxlite.jvp(jnp.cos, p, t), x)
    test_util.check_vjp(jnp.cos, lambda *p: jaxlite.vjp(jnp.cos, *p), x)
    with pytest.raises(AssertionError, match="tangent"):
        test_util.check_jvp(
            jnp.cos, lambda p, t: (jnp.cos(*p), jaxlite.jvp(jnp.sin, p, t)[1]), x
        )
    with pytest.raises(ValueError, match="unknown mode"):
        test_util.check_grads(jnp.cos, x, 1, modes=("sideways",))


def test_check_grads_tolerances_match_jax_on_the_same_failure():
    """The tangent check's tolerance grows with the output size, as in JAX."""
    pytest.importorskip("jax")
    from jax.test_util import check_grads as jax_check_grads

    x = np.linspace(0.1, 1.0, 5).astype(np.float32)
    messages = []
    for check in (jax_check_grads, test_util.check_grads):
        with pytest.raises(AssertionError) as info:
            check(
                _wrong_derivative() if check is test_util.check_grads else _jax_bad(),
                (x,),
                1,
                modes=("fwd",),
            )
        messages.append(str(info.value).strip().splitlines()[0])
    assert messages[0] == messages[1] == "Not equal to tolerance rtol=0.01, atol=0.01"


def _jax_bad():
    import jax
    import jax.numpy as jjnp

    @jax.custom_jvp
    def f(x):
        return jjnp.sin(x)

    f.defjvp(lambda p, t: (jjnp.sin(p[0]), 2 * jjnp.cos(p[0]) * t[0]))
    return f
