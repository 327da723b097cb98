"""Host callbacks: pure_callback, io_callback, debug.callback, debug.print.

What the host function receives (Arrays sharing jaxlite's memory) and how its result
is checked; the matrix of the three callbacks under jit, vmap (every method), grad,
scan, while_loop, cond, custom_jvp and custom_vjp; exceptions (a JaxRuntimeError of the
original's type, caused by it, with a note); re-entrant calls; debug.print formatting; the printed jaxprs and effects;
errors (class and key phrase). Where JAX is installed, shapes seen under vmap, jaxprs
and printed text are compared with it.
"""

from __future__ import annotations

import collections
import contextlib
import io
import traceback
import warnings
from functools import partial

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import core, debug, effects, lax
from jaxlite.experimental import io_callback

SDS = jax.ShapeDtypeStruct
F32 = SDS((), np.float32)

needs_scan = pytest.mark.skipif(not hasattr(lax, "scan"), reason="needs lax.scan")
needs_while = pytest.mark.skipif(
    not hasattr(lax, "while_loop"), reason="needs lax.while_loop"
)
needs_cond = pytest.mark.skipif(not hasattr(lax, "cond"), reason="needs lax.cond")


class Recorder:
    """A host function that records what it was called with and returns `fn(*args)`."""

    def __init__(self, fn=None):
        self.fn = fn
        self.calls = []

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        if self.fn is None:
            return None
        return self.fn(*args, **kwargs)

    @property
    def values(self):
        return [tuple(np.asarray(a).tolist() for a in args) for args, _ in self.calls]

    @property
    def shapes(self):
        return [tuple(np.shape(a) for a in args) for args, _ in self.calls]


@contextlib.contextmanager
def captured_stdout():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        yield out


def sin_host(x):
    return np.sin(x).astype(x.dtype)


# ----------------------------------------------------------------------------------------
# What the host function receives and returns


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_pure_callback_values(wrap):
    x = jnp.arange(5.0)
    f = lambda x: jax.pure_callback(sin_host, SDS(x.shape, x.dtype), x)
    f = jax.jit(f) if wrap == "jit" else f
    out = f(x)
    assert isinstance(out, jax.Array)
    assert out.dtype == np.float32 and not out.weak_type
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(5.0)), rtol=1e-6)


@pytest.mark.numpy_backend
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_arguments_are_arrays_sharing_memory(wrap):
    # JAX passes Arrays; jaxlite's wrap its own buffers, whose NumPy views are
    # read-only.
    x = jnp.arange(1000.0)
    seen = Recorder(lambda a: a)
    f = lambda x: jax.pure_callback(seen, SDS(x.shape, x.dtype), x)
    f = jax.jit(f) if wrap == "jit" else f
    out = f(x)
    (a,), _ = seen.calls[0]
    assert type(a) is jax.Array
    view = np.asarray(a)  # np.asarray copies nothing
    assert not view.flags.writeable
    assert np.shares_memory(view, x._value)
    assert np.shares_memory(np.asarray(out), x._value)  # returned without a copy
    with pytest.raises(ValueError, match="read-only"):
        view[0] = 1.0


def test_a_writable_output_is_copied_and_the_callers_array_stays_writable():
    # The callback may keep `buf` and write it later: the Array must not see that.
    buf = np.arange(4, dtype=np.float32)
    out = jax.pure_callback(lambda: buf, SDS((4,), np.float32))
    assert not np.shares_memory(np.asarray(out), buf)
    assert buf.flags.writeable
    buf[0] = 7.0
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0, 3.0])


def test_a_read_only_output_is_copied_too():
    # Its owner may make it writable again.
    buf = np.arange(4, dtype=np.float32)
    buf.flags.writeable = False
    out = jax.pure_callback(lambda: buf, SDS((4,), np.float32))
    assert not np.shares_memory(np.asarray(out), buf)


@pytest.mark.parametrize(
    "arg,dtype",
    [(1, np.int32), (1.5, np.float32), (np.float64(2.0), np.float32), (True, np.bool_)],
)
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_scalar_arguments_arrive_in_canonical_dtypes(arg, dtype, wrap):
    # A 0-d value arrives as a strongly typed 0-d Array, as in JAX.
    seen = Recorder(lambda a: np.int32(0))
    f = lambda a: jax.pure_callback(seen, SDS((), np.int32), a)
    if wrap == "jit":
        f = jax.jit(f)
    f(arg)
    (a,), _ = seen.calls[0]
    assert type(a) is jax.Array
    assert a.shape == () and a.dtype == dtype and not a.weak_type


def test_numpy_array_argument_of_user_is_not_made_readonly():
    user = np.ones(3, np.float32)
    seen = Recorder(lambda a: a)
    out = jax.pure_callback(seen, SDS((3,), np.float32), user)
    assert user.flags.writeable
    assert not np.asarray(seen.calls[0][0][0]).flags.writeable
    user[0] = 5.0  # the Arrays made of it do not change
    np.testing.assert_array_equal(np.asarray(seen.calls[0][0][0]), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(out), [1.0, 1.0, 1.0])


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_pytrees_in_and_out_and_kwargs(wrap):
    def host(pair, *, scale, d):
        a, b = pair
        return {"sum": (a + b) * scale, "parts": (a, d["c"])}

    spec = {"sum": SDS((2,), np.float32), "parts": (SDS((2,), np.float32), F32)}

    def f(a, b, c):
        return jax.pure_callback(host, spec, (a, b), scale=2.0, d={"c": c})

    f = jax.jit(f) if wrap == "jit" else f
    out = f(jnp.ones(2), jnp.arange(2.0), 3.0)
    assert set(out) == {"sum", "parts"}
    np.testing.assert_allclose(np.asarray(out["sum"]), [2.0, 4.0])
    np.testing.assert_allclose(np.asarray(out["parts"][1]), 3.0)


def test_no_arguments_and_none_result():
    calls = []
    assert jax.pure_callback(lambda: calls.append(1), None) is None
    assert io_callback(lambda: calls.append(2), None) is None
    assert jax.jit(lambda: io_callback(lambda: calls.append(3), None))() is None
    assert io_callback(lambda: (), None) is None
    assert calls == [1, 2, 3]


def test_outputs_are_never_weak_and_jit_outputs_match_eager():
    f = lambda x: jax.pure_callback(lambda x: x * 2, F32, x)
    assert not f(1.0).weak_type
    assert not jax.jit(f)(1.0).weak_type
    assert jax.eval_shape(f, 1.0) == SDS((), np.float32)


# ----------------------------------------------------------------------------------------
# Checking the result against result_shape_dtypes


def _returns(value, spec, wrap="jit"):
    # A pure callback without outputs would be dead code under jit: use io_callback.
    call = io_callback if spec is None else jax.pure_callback
    f = lambda: call(lambda: value, spec)
    return (jax.jit(f) if wrap == "jit" else f)()


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize(
    "value,spec,phrase",
    [
        (
            np.zeros(3, np.float32),
            F32,
            r"Incorrect output shape for return value #0: "
            r"Expected: \(\), Actual: \(3,\)",
        ),
        (
            np.int32(1),
            F32,
            "Incorrect output dtype for return value #0: Expected: "
            "float32, Actual: int32",
        ),
        (1, F32, "Expected: float32, Actual: int32"),
        (1.5, SDS((), np.float16), "Expected: float16, Actual: float32"),
        (
            [1.0, 2.0, 3.0],
            SDS((3,), np.float32),
            "Mismatched number of outputs from callback. Expected: 1, Actual: 3",
        ),
        ((np.float32(1), np.float32(2)), F32, "Expected: 1, Actual: 2"),
        (None, F32, "Expected: 1, Actual: 0"),
        (np.float32(1), None, "Expected: 0, Actual: 1"),
    ],
)
def test_result_mismatch_errors(value, spec, phrase, wrap):
    with pytest.raises(jax.errors.JaxRuntimeError, match=phrase) as info:
        _returns(value, spec, wrap)
    message = str(info.value)
    assert "<lambda>" in message  # names the callback
    assert "result_shape_dtypes" in message  # and the declared pytree
    if spec is not None:
        assert "ShapeDtypeStruct(shape=" in message


@pytest.mark.parametrize(
    "value,spec",
    [
        (1.5, F32),  # Python float: float64 canonicalised to float32
        (np.float64(1.5), F32),
        (np.arange(3.0), SDS((3,), np.float32)),
        (np.arange(3), SDS((3,), np.int32)),  # int64 -> int32
        (jnp.float32(2.0), F32),  # a jaxlite Array
        (None, None),
        ((), None),
        ([np.float32(1), np.float32(2)], (F32, F32)),  # list for a declared tuple
        ({"b": np.float32(1), "a": np.float32(2)}, {"a": F32, "b": F32}),
    ],
)
def test_results_accepted(value, spec):
    _returns(value, spec, "eager")
    _returns(value, spec, "jit")


def test_namedtuple_result_for_a_declared_pair():
    x = jnp.array([[2.0, 1.0], [1.0, 2.0]])
    spec = (SDS((2,), np.float32), SDS((2, 2), np.float32))
    w, v = jax.jit(lambda x: jax.pure_callback(np.linalg.eigh, spec, x))(x)
    np.testing.assert_allclose(np.asarray(w), [1.0, 3.0], rtol=1e-6)


def test_result_leaves_are_compared_not_the_structure():
    # As JAX: only the flattened leaves count; the structure explains a wrong count.
    spec = (F32, (F32, F32))
    value = ((np.float32(1), np.float32(2)), np.float32(3))
    assert [float(v) for v in jax.tree.leaves(_returns(value, spec))] == [1, 2, 3]
    _returns({"a": np.float32(1), "c": np.float32(2)}, {"a": F32, "b": F32})
    with pytest.raises(RuntimeError, match="Expected: 3, Actual: 2") as info:
        _returns((np.float32(1), np.float32(2)), spec)
    assert "expected a tuple of 2 elements at [1], got an array" in str(info.value)


def test_64_bit_result_spec_rejected_without_x64():
    with pytest.raises(ValueError, match="cannot specify 64-bit types"):
        jax.pure_callback(lambda: np.float64(1), np.float64(0))
    with jax.enable_x64():
        out = jax.jit(lambda: jax.pure_callback(lambda: 1.5, np.float64(0)))()
        assert out.dtype == np.float64


def test_non_array_argument_is_a_trace_time_type_error():
    with pytest.raises(
        TypeError,
        match="Error interpreting argument to pure_callback as "
        "a JAX value.*<class 'str'>.*at position 0",
    ):
        jax.pure_callback(lambda s: s, F32, "hello")
    with pytest.raises(TypeError, match="io_callback.*at position 1"):
        jax.jit(lambda x: io_callback(lambda *a: None, None, x, "s"))(1.0)


def test_result_spec_leaves_need_shape_and_dtype():
    with pytest.raises(TypeError, match="result_shape_dtypes of pure_callback"):
        jax.pure_callback(lambda: 1.0, 1.0)


# ----------------------------------------------------------------------------------------
# Keyword arguments of pure_callback


def test_unknown_vmap_method():
    with pytest.raises(
        ValueError, match="vmap_method must be on of the allowed methods"
    ):
        jax.pure_callback(sin_host, F32, 1.0, vmap_method="foo")


def test_vectorized_is_a_deprecated_alias():
    seen = Recorder(lambda x: x)
    with pytest.warns(DeprecationWarning, match="The vectorized argument"):
        jax.vmap(lambda x: jax.pure_callback(seen, F32, x, vectorized=True))(
            jnp.ones(3)
        )
    assert seen.shapes == [((3,),)]  # legacy_vectorized: one call on the batch
    assert seen.calls[0][1] == {}  # never forwarded to the callback
    with pytest.raises(ValueError, match="cannot be used together"):
        jax.pure_callback(sin_host, F32, 1.0, vectorized=True, vmap_method="sequential")


def test_io_callback_rejects_pure_callback_keywords():
    with pytest.raises(TypeError, match="only pure_callback takes"):
        io_callback(lambda x: x, F32, 1.0, vmap_method="sequential")


def test_sharding():
    dev = jax.devices()[0]
    from jaxlite.api import SingleDeviceSharding

    sharding = SingleDeviceSharding(dev)
    out = jax.jit(lambda x: jax.pure_callback(sin_host, F32, x, sharding=sharding))(
        jnp.float32(1.0)
    )
    np.testing.assert_allclose(np.asarray(out), np.sin(1.0), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="only supports SingleDeviceSharding"):
        jax.pure_callback(sin_host, F32, 1.0, sharding=object())


# ----------------------------------------------------------------------------------------
# Dead-code elimination and effects


def test_unused_pure_callback_is_removed_under_jit_used_one_runs():
    calls = Recorder(lambda: np.int32(0))

    @jax.jit
    def f2():
        jax.pure_callback(calls, np.int32(0))
        return 1.0

    f2()
    assert calls.calls == []
    assert "host" not in f2.lower().as_text()
    jax.jit(lambda: jax.pure_callback(calls, np.int32(0)))()
    assert len(calls.calls) == 1
    jax.pure_callback(calls, np.int32(0))  # eagerly it runs, output unused or not
    assert len(calls.calls) == 2


def test_io_and_debug_callbacks_are_never_removed():
    calls = []

    @jax.jit
    def f(x):
        io_callback(lambda x: calls.append("io") or x, F32, x)
        io_callback(lambda x: calls.append("io-ordered") or x, F32, x, ordered=True)
        debug.callback(lambda x: calls.append("debug"), x)
        debug.print("unused {}", x)
        return 1.0

    with captured_stdout() as out:
        f(2.0)
        f(2.0)
    assert calls == ["io", "io-ordered", "debug"] * 2
    assert out.getvalue() == "unused 2.0\nunused 2.0\n"


def test_no_cse_of_identical_calls():
    calls = Recorder(lambda x: x)
    jax.jit(
        lambda x: jax.pure_callback(calls, F32, x) + jax.pure_callback(calls, F32, x)
    )(1.0)
    assert len(calls.calls) == 2


def test_effects_of_jaxprs():
    x = jnp.ones(3)
    sds = SDS((3,), np.float32)
    pure = jax.make_jaxpr(lambda x: jax.pure_callback(sin_host, sds, x))(x)
    assert pure.effects == frozenset()
    io_u = jax.make_jaxpr(lambda x: io_callback(sin_host, sds, x))(x)
    io_o = jax.make_jaxpr(lambda x: io_callback(sin_host, sds, x, ordered=True))(x)
    assert io_u.effects == {effects.IO} and io_o.effects == {effects.OrderedIO}

    def both(x):
        debug.print("{}", x)
        debug.callback(print, x, ordered=True)
        return x

    dbg = jax.make_jaxpr(both)(x)
    assert dbg.effects == {effects.Debug, effects.OrderedDebug}
    assert sorted(map(str, dbg.effects)) == ["Debug", "OrderedDebug"]
    nested = jax.make_jaxpr(jax.jit(both))(x)
    assert nested.effects == {effects.Debug, effects.OrderedDebug}


def test_effect_types_and_sets():
    assert [
        repr(e)
        for e in (effects.IO, effects.OrderedIO, effects.Debug, effects.OrderedDebug)
    ] == ["IO", "OrderedIO", "Debug", "OrderedDebug"]
    assert effects.is_ordered(effects.OrderedIO) and effects.is_ordered(
        effects.OrderedDebug
    )
    assert not effects.is_ordered(effects.IO) and not effects.is_ordered(effects.Debug)
    assert effects.Debug in effects.partial_eval_kept_effects
    assert effects.IO not in effects.custom_derivatives_allowed_effects
    assert all(
        e in effects.control_flow_allowed_effects
        for e in (effects.IO, effects.OrderedIO, effects.Debug)
    )
    assert jax.effects_barrier() is None


def test_ordered_io_runs_in_program_order_within_and_across_calls():
    log = []

    @jax.jit
    def step(i):
        io_callback(lambda i: log.append(("first", int(i))), None, i, ordered=True)
        io_callback(lambda i: log.append(("second", int(i))), None, i, ordered=True)
        return i

    for i in range(20):
        step(i)
    assert log == [(w, i) for i in range(20) for w in ("first", "second")]


# ----------------------------------------------------------------------------------------
# Printed jaxprs (JAX's text)

GOLDEN_PURE = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = pure_callback[
      callback=_FlatCallback(callback_func=<function sin_host at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))
      result_avals=(ShapedArray(float32[3]),)
      sharding=None
      vmap_method=sequential
    ] a
    c:f32[3] = mul b 2.0:f32[]
  in (c,) }"""

GOLDEN_IO = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = io_callback[
      callback=_FlatCallback(callback_func=<function sin_host at 0xXXXXXXXXXXXX>, in_tree=PyTreeDef(((*,), {})))
      ordered=True
      result_avals=(ShapedArray(float32[3]),)
      sharding=None
    ] a
    c:f32[3] = add b 1.0:f32[]
  in (c,) }"""

GOLDEN_DEBUG = """\
{ lambda ; a:f32[3]. let
    b:f32[3] = add a 1.0:f32[]
    debug_print[
      fmt=v {} {y}
      has_placeholders=True
      in_tree=PyTreeDef(((*,), {'y': *}))
      logging_record=None
      np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', 'maxprec'), ('precision', 8), ('suppress', False), ('linewidth', 75), ('nanstr', 'nan'), ('infstr', 'inf'), ('sign', '-'), ('formatter', None), ('legacy', False), ('override_repr', None))
      ordered=False
      partitioned=False
      static_args=()
    ] a b
    debug_callback[
      callback=<function debug_callback.<locals>._debug_callback.<locals>._flat_callback at 0xXXXXXXXXXXXX>
      effect=OrderedDebug
      partitioned=False
    ] a
  in (a,) }"""


def _golden_programs(api, io_cb):
    sds = api.ShapeDtypeStruct((3,), np.float32)

    def pure(x):
        return api.pure_callback(sin_host, sds, x, vmap_method="sequential") * 2

    def io_(x):
        return io_cb(sin_host, sds, x, ordered=True) + 1

    def dbg(x):
        api.debug.print("v {} {y}", x, y=x + 1)
        api.debug.callback(print, x, ordered=True)
        return x

    return {"pure": pure, "io": io_, "debug": dbg}


@pytest.mark.parametrize(
    "name,golden", [("pure", GOLDEN_PURE), ("io", GOLDEN_IO), ("debug", GOLDEN_DEBUG)]
)
def test_golden_jaxprs(name, golden):
    fun = _golden_programs(jax, io_callback)[name]
    assert str(jax.make_jaxpr(fun)(jnp.ones(3))) == golden


@pytest.mark.parametrize("name", ["pure", "io", "debug"])
def test_jaxprs_print_as_in_jax(name):
    real = pytest.importorskip("jax")
    from jax.experimental import io_callback as real_io

    ours = str(jax.make_jaxpr(_golden_programs(jax, io_callback)[name])(jnp.ones(3)))
    theirs = str(
        real.make_jaxpr(_golden_programs(real, real_io)[name])(np.ones(3, np.float32))
    )
    assert ours == theirs


# ----------------------------------------------------------------------------------------
# Exceptions raised by the host function


class Boom(Exception):
    pass


def _raising(err):
    def host_raises(*args):
        raise err

    return host_raises


def _frames(exc):
    return [f.name for f in traceback.extract_tb(exc.__traceback__)]


def _check_original(info, err):
    # A JaxRuntimeError that is also the original's type, caused by the original.
    assert isinstance(info.value, jax.errors.JaxRuntimeError)
    assert isinstance(info.value, type(err))
    assert info.value.__cause__ is err
    assert "host_raises" in _frames(err)  # its traceback reaches the host function
    assert any("host_raises" in n for n in info.value.__notes__)


def test_exception_eager_jit_first_and_warm_calls():
    err = Boom("boom")
    f = lambda x: jax.pure_callback(_raising(err), F32, x)
    with pytest.raises(Boom) as info:
        f(1.0)
    _check_original(info, err)
    fj = jax.jit(f)
    for _ in range(3):  # first call (trace + compile), then warm calls
        with pytest.raises(Boom) as info:
            fj(jnp.float32(1.0))
        _check_original(info, err)


def test_cached_executable_still_usable_after_an_exception():
    def host(x):
        if x < 0:
            raise ValueError("negative")
        return x

    f = jax.jit(lambda x: jax.pure_callback(host, F32, x))
    assert float(f(jnp.float32(1.0))) == 1.0
    with pytest.raises(ValueError, match="negative"):
        f(jnp.float32(-1.0))
    assert float(f(jnp.float32(2.0))) == 2.0
    assert f._cache_size() == 1


@pytest.mark.parametrize("kind", ["io", "io_ordered", "debug", "print"])
@pytest.mark.parametrize("wrap", ["eager", "jit", "vmap"])
def test_exceptions_from_every_kind(kind, wrap):
    err = KeyError("missing")

    def f(x):
        if kind == "io":
            return io_callback(_raising(err), F32, x)
        if kind == "io_ordered":
            return io_callback(_raising(err), F32, x, ordered=True)
        if kind == "debug":
            debug.callback(_raising(err), x)
            return x
        debug.print("{x:.3f}", x=jnp.stack([x, x]))
        return x

    if wrap == "jit":
        f = jax.jit(f)
    if wrap == "vmap":
        if kind == "io_ordered":
            pytest.skip("ordered io cannot be vmapped")
        f = jax.vmap(f)
    arg = jnp.ones(2) if wrap == "vmap" else jnp.float32(1.0)
    if kind == "print":
        with pytest.raises(TypeError, match="unsupported format string") as info:
            f(arg)
        assert any("debug.print" in n for n in info.value.__notes__)
        return
    with pytest.raises(KeyError) as info:
        f(arg)
    assert info.value.__cause__ is err
    assert isinstance(info.value, jax.errors.JaxRuntimeError)
    if wrap == "vmap":
        assert any("vmap batch index 0" in n for n in info.value.__notes__)


@needs_scan
def test_exception_inside_a_loop():
    err = Boom("in loop")

    def host(x):
        if x == 3:
            raise err
        return x

    def body(c, x):
        return c, jax.pure_callback(host, F32, x)

    with pytest.raises(Boom) as info:
        jax.jit(lambda xs: lax.scan(body, 0.0, xs))(jnp.arange(5.0))
    assert info.value.__cause__ is err


# ----------------------------------------------------------------------------------------
# Calling jaxlite from inside a callback


def test_callback_may_call_jaxlite():
    inner = jax.jit(lambda v: jnp.sin(v) * 2)
    traces = []

    def host(x):
        traces.append(core.find_cur_trace_is_eval())
        return np.asarray(inner(jnp.asarray(x)) + jnp.cos(x))

    f = lambda x: jax.pure_callback(
        host, SDS(x.shape, x.dtype), x, vmap_method="sequential"
    )
    x = jnp.arange(3.0)
    expected = 2 * np.sin(np.arange(3.0)) + np.cos(np.arange(3.0))
    for g in (f, jax.jit(f), jax.vmap(f), jax.jit(jax.vmap(f))):
        np.testing.assert_allclose(np.asarray(g(x)), expected, rtol=1e-6)

    def h(x):
        debug.callback(
            lambda v: (
                traces.append(core.find_cur_trace_is_eval())
                or float(jax.jit(jnp.sum)(v))
            ),
            x,
        )
        io_callback(host, SDS((3,), np.float32), jax.lax.stop_gradient(x))
        return jnp.sum(x * x)

    jax.grad(h)(x)
    jax.jit(jax.grad(h))(x)
    assert len(traces) == 1 + 1 + 3 + 3 + 2 + 2 and all(traces)


def test_callback_calling_a_callback():
    def outer(x):
        return np.asarray(jax.pure_callback(lambda y: y + 1, F32, x))

    out = jax.jit(lambda x: jax.pure_callback(outer, F32, x))(jnp.float32(1.0))
    assert float(out) == 2.0


# ----------------------------------------------------------------------------------------
# vmap


@pytest.mark.parametrize(
    "method,calls,shapes",
    [
        ("sequential", 4, [((), ())] * 4),
        ("sequential_unrolled", 4, [((), ())] * 4),
        ("expand_dims", 1, [((4,), (1,))]),
        ("broadcast_all", 1, [((4,), (4,))]),
        ("legacy_vectorized", 1, [((4,), ())]),
    ],
)
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_vmap_methods(method, calls, shapes, wrap):
    seen = Recorder(lambda x, y: x + y)

    def fun(x, y):
        return jax.pure_callback(seen, F32, x, y, vmap_method=method)

    g = jax.vmap(fun, in_axes=(0, None))
    g = jax.jit(g) if wrap == "jit" else g
    out = g(jnp.arange(4.0), 1.0)
    np.testing.assert_allclose(np.asarray(out), [1.0, 2.0, 3.0, 4.0])
    assert len(seen.calls) == calls
    assert seen.shapes == shapes


def test_vmap_sequential_calls_in_batch_order():
    seen = Recorder(lambda x: x * 10)
    out = jax.vmap(lambda x: jax.pure_callback(seen, F32, x, vmap_method="sequential"))(
        jnp.arange(5.0)
    )
    assert [v[0] for v in seen.values] == [0.0, 1.0, 2.0, 3.0, 4.0]
    np.testing.assert_allclose(np.asarray(out), [0, 10, 20, 30, 40])


def test_vmap_without_method_warns_and_runs_sequentially():
    seen = Recorder(lambda x: x)
    f = lambda x: jax.pure_callback(seen, F32, x)
    with pytest.warns(DeprecationWarning, match="vmap_method='sequential'") as rec:
        jax.vmap(f)(jnp.arange(3.0))
    assert rec[0].filename == __file__  # points at the pure_callback call
    assert seen.shapes == [((),)] * 3


def _record_shapes(api, method, program, *args):
    shapes = []

    def cb(*xs):
        shapes.append(tuple(np.shape(x) for x in xs))
        return np.zeros(np.broadcast_shapes(*[np.shape(x) for x in xs]), np.float32)

    def fun(*xs):
        shape = np.broadcast_shapes(*[np.shape(x) for x in xs])
        return api.pure_callback(
            cb, api.ShapeDtypeStruct(shape, np.float32), *xs, vmap_method=method
        )

    out = program(api, fun)(*args)
    return shapes, np.shape(out)


_PROGRAMS = {
    "in_axes=(0, None)": (
        lambda api, f: api.vmap(f, in_axes=(0, None)),
        (np.ones(4, np.float32), np.float32(2)),
    ),
    "nested same arg": (
        lambda api, f: api.vmap(api.vmap(f)),
        (np.ones((3, 4), np.float32),),
    ),
    "outer x inner": (
        lambda api, f: api.vmap(api.vmap(f, in_axes=(None, 0)), in_axes=(0, None)),
        (np.ones(4, np.float32), np.ones(5, np.float32)),
    ),
    "in_axes=1": (
        lambda api, f: api.vmap(f, in_axes=1),
        (np.ones((2, 4), np.float32),),
    ),
}


@pytest.mark.parametrize("method", ["sequential", "expand_dims", "broadcast_all"])
@pytest.mark.parametrize("program", list(_PROGRAMS))
def test_vmap_shapes_as_in_jax(method, program):
    real = pytest.importorskip("jax")
    make, args = _PROGRAMS[program]
    ours = _record_shapes(jax, method, make, *args)
    theirs = _record_shapes(real, method, make, *args)
    assert ours == theirs


def test_nested_vmap_expand_dims_and_legacy():
    seen = Recorder(lambda x: x)
    f = lambda x: jax.pure_callback(
        seen, SDS((), np.float32), x, vmap_method="expand_dims"
    )
    out = jax.vmap(jax.vmap(f))(jnp.ones((3, 4)))
    assert out.shape == (3, 4) and seen.shapes == [((3, 4),)]


def test_vmap_io_callback():
    seen = Recorder(lambda x, y: x + y)
    f = lambda x, y: io_callback(seen, F32, x, y)
    out = jax.vmap(f, in_axes=(0, None))(jnp.arange(3.0), 9.0)
    assert seen.shapes == [((), ())] * 3
    assert [v for v in seen.values] == [(0.0, 9.0), (1.0, 9.0), (2.0, 9.0)]
    np.testing.assert_allclose(np.asarray(out), [9, 10, 11])
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        jax.vmap(lambda x: io_callback(seen, F32, x, ordered=True))(jnp.ones(2))
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        jax.jit(jax.vmap(lambda x: io_callback(seen, F32, x, ordered=True)))(
            jnp.ones(2)
        )


def test_vmap_debug_callback_and_print():
    seen = Recorder()

    def f(x, y):
        debug.callback(seen, x, y)
        debug.print("x={} y={}", x, y)
        return x

    with captured_stdout() as out:
        jax.vmap(f, in_axes=(0, None))(jnp.arange(3.0), 7.0)
    assert seen.values == [(0.0, 7.0), (1.0, 7.0), (2.0, 7.0)]
    assert out.getvalue() == "x=0.0 y=7.0\nx=1.0 y=7.0\nx=2.0 y=7.0\n"
    with captured_stdout() as out:
        jax.jit(jax.vmap(jax.vmap(lambda x: debug.print("{}", x))))(
            jnp.arange(4.0).reshape(2, 2)
        )
    assert out.getvalue().split() == ["0.0", "1.0", "2.0", "3.0"]  # row-major
    seen.calls.clear()
    jax.vmap(lambda x: debug.callback(seen, 5.0) or x)(jnp.ones(3))
    assert len(seen.calls) == 1  # no batched argument: once


# ----------------------------------------------------------------------------------------
# Autodiff


def test_grad_of_pure_callback_raises():
    f = lambda x: jax.pure_callback(sin_host, F32, x)
    msg = "Pure callbacks do not support JVP. Please use `jax.custom_jvp`"
    for transform in (jax.grad, lambda f: jax.grad(jax.jit(f)), jax.jacfwd, jax.jacrev):
        with pytest.raises(ValueError, match=msg):
            transform(f)(1.0)
    with pytest.raises(ValueError, match=msg):
        jax.jvp(f, (1.0,), (1.0,))
    with pytest.raises(ValueError, match=msg):
        jax.grad(
            lambda x: jnp.sum(jax.pure_callback(sin_host, SDS((3,), np.float32), x))
        )(jnp.ones(3))
    with pytest.raises(ValueError, match=msg):  # before the scalar-output check
        jax.grad(lambda x: jax.pure_callback(sin_host, SDS((3,), np.float32), x))(
            jnp.ones(3)
        )


def test_pure_callback_with_zero_tangent_runs():
    calls = Recorder(lambda x: x * 3)

    def f(x):
        c = jax.pure_callback(calls, F32, jax.lax.stop_gradient(x))
        return c * x

    assert float(jax.grad(f)(2.0)) == 6.0
    assert float(jax.jit(jax.grad(f))(2.0)) == 6.0
    assert float(jax.grad(lambda x: jax.pure_callback(calls, F32, 2.0) * x)(1.0)) == 6.0
    i = jax.grad(lambda x, n: jax.pure_callback(calls, F32, n.astype(np.float32)) * x)
    assert float(i(1.0, jnp.int32(2))) == 6.0


def test_transpose_errors():
    with pytest.raises(ValueError, match="Pure callbacks do not support transpose"):
        jax.linear_transpose(lambda x: jax.pure_callback(lambda x: x, F32, x), 1.0)(1.0)
    with pytest.raises(ValueError, match="IO callbacks do not support transpose"):
        jax.linear_transpose(lambda x: io_callback(lambda x: x, F32, x), 1.0)(1.0)


def test_grad_of_io_callback():
    with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
        jax.grad(lambda x: io_callback(lambda x: x, F32, x))(1.0)
    with pytest.raises(ValueError, match="IO callbacks do not support JVP."):
        jax.jvp(
            lambda x: io_callback(lambda x: x, F32, x, ordered=True), (1.0,), (1.0,)
        )


@pytest.mark.parametrize(
    "transform",
    ["grad", "jit(grad)", "value_and_grad", "vjp", "linearize", "grad(jit)"],
)
def test_io_callback_not_depending_on_input_runs_once(transform):
    calls = []

    def f(x):
        io_callback(lambda: calls.append(1), None)
        return x * 2

    if transform == "grad":
        jax.grad(f)(1.0)
    elif transform == "jit(grad)":
        jax.jit(jax.grad(f))(1.0)
    elif transform == "value_and_grad":
        jax.value_and_grad(f)(1.0)
    elif transform == "vjp":
        _, pullback = jax.vjp(f, 1.0)
        pullback(1.0)
    elif transform == "linearize":
        _, f_jvp = jax.linearize(f, 1.0)
        f_jvp(1.0)
    else:
        jax.grad(jax.jit(f))(1.0)
    assert calls == [1]


@pytest.mark.parametrize("transform", ["grad", "jit(grad)", "jvp", "hessian", "jacrev"])
def test_debug_callback_prints_primal_once_under_autodiff(transform):
    seen = Recorder()

    def f(x):
        debug.callback(seen, x)
        debug.callback(seen, x * 2, ordered=True)
        return jnp.sin(x)

    if transform == "grad":
        jax.grad(f)(1.0)
    elif transform == "jit(grad)":
        jax.jit(jax.grad(f))(1.0)
    elif transform == "jvp":
        jax.jvp(f, (1.0,), (5.0,))
    elif transform == "hessian":
        jax.hessian(f)(1.0)
    else:
        jax.jacrev(f)(1.0)
    assert seen.values == [(1.0,), (2.0,)]


def test_debug_print_under_grad():
    def f(x):
        debug.print("x={x}", x=x)
        return x * x

    with captured_stdout() as out:
        jax.grad(f)(3.0)
        jax.jit(jax.grad(f))(4.0)
    assert out.getvalue() == "x=3.0\nx=4.0\n"


# ----------------------------------------------------------------------------------------
# custom_jvp and custom_vjp


def test_pure_callback_in_custom_jvp():
    @jax.custom_jvp
    def host_sin(x):
        return jax.pure_callback(
            sin_host, SDS(x.shape, x.dtype), x, vmap_method="expand_dims"
        )

    @host_sin.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        cos = jax.pure_callback(
            lambda x: np.cos(x).astype(x.dtype),
            SDS(x.shape, x.dtype),
            x,
            vmap_method="expand_dims",
        )
        return host_sin(x), cos * t

    np.testing.assert_allclose(float(jax.grad(host_sin)(1.0)), np.cos(1.0), rtol=1e-6)
    np.testing.assert_allclose(
        float(jax.jit(jax.grad(host_sin))(1.0)), np.cos(1.0), rtol=1e-6
    )
    xs = jnp.arange(3.0)
    np.testing.assert_allclose(
        np.asarray(jax.vmap(jax.grad(host_sin))(xs)), np.cos(np.arange(3.0)), rtol=1e-6
    )


def test_callbacks_in_custom_vjp():
    log = []

    @jax.custom_vjp
    def f(x):
        return jax.pure_callback(sin_host, F32, x)

    def fwd(x):
        io_callback(lambda x: log.append(("fwd", float(x))), None, x)
        return f(x), x

    def bwd(x, ct):
        debug.callback(lambda c: log.append(("bwd", float(c))), ct)
        cos = jax.pure_callback(lambda x: np.cos(x).astype(np.float32), F32, x)
        return (cos * ct,)

    f.defvjp(fwd, bwd)
    np.testing.assert_allclose(float(jax.grad(f)(1.0)), np.cos(1.0), rtol=1e-6)
    assert log == [("fwd", 1.0), ("bwd", 1.0)]
    log.clear()
    np.testing.assert_allclose(
        float(jax.jit(jax.grad(lambda x: 3 * f(x)))(1.0)), 3 * np.cos(1.0), rtol=1e-6
    )
    assert log == [("fwd", 1.0), ("bwd", 3.0)]


# ----------------------------------------------------------------------------------------
# Control flow


@needs_scan
@pytest.mark.parametrize("kind", ["pure", "io", "io_ordered", "debug"])
def test_scan(kind):
    seen = Recorder(lambda x: x * 2)

    def body(c, x):
        if kind == "pure":
            y = jax.pure_callback(seen, F32, x)
        elif kind == "debug":
            debug.callback(seen, x)
            y = x * 2
        else:
            y = io_callback(seen, F32, x, ordered=kind == "io_ordered")
        return c + y, y

    for wrap in (lambda f: f, jax.jit):
        seen.calls.clear()
        c, ys = wrap(lambda xs: lax.scan(body, 0.0, xs))(jnp.arange(5.0))
        assert float(c) == 20.0
        assert [v[0] for v in seen.values] == [0.0, 1.0, 2.0, 3.0, 4.0]


@needs_scan
def test_unused_pure_callback_in_scan_body_is_removed():
    seen = Recorder(lambda x: x)

    def body(c, x):
        jax.pure_callback(seen, F32, x)
        return c + x, x

    lax.scan(body, 0.0, jnp.arange(3.0))
    assert seen.calls == []


@needs_scan
def test_debug_callback_in_scan_under_grad_is_not_hoisted():
    seen = Recorder()

    def f(x):
        def body(c, _):
            debug.callback(seen, 1.0)  # no data dependence on the carry
            return c * x, None

        return lax.scan(body, 1.0, None, length=5)[0]

    jax.grad(f)(2.0)
    assert len(seen.calls) == 5
    seen.calls.clear()
    jax.jit(jax.grad(f))(2.0)
    assert len(seen.calls) == 5


@needs_scan
def test_debug_print_in_scan_under_grad_once_per_iteration():
    def f(x):
        def body(c, i):
            debug.print("step {i} carry {c}", i=i, c=c)
            return c * x, None

        return lax.scan(body, 1.0, jnp.arange(3))[0]

    with captured_stdout() as out:
        jax.grad(f)(2.0)
    assert out.getvalue() == "step 0 carry 1.0\nstep 1 carry 2.0\nstep 2 carry 4.0\n"


@needs_scan
def test_vmap_of_scan_with_io_callback_unordered_is_step_major():
    seen = Recorder(lambda x: x)

    def f(xs):
        return lax.scan(lambda c, x: (c, io_callback(seen, F32, x)), 0.0, xs)[1]

    jax.vmap(f)(jnp.arange(6.0).reshape(2, 3))
    assert sorted(v[0] for v in seen.values) == [0, 1, 2, 3, 4, 5]


@needs_while
@pytest.mark.parametrize("kind", ["pure", "io", "io_ordered", "debug"])
def test_while_loop(kind):
    seen = Recorder(lambda i: i + 1)

    def body(i):
        if kind == "pure":
            return jax.pure_callback(seen, SDS((), np.int32), i)
        if kind == "debug":
            debug.callback(seen, i)
            return i + 1
        return io_callback(seen, SDS((), np.int32), i, ordered=kind == "io_ordered")

    for wrap in (lambda f: f, jax.jit):
        seen.calls.clear()
        out = wrap(lambda n: lax.while_loop(lambda i: i < n, body, 0))(3)
        assert int(out) == 3
        assert seen.values == [(0,), (1,), (2,)]


@needs_while
def test_fori_loop_with_callbacks():
    seen = Recorder()

    def body(i, c):
        debug.callback(seen, i)
        return c + io_callback(lambda i: i.astype(np.float32), F32, i)

    out = jax.jit(lambda: lax.fori_loop(0, 4, body, 0.0))()
    assert float(out) == 6.0
    assert seen.values == [(0,), (1,), (2,), (3,)]


@needs_cond
@pytest.mark.parametrize("kind", ["pure", "io", "io_ordered", "debug"])
def test_cond_runs_only_the_taken_branch(kind):
    taken = Recorder(lambda x: x)
    other = Recorder(lambda x: x)

    def branch(rec):
        def fn(x):
            if kind == "pure":
                return jax.pure_callback(rec, F32, x)
            if kind == "debug":
                debug.callback(rec, x)
                return x
            return io_callback(rec, F32, x, ordered=kind == "io_ordered")

        return fn

    for wrap in (lambda f: f, jax.jit):
        taken.calls.clear()
        wrap(lambda p, x: lax.cond(p, branch(taken), branch(other), x))(True, 1.0)
        assert len(taken.calls) == 1 and other.calls == []


@needs_cond
@pytest.mark.parametrize("kind", ["pure", "io", "debug", "print"])
def test_vmap_of_cond_calls_only_elements_taking_the_branch(kind):
    """Beyond JAX: JAX runs both branches for every element (or refuses io)."""
    true_side = Recorder(lambda x: x * 10)
    false_side = Recorder(lambda x: -x)

    def branch(rec, tag):
        def fn(x):
            if kind == "pure":
                return jax.pure_callback(rec, F32, x, vmap_method="sequential")
            if kind == "io":
                return io_callback(rec, F32, x)
            if kind == "print":
                debug.print(tag + " {}", x)
                return x
            debug.callback(rec, x)
            return x

        return fn

    def f(x):
        return lax.cond(x > 2, branch(true_side, "T"), branch(false_side, "F"), x)

    xs = jnp.arange(5.0)
    with captured_stdout() as out:
        res = jax.vmap(f)(xs)
        jax.jit(jax.vmap(f))(xs)
    if kind == "print":
        assert out.getvalue().split("\n")[:5] == [
            "F 0.0",
            "F 1.0",
            "F 2.0",
            "T 3.0",
            "T 4.0",
        ]
        return
    assert sorted(v[0] for v in true_side.values) == [3.0, 3.0, 4.0, 4.0]
    assert sorted(v[0] for v in false_side.values) == [0.0, 0.0, 1.0, 1.0, 2.0, 2.0]
    if kind != "debug":
        np.testing.assert_allclose(np.asarray(res), [0, -1, -2, 30, 40])


@needs_cond
def test_vmap_of_cond_with_ordered_io_is_refused():
    f = lambda x: lax.cond(
        x > 0, lambda x: io_callback(lambda x: x, F32, x, ordered=True), lambda x: x, x
    )
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback."):
        jax.vmap(f)(jnp.arange(3.0))


@needs_while
def test_vmap_of_while_with_unordered_io_calls_only_running_elements():
    """Beyond JAX: JAX refuses unordered io in a while with a batched predicate."""
    seen = Recorder(lambda i: i + 1)

    def f(n):
        return lax.while_loop(
            lambda i: i < n, lambda i: io_callback(seen, SDS((), np.int32), i), 0
        )

    out = jax.vmap(f)(jnp.array([1, 3]))
    np.testing.assert_array_equal(np.asarray(out), [1, 3])
    assert sorted(seen.values) == [(0,), (0,), (1,), (2,)]  # never a finished element


@needs_while
def test_vmap_of_while_with_debug_print_prints_only_running_elements():
    def f(n):
        def body(i):
            debug.print("{}", i)
            return i + 1

        return lax.while_loop(lambda i: i < n, body, 0)

    with captured_stdout() as out:
        jax.vmap(f)(jnp.array([1, 3]))
    assert sorted(out.getvalue().split()) == ["0", "0", "1", "2"]


def test_jaxpr_has_callbacks_helper():
    from jaxlite.backend.loops import calls_host as jaxpr_has_callbacks

    with_cb = jax.make_jaxpr(jax.jit(lambda x: debug.print("{}", x) or x))(1.0)
    without = jax.make_jaxpr(lambda x: jnp.sin(x))(1.0)
    assert jaxpr_has_callbacks(with_cb) and not jaxpr_has_callbacks(without)


# ----------------------------------------------------------------------------------------
# debug.print and debug.callback


def _printed(fun, *args):
    with captured_stdout() as out:
        fun(*args)
    return out.getvalue()


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_debug_print_formatting(wrap):
    w = jax.jit if wrap == "jit" else (lambda f: f)
    sin2 = jnp.asarray(np.float32(np.sin(np.float32(2.0))))
    assert _printed(w(lambda x: debug.print("{}", x)), sin2) == "0.9092974066734314\n"
    assert _printed(w(lambda x: debug.print("{x!r}", x=x)), 1.5) == (
        "Array(1.5, dtype=float32)\n"
    )
    assert _printed(w(lambda x: debug.print("{x:.3f}", x=x)), 1.5) == "1.500\n"
    assert _printed(w(lambda x: debug.print("{}", x)), jnp.arange(3.0) / 3) == (
        "[0.         0.33333334 0.6666667 ]\n"
    )
    assert _printed(w(lambda a, b: debug.print("{1} {0} {1}", a, b)), 1, 2) == "2 1 2\n"
    assert (
        _printed(
            w(lambda x: debug.print("{x.shape} {x.dtype}", x=x)), jnp.zeros((2, 3))
        )
        == "(2, 3) float32\n"
    )
    assert _printed(w(lambda d: debug.print("{d[a]}", d=d)), {"a": 1.0}) == "1.0\n"
    assert _printed(
        w(lambda t: debug.print("tree={t}", t=t)), {"a": 1.5, "b": (1.5, [2.5])}
    ) == (
        "tree={'a': Array(1.5, dtype=float32), 'b': (Array(1.5, dtype=float32), "
        "[Array(2.5, dtype=float32)])}\n"
    )
    assert _printed(w(lambda x: debug.print("{{a}} {}", x)), 1.5) == "{a} 1.5\n"
    assert _printed(w(lambda x: debug.print("{} {{b}}", x)), 1.5) == "1.5 {b}\n"
    assert _printed(w(lambda x: debug.print("{} {}", "static", x)), 1) == "static 1\n"
    assert (
        _printed(w(lambda x: debug.print("no fields", x, skip_format_check=True)), 1.5)
        == "no fields 1.5\n"
    )


_JAX_FORMAT_CASES = [
    ("{}", (np.float32(np.sin(np.float32(2.0))),), {}),
    ("{}", (np.arange(3, dtype=np.float32) / 3,), {}),
    ("{x!r}", (), {"x": np.float32(1.5)}),
    ("{x:.3f}", (), {"x": np.float32(1.5)}),
    ("{} and {}", (np.int32(7), np.bool_(True)), {}),
    ("{x.shape}", (), {"x": np.zeros((2, 3), np.float32)}),
    ("t={t}", (), {"t": {"a": np.float32(1.5), "b": (np.float32(2.5),)}}),
    ("{} {{b}}", (np.float32(1.5),), {}),
    ("{}", (np.arange(2000, dtype=np.float32),), {}),
]


@pytest.mark.parametrize("case", range(len(_JAX_FORMAT_CASES)))
def test_debug_print_formats_as_jax(case):
    real = pytest.importorskip("jax")
    fmt, args, kwargs = _JAX_FORMAT_CASES[case]

    def run(api):
        @api.jit
        def f(args, kwargs):
            api.debug.print(fmt, *args, **kwargs)

        with captured_stdout() as out:
            f(args, kwargs)
            api.effects_barrier()
        return out.getvalue()

    assert run(jax) == run(real)


def test_debug_print_uses_print_options_captured_at_trace_time():
    f = jax.jit(lambda x: debug.print("{}", x))
    x = jnp.arange(3.0) / 3
    with np.printoptions(precision=2):
        assert _printed(f, x) == "[0.   0.33 0.67]\n"
    assert _printed(f, x) == "[0.   0.33 0.67]\n"  # the cached trace keeps them
    assert (
        _printed(lambda x: debug.print("{}", x), x)
        == "[0.         0.33333334 0.6666667 ]\n"
    )


def test_debug_print_two_call_form():
    assert _printed(lambda x: debug.print(ordered=True)("x={x}", x=x), 2) == "x=2\n"
    assert _printed(jax.jit(lambda x: debug.print(ordered=True)("{}", x)), 2) == "2\n"
    with pytest.raises(
        TypeError,
        match="debug_print received unexpected arguments in the two-call form",
    ):
        debug.print(None, 1)
    with pytest.raises(
        ValueError,
        match=r"Unused keyword arguments to `jax.debug.print`: "
        r"\['ordered'\]",
    ):
        debug.print()("{}", 1, ordered=True)


def test_debug_print_format_errors_at_trace_time():
    f = lambda x: debug.print("{}", x, x)
    with pytest.raises(
        ValueError, match="Unused positional arguments to `jax.debug.print`"
    ):
        jax.jit(f)(1.0)
    with pytest.raises(
        ValueError,
        match="Unused keyword arguments to `jax.debug.print`: "
        r"\['y'\]. You may be passing an f-string",
    ):
        debug.print("{x}", x=1, y=2)
    with pytest.raises(IndexError):
        jax.jit(lambda x: debug.print("{1}", x))(1.0)
    with pytest.raises(KeyError, match="'y'"):
        jax.make_jaxpr(lambda x: debug.print("{y}", x=x))(1.0)


def test_debug_print_writes_to_the_current_stdout_synchronously():
    f = jax.jit(lambda x: debug.print("v={}", x) or x + 1)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        f(1)
        assert buf.getvalue() == "v=1\n"  # already there when f returns


def test_debug_log(caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="jaxlite.debug"):
        jax.jit(lambda x: debug.log("logged {}", x))(3)
    assert [r.getMessage() for r in caplog.records] == ["logged 3"]
    assert caplog.records[0].pathname == __file__


def test_debug_callback_api():
    seen = Recorder(lambda *a, **k: "ignored")
    debug.callback(seen, 1.0, "static", k=jnp.ones(2))
    args, kwargs = seen.calls[0]
    assert args[1] == "static" and kwargs["k"].shape == (2,)
    debug.callback(ordered=True)(seen, 2.0)
    assert len(seen.calls) == 2
    with pytest.raises(
        TypeError,
        match="first argument to jax.debug.callback must be "
        "callable, but got an object of type <class 'int'>",
    ):
        debug.callback(1)
    with pytest.raises(
        TypeError,
        match="debug_callback received unexpected arguments in the two-call form",
    ):
        debug.callback(None, 1)
    assert jax.jit(lambda x: debug.callback(seen, x))(1.0) is None


def test_seed_debug_callback_under_vmap_prints_in_order():
    def log_value(x):
        print("log:", x)

    @jax.jit
    def f(x):
        debug.callback(log_value, x)
        return x

    assert _printed(jax.vmap(f), jnp.arange(5.0)).split("\n")[:-1] == [
        f"log: {i}.0" for i in range(5)
    ]


# ----------------------------------------------------------------------------------------
# Rules exist for every transformation


@pytest.mark.parametrize(
    "name", ["pure_callback_p", "io_callback_p", "debug_callback_p", "debug_print_p"]
)
def test_every_rule_is_registered(name):
    from jaxlite.backend import lowering_rules
    from jaxlite.interpreters import ad, batching
    from jaxlite.lax import callbacks

    prim = getattr(callbacks, name)
    for table in (
        core.impl_rules,
        core.abstract_eval_rules,
        lowering_rules,
        ad.jvp_rules,
        ad.transpose_rules,
        batching.batch_rules,
    ):
        assert prim in table


def test_ordered_effect_names_in_jaxpr_params():
    j = jax.make_jaxpr(lambda x: debug.callback(print, x, ordered=True))(1.0)
    assert "effect=OrderedDebug" in str(j)
    assert collections.Counter(e.primitive.name for e in j.eqns) == {
        "debug_callback": 1
    }


def test_partial_application_of_pure_callback():
    f = partial(jax.pure_callback, sin_host, F32)
    np.testing.assert_allclose(float(jax.jit(f)(1.0)), np.sin(1.0), rtol=1e-6)


@pytest.mark.parametrize("library", ["jaxlite", "jax"])
def test_callbacks_run_under_numpys_default_warnings(library):
    """jaxlite's compiled code computes 0/0 and log(0) silently, but the user's own
    NumPy code inside a callback warns as it does outside (as in JAX)."""
    lib = pytest.importorskip(library)
    spec = lib.ShapeDtypeStruct((), np.float32)

    def cb(x):
        return np.log(x - x)

    f = lib.jit(lambda x: lib.pure_callback(cb, spec, x) + x / 0.0)
    g = lib.jit(lambda x: lib.pure_callback(cb, spec, x, vmap_method="sequential"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = f(np.float32(1.0))
        lib.vmap(g)(np.ones(2, np.float32))
    assert np.isnan(out)
    messages = [str(w.message) for w in caught]
    assert messages == ["divide by zero encountered in log"] * 3, messages
