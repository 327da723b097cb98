"""Issue 13: tracer conversions, jit's cache key and options, vmap's axes, deleted and
donated arrays, devices. Each behaviour is checked against real JAX 0.10.2 where it is
installed (exception class and key phrase), and on its own otherwise."""

from __future__ import annotations

import copy
import functools
import math
import operator
import pickle
import warnings

import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import errors


def _outcome(run):
    """`("ok", value)` or `("raise", exception class name, first line of message)`."""
    try:
        return ("ok", run())
    except Exception as e:  # noqa: BLE001  (compared with JAX's outcome)
        return ("raise", type(e).__name__, str(e).splitlines()[0])


# ----------------------------------------------------------------------------------------
# 1. Converting a tracer to NumPy or a Python number under a transformation


CONVERSIONS = {
    "np.asarray": np.asarray,
    "np.sin": np.sin,
    "float": float,
    "math.sin": math.sin,
    "complex": complex,
    "tolist": lambda x: x.tolist(),
    "int": int,
    "bool": bool,
    "item": lambda x: x.item(),
    "operator.index": operator.index,
    "pickle": pickle.dumps,
}
TRANSFORMS = ["grad", "jvp", "jacfwd", "vjp", "linearize", "vmap", "jit"]


def _apply(lib, transform, conversion, x):
    def f(x):
        conversion(x)
        return x * 1

    if transform == "grad":
        return lib.grad(f)(x)
    if transform == "jvp":
        return lib.jvp(f, (x,), (x,))[1]
    if transform == "jacfwd":
        return lib.jacfwd(f)(x)
    if transform == "vjp":
        return lib.vjp(f, x)[0]
    if transform == "linearize":
        return lib.linearize(f, x)[0]
    if transform == "vmap":
        return lib.vmap(f)(lib.numpy.stack([x, x]))
    return lib.jit(f)(x)


def _conversion_input(lib, name, transform):
    if name == "operator.index":
        return lib.numpy.asarray(3, "int32")
    return lib.numpy.asarray(1.0)


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_tracer_conversions_match_jax(name, transform):
    jax = pytest.importorskip("jax")
    if name == "operator.index" and transform in ("grad", "jvp", "jacfwd"):
        pytest.skip("integer inputs are not differentiable (both libraries refuse)")
    conversion = CONVERSIONS[name]
    want = _outcome(
        lambda: _apply(
            jax, transform, conversion, _conversion_input(jax, name, transform)
        )
    )
    got = _outcome(
        lambda: _apply(
            jaxlite, transform, conversion, _conversion_input(jaxlite, name, transform)
        )
    )
    assert got[0] == want[0], (got, want)
    if want[0] == "raise":
        assert got[1] == want[1]
        assert got[2] == want[2]


def test_numpy_on_tracer_under_grad_raises_instead_of_a_zero_derivative():
    with pytest.raises(
        errors.TracerArrayConversionError, match="__array__\\(\\) was called"
    ):
        jaxlite.grad(lambda x: np.sin(x))(1.0)
    with pytest.raises(errors.ConcretizationTypeError, match="`float` function"):
        jaxlite.grad(lambda x: float(x) ** 2)(1.0)
    with pytest.raises(errors.ConcretizationTypeError, match="`float` function"):
        jaxlite.jvp(lambda x: math.exp(x), (1.0,), (1.0,))
    with pytest.raises(errors.ConcretizationTypeError, match="`complex` function"):
        jaxlite.jacfwd(lambda x: complex(x))(1.0)
    with pytest.raises(errors.TracerArrayConversionError):
        jaxlite.vmap(lambda x: np.asarray(x))(jnp.ones(3))


def test_concrete_python_control_flow_still_works_under_grad():
    # As in JAX: bool, int and index read the primal (they carry no derivative).
    def f(x):
        n = int(x)
        return x * n if x > 0 else -x

    assert float(jaxlite.grad(f)(2.5)) == 2.0
    assert float(jaxlite.grad(f)(-1.5)) == -1.0


def test_copy_of_a_tracer_stages_a_copy():
    def f(x):
        return copy.copy(x) + copy.deepcopy(x)

    assert float(jaxlite.jit(f)(1.5)) == 3.0
    assert float(jaxlite.grad(f)(1.5)) == 2.0


# ----------------------------------------------------------------------------------------
# 2. Static arguments are cached by type as well as value


def test_static_argument_cache_key_includes_the_type():
    g = jaxlite.jit(lambda n: jnp.asarray(n), static_argnums=0)
    assert [g(v).dtype for v in (1, 1.0, True)] == ["int32", "float32", "bool"]
    h = jaxlite.jit(lambda x, n: jnp.asarray(n) + x, static_argnames="n")
    x = jnp.zeros((), "int8")
    dtypes_seen = [h(x, n=v).dtype for v in (True, 1, 1.0)]
    assert dtypes_seen == ["int8", "int8", "float32"]
    dtypes_seen = [h(x, v).dtype for v in (1.0, True, 1)]  # positional: the fast path
    assert dtypes_seen == ["float32", "int8", "int8"]


def test_static_argument_dtypes_match_jax():
    jax = pytest.importorskip("jax")

    def run(lib):
        g = lib.jit(lambda n: lib.numpy.asarray(n) * 2, static_argnums=0)
        return [str(g(v).dtype) for v in (1, 1.0, True, 2, 2.0)]

    assert run(jaxlite) == run(jax)


# ----------------------------------------------------------------------------------------
# 3. Arrays of non-numeric dtypes are rejected up front

NON_NUMERIC = {
    "object": np.array([1, "a"], dtype=object),
    "numeric object": np.array([1.0, 2.0], dtype=object),
    "str": np.array(["a", "b"]),
    "bytes": np.array([b"a"]),
    "datetime": np.array(["2020-01-01"], dtype="datetime64[D]"),
    "timedelta": np.array([1], dtype="timedelta64[s]"),
    "structured": np.zeros(2, dtype=[("a", "f4"), ("b", "i4")]),
}


def _non_numeric_calls(lib, arr):
    return {
        "jit": lambda: lib.jit(lambda x: x)(arr),
        "jit keyword": lambda: lib.jit(lambda x, y: y)(1.0, y=arr),
        "make_jaxpr": lambda: lib.make_jaxpr(lambda x: x)(arr),
    }


@pytest.mark.parametrize("kind", list(NON_NUMERIC))
def test_non_numeric_arrays_are_rejected_by_jit_and_make_jaxpr(kind):
    arr = NON_NUMERIC[kind]
    for where, call in _non_numeric_calls(jaxlite, arr).items():
        with pytest.raises(TypeError, match="as an abstract array") as info:
            call()
        assert "numpy.ndarray" in str(info.value), where
        path = "path y" if where == "jit keyword" else "path x"
        assert path in str(info.value), where


@pytest.mark.parametrize("kind", list(NON_NUMERIC))
def test_non_numeric_arrays_error_matches_jax(kind):
    jax = pytest.importorskip("jax")
    arr = NON_NUMERIC[kind]
    ours = _non_numeric_calls(jaxlite, arr)
    for where, call in _non_numeric_calls(jax, arr).items():
        want, got = _outcome(call), _outcome(ours[where])
        assert got[:2] == want[:2] == ("raise", "TypeError"), where
        # The message names the traced function, which differs: compare the rest.
        assert got[2].split(" as ", 1)[1] == want[2].split(" as ", 1)[1]


def test_non_numeric_leaf_is_named_by_its_path():
    with pytest.raises(TypeError, match=r"path d\['a'\]"):
        jaxlite.jit(lambda d: d["a"])({"a": np.array([None])})


# ----------------------------------------------------------------------------------------
# 4. jit's and vmap's options are checked


def _two(a, b):
    return a + b


def _posonly(a, /, b):
    return a + b


JIT_OPTIONS = {
    "static_argnums too large": dict(static_argnums=(5,)),
    "static_argnums too negative": dict(static_argnums=(-3,)),
    "unknown static_argnames": dict(static_argnames=("q",)),
    "donate_argnums too large": dict(donate_argnums=(3,)),
    "unknown donate_argnames": dict(donate_argnames=("q",)),
    "static_argnums of strings": dict(static_argnums=("a",)),
    "static_argnums of floats": dict(static_argnums=(1.5,)),
    "static_argnames of ints": dict(static_argnames=(1,)),
    "static and donated": dict(static_argnums=0, donate_argnums=0),
    "both given, bad name": dict(static_argnums=1, static_argnames="q"),
}


@pytest.mark.parametrize("case", list(JIT_OPTIONS))
def test_invalid_jit_options_raise_as_in_jax(case):
    jax = pytest.importorskip("jax")
    options = JIT_OPTIONS[case]
    want = _outcome(lambda: jax.jit(_two, **options))
    got = _outcome(lambda: jaxlite.jit(_two, **options))
    assert want[0] == "raise"
    assert got == want


def test_invalid_jit_options_raise_at_definition():
    with pytest.raises(ValueError, match="static_argnums=\\(5,\\), but only accepts 2"):
        jaxlite.jit(_two, static_argnums=(5,))
    with pytest.raises(
        ValueError, match="invalid argnames \\{'q'\\} in static_argnames"
    ):
        jaxlite.jit(_two, static_argnames=("q",))
    with pytest.raises(ValueError, match="donate_argnums=\\(3,\\), but only accepts 2"):
        jaxlite.jit(_two, donate_argnums=(3,))
    with pytest.raises(TypeError, match="'str' object cannot be interpreted as an int"):
        jaxlite.jit(_two, static_argnums=("a",))
    with pytest.raises(ValueError, match="These are positional-only"):
        jaxlite.jit(_posonly, static_argnames="a")
    with pytest.raises(ValueError, match="Pass donate_argnums instead"):
        jaxlite.jit(_NoSignature(), donate_argnames="a")


class _NoSignature:
    """A callable `inspect.signature` cannot read (as CPython's builtins such as `max`;
    PyPy's builtins have signatures)."""

    def __call__(self, x):
        return x

    @property
    def __signature__(self):
        raise ValueError("no signature")


def test_valid_jit_options_still_work():
    def varargs(*args):
        return args[0]

    def kwargs_fun(a, **kws):
        return a

    assert float(jaxlite.jit(varargs, static_argnums=(5,))(1.0)) == 1.0
    assert float(jaxlite.jit(kwargs_fun, static_argnames="q")(1.0)) == 1.0
    assert float(jaxlite.jit(_two, static_argnums=-1)(1.0, 2)) == 3.0
    assert float(jaxlite.jit(_two, static_argnums=np.int64(1))(1.0, 2)) == 3.0


def test_jit_backend_and_device_options_as_in_jax():
    with pytest.warns(DeprecationWarning, match="backend and device argument on jit"):
        f = jaxlite.jit(_two, backend="gpu")
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
        f(1.0, 2.0)
    with pytest.warns(DeprecationWarning):
        g = jaxlite.jit(_two, device=jaxlite.devices()[0])
    assert float(g(1.0, 2.0)) == 3.0
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="both"):
        jaxlite.jit(_two, device=jaxlite.devices()[0], backend="cpu")


VMAP_OPTIONS = {
    "string out_axes": dict(out_axes="x"),
    "float out_axes": dict(out_axes=1.0),
    "bool out_axes": dict(out_axes=True),
    "string in tuple out_axes": dict(out_axes=(0, "a")),
    "string in_axes": dict(in_axes="x"),
    "dict in_axes": dict(in_axes={"a": 0}),
    "float in tuple in_axes": dict(in_axes=(0, 1.0)),
}


@pytest.mark.parametrize("case", list(VMAP_OPTIONS))
def test_invalid_vmap_axes_raise_at_definition_as_in_jax(case):
    jax = pytest.importorskip("jax")
    options = VMAP_OPTIONS[case]
    want = _outcome(lambda: jax.vmap(lambda x, y: (x, y), **options))
    got = _outcome(lambda: jaxlite.vmap(lambda x, y: (x, y), **options))
    assert want[0] == "raise"
    assert got == want


def test_vmap_of_a_non_callable():
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        jaxlite.vmap(3)
    with pytest.raises(TypeError, match="vmap out_axes must be an int, None"):
        jaxlite.vmap(lambda x: x, out_axes="x")


# ----------------------------------------------------------------------------------------
# 5. Pickling a tracer


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
def test_pickling_a_tracer_raises(transform):
    with pytest.raises(errors.ConcretizationTypeError, match="__reduce__ method"):
        _apply(jaxlite, transform, pickle.dumps, jnp.asarray(1.0))


def test_pickling_arrays_still_works():
    x = jnp.arange(3.0)
    y = pickle.loads(pickle.dumps(x))
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))


# ----------------------------------------------------------------------------------------
# 6. Tracer attributes never hide Array methods


def test_var_method_under_jit():
    x = jnp.arange(4.0)
    assert float(jaxlite.jit(lambda x: x.var())(x)) == 1.25
    assert float(jaxlite.jit(lambda x: x.std() ** 2)(x)) == 1.25


def _tracer_classes():
    from jaxlite.core import Tracer

    out, todo = [], [Tracer]
    while todo:
        for sub in todo.pop().__subclasses__():
            out.append(sub)
            todo.append(sub)
    return out


def test_no_tracer_attribute_shadows_an_array_method():
    from jaxlite.core import Array, Tracer

    classes = _tracer_classes()
    assert {c.__name__ for c in classes} >= {"JaxprTracer", "JVPTracer", "BatchTracer"}
    for cls in classes:
        for klass in cls.__mro__[: cls.__mro__.index(Tracer)]:
            names = set(vars(klass)) | set(getattr(klass, "__slots__", ()))
            shadowing = {
                n
                for n in names
                if not n.startswith("_") and n != "aval" and hasattr(Array, n)
            }
            assert not shadowing, f"{klass.__name__} hides Array's {shadowing}"


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap", "jvp"])
def test_array_methods_work_on_every_tracer(transform):
    methods = ["var", "std", "mean", "sum", "max", "ravel", "copy", "conj"]

    def f(x):
        return sum(jnp.sum(getattr(x, m)()) for m in methods)

    x = jnp.arange(1.0, 5.0)
    if transform == "jit":
        out = jaxlite.jit(f)(x)
    elif transform == "grad":
        out = jaxlite.grad(f)(x)
    elif transform == "vmap":
        out = jaxlite.vmap(f)(jnp.stack([x, x]))
    else:
        out = jaxlite.jvp(f, (x,), (x,))[0]
    assert np.all(np.isfinite(np.asarray(out)))


# ----------------------------------------------------------------------------------------
# 7. vmap out_axes out of range


@pytest.mark.parametrize(
    "out_axes,shape",
    [
        (3, (2, 3, 4)),
        (-4, (2, 3, 4)),
        (2, (2, 3)),
        (1, (2,)),
        (-2, (2, 3)),
        (2, (2, 3, 4)),
    ],
)
def test_vmap_out_axes_range_matches_jax(out_axes, shape):
    jax = pytest.importorskip("jax")

    def run(lib):
        out = lib.vmap(lambda x: x * 2, out_axes=out_axes)(lib.numpy.ones(shape))
        return out.shape

    assert _outcome(lambda: run(jaxlite)) == _outcome(lambda: run(jax))


def test_vmap_out_axes_beyond_the_rank_raises():
    with pytest.raises(
        ValueError, match="axis 3 is out of bounds for array of dimension 3"
    ):
        jaxlite.vmap(lambda x: x, out_axes=3)(jnp.ones((2, 3, 4)))
    with pytest.raises(
        ValueError, match="axis 3 is out of bounds for array of dimension 2"
    ):
        jaxlite.vmap(lambda x: jnp.ones(2), out_axes=3)(jnp.ones((2, 3)))
    assert jaxlite.vmap(lambda x: x, out_axes=2)(jnp.ones((2, 3, 4))).shape == (3, 4, 2)


# ----------------------------------------------------------------------------------------
# 8. vmap (and grad) of callables with unusual attributes


class _Doubler:
    def __call__(self, x):
        return x * 2.0


def test_vmap_of_a_callable_whose_name_is_not_a_string():
    f = _Doubler()
    f.__name__ = 3
    np.testing.assert_array_equal(np.asarray(jaxlite.vmap(f)(jnp.ones(3))), [2.0] * 3)
    assert float(jaxlite.grad(f)(1.0)) == 2.0
    g = _Doubler()  # no __name__ at all
    np.testing.assert_array_equal(np.asarray(jaxlite.vmap(g)(jnp.ones(2))), [2.0] * 2)
    h = functools.partial(lambda a, x: a * x, 3.0)
    np.testing.assert_array_equal(np.asarray(jaxlite.vmap(h)(jnp.ones(2))), [3.0] * 2)


# ----------------------------------------------------------------------------------------
# 9. Deleted and donated arrays, devices


def test_deleted_array_raises_on_use():
    x = jnp.arange(3.0)
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted()
    x.delete()  # twice is fine, as in JAX
    assert x.shape == (3,) and x.dtype == np.float32 and len(x) == 3
    uses = {
        "operation": lambda: x + 1,
        "method": lambda: x.sum(),
        "numpy": lambda: np.asarray(x),
        "repr": lambda: repr(x),
        "str": lambda: str(x),
        "index": lambda: x[0],
        "jit": lambda: jaxlite.jit(lambda a: a * 2)(x),
        "grad": lambda: jaxlite.grad(lambda a: a.sum())(x),
        "pickle": lambda: pickle.dumps(x),
        "iter": lambda: list(x),
    }
    for what, use in uses.items():
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            use()
            pytest.fail(what)
    with pytest.raises(errors.JaxRuntimeError, match="deleted or donated buffer"):
        x.block_until_ready()
    # Only its abstract value is needed to trace it.
    assert "f32[3]" in str(jaxlite.make_jaxpr(lambda a: a)(x))


def test_deleted_array_matches_jax():
    jax = pytest.importorskip("jax")

    def run(lib, use):
        x = lib.numpy.ones(3)
        x.delete()
        return use(lib, x)

    for use in (
        lambda lib, x: x.is_deleted(),
        lambda lib, x: x.shape,
        lambda lib, x: x * 2,
        lambda lib, x: lib.numpy.sin(x),
    ):
        want = _outcome(lambda use=use: run(jax, use))
        got = _outcome(lambda use=use: run(jaxlite, use))
        assert got[:2] == want[:2]
        if want[0] == "raise":
            assert got[2].startswith(want[2].rstrip("."))


def test_donated_argument_is_deleted_when_an_output_can_take_it():
    f = jaxlite.jit(lambda a: a * 2, donate_argnums=0)
    x = jnp.ones(3)
    y = f(x)
    assert x.is_deleted() and not y.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), [2.0] * 3)
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        f(x)
    # Matched by element count too (float32[3] -> int32[3]), and by keyword.
    x = jnp.ones(3)
    jaxlite.jit(lambda a: a.astype("int32"), donate_argnums=0)(x)
    assert x.is_deleted()
    x = jnp.ones(3)
    jaxlite.jit(lambda a, b: a * b, donate_argnames="b")(jnp.ones(3), b=x)
    assert x.is_deleted()
    # The non-donated argument is untouched.
    x, z = jnp.ones(3), jnp.ones(3)
    jaxlite.jit(lambda a, b: a + b, donate_argnums=1)(z, x)
    assert x.is_deleted() and not z.is_deleted()


def test_unusable_donation_warns_and_keeps_the_argument():
    f = jaxlite.jit(lambda a: a.sum(), donate_argnums=0)
    x = jnp.ones(3)
    with pytest.warns(
        UserWarning, match="Some donated buffers were not usable: float32"
    ):
        f(x)
    assert not x.is_deleted()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per compilation, as JAX
        f(x)
    # One output, two donated inputs of its type: the first is taken.
    x, y = jnp.ones(3), jnp.ones(3)
    with pytest.warns(UserWarning, match="not usable: float32\\[3\\]"):
        jaxlite.jit(lambda a, b: a + b, donate_argnums=(0, 1))(x, y)
    assert x.is_deleted() and not y.is_deleted()


def test_donation_only_at_top_level_and_with_jit_on():
    inner = jaxlite.jit(lambda a: a * 2, donate_argnums=0)
    x = jnp.ones(3)
    jaxlite.jit(lambda z: inner(z))(x)
    assert not x.is_deleted()
    jaxlite.grad(lambda z: inner(z).sum())(x)
    assert not x.is_deleted()
    with jaxlite.disable_jit():
        inner(x)
    assert not x.is_deleted()
    with pytest.raises(errors.JaxRuntimeError, match="previously donated"):
        jaxlite.jit(lambda a, b: a + b, donate_argnums=0)(x, x)


def test_donation_matches_jax():
    jax = pytest.importorskip("jax")

    def run(lib, fun, donate, shapes):
        args = [lib.numpy.ones(s) for s in shapes]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.jit(fun, donate_argnums=donate)(*args)
        warned = any("donated buffers were not usable" in str(m.message) for m in w)
        return [a.is_deleted() for a in args], warned

    cases = [
        (lambda a: a * 2, 0, [(3,)]),
        (lambda a: a.sum(), 0, [(3,)]),
        (lambda a: a.reshape(2, 3), 0, [(6,)]),
        (lambda a, b: (a * 2, b.sum()), (0, 1), [(3,), (2,)]),
        (lambda a, b: a + b, (0, 1), [(3,), (3,)]),
        (lambda a, b: (a + b, a - b), (0, 1), [(3,), (3,)]),
    ]
    for fun, donate, shapes in cases:
        assert run(jaxlite, fun, donate, shapes) == run(jax, fun, donate, shapes)


def test_devices_of_a_missing_backend_raise():
    assert jaxlite.devices("cpu") == jaxlite.devices()
    for fun in (
        jaxlite.devices,
        jaxlite.device_count,
        jaxlite.local_device_count,
        jaxlite.process_index,
    ):
        with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
            fun("gpu")
    with pytest.raises(RuntimeError, match="Unknown backend tpu. Available backends"):
        jaxlite.devices("tpu")
    with pytest.raises(RuntimeError, match="Unknown backend"):
        jaxlite.local_devices(backend="cuda")


@pytest.mark.parametrize("backend", ["gpu", "tpu", "cuda", "cpu", None])
def test_devices_match_jax(backend):
    jax = pytest.importorskip("jax")
    want = _outcome(lambda: len(jax.devices(backend)))
    got = _outcome(lambda: len(jaxlite.devices(backend)))
    # The class only: JAX's message for a platform it knows (tpu) depends on the
    # plugins installed.
    assert got[:2] == want[:2]
