"""Callbacks as JAX defines them (issue 16, item 5), compared with JAX 0.10.2.

- What a callback receives: Arrays, in every mode (eager, jit, vmap, scan) and for
  `pure_callback`, `io_callback` and `debug.callback`, strongly typed as in JAX, and
  still without copies (an Array wrapping jaxlite's own buffer).
- An exception raised in a callback: JAX raises a `JaxRuntimeError` whose message holds
  `<TypeName>: <message>`; jaxlite raises one that is also an instance of the original
  type, caused by the original, whatever the type (custom `__init__`, C-level fields,
  a class refusing subclasses), and picklable. KeyboardInterrupt and SystemExit
  propagate unchanged.
- The result check compares flattened leaves as JAX does, with JAX's phrases, naming
  the callback and the first mismatching leaf.

Runs on the backend `JAXLITE_BACKEND` selects (the native backend's host calls must
behave the same); tests marked `numpy_backend` check the NumPy backend's zero-copy path.
"""

from __future__ import annotations

import errno
import pickle
import traceback
import warnings
from functools import partial

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.errors import JaxRuntimeError
from jaxlite.experimental import io_callback

SDS = jaxlite.ShapeDtypeStruct


def _real():
    jax = pytest.importorskip("jax")
    from jax.experimental import io_callback as real_io

    return jax, real_io


def _libs():
    """(name, api, io_callback) for jaxlite and, where installed, JAX."""
    out = [("jaxlite", jaxlite, io_callback)]
    try:
        jax, real_io = _real()
    except pytest.skip.Exception:
        return out
    return [*out, ("jax", jax, real_io)]


# ----------------------------------------------------------------------------------------
# What the callback receives


def _call(api, io, kind, host, x):
    """`kind` of callback of `host` on `x`, returning x's value (debug: x itself)."""
    spec = api.ShapeDtypeStruct(x.shape, x.dtype)
    if kind == "pure":
        return api.pure_callback(host, spec, x, vmap_method="sequential")
    if kind == "io":
        return io(host, spec, x)
    api.debug.callback(host, x)
    return x


def _modes(api, io, kind, host):
    x = api.numpy.arange(3.0)
    _call(api, io, kind, host, x)
    api.jit(lambda x: _call(api, io, kind, host, x))(x)
    api.vmap(lambda x: _call(api, io, kind, host, x))(x)
    api.lax.scan(lambda c, x: (c, _call(api, io, kind, host, x)), 0.0, x)
    _call(api, io, kind, host, np.arange(3, dtype=np.float32))


@pytest.mark.parametrize("kind", ["pure", "io", "debug"])
def test_callbacks_receive_arrays_in_every_mode(kind):
    seen = {}
    for name, api, io in _libs():
        received = seen[name] = []

        def host(a, api=api, received=received):
            received.append((isinstance(a, api.Array), a.shape, str(a.dtype)))
            return a

        _modes(api, io, kind, host)
    assert all(is_array for is_array, _, _ in seen["jaxlite"])
    if "jax" in seen:
        assert seen["jaxlite"] == seen["jax"]


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize("kind", ["pure", "io"])
def test_arguments_are_strongly_typed_as_in_jax(kind, wrap):
    jax, real_io = _real()
    weak = {}
    for name, api, io in [("jaxlite", jaxlite, io_callback), ("jax", jax, real_io)]:
        got = weak[name] = []

        def host(a, got=got):
            got.append(a.weak_type)
            return a

        spec = api.ShapeDtypeStruct((), np.float32)
        call = api.pure_callback if kind == "pure" else io
        f = partial(call, host, spec)
        f = api.jit(f) if wrap == "jit" else f
        f(api.lax.add(1.0, 2.0))  # a weakly typed Array
        f(1.0)
    assert weak["jaxlite"] == weak["jax"] == [False, False]


def test_the_keyword_arguments_are_arrays_too():
    seen = []
    x = jnp.ones(2)
    jaxlite.pure_callback(
        lambda x, *, y: seen.append(type(y)) or x, SDS((2,), x.dtype), x, y=x
    )
    assert seen == [jaxlite.Array]


@pytest.mark.numpy_backend
@pytest.mark.parametrize("kind", ["pure", "io", "debug"])
@pytest.mark.parametrize("wrap", ["eager", "jit", "vmap"])
def test_arrays_wrap_jaxlite_buffers_without_copies(kind, wrap):
    x = jnp.arange(2000.0).reshape(2, 1000)
    views = []

    def host(a):
        views.append(np.asarray(a))
        return a

    def f(x):
        return _call(jaxlite, io_callback, kind, host, x)

    if wrap == "jit":
        f = jaxlite.jit(f)
    if wrap == "vmap":
        f = jaxlite.vmap(f)
    out = f(x)
    assert views and all(np.shares_memory(v, x._value) for v in views)
    assert all(not v.flags.writeable for v in views)
    if kind != "debug" and wrap != "vmap":  # an argument returned: still no copy
        assert np.shares_memory(np.asarray(out), x._value)


def test_a_callers_numpy_array_is_not_shared():
    # An eager callback on the caller's NumPy array gets an Array of its own, as
    # JAX's device_put makes one: writing the array later changes nothing.
    user = np.arange(3, dtype=np.float32)
    kept = []
    out = jaxlite.pure_callback(
        lambda a: kept.append(a) or a, SDS((3,), np.float32), user
    )
    user[:] = -1.0
    np.testing.assert_array_equal(np.asarray(kept[0]), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0])
    assert user.flags.writeable


def test_the_seed_idioms_work_on_arrays():
    # NumPy and SciPy functions take the Arrays a callback receives (the seeds' idiom).
    import scipy.special

    x = jnp.linspace(0.5, 2.0, 4)
    for _name, api, _ in _libs():
        xs = api.numpy.linspace(0.5, 2.0, 4)
        sin = api.jit(
            lambda x, api=api: api.pure_callback(
                lambda a: np.sin(a).astype(a.dtype),
                api.ShapeDtypeStruct((4,), x.dtype),
                x,
            )
        )(xs)
        jv = api.pure_callback(
            lambda a: scipy.special.jv(1, a).astype(a.dtype),
            api.ShapeDtypeStruct((4,), x.dtype),
            xs,
        )
        np.testing.assert_allclose(np.asarray(sin), np.sin(np.asarray(x)), rtol=1e-6)
        np.testing.assert_allclose(
            np.asarray(jv), scipy.special.jv(1, np.asarray(x)), rtol=1e-6
        )


# ----------------------------------------------------------------------------------------
# Exceptions


class _EquinoxRuntimeError(RuntimeError):
    """Named as the class equinox raises in its callbacks and looks for in messages."""


def _raise(err):
    def host_raises(*args):
        raise err

    return host_raises


def _run(api, io, kind, wrap, host):
    x = api.numpy.arange(3.0)

    def f(x):
        if kind == "pure":
            return api.pure_callback(host, api.ShapeDtypeStruct((3,), x.dtype), x)
        if kind == "io":
            return io(host, api.ShapeDtypeStruct((3,), x.dtype), x)
        if kind == "io_ordered":
            return io(host, api.ShapeDtypeStruct((3,), x.dtype), x, ordered=True)
        api.debug.callback(host, x)
        return x

    if wrap == "jit":
        f = api.jit(f)
    elif wrap == "scan":
        g = f
        f = lambda x: api.lax.scan(lambda c, _: (c, g(x)), 0.0, None, length=2)[1]  # noqa: E731
    elif wrap == "vmap":
        g = f
        f = lambda x: api.vmap(lambda _: g(x))(x)  # noqa: E731
    out = f(x)
    api.block_until_ready(out)
    api.effects_barrier()


@pytest.mark.parametrize("wrap", ["eager", "jit", "scan", "vmap"])
@pytest.mark.parametrize("kind", ["pure", "io", "io_ordered", "debug"])
def test_an_exception_is_a_jax_runtime_error_and_keeps_its_type(kind, wrap):
    if kind == "io_ordered" and wrap == "vmap":
        pytest.skip("an ordered io_callback cannot be vmapped")
    err = ValueError("boom here")
    with pytest.raises(ValueError, match="boom here") as info:
        _run(jaxlite, io_callback, kind, wrap, _raise(err))
    e = info.value
    assert isinstance(e, JaxRuntimeError) and isinstance(e, RuntimeError)
    assert e.__cause__ is err
    assert "host_raises" in [f.name for f in traceback.extract_tb(err.__traceback__)]
    assert e.args == ("boom here",)
    message = str(e)
    assert message.startswith("INTERNAL: CpuCallback error calling callback: ")
    assert "ValueError: boom here" in message
    assert any("host_raises" in note for note in e.__notes__)


@pytest.mark.parametrize("wrap", ["jit", "scan"])
@pytest.mark.parametrize("kind", ["pure", "io", "debug"])
def test_the_message_has_the_parts_jax_users_search_for(kind, wrap):
    # JAX loses the type: `except JaxRuntimeError` and a search of the message for
    # "<TypeName>: " (equinox looks for "_EquinoxRuntimeError: ") are how its users
    # tell errors apart. Both work on jaxlite's errors.
    for name, api, io in _libs():
        with pytest.raises(api.errors.JaxRuntimeError) as info:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _run(api, io, kind, wrap, _raise(_EquinoxRuntimeError("nan found")))
        message = str(info.value)
        assert "CpuCallback error calling callback" in message, name
        assert message.endswith("_EquinoxRuntimeError: nan found"), name
        if name == "jax":  # after the formatted traceback
            assert message.endswith("\n_EquinoxRuntimeError: nan found")


def test_except_either_type_works_identically_first_call_and_warm():
    f = jaxlite.jit(
        lambda x: jaxlite.pure_callback(_raise(KeyError("k")), SDS((), x.dtype), x)
    )
    for _ in range(3):
        with pytest.raises(KeyError):
            f(1.0)
        with pytest.raises(JaxRuntimeError):
            f(1.0)
    try:
        f(1.0)
    except LookupError as e:  # a base class of the original's
        assert e.args == ("k",)
        assert "KeyError: 'k'" in str(e)


class _NeedsTwo(Exception):
    def __init__(self, code, detail):
        super().__init__(f"code {code}: {detail}")
        self.code = code
        self.detail = detail


class _Slotted(Exception):
    __slots__ = ("payload",)


class _Final(Exception):
    def __init_subclass__(cls, **kwargs):
        raise TypeError("_Final cannot be subclassed")


def _raised_by_a_callback(err):
    with pytest.raises(BaseException) as info:
        jaxlite.jit(lambda x: jaxlite.pure_callback(_raise(err), SDS((), x.dtype), x))(
            1.0
        )
    return info.value


def test_an_exception_with_a_custom_init_keeps_its_attributes():
    e = _raised_by_a_callback(_NeedsTwo(7, "bad input"))
    assert isinstance(e, _NeedsTwo) and isinstance(e, JaxRuntimeError)
    assert (e.code, e.detail) == (7, "bad input")
    assert "_NeedsTwo: code 7: bad input" in str(e)
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is type(e)
    assert (again.code, again.detail, again.args, str(again)) == (
        7,
        "bad input",
        e.args,
        str(e),
    )


def test_c_level_fields_and_slots_are_kept():
    e = _raised_by_a_callback(FileNotFoundError(errno.ENOENT, "No such file", "x.txt"))
    assert isinstance(e, FileNotFoundError) and isinstance(e, JaxRuntimeError)
    assert (e.errno, e.strerror, e.filename) == (errno.ENOENT, "No such file", "x.txt")
    assert "FileNotFoundError: [Errno 2] No such file: 'x.txt'" in str(e)
    slotted = _Slotted("with a slot")
    slotted.payload = 42
    e = _raised_by_a_callback(slotted)
    assert isinstance(e, _Slotted) and e.payload == 42
    e = _raised_by_a_callback(AttributeError("no attr", name="foo", obj=None))
    assert isinstance(e, AttributeError) and e.name == "foo"


def test_a_type_refusing_subclasses_gives_a_plain_jax_runtime_error():
    err = _Final("cannot combine")
    e = _raised_by_a_callback(err)
    assert type(e) is JaxRuntimeError
    assert e.__cause__ is err
    assert "_Final: cannot combine" in str(e)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit, GeneratorExit])
@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_keyboard_interrupt_and_system_exit_propagate_unchanged(exc, wrap):
    err = exc()
    f = lambda x: jaxlite.pure_callback(_raise(err), SDS((), np.float32), x)  # noqa: E731
    f = jaxlite.jit(f) if wrap == "jit" else f
    with pytest.raises(exc) as info:
        f(1.0)
    assert info.value is err


def test_a_jax_runtime_error_from_a_nested_callback_is_not_wrapped_twice():
    inner = jaxlite.jit(
        lambda x: jaxlite.pure_callback(
            _raise(ZeroDivisionError("inner")), SDS((), x.dtype), x
        )
    )

    def outer_host(x):
        return inner(x)

    with pytest.raises(ZeroDivisionError) as info:
        jaxlite.jit(lambda x: jaxlite.pure_callback(outer_host, SDS((), x.dtype), x))(
            1.0
        )
    e = info.value
    assert type(e.__cause__) is ZeroDivisionError
    assert str(e).count("CpuCallback error calling callback") == 1
    notes = " ".join(e.__notes__)
    assert "host_raises" in notes and "outer_host" in notes


def test_debug_print_formatting_errors_are_runtime_errors_too():
    f = jaxlite.jit(lambda x: jaxlite.debug.print("{x:.3f}", x=jnp.stack([x, x])))
    with pytest.raises(TypeError, match="unsupported format string") as info:
        f(jnp.float32(1.0))
    assert isinstance(info.value, JaxRuntimeError)


def test_an_exception_inside_a_loop_on_a_warm_executable():
    def host(x):
        if x == 3:
            raise ArithmeticError("three")
        return x

    f = jaxlite.jit(
        lambda xs: lax.scan(
            lambda c, x: (c, jaxlite.pure_callback(host, SDS((), x.dtype), x)), 0.0, xs
        )
    )
    f(jnp.arange(3.0))
    with pytest.raises(ArithmeticError, match="ArithmeticError: three") as info:
        f(jnp.arange(5.0))
    assert isinstance(info.value, JaxRuntimeError)
    f(jnp.arange(3.0))  # still usable


# ----------------------------------------------------------------------------------------
# The result check


def _returning(api, value, spec, wrap):
    f = lambda: api.pure_callback(lambda: value, spec)  # noqa: E731
    return (api.jit(f) if wrap == "jit" else f)()


def _spec(api, tree):
    return api.tree_util.tree_map(
        lambda s: api.ShapeDtypeStruct(s[0], s[1]),
        tree,
        is_leaf=lambda s: type(s) is tuple and len(s) == 2 and type(s[1]) is type,
    )


F = ((), np.float32)
V2 = ((2,), np.float32)


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize(
    "value,declared",
    [
        ([np.float32(1), np.float32(2)], (F, F)),  # a list for a declared tuple
        ((np.float32(1), np.float32(2)), [F, F]),
        ({"a": np.float32(1), "b": np.float32(2)}, (F, F)),  # only leaves count
        (((np.float32(1), np.float32(2)), np.float32(3)), (F, (F, F))),
        ({"a": np.float32(1), "c": np.float32(2)}, {"a": F, "b": F}),
    ],
)
def test_results_are_compared_by_their_leaves_as_in_jax(value, declared, wrap):
    for name, api, _ in _libs():
        out = _returning(api, value, _spec(api, declared), wrap)
        leaves = [float(v) for v in api.tree_util.tree_leaves(out)]
        assert leaves == [float(v) for v in jaxlite.tree_util.tree_leaves(value)], name
        assert api.tree_util.tree_structure(out) == api.tree_util.tree_structure(
            _spec(api, declared)
        ), name


@pytest.mark.parametrize("wrap", ["eager", "jit"])
@pytest.mark.parametrize(
    "value,declared,phrase,leaf",
    [
        (
            (np.float32(1), np.float32(2), np.float32(3)),
            (F, F),
            "Mismatched number of outputs from callback. Expected: 2, Actual: 3",
            None,
        ),
        (
            {"x": np.float32(1), "y": np.zeros(3, np.float32)},
            {"x": F, "y": V2},
            r"Incorrect output shape for return value #1: Expected: \(2,\), "
            r"Actual: \(3,\)",
            "result_shape_dtypes['y']",
        ),
        (
            (np.float32(1), (np.float32(2), np.zeros(2, np.int32))),
            (F, (F, V2)),
            "Incorrect output dtype for return value #2: Expected: float32, "
            "Actual: int32",
            "result_shape_dtypes[1][1]",
        ),
    ],
)
def test_result_mismatches_raise_jax_errors_naming_callback_and_leaf(
    value, declared, phrase, leaf, wrap
):
    for _name, api, _ in _libs():
        with pytest.raises(api.errors.JaxRuntimeError, match=phrase):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _returning(api, value, _spec(api, declared), wrap)
    with pytest.raises(JaxRuntimeError) as info:
        _returning(jaxlite, value, _spec(jaxlite, declared), wrap)
    message = str(info.value)
    assert "<lambda>" in message and "called by jaxlite.pure_callback" in message
    if leaf is not None:
        assert f"The first mismatching leaf is {leaf}." in message
